// Random co-simulation: the UINTC and four real uipi units (UintcCosimTop, Verilator) against
// the reference model (model.h), driven with the same seeded random sequences.
//
//   cosim +seed=N +cycles=N [+verbose]
//
// Every cycle the testbench drives, through the RTL's real ports, random MMIO accesses
// (TileLink Get/PutFull on SEND/LOW/HIGH/ACT of implemented and unimplemented slots), random
// uipi instructions on each hart's RoCC port (send/read/write/activate/deactivate with changing
// suist/suirs), the sender table in memory (answering the units' D$ loads with hits, misses,
// nacks and faults, and rewriting entries), and back-pressure on every channel. The model gets
// the same events and the comparison covers, every cycle: each slot's pending word, Active,
// Mode and hartid; each hart's interrupt wire; whether each core-port request is accepted;
// and, at each completion: every MMIO read value and every uipi instruction's rd value, and
// that a uipi instruction reached the UINTC exactly when the spec says (with the right op, slot,
// vector or mask). The first mismatch stops the run (status 1) with the cycle and both values.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include "VUintcCosimTop.h"
#include "verilated.h"
#include "verilated_syms.h"
#include "model.h"

static constexpr unsigned NHARTS = COSIM_HARTS, NSLOTS = COSIM_SLOTS;
static constexpr uint64_t UINTC_BASE = 0x3000000, MEM_BASE = 0x80000000ull;
static constexpr unsigned MEM_PAGES = 4;           // sender tables live in these pages
static constexpr unsigned OPCODE = 0x7b;                 // custom-3: the uipi opcode

// ---- seeded random numbers (xorshift64*, same sequence on every host) ----
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() { s ^= s >> 12; s ^= s << 25; s ^= s >> 27; return s * 0x2545F4914F6CDD1Dull; }
  uint64_t below(uint64_t n) { return next() % n; }
  bool chance(unsigned percent) { return below(1000) < percent * 10; }
  bool permille(unsigned p) { return below(1000) < p; }
};

// ---- the hart-side ports of the RTL, by pointer, so the loop works for any hart ----
struct HartPorts {
  CData *cmd_ready, *cmd_valid, *funct, *rs2, *rs1_idx, *xd, *xs1, *xs2, *rd, *opcode;
  QData *cmd_rs1, *cmd_rs2, *suist, *suirs;
  CData *resp_ready, *resp_valid, *resp_rd;
  QData *resp_data;
  CData *mem_req_ready, *mem_req_valid, *mem_req_cmd, *mem_req_size, *mem_req_phys;
  QData *mem_req_addr_q; IData *mem_req_addr_i;
  CData *s2_nack, *s2_xcpt_ae_ld, *mem_resp_valid;
  QData *mem_resp_data;
  CData *busy, *usip;
  CData *port_valid, *port_fire, *port_op;
  SData *port_slot;
  QData *port_data;
};

#define BIND(h)                                                                                  \
  do {                                                                                           \
    HartPorts& p = hp[h];                                                                        \
    p.cmd_ready = &t->rocc_##h##_cmd_ready; p.cmd_valid = &t->rocc_##h##_cmd_valid;             \
    p.funct = &t->rocc_##h##_cmd_bits_inst_funct; p.rs2 = &t->rocc_##h##_cmd_bits_inst_rs2;     \
    p.rs1_idx = &t->rocc_##h##_cmd_bits_inst_rs1; p.xd = &t->rocc_##h##_cmd_bits_inst_xd;       \
    p.xs1 = &t->rocc_##h##_cmd_bits_inst_xs1; p.xs2 = &t->rocc_##h##_cmd_bits_inst_xs2;         \
    p.rd = &t->rocc_##h##_cmd_bits_inst_rd; p.opcode = &t->rocc_##h##_cmd_bits_inst_opcode;     \
    p.cmd_rs1 = &t->rocc_##h##_cmd_bits_rs1; p.cmd_rs2 = &t->rocc_##h##_cmd_bits_rs2;           \
    p.suist = &t->rocc_##h##_cmd_bits_uintr_suist; p.suirs = &t->rocc_##h##_cmd_bits_uintr_suirs; \
    p.resp_ready = &t->rocc_##h##_resp_ready; p.resp_valid = &t->rocc_##h##_resp_valid;         \
    p.resp_rd = &t->rocc_##h##_resp_bits_rd; p.resp_data = &t->rocc_##h##_resp_bits_data;       \
    p.mem_req_ready = &t->rocc_##h##_mem_req_ready; p.mem_req_valid = &t->rocc_##h##_mem_req_valid; \
    p.mem_req_cmd = &t->rocc_##h##_mem_req_bits_cmd; p.mem_req_size = &t->rocc_##h##_mem_req_bits_size; \
    p.mem_req_phys = &t->rocc_##h##_mem_req_bits_phys;                                           \
    bind_addr(p, &t->rocc_##h##_mem_req_bits_addr);                                              \
    p.s2_nack = &t->rocc_##h##_mem_s2_nack; p.s2_xcpt_ae_ld = &t->rocc_##h##_mem_s2_xcpt_ae_ld; \
    p.mem_resp_valid = &t->rocc_##h##_mem_resp_valid; p.mem_resp_data = &t->rocc_##h##_mem_resp_bits_data; \
    p.busy = &t->rocc_##h##_busy; p.usip = &t->usip_##h;                                         \
    p.port_valid = &t->port_##h##_valid; p.port_fire = &t->port_##h##_fire;                     \
    p.port_op = &t->port_##h##_req_op; p.port_slot = &t->port_##h##_req_slot;                   \
    p.port_data = &t->port_##h##_req_data;                                                       \
  } while (0)

static void bind_addr(HartPorts& p, QData* a) { p.mem_req_addr_q = a; p.mem_req_addr_i = nullptr; }
static void bind_addr(HartPorts& p, IData* a) { p.mem_req_addr_i = a; p.mem_req_addr_q = nullptr; }
static uint64_t req_addr(const HartPorts& p) { return p.mem_req_addr_q ? *p.mem_req_addr_q : *p.mem_req_addr_i; }

static uint64_t cycle = 0;
static bool verbose = false;
[[noreturn]] static void mismatch(const char* what, uint64_t rtl, uint64_t mdl, const std::string& ctx = "") {
  std::printf("[cosim] MISMATCH at cycle %" PRIu64 ": %s: rtl=0x%" PRIx64 " model=0x%" PRIx64 " %s\n",
              cycle, what, rtl, mdl, ctx.c_str());
  std::exit(1);
}

// One uipi instruction from issue to its response.
struct Insn {
  bool active = false, issued = false;
  unsigned op = 0, rd = 0;
  uint64_t rs1 = 0, suist = 0, suirs = 0;
  model::Expect expect;
  uint64_t entry_addr = ~0ull;      // send: the table entry it loads (kept stable meanwhile)
  unsigned requests = 0;            // times it reached the UINTC
  uint64_t rd_value = 0;            // what the model says rd gets
  uint64_t started = 0;
};

// The testbench's side of one unit's D$ port: a load in s1/s2 or waiting for a miss.
struct MemLoad { bool busy = false; uint64_t addr = 0; uint64_t s2_at = 0, resp_at = 0; int kind = 0; };
enum { HIT, NACK, FAULT, MISS };

int main(int argc, char** argv) {
  uint64_t seed = 1, cycles = 100000;
  for (int i = 1; i < argc; i++) {
    if (!std::strncmp(argv[i], "+seed=", 6)) seed = std::strtoull(argv[i] + 6, nullptr, 0);
    else if (!std::strncmp(argv[i], "+cycles=", 8)) cycles = std::strtoull(argv[i] + 8, nullptr, 0);
    else if (!std::strcmp(argv[i], "+verbose")) verbose = true;
  }
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  auto top = std::make_unique<VUintcCosimTop>(ctx.get());
  VUintcCosimTop* t = top.get();
  std::vector<HartPorts> hp(NHARTS);
  BIND(0); BIND(1); BIND(2); BIND(3);
  static_assert(NHARTS == 4, "BIND one line per hart");

  // the RTL's slot state, through the scope table (public_flat_rd in cosim.vlt)
  const VerilatedScopeNameMap* scopes = ctx->scopeNameMap();
  std::vector<const uint64_t*> r_pending(NSLOTS);
  std::vector<const uint8_t*> r_active(NSLOTS), r_mode(NSLOTS);
  std::vector<const uint16_t*> r_hartid(NSLOTS);
  {
    const VerilatedScope* sc = nullptr;
    for (const auto& it : *scopes)
      if (it.second->varsp() && it.second->varsp()->count("pending_0")) sc = it.second;
    if (!sc) { std::printf("[cosim] UINTC state not visible (cosim.vlt)\n"); return 2; }
    auto var = [&](const std::string& n) {
      auto v = sc->varsp()->find(n.c_str());
      if (v == sc->varsp()->end()) { std::printf("[cosim] no %s\n", n.c_str()); std::exit(2); }
      return v->second.datap();
    };
    for (unsigned s = 0; s < NSLOTS; s++) {
      r_pending[s] = (const uint64_t*)var("pending_" + std::to_string(s));
      r_active[s] = (const uint8_t*)var("active_" + std::to_string(s));
      r_mode[s] = (const uint8_t*)var("mode_" + std::to_string(s));
      r_hartid[s] = (const uint16_t*)var("hartid_" + std::to_string(s));
    }
  }

  Rng rng(seed);
  // sender tables: MEM_PAGES pages of random entries at MEM_BASE
  std::vector<uint64_t> mem(MEM_PAGES * 512);
  auto random_entry = [&]() -> uint64_t {
    uint64_t slot = rng.chance(85) ? rng.below(NSLOTS) : rng.below(NSLOTS + 8);
    uint64_t vector = rng.below(64);
    return (slot << 48) | (vector << 16) | (rng.chance(85) ? 1 : 0);
  };
  for (auto& e : mem) e = random_entry();
  model::Uintc uintc(NSLOTS, NHARTS);
  model::Uipi uipi{NSLOTS, 32, [&](uint64_t a, uint64_t* v) {
    if (a < MEM_BASE || a >= MEM_BASE + mem.size() * 8) return false;
    *v = mem[(a - MEM_BASE) / 8];
    return true;
  }};

  std::vector<Insn> insn(NHARTS);
  std::vector<MemLoad> ld(NHARTS);
  std::vector<uint64_t> suist(NHARTS), suirs(NHARTS);
  auto random_suist = [&]() -> uint64_t {
    uint64_t en = rng.chance(90) ? 1ull << 63 : 0;
    uint64_t size = rng.chance(90) ? rng.below(4) : rng.below(4096);
    uint64_t ppn;
    unsigned k = rng.below(20);
    if (k < 16) ppn = (MEM_BASE >> 12) + rng.below(MEM_PAGES);
    else if (k < 18) ppn = (MEM_BASE >> 12) + MEM_PAGES + rng.below(16);   // no memory: load faults
    else ppn = rng.next() & ((1ull << 44) - 1);                            // mostly beyond 32 bits
    return en | (size << 44) | ppn;
  };
  auto random_suirs = [&]() -> uint64_t {
    uint64_t en = rng.chance(90) ? 1ull << 63 : 0;
    uint64_t index = rng.chance(90) ? rng.below(NSLOTS) : rng.below(1 << 16);
    return en | index;
  };
  for (unsigned h = 0; h < NHARTS; h++) { suist[h] = random_suist(); suirs[h] = random_suirs(); }

  // MMIO master state
  struct { bool busy = false; bool write = false; uint64_t addr = 0, data = 0; } ma;
  std::deque<std::pair<bool, uint64_t>> d_expect;   // (was a read, its value), in order

  // statistics
  uint64_t n_mmio_r = 0, n_mmio_w = 0, n_mmio_nonzero = 0, n_insn[5] = {}, n_insn_req[5] = {},
           n_read_nonzero = 0, n_core_wait = 0, n_wire_edges = 0, n_same_slot = 0, n_faults = 0,
           n_nacks = 0, n_misses = 0, n_table_writes = 0, n_low = 0;
  std::vector<bool> last_wire(NHARTS, false);

  // reset
  t->reset = 1;
  for (int i = 0; i < 5; i++) { t->clock = 0; t->eval(); t->clock = 1; t->eval(); }
  t->reset = 0; t->clock = 0; t->eval();

  for (cycle = 0; cycle < cycles; cycle++) {
    // ---------- drive inputs for this cycle ----------
    // MMIO: keep the access until accepted, then maybe start another
    if (!ma.busy && rng.chance(30)) {
      unsigned slot = rng.chance(85) ? rng.below(NSLOTS) : rng.chance(70) ? NSLOTS + rng.below(4) : rng.below(512);
      unsigned k = rng.below(100);
      unsigned reg; bool write;
      if (k < 25) { reg = model::REG_HIGH; write = false; }
      else if (k < 40) { reg = model::REG_SEND; write = true; }
      else if (k < 50) { reg = model::REG_HIGH; write = true; }
      else if (k < 65) { reg = model::REG_LOW; write = true; }
      else if (k < 75) { reg = model::REG_LOW; write = false; }
      else if (k < 85) { reg = model::REG_ACT; write = true; }
      else if (k < 93) { reg = model::REG_ACT; write = false; }
      else { reg = model::REG_SEND; write = false; }
      uint64_t data = rng.next();
      if (reg == model::REG_LOW) {
        uint64_t hart = rng.chance(85) ? rng.below(NHARTS) : rng.below(1 << 16);
        data = (data & ~0xffff0003ull) | (hart << 16) | (rng.chance(60) ? 1 : 0) | (rng.below(2) << 1);
      } else if (reg == model::REG_HIGH && write) {
        data = rng.chance(70) ? 1ull << rng.below(64) : data;
      }
      ma = {true, write, slot * model::SLOT_BYTES + reg, data};
    }
    t->mmio_a_valid = ma.busy;
    t->mmio_a_bits_opcode = ma.write ? 0 /* PutFullData */ : 4 /* Get */;
    t->mmio_a_bits_param = 0;
    t->mmio_a_bits_size = 3;
    t->mmio_a_bits_source = 0;
    t->mmio_a_bits_address = UINTC_BASE + ma.addr;
    t->mmio_a_bits_mask = 0xff;
    t->mmio_a_bits_data = ma.data;
    t->mmio_d_ready = rng.chance(80);

    // uipi: per hart, a new instruction when the last one has answered
    for (unsigned h = 0; h < NHARTS; h++) {
      HartPorts& p = hp[h];
      Insn& in = insn[h];
      if (!in.active && rng.chance(30)) {
        if (rng.chance(5)) suist[h] = random_suist();
        if (rng.chance(5)) suirs[h] = random_suirs();
        unsigned k = rng.below(100);
        unsigned op = k < 40 ? model::SEND : k < 70 ? model::READ : k < 80 ? model::WRITE : k < 90 ? model::ACTIVATE : model::DEACTIVATE;
        uint64_t rs1 = op == model::SEND ? (rng.chance(90) ? rng.below(600) : rng.next())
                     : op == model::WRITE ? (rng.chance(70) ? 1ull << rng.below(64) : rng.next())
                     : rng.next();
        in = Insn{};
        in.active = true; in.op = op; in.rs1 = rs1; in.rd = 1 + rng.below(31);
        in.suist = suist[h]; in.suirs = suirs[h]; in.started = cycle;
      }
      *p.cmd_valid = in.active && !in.issued;
      *p.funct = in.op; *p.rs2 = 0; *p.rs1_idx = 10; *p.xd = 1; *p.xs1 = 1; *p.xs2 = 0;
      *p.rd = in.rd; *p.opcode = OPCODE;
      *p.cmd_rs1 = in.rs1; *p.cmd_rs2 = 0; *p.suist = in.suist; *p.suirs = in.suirs;
      *p.resp_ready = rng.chance(80);
      // D$ port: accept a load sometimes; answer in s2 (2 cycles later) or after a miss
      *p.mem_req_ready = !ld[h].busy && rng.chance(75);
      *p.s2_nack = 0; *p.s2_xcpt_ae_ld = 0; *p.mem_resp_valid = 0; *p.mem_resp_data = 0;
      MemLoad& l = ld[h];
      if (l.busy && cycle == l.s2_at) {
        if (l.kind == NACK) *p.s2_nack = 1;
        else if (l.kind == FAULT) *p.s2_xcpt_ae_ld = 1;
      }
      if (l.busy && (l.kind == HIT || l.kind == MISS) && cycle == l.resp_at) {
        uint64_t v = 0;
        uipi.mem(l.addr, &v);
        *p.mem_resp_valid = 1;
        *p.mem_resp_data = v;
      }
    }

    // rewrite a table entry now and then, but never one a send in flight is about to load
    if (rng.chance(2)) {
      unsigned i = rng.below(mem.size());
      uint64_t a = MEM_BASE + i * 8;
      bool used = false;
      for (unsigned h = 0; h < NHARTS; h++) used |= insn[h].active && insn[h].entry_addr == a;
      if (!used) { mem[i] = random_entry(); n_table_writes++; }
    }

    t->eval();

    // ---------- what happened this cycle ----------
    bool a_fire = t->mmio_a_valid && t->mmio_a_ready;
    bool d_fire = t->mmio_d_valid && t->mmio_d_ready;
    model::Mmio m;
    if (a_fire) m = model::Mmio{true, ma.write, ma.addr, ma.data};
    std::vector<model::CoreReq> reqs(NHARTS);
    std::vector<bool> fire(NHARTS);
    for (unsigned h = 0; h < NHARTS; h++) {
      reqs[h] = model::CoreReq{bool(*hp[h].port_valid), *hp[h].port_op, *hp[h].port_slot, *hp[h].port_data};
      fire[h] = *hp[h].port_fire;
    }
    // acceptance of each core request
    std::vector<bool> ready = uintc.ready(m, reqs);
    for (unsigned h = 0; h < NHARTS; h++) {
      if (reqs[h].valid && bool(fire[h]) != ready[h]) mismatch("core port accepted", fire[h], ready[h], "hart " + std::to_string(h));
      if (reqs[h].valid && !fire[h]) n_core_wait++;
    }
    for (unsigned i = 0; i < NHARTS; i++)
      for (unsigned j = i + 1; j < NHARTS; j++)
        n_same_slot += fire[i] && fire[j] && reqs[i].slot == reqs[j].slot;

    // every slot's state and every wire, as they are now
    for (unsigned s = 0; s < NSLOTS; s++) {
      const model::Slot& x = uintc.slot[s];
      std::string c = "slot " + std::to_string(s);
      if (*r_pending[s] != x.pending) mismatch("pending", *r_pending[s], x.pending, c);
      if (bool(*r_active[s]) != x.active) mismatch("active", *r_active[s], x.active, c);
      if (bool(*r_mode[s]) != x.mode) mismatch("mode", *r_mode[s], x.mode, c);
      if (*r_hartid[s] != x.hartid) mismatch("hartid", *r_hartid[s], x.hartid, c);
    }
    for (unsigned h = 0; h < NHARTS; h++) {
      if (bool(*hp[h].usip) != uintc.wire[h]) mismatch("usip", *hp[h].usip, uintc.wire[h], "hart " + std::to_string(h));
      n_wire_edges += uintc.wire[h] != last_wire[h];
      last_wire[h] = uintc.wire[h];
    }

    // MMIO: the value an accepted access returns; compared when its D beat is taken
    if (a_fire) {
      uint64_t v = uintc.mmio_read(m);
      d_expect.emplace_back(!ma.write, v);
      if (ma.write) n_mmio_w++; else n_mmio_r++;
      if (!ma.write && v) n_mmio_nonzero++;
      n_low += ma.write && ma.addr % model::SLOT_BYTES == model::REG_LOW;
      ma.busy = false;
    }
    if (d_fire) {
      if (d_expect.empty()) mismatch("D beat without a request", 1, 0);
      auto [rd, v] = d_expect.front();
      d_expect.pop_front();
      if (t->mmio_d_bits_opcode != (rd ? 1 : 0)) mismatch("D opcode", t->mmio_d_bits_opcode, rd ? 1 : 0);
      if (rd && t->mmio_d_bits_data != v) mismatch("MMIO read", t->mmio_d_bits_data, v);
    }

    // uipi units: commands, table loads, UINTC requests, responses
    for (unsigned h = 0; h < NHARTS; h++) {
      HartPorts& p = hp[h];
      Insn& in = insn[h];
      std::string c = "hart " + std::to_string(h);
      if (*p.cmd_valid && *p.cmd_ready) {
        in.issued = true;
        in.expect = uipi.decode(in.op, in.rs1, in.suist, in.suirs);
        n_insn[in.op]++;
        if (in.op == model::SEND && (in.suist >> 63)) {
          uint64_t ppn = in.suist & ((1ull << 44) - 1);
          in.entry_addr = (ppn << 12) + in.rs1 * 8;
        }
        if (verbose) std::printf("%" PRIu64 " h%u op%u rs1=%" PRIx64 " suist=%" PRIx64 " suirs=%" PRIx64 " -> %s\n",
                                 cycle, h, in.op, in.rs1, in.suist, in.suirs, in.expect.request ? "request" : "none");
      }
      if (*p.mem_req_valid && *p.mem_req_ready) {
        MemLoad& l = ld[h];
        uint64_t v;
        l = MemLoad{true, req_addr(p), cycle + 2, 0, 0};
        if (!in.active || in.op != model::SEND) mismatch("table load outside a send", 1, 0, c);
        if (l.addr != in.entry_addr) mismatch("table load address", l.addr, in.entry_addr, c);
        if (!uipi.mem(l.addr, &v)) { l.kind = FAULT; n_faults++; }
        else if (rng.chance(15)) { l.kind = NACK; n_nacks++; }
        else if (rng.chance(30)) { l.kind = MISS; l.resp_at = cycle + 3 + rng.below(12); n_misses++; }
        else { l.kind = HIT; l.resp_at = cycle + 2; }
      }
      MemLoad& l = ld[h];
      if (l.busy && cycle >= l.s2_at && (l.kind == NACK || l.kind == FAULT || cycle >= l.resp_at)) l.busy = false;
      if (fire[h]) {
        if (!in.active || !in.issued) mismatch("UINTC request without an instruction", 1, 0, c);
        if (!in.expect.request) mismatch("UINTC request the spec forbids", reqs[h].op, in.op, c);
        if (in.requests++) mismatch("second UINTC request of one instruction", in.requests, 1, c);
        const model::CoreReq& e = in.expect.req;
        if (reqs[h].op != e.op) mismatch("request op", reqs[h].op, e.op, c);
        if (reqs[h].slot != e.slot) mismatch("request slot", reqs[h].slot, e.slot, c);
        uint64_t rd = reqs[h].op == model::SEND ? reqs[h].data & 63 : reqs[h].data;
        uint64_t ed = e.op == model::SEND ? e.data & 63 : e.data;
        if ((e.op == model::SEND || e.op == model::WRITE) && rd != ed) mismatch("request data", rd, ed, c);
        in.rd_value = uintc.core_resp(reqs[h]);
        n_insn_req[in.op]++;
      }
      if (*p.resp_valid && *p.resp_ready) {
        if (!in.active || !in.issued) mismatch("response without an instruction", 1, 0, c);
        if (in.requests != (in.expect.request ? 1u : 0u)) mismatch("UINTC requests of the instruction", in.requests, in.expect.request, c);
        if (*p.resp_rd != in.rd) mismatch("rd", *p.resp_rd, in.rd, c);
        if (*p.resp_data != in.rd_value) mismatch("uipi rd value", *p.resp_data, in.rd_value,
                                                  c + " op " + std::to_string(in.op));
        n_read_nonzero += in.op == model::READ && in.rd_value;
        in.active = false;
      }
      if (in.active && cycle - in.started > 2000) mismatch("instruction never answered", cycle - in.started, 0, c);
    }

    uintc.edge(m, reqs, [&] { std::vector<bool> a(NHARTS); for (unsigned h = 0; h < NHARTS; h++) a[h] = fire[h]; return a; }());
    t->clock = 1; t->eval();
    t->clock = 0; t->eval();
  }
  uint64_t insns = 0, reqn = 0;
  for (int i = 0; i < 5; i++) { insns += n_insn[i]; reqn += n_insn_req[i]; }
  std::printf("[cosim] seed=%" PRIu64 " cycles=%" PRIu64 " harts=%u slots=%u: no mismatch\n", seed, cycles, NHARTS, NSLOTS);
  std::printf("[cosim] uipi instructions %" PRIu64 " (send %" PRIu64 ", read %" PRIu64 ", write %" PRIu64
              ", activate %" PRIu64 ", deactivate %" PRIu64 "), %" PRIu64 " reached the UINTC, %" PRIu64 " non-zero reads\n",
              insns, n_insn[0], n_insn[1], n_insn[2], n_insn[3], n_insn[4], reqn, n_read_nonzero);
  std::printf("[cosim] table loads: %" PRIu64 " faults, %" PRIu64 " nacks, %" PRIu64 " misses; %" PRIu64 " table rewrites\n",
              n_faults, n_nacks, n_misses, n_table_writes);
  std::printf("[cosim] MMIO: %" PRIu64 " reads (%" PRIu64 " non-zero), %" PRIu64 " writes (%" PRIu64 " LOW)\n",
              n_mmio_r, n_mmio_nonzero, n_mmio_w, n_low);
  std::printf("[cosim] core reads held back %" PRIu64 " cycles; same-slot requests in one cycle %" PRIu64 "; wire edges %" PRIu64 "\n",
              n_core_wait, n_same_slot, n_wire_edges);
  return 0;
}
