// A cycle-level AXI4 slave: accepts read and write bursts (FIXED/INCR/WRAP) from one port of
// the Verilated SoC and answers them one beat per cycle after a configurable latency.
// Subclasses say what a 64-bit beat means (RAM, or a bus of device registers).
#pragma once
#include <cstdint>
#include <deque>

// Pointers to the Verilated signals of one AXI4 port (64-bit data, 32-bit address).
template <typename IdT>
struct Axi4Pins {
  // write address
  uint8_t *aw_ready, *aw_valid; IdT *aw_id; uint32_t *aw_addr; uint8_t *aw_len, *aw_size, *aw_burst;
  // write data
  uint8_t *w_ready, *w_valid; uint64_t *w_data; uint8_t *w_strb, *w_last;
  // write response
  uint8_t *b_ready, *b_valid; IdT *b_id; uint8_t *b_resp;
  // read address
  uint8_t *ar_ready, *ar_valid; IdT *ar_id; uint32_t *ar_addr; uint8_t *ar_len, *ar_size, *ar_burst;
  // read data
  uint8_t *r_ready, *r_valid; IdT *r_id; uint64_t *r_data; uint8_t *r_resp, *r_last;
};

// Bind every signal of port `prefix` (e.g. mem_axi4_0) of Verilated top `t`.
#define AXI4_PINS(t, prefix)                                                                   \
  {&t->prefix##_aw_ready, &t->prefix##_aw_valid, &t->prefix##_aw_bits_id,                     \
   &t->prefix##_aw_bits_addr, &t->prefix##_aw_bits_len, &t->prefix##_aw_bits_size,            \
   &t->prefix##_aw_bits_burst, &t->prefix##_w_ready, &t->prefix##_w_valid,                    \
   &t->prefix##_w_bits_data, &t->prefix##_w_bits_strb, &t->prefix##_w_bits_last,              \
   &t->prefix##_b_ready, &t->prefix##_b_valid, &t->prefix##_b_bits_id,                        \
   &t->prefix##_b_bits_resp, &t->prefix##_ar_ready, &t->prefix##_ar_valid,                    \
   &t->prefix##_ar_bits_id, &t->prefix##_ar_bits_addr, &t->prefix##_ar_bits_len,              \
   &t->prefix##_ar_bits_size, &t->prefix##_ar_bits_burst, &t->prefix##_r_ready,               \
   &t->prefix##_r_valid, &t->prefix##_r_bits_id, &t->prefix##_r_bits_data,                    \
   &t->prefix##_r_bits_resp, &t->prefix##_r_bits_last}

enum : uint8_t { AXI_OKAY = 0, AXI_SLVERR = 2, AXI_DECERR = 3 };

template <typename IdT>
class Axi4Slave {
 public:
  Axi4Slave(const Axi4Pins<IdT>& p, uint64_t read_latency) : p_(p), latency_(read_latency) {}
  virtual ~Axi4Slave() = default;

  // Drive this cycle's outputs from the model state (before the clock edge is evaluated).
  void drive() {
    *p_.aw_ready = writes_.size() < kMaxOutstanding;
    *p_.w_ready = has_open_write();
    *p_.b_valid = !bresp_.empty();
    if (!bresp_.empty()) { *p_.b_id = bresp_.front().id; *p_.b_resp = bresp_.front().resp; }
    *p_.ar_ready = reads_.size() < kMaxOutstanding;
    bool r = !reads_.empty() && reads_.front().ready_at <= now_;
    *p_.r_valid = r;
    if (r) {
      Burst& b = reads_.front();
      uint8_t resp = AXI_OKAY;
      *p_.r_data = read_beat(beat_addr(b), b.size, resp);
      *p_.r_id = b.id; *p_.r_resp = resp; *p_.r_last = b.beat == b.len;
    }
  }

  // Sample handshakes with the DUT's settled outputs; call just before the rising edge.
  void sample() {
    fire_aw_ = *p_.aw_valid && *p_.aw_ready;
    fire_w_ = *p_.w_valid && *p_.w_ready;
    fire_b_ = *p_.b_valid && *p_.b_ready;
    fire_ar_ = *p_.ar_valid && *p_.ar_ready;
    fire_r_ = *p_.r_valid && *p_.r_ready;
    if (fire_aw_) aw_ = {*p_.aw_id, *p_.aw_addr, *p_.aw_len, *p_.aw_size, *p_.aw_burst, 0, 0, AXI_OKAY};
    if (fire_w_) { w_data_ = *p_.w_data; w_strb_ = *p_.w_strb; w_last_ = *p_.w_last; }
    if (fire_ar_) ar_ = {*p_.ar_id, *p_.ar_addr, *p_.ar_len, *p_.ar_size, *p_.ar_burst, 0, now_ + latency_, AXI_OKAY};
  }

  // Advance the model past the rising edge.
  void commit() {
    if (fire_b_) bresp_.pop_front();
    if (fire_r_) {
      Burst& b = reads_.front();
      if (b.beat++ == b.len) reads_.pop_front();
    }
    if (fire_aw_) writes_.push_back(aw_);
    if (fire_w_) {
      Burst& b = writes_.front();
      uint8_t resp = AXI_OKAY;
      write_beat(beat_addr(b) & ~7ull, w_data_, w_strb_, resp);
      if (resp != AXI_OKAY) b.resp = resp;
      if (b.beat++ == b.len || w_last_) { bresp_.push_back({b.id, b.resp}); writes_.pop_front(); }
    }
    if (fire_ar_) reads_.push_back(ar_);
    ++now_;
  }

 protected:
  // One beat of the 64-bit bus. Reads get the exact address and size (device registers with
  // read side effects must not be touched by a neighbour's read); data is returned in its
  // byte lanes. Writes get the 8-byte aligned address and the strobes. Set resp on error.
  virtual uint64_t read_beat(uint64_t addr, uint8_t size, uint8_t& resp) = 0;
  virtual void write_beat(uint64_t addr, uint64_t data, uint8_t strb, uint8_t& resp) = 0;

 private:
  static constexpr size_t kMaxOutstanding = 8;
  struct Burst { IdT id; uint64_t addr; uint8_t len, size, burst; unsigned beat; uint64_t ready_at; uint8_t resp; };
  struct BResp { IdT id; uint8_t resp; };

  bool has_open_write() const { return !writes_.empty(); }

  static uint64_t beat_addr(const Burst& b) {
    uint64_t bytes = 1ull << b.size;
    switch (b.burst) {
      case 0: return b.addr;                                            // FIXED
      case 2: {                                                          // WRAP
        uint64_t span = bytes * (b.len + 1ull);
        uint64_t base = b.addr & ~(span - 1);
        return base + ((b.addr - base + b.beat * bytes) % span);
      }
      default:                                                           // INCR
        return b.beat == 0 ? b.addr : (b.addr & ~(bytes - 1)) + b.beat * bytes;
    }
  }

  Axi4Pins<IdT> p_;
  uint64_t latency_, now_ = 0;
  std::deque<Burst> writes_, reads_;
  std::deque<BResp> bresp_;
  bool fire_aw_ = false, fire_w_ = false, fire_b_ = false, fire_ar_ = false, fire_r_ = false;
  Burst aw_{}, ar_{};
  uint64_t w_data_ = 0; uint8_t w_strb_ = 0, w_last_ = 0;
};
