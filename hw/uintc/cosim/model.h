// Reference model of the UINTC and the uipi instructions, written from the contract
// (docs/uintr-spec.md sections 2-4, and the core port and same-cycle rules of
// hw/uintc/README.md), not from the Chisel. Pure C++, no Verilator: the co-simulation testbench
// (tb.cc) steps it once per clock with the events the RTL's ports saw in that cycle.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace model {

enum Op : unsigned { SEND = 0, READ = 1, WRITE = 2, ACTIVATE = 3, DEACTIVATE = 4 };
enum Reg : unsigned { REG_SEND = 0x00, REG_LOW = 0x08, REG_HIGH = 0x10, REG_ACT = 0x18 };
constexpr unsigned SLOT_BYTES = 32;

struct Slot { bool active = false, mode = false; uint16_t hartid = 0; uint64_t pending = 0; };

// One MMIO access (8-byte, full mask) that the device accepted this cycle.
struct Mmio { bool valid = false, write = false; uint64_t addr = 0, data = 0; };
// One core-port request that was valid this cycle (whether or not the device accepted it).
struct CoreReq { bool valid = false; unsigned op = 0; uint32_t slot = 0; uint64_t data = 0; };

// The UINTC, cycle by cycle (section 4). State changes at the clock edge after the cycle of the
// access; each hart's wire is a register of OR over its active, non-empty slots.
class Uintc {
 public:
  Uintc(unsigned slots, unsigned harts) : slot(slots), wire(harts, false), nslots(slots) {}

  std::vector<Slot> slot;
  std::vector<bool> wire;          // usip[h] as seen now (registered)
  const unsigned nslots;

  // Which core requests are accepted this cycle: a read waits while the MMIO port reads-to-clear
  // the same (implemented) slot or a lower-numbered port has a read of the same slot.
  std::vector<bool> ready(const Mmio& m, const std::vector<CoreReq>& reqs) const {
    std::vector<bool> r(reqs.size(), true);
    int mslot = mmio_clear_slot(m);
    for (size_t i = 0; i < reqs.size(); i++) {
      if (!reqs[i].valid || reqs[i].op != READ) continue;
      bool wait = reqs[i].slot < nslots && int(reqs[i].slot) == mslot;
      for (size_t j = 0; j < i; j++)
        wait |= reqs[j].valid && reqs[j].op == READ && reqs[j].slot == reqs[i].slot;
      r[i] = !wait;
    }
    return r;
  }

  // Read data of an MMIO access (0 for writes), from the state before this cycle's edge.
  uint64_t mmio_read(const Mmio& m) const {
    if (m.write) return 0;
    unsigned s = m.addr / SLOT_BYTES, reg = m.addr % SLOT_BYTES;
    if (s >= nslots) return 0;
    const Slot& x = slot[s];
    switch (reg) {
      case REG_LOW: return (uint64_t(x.hartid) << 16) | (uint64_t(x.mode) << 1) | uint64_t(x.active);
      case REG_HIGH: return x.pending;
      case REG_ACT: return x.active;
      default: return 0;
    }
  }

  // Response data of an accepted core request: a read returns the pre-clear pending word.
  uint64_t core_resp(const CoreReq& q) const {
    return q.op == READ && q.slot < nslots ? slot[q.slot].pending : 0;
  }

  // The clock edge: apply this cycle's accepted accesses (`acc[i]`: port i fired).
  void edge(const Mmio& m, const std::vector<CoreReq>& reqs, const std::vector<bool>& acc) {
    // the wire registers OR over the state before the edge
    for (unsigned h = 0; h < wire.size(); h++) {
      bool w = false;
      for (const Slot& x : slot) w |= x.active && x.pending && x.hartid == h;
      wire[h] = w;
    }
    std::vector<uint64_t> set(nslots, 0);
    std::vector<bool> clear(nslots, false);
    int ms = m.valid ? int(m.addr / SLOT_BYTES) : -1;
    unsigned mreg = m.addr % SLOT_BYTES;
    bool mimpl = ms >= 0 && unsigned(ms) < nslots;
    if (mimpl && m.write && mreg == REG_SEND) set[ms] |= 1ull << (m.data & 63);
    if (mimpl && m.write && mreg == REG_HIGH) set[ms] |= m.data;
    if (mimpl && !m.write && mreg == REG_HIGH) clear[ms] = true;
    for (size_t i = 0; i < reqs.size(); i++) {
      if (!acc[i] || reqs[i].slot >= nslots) continue;
      unsigned s = reqs[i].slot;
      if (reqs[i].op == SEND) set[s] |= 1ull << (reqs[i].data & 63);
      if (reqs[i].op == WRITE) set[s] |= reqs[i].data;
      if (reqs[i].op == READ) clear[s] = true;
    }
    // Active: core activates, then core deactivates (a deactivate wins over an activate of the
    // same cycle, whatever the ports), then MMIO LOW, then ACT; the last writer wins
    for (size_t i = 0; i < reqs.size(); i++)
      if (acc[i] && reqs[i].slot < nslots && reqs[i].op == ACTIVATE) slot[reqs[i].slot].active = true;
    for (size_t i = 0; i < reqs.size(); i++)
      if (acc[i] && reqs[i].slot < nslots && reqs[i].op == DEACTIVATE) slot[reqs[i].slot].active = false;
    if (mimpl && m.write && mreg == REG_LOW) {
      slot[ms].active = m.data & 1;
      slot[ms].mode = (m.data >> 1) & 1;
      slot[ms].hartid = uint16_t(m.data >> 16);
    }
    if (mimpl && m.write && mreg == REG_ACT) slot[ms].active = m.data & 1;
    for (unsigned s = 0; s < nslots; s++)
      slot[s].pending = (clear[s] ? 0 : slot[s].pending) | set[s];
  }

 private:
  int mmio_clear_slot(const Mmio& m) const {
    if (!m.valid || m.write || m.addr % SLOT_BYTES != REG_HIGH) return -1;
    return int(m.addr / SLOT_BYTES);
  }
};

// A uipi instruction as the spec defines it (section 2), given the hart's suist/suirs at issue
// and the sender table in memory: what it asks of the UINTC (at most one request) and, for
// anything but a read that reaches the UINTC, the value it writes to rd (0).
struct Expect {
  bool request = false;       // it reaches the UINTC
  CoreReq req;                // op, slot, data (send: vector in [5:0]; write: the mask)
};

struct Uipi {
  unsigned nslots;
  unsigned paddr_bits;
  // mem(addr, &value): the 8-byte word at a physical address; false = no memory there (fault)
  std::function<bool(uint64_t, uint64_t*)> mem;

  Expect decode(unsigned op, uint64_t rs1, uint64_t suist, uint64_t suirs) const {
    Expect e;
    if (op == SEND) {
      bool enable = suist >> 63;
      uint64_t size = (suist >> 44) & 0xfff, ppn = suist & ((1ull << 44) - 1);
      if (!enable || rs1 >= size * 512) return e;
      uint64_t addr = (ppn << 12) + rs1 * 8;
      if (addr >> paddr_bits) return e;
      uint64_t entry;
      if (!mem(addr, &entry)) return e;
      if (!(entry & 1)) return e;
      unsigned slot = entry >> 48, vector = (entry >> 16) & 0xffff;
      if (slot >= nslots) return e;
      e.request = true;
      e.req = CoreReq{true, SEND, slot, vector};
      return e;
    }
    bool enable = suirs >> 63;
    unsigned index = suirs & 0xffff;
    if (!enable || index >= nslots) return e;
    e.request = true;
    e.req = CoreReq{true, op, index, op == WRITE ? rs1 : 0};
    return e;
  }
};

}  // namespace model
