// OpenOCD's remote-bitbang protocol on a TCP port, driving the SoC's JTAG pins (debug configs
// only: UintrQuadSimDebugConfig, `make sim DEBUG=1`). OpenOCD connects with
// `adapter driver remote_bitbang` (hw/sim/openocd.cfg) and sends one byte per pin operation:
//   '0'..'7'  set TCK (bit 2), TMS (bit 1), TDI (bit 0)
//   'R'       sample TDO: the reply is '0' or '1'
//   'r' 's' 't' 'u'  TRST/SRST combinations (only TRST is wired: it resets the DTM)
//   'B' 'b'   LED on/off (ignored)        'Q'  OpenOCD quits
// One byte is taken per simulated clock cycle, so the JTAG clock runs at most at half the core
// clock; the DTM crosses into the core clock through its own synchronisers. Never blocks: a
// cycle without a byte from OpenOCD just leaves the pins as they are.
#pragma once
#include <arpa/inet.h>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

class RemoteBitbang {
 public:
  // port 0: the kernel picks a free one (printed either way)
  explicit RemoteBitbang(uint16_t port) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (listen_fd_ < 0 || bind(listen_fd_, (sockaddr*)&a, sizeof a) < 0 || listen(listen_fd_, 1) < 0) {
      fprintf(stderr, "[jtag] cannot listen on 127.0.0.1:%u: %s\n", port, strerror(errno));
      listen_fd_ = -1;
      return;
    }
    socklen_t len = sizeof a;
    getsockname(listen_fd_, (sockaddr*)&a, &len);
    port_ = ntohs(a.sin_port);
    fcntl(listen_fd_, F_SETFL, O_NONBLOCK);
    fprintf(stderr, "[jtag] remote-bitbang listening on 127.0.0.1:%u (openocd -c 'remote_bitbang port %u' -f hw/sim/openocd.cfg)\n",
            port_, port_);
  }
  ~RemoteBitbang() {
    if (fd_ >= 0) close(fd_);
    if (listen_fd_ >= 0) close(listen_fd_);
  }
  bool ok() const { return listen_fd_ >= 0; }
  uint16_t port() const { return port_; }

  bool tck = false, tms = false, tdi = false, trst = false;

  // One step per cycle: accept a connection, or take one byte and act on it. `tdo` is the pin as
  // the model drives it now.
  void tick(bool tdo) {
    if (fd_ < 0) {
      fd_ = accept(listen_fd_, nullptr, nullptr);
      if (fd_ < 0) return;
      fcntl(fd_, F_SETFL, O_NONBLOCK);
      int one = 1;
      setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fprintf(stderr, "[jtag] OpenOCD connected\n");
    }
    if (pos_ == len_) {
      ssize_t n = read(fd_, buf_, sizeof buf_);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) { drop(); return; }
      if (n < 0) return;
      pos_ = 0;
      len_ = size_t(n);
    }
    char c = buf_[pos_++];
    if (c >= '0' && c <= '7') {
      tck = c & 4; tms = c & 2; tdi = c & 1;
    } else if (c == 'R') {
      char r = tdo ? '1' : '0';
      while (write(fd_, &r, 1) < 0 && (errno == EAGAIN || errno == EINTR)) {}
    } else if (c >= 'r' && c <= 'u') {
      trst = (c - 'r') & 2;
    } else if (c == 'Q') {
      drop();
    }
  }

 private:
  void drop() {
    fprintf(stderr, "[jtag] OpenOCD disconnected\n");
    close(fd_);
    fd_ = -1;
    pos_ = len_ = 0;
  }
  int listen_fd_ = -1, fd_ = -1;
  uint16_t port_ = 0;
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
};
