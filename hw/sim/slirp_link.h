// The cable from the NIC model to the host: libslirp (the user-mode network stack QEMU uses)
// as the rest of the network, with QEMU's addresses (guest 10.0.2.15/24, gateway and host
// 10.0.2.2, DNS 10.0.2.3) and TCP port forwards from 127.0.0.1 only. Its clock is the
// SIMULATED time (cycles at 100 MHz) and its timers run on it, so TCP timers on both ends see
// the RTL's time: a simulation thousands of times slower than the wall clock does not make
// slirp retransmit. Its sockets are polled without blocking, every few hundred cycles.
#pragma once
#include <arpa/inet.h>
#include <poll.h>
#include <slirp/libslirp.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

class SlirpLink {
 public:
  using Frame = std::vector<uint8_t>;
  static constexpr uint64_t kNsPerCycle = 10;   // 100 MHz

  explicit SlirpLink(std::function<void(Frame)> to_guest) : to_guest_(std::move(to_guest)) {
    SlirpConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.version = 4;
    cfg.restricted = 0;
    cfg.in_enabled = true;
    inet_pton(AF_INET, "10.0.2.0", &cfg.vnetwork);
    inet_pton(AF_INET, "255.255.255.0", &cfg.vnetmask);
    inet_pton(AF_INET, "10.0.2.2", &cfg.vhost);
    inet_pton(AF_INET, "10.0.2.15", &cfg.vdhcp_start);
    inet_pton(AF_INET, "10.0.2.3", &cfg.vnameserver);
    cfg.in6_enabled = false;
    cfg.vhostname = "uintr-sim";
    cfg.if_mtu = 1500;
    cfg.if_mru = 1500;
    cfg.disable_host_loopback = false;
    memset(&cb_, 0, sizeof cb_);
    cb_.send_packet = [](const void* buf, size_t len, void* o) -> ssize_t {
      auto* self = static_cast<SlirpLink*>(o);
      const uint8_t* p = static_cast<const uint8_t*>(buf);
      self->to_guest_(Frame(p, p + len));
      return ssize_t(len);
    };
    cb_.guest_error = [](const char* msg, void*) { fprintf(stderr, "[nic] slirp: guest error: %s\n", msg); };
    cb_.clock_get_ns = [](void* o) -> int64_t { return int64_t(static_cast<SlirpLink*>(o)->now_ns()); };
    cb_.timer_new = [](SlirpTimerCb cb, void* cb_opaque, void* o) -> void* {
      return static_cast<SlirpLink*>(o)->new_timer(cb, cb_opaque, SLIRP_TIMER_NUM);
    };
    cb_.timer_new_opaque = [](SlirpTimerId id, void* cb_opaque, void* o) -> void* {
      return static_cast<SlirpLink*>(o)->new_timer(nullptr, cb_opaque, id);
    };
    cb_.timer_free = [](void* t, void*) { static_cast<Timer*>(t)->dead = true; };
    cb_.timer_mod = [](void* t, int64_t expire_ms, void*) { static_cast<Timer*>(t)->expire_ms = expire_ms; };
    cb_.register_poll_fd = [](int, void*) {};
    cb_.unregister_poll_fd = [](int, void*) {};
    cb_.notify = [](void*) {};
    slirp_ = slirp_new(&cfg, &cb_, this);
    if (!slirp_) { fprintf(stderr, "[nic] slirp_new failed\n"); exit(2); }
  }

  ~SlirpLink() {
    if (slirp_) slirp_cleanup(slirp_);
    for (Timer* t : timers_) delete t;
  }

  // TCP 127.0.0.1:host_port -> 10.0.2.15:guest_port. False if the port cannot be bound.
  bool forward_tcp(int host_port, int guest_port) {
    in_addr host, guest;
    inet_pton(AF_INET, "127.0.0.1", &host);
    inet_pton(AF_INET, "10.0.2.15", &guest);
    return slirp_add_hostfwd(slirp_, 0, host, host_port, guest, guest_port) == 0;
  }

  void set_cycle(uint64_t cycle) { cycle_ = cycle; }
  uint64_t now_ns() const { return cycle_ * kNsPerCycle; }

  // A frame the guest put on the wire (its last byte has left the MAC).
  void from_guest(const Frame& f) { slirp_input(slirp_, f.data(), int(f.size())); }

  // Run expired timers and service slirp's sockets without waiting (poll timeout 0).
  void poll_once() {
    int64_t now_ms = int64_t(now_ns() / 1000000);
    for (size_t i = 0; i < timers_.size(); i++) {
      Timer* t = timers_[i];
      if (t->dead || t->expire_ms < 0 || t->expire_ms > now_ms) continue;
      t->expire_ms = -1;
      if (t->cb) t->cb(t->cb_opaque);
      else slirp_handle_timer(slirp_, t->id, t->cb_opaque);
    }
    fds_.clear();
    uint32_t timeout = 0;
    slirp_pollfds_fill(slirp_, &timeout, [](int fd, int ev, void* o) -> int {
      auto* self = static_cast<SlirpLink*>(o);
      short e = 0;
      if (ev & SLIRP_POLL_IN) e |= POLLIN;
      if (ev & SLIRP_POLL_OUT) e |= POLLOUT;
      if (ev & SLIRP_POLL_PRI) e |= POLLPRI;
      self->fds_.push_back(pollfd{fd, e, 0});
      return int(self->fds_.size() - 1);
    }, this);
    int n = fds_.empty() ? 0 : ::poll(fds_.data(), fds_.size(), 0);
    slirp_pollfds_poll(slirp_, n < 0, [](int idx, void* o) -> int {
      auto* self = static_cast<SlirpLink*>(o);
      short r = self->fds_[idx].revents;
      int ev = 0;
      if (r & POLLIN) ev |= SLIRP_POLL_IN;
      if (r & POLLOUT) ev |= SLIRP_POLL_OUT;
      if (r & POLLPRI) ev |= SLIRP_POLL_PRI;
      if (r & POLLERR) ev |= SLIRP_POLL_ERR;
      if (r & POLLHUP) ev |= SLIRP_POLL_HUP;
      return ev;
    }, this);
  }

 private:
  struct Timer {
    SlirpTimerCb cb; void* cb_opaque; SlirpTimerId id; int64_t expire_ms = -1; bool dead = false;
  };
  void* new_timer(SlirpTimerCb cb, void* cb_opaque, SlirpTimerId id) {
    Timer* t = new Timer{cb, cb_opaque, id};
    timers_.push_back(t);
    return t;
  }

  std::function<void(Frame)> to_guest_;
  SlirpCb cb_;
  Slirp* slirp_ = nullptr;
  uint64_t cycle_ = 0;
  std::vector<Timer*> timers_;
  std::vector<pollfd> fds_;
};
