// A cycle-level AXI4 master for the SoC's frontbus slave port (l2_frontend_bus_axi4_0): the
// NIC model's DMA engine reads descriptors and frames from memory and writes them back through
// it, so DMA traffic goes through the same interconnect and coherence path as on the board.
// Requests are byte ranges; the master splits them into INCR bursts of 64-bit beats (at most
// kMaxBeats, never crossing a 4 KiB boundary, as AXI requires) and calls back when every burst
// has its response. One AXI ID, so responses come back in request order.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <vector>
#include "axi4_slave.h"

// What the DMA engine needs from memory. resp is the worst AXI response of the request's bursts.
struct DmaBus {
  using ReadDone = std::function<void(uint8_t resp, const std::vector<uint8_t>& bytes)>;
  using WriteDone = std::function<void(uint8_t resp)>;
  virtual ~DmaBus() = default;
  virtual void read(uint64_t addr, size_t len, ReadDone done) = 0;
  // Writes bytes[i] to addr + i; bytes outside [addr, addr+len) are not touched (strobes).
  virtual void write(uint64_t addr, std::vector<uint8_t> bytes, WriteDone done) = 0;
  virtual bool busy() const = 0;  // any request not yet answered
};

template <typename IdT>
class Axi4Master : public DmaBus {
 public:
  static constexpr unsigned kMaxBeats = 16;          // 128-byte bursts, the AXI DMA's default
  static constexpr unsigned kMaxOutstanding = 4;     // bursts in flight per direction
  static constexpr uint64_t kAddrLimit = 1ull << 32; // the frontbus has 32 address bits

  explicit Axi4Master(const Axi4Pins<IdT>& p) : p_(p) {}

  void read(uint64_t addr, size_t len, ReadDone done) override {
    auto req = std::make_shared<Request>();
    req->addr = addr;
    req->len = len;
    req->rdone = std::move(done);
    req->data.assign(len, 0);
    if (!split(req, false)) reject_.push_back(req);
  }

  void write(uint64_t addr, std::vector<uint8_t> bytes, WriteDone done) override {
    auto req = std::make_shared<Request>();
    req->addr = addr;
    req->len = bytes.size();
    req->wdone = std::move(done);
    req->data = std::move(bytes);
    if (!split(req, true)) reject_.push_back(req);
  }

  bool busy() const override {
    return !ar_.empty() || !aw_.empty() || !rinflight_.empty() || !winflight_.empty() || !reject_.empty();
  }

  // Drive this cycle's outputs (before the falling-edge evaluation).
  void drive() {
    bool ar = !ar_.empty() && rinflight_.size() < kMaxOutstanding;
    *p_.ar_valid = ar;
    if (ar) {
      *p_.ar_id = 0; *p_.ar_addr = uint32_t(ar_.front().addr); *p_.ar_len = uint8_t(ar_.front().beats - 1);
      *p_.ar_size = 3; *p_.ar_burst = 1;
    }
    bool aw = !aw_.empty() && !aw_.front().aw_done && winflight_.size() < kMaxOutstanding;
    *p_.aw_valid = aw;
    if (aw) {
      *p_.aw_id = 0; *p_.aw_addr = uint32_t(aw_.front().addr); *p_.aw_len = uint8_t(aw_.front().beats - 1);
      *p_.aw_size = 3; *p_.aw_burst = 1;
    }
    // W beats of the oldest burst whose address was accepted (data follows its address).
    const Burst* wb = wdata_burst();
    *p_.w_valid = wb != nullptr;
    if (wb) {
      uint64_t d = 0; uint8_t s = 0;
      beat_bytes(*wb, wb->beat, d, s);
      *p_.w_data = d; *p_.w_strb = s; *p_.w_last = wb->beat + 1 == wb->beats;
    }
    *p_.r_ready = 1;
    *p_.b_ready = 1;
  }

  // Sample handshakes (DUT outputs settled, before the rising edge).
  void sample() {
    fire_ar_ = *p_.ar_valid && *p_.ar_ready;
    fire_aw_ = *p_.aw_valid && *p_.aw_ready;
    fire_w_ = *p_.w_valid && *p_.w_ready;
    fire_r_ = *p_.r_valid && *p_.r_ready;
    fire_b_ = *p_.b_valid && *p_.b_ready;
    if (fire_r_) { r_data_ = *p_.r_data; r_resp_ = *p_.r_resp; r_last_ = *p_.r_last; }
    if (fire_b_) b_resp_ = *p_.b_resp;
  }

  // Advance past the rising edge; completed requests call back here.
  void commit() {
    if (fire_ar_) { rinflight_.push_back(ar_.front()); ar_.pop_front(); }
    if (fire_aw_) aw_.front().aw_done = true, wpending_.push_back(aw_.front());
    if (fire_w_) {
      Burst& b = wpending_.front();
      if (++b.beat == b.beats) { winflight_.push_back(b); wpending_.pop_front(); aw_.pop_front(); }
    }
    if (fire_r_) {
      if (rinflight_.empty()) { fprintf(stderr, "[nic] AXI master: R beat with no read outstanding\n"); abort(); }
      Burst& b = rinflight_.front();
      store_beat(b, b.beat, r_data_);
      if (r_resp_ > b.req->resp) b.req->resp = r_resp_;
      bool last = ++b.beat == b.beats;
      if (last != bool(r_last_)) { fprintf(stderr, "[nic] AXI master: RLAST mismatch\n"); abort(); }
      if (last) { finish(b); rinflight_.pop_front(); }
    }
    if (fire_b_) {
      if (winflight_.empty()) { fprintf(stderr, "[nic] AXI master: B with no write outstanding\n"); abort(); }
      Burst& b = winflight_.front();
      if (b_resp_ > b.req->resp) b.req->resp = b_resp_;
      finish(b);
      winflight_.pop_front();
    }
    // Requests the frontbus cannot address end with DECERR without a bus transaction, as an
    // interconnect with no slave there answers.
    while (!reject_.empty()) {
      auto r = reject_.front(); reject_.pop_front();
      r->resp = AXI_DECERR;
      complete(*r);
    }
  }

 private:
  struct Request {
    uint64_t addr; size_t len; std::vector<uint8_t> data; uint8_t resp = AXI_OKAY;
    unsigned bursts_left = 0; ReadDone rdone; WriteDone wdone;
  };
  struct Burst {
    std::shared_ptr<Request> req; uint64_t addr; unsigned beats; unsigned beat = 0; bool aw_done = false;
  };

  bool split(const std::shared_ptr<Request>& req, bool write) {
    if (req->len == 0 || req->addr >= kAddrLimit || req->addr + req->len > kAddrLimit) return false;
    uint64_t a = req->addr & ~7ull, end = (req->addr + req->len + 7) & ~7ull;
    while (a < end) {
      uint64_t lim = std::min<uint64_t>({end, a + 8ull * kMaxBeats, (a | 0xfff) + 1});
      Burst b{req, a, unsigned((lim - a) / 8)};
      (write ? aw_ : ar_).push_back(b);
      req->bursts_left++;
      a = lim;
    }
    return true;
  }

  const Burst* wdata_burst() const { return wpending_.empty() ? nullptr : &wpending_.front(); }

  // Byte lanes of beat i of burst b that belong to the request.
  void beat_bytes(const Burst& b, unsigned i, uint64_t& data, uint8_t& strb) const {
    uint64_t base = b.addr + 8ull * i;
    for (unsigned k = 0; k < 8; k++) {
      uint64_t a = base + k;
      if (a < b.req->addr || a >= b.req->addr + b.req->len) continue;
      data |= uint64_t(b.req->data[a - b.req->addr]) << (8 * k);
      strb |= uint8_t(1u << k);
    }
  }

  void store_beat(Burst& b, unsigned i, uint64_t d) {
    uint64_t base = b.addr + 8ull * i;
    for (unsigned k = 0; k < 8; k++) {
      uint64_t a = base + k;
      if (a >= b.req->addr && a < b.req->addr + b.req->len) b.req->data[a - b.req->addr] = uint8_t(d >> (8 * k));
    }
  }

  void finish(Burst& b) {
    if (--b.req->bursts_left == 0) complete(*b.req);
  }

  static void complete(Request& r) {
    if (r.rdone) r.rdone(r.resp, r.data);
    else if (r.wdone) r.wdone(r.resp);
  }

  Axi4Pins<IdT> p_;
  std::deque<Burst> ar_, aw_, rinflight_, wpending_, winflight_;
  std::deque<std::shared_ptr<Request>> reject_;
  bool fire_ar_ = false, fire_aw_ = false, fire_w_ = false, fire_r_ = false, fire_b_ = false;
  uint64_t r_data_ = 0; uint8_t r_resp_ = 0, r_last_ = 0, b_resp_ = 0;
};
