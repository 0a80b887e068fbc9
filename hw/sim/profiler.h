// Cycle profiler and region counters of the harness, fed from each core's write-back stage.
//
// Attribution: every cycle of a hart is charged to the next instruction that retires on it (the
// cycles since the previous retirement: pipeline refills, cache and TLB misses, a trap's entry all
// land on the instruction that waited for them), or to the hart's wfi bucket while it sleeps in
// wfi. Retirement is read as a step of CSRFile.uintr_instret across the clock edge; the pc, raw
// and expanded instruction, privilege and satp root PPN are read before the edge, so they are the
// ones of the instruction that retired. With +profile-every=N only every Nth cycle is looked at and
// charged N cycles to the instruction in write-back then (classic sampling; cheaper).
//
// Call stacks: a shadow stack per hart from the retired stream. jal/jalr writing ra (x1/x5) is a
// call (the next retired pc is the callee), jalr x0 through ra/t0 a return. A rise in privilege
// (trap) pushes the handler as a frame; a fall restores the stack of the level returned to: a
// user thread's stack is saved on its trap under (satp root, sp) and found again when a thread
// with that satp and sp resumes, so switches between threads keep each one's stack. Frames are
// interned in a trie (node = parent + entry pc + privilege + satp root): a charge is one hash-map
// update.
//
// Page-table walks: the cycles during which the tile's PTW is busy are counted with each charge
// (the instruction waiting for the walk) and per region (`walker=`): TLB refill cost.
//
// Region markers: `slti x0, x0, ID` begins and `sltiu x0, x0, ID` ends region ID (0..2047) on
// the hart that retires it (RISC-V HINTs for custom use: no architectural effect, any privilege).
// The harness keeps count, total, min and max cycles per hart and region; +profile-region=ID
// charges only the cycles a hart spends inside region ID (+profile-region-any: while region ID
// is open on any hart).
//
// Timeline (+profile-trace=FILE): also one line per retired instruction that is charged (so the
// same region filter applies), `cycle hart prv satp pc`, and one per region marker anywhere,
// `cycle hart region ID begin|end`, up to a bound of lines: what each hart
// did when, so the critical path of work that crosses harts (a lock hand-over, a wake-up) can be
// read off one round (scripts/profile.py --timeline).
#pragma once
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <vector>

struct HartProbe {
  const uint64_t* instret = nullptr;
  const uint64_t* pc = nullptr;    // 40-bit virtual address, sign-extended by sext_pc
  const uint8_t* prv = nullptr;
  const uint8_t* wfi = nullptr;
  const uint32_t* inst = nullptr;  // expanded (RVC already decompressed)
  const uint32_t* raw = nullptr;   // as fetched (16 bits for RVC)
  const uint64_t* satp_ppn = nullptr;
  const uint64_t* rf = nullptr;    // x1..x31 at index 31 - n (rocket's RegFile stores rf(~addr))
  const uint8_t* ptw = nullptr;    // the tile's page-table walker state: non-zero while it walks
  bool profilable() const { return instret && pc && prv && wfi && inst && raw && satp_ppn; }
};

static inline uint64_t sext_pc(uint64_t pc) {
  pc &= (1ull << 40) - 1;
  return pc >> 39 ? pc | ~((1ull << 40) - 1) : pc;  // Sv39 addresses are sign-extended
}

class Profiler {
 public:
  static constexpr uint64_t kWfiPc = 1;  // never an instruction address (odd)
  static constexpr unsigned kMaxDepth = 96;

  // region_filter < 0: every cycle; else only cycles inside that region (on the same hart, or
  // with region_any on any hart: for work that crosses harts).
  Profiler(const std::vector<HartProbe>& harts, bool profile, uint64_t every, int region_filter, bool region_any)
      : harts_(harts), profile_(profile), every_(every ? every : 1), filter_(region_filter), any_(region_any),
        st_(harts.size()) {
    nodes_.push_back({0, 0, 0, 0, 0, false});  // root
  }

  // Between the falling-edge eval and the rising edge: latch what is in write-back.
  void before(uint64_t cycle) {
    bool open_anywhere = false;
    if (any_ && filter_ >= 0)
      for (const HartState& s : st_) open_anywhere |= s.open_at[filter_] != kClosed;
    for (size_t h = 0; h < harts_.size(); h++) {
      const HartProbe& p = harts_[h];
      HartState& s = st_[h];
      s.instret = *p.instret;
      s.pc = sext_pc(*p.pc);
      s.inst = *p.inst;
      s.raw = *p.raw;
      s.prv_now = *p.prv & 3;
      s.satp_now = *p.satp_ppn;
      const bool walking = p.ptw && *p.ptw;
      s.walk_cycles += walking;
      if (!profile_) continue;
      s.sp = p.rf ? p.rf[31 - 2] : 0;  // before the edge: not yet written by the instruction in write-back
      bool in = filter_ < 0 || open_anywhere || s.open_at[filter_] != kClosed;
      s.in = in;
      if (every_ == 1) {
        if (!in) continue;
        if (*p.wfi) charge(h, kWfiPc, 1, 0, false); else { s.pending++; s.pending_walk += walking; }
      } else if (cycle % every_ == 0 && in) {
        charge(h, *p.wfi ? kWfiPc : s.pc, every_, 0, false);
      }
    }
    cycle_ = cycle;
  }

  // After the rising edge: the latched instruction retired if instret stepped.
  void after() {
    for (size_t h = 0; h < harts_.size(); h++) {
      HartState& s = st_[h];
      if (*harts_[h].instret == s.instret) continue;
      retire(h, s);
    }
  }

  // Write the timeline to `path`, at most `max_lines` lines.
  bool trace_to(const char* path, uint64_t max_lines) {
    trace_ = fopen(path, "w");
    if (!trace_) { perror(path); return false; }
    trace_left_ = max_lines;
    fprintf(trace_, "# uintr-soc sim timeline v1: cycle hart prv satp pc (hw/sim/profiler.h)\n");
    return true;
  }

  ~Profiler() {
    if (trace_) fclose(trace_);
  }

  void print_regions(FILE* f) const {
    for (size_t h = 0; h < st_.size(); h++)
      for (const auto& it : st_[h].regions) {
        const Region& r = it.second;
        fprintf(f, "[sim] region %u hart %zu: count=%" PRIu64 " cycles=%" PRIu64 " mean=%" PRIu64 " min=%" PRIu64 " max=%" PRIu64
                " walker=%" PRIu64 "\n", it.first, h, r.count, r.total, r.count ? r.total / r.count : 0, r.count ? r.min : 0, r.max, r.walk);
      }
  }

  bool write(const char* path, uint64_t cycles) const {
    FILE* f = fopen(path, "w");
    if (!f) { perror(path); return false; }
    fprintf(f, "# uintr-soc sim profile v1 (hw/sim/profiler.h; scripts/profile.py reads it)\n");
    fprintf(f, "cycles %" PRIu64 " every %" PRIu64 " region %d region-any %d harts %zu\n", cycles, every_, filter_, any_,
            st_.size());
    for (size_t i = 1; i < nodes_.size(); i++)
      fprintf(f, "node %zu %u %u %#" PRIx64 " %#" PRIx64 " %d\n", i, nodes_[i].parent, nodes_[i].prv, nodes_[i].satp,
              nodes_[i].pc, nodes_[i].trap);
    for (size_t h = 0; h < st_.size(); h++) {
      for (const auto& it : st_[h].samples) {
        const Key& k = it.first;
        fprintf(f, "pc %zu %u %u %#" PRIx64 " %#" PRIx64 " %" PRIu64 " %" PRIu64 " %#x %" PRIu64 "\n", h, k.node, k.prv, k.satp,
                k.pc, it.second.cycles, it.second.retired, it.second.raw, it.second.walk);
      }
      for (const auto& it : st_[h].regions)
        fprintf(f, "region %zu %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", h, it.first, it.second.count,
                it.second.total, it.second.count ? it.second.min : 0, it.second.max, it.second.walk);
    }
    fclose(f);
    return true;
  }

 private:
  static constexpr uint64_t kClosed = ~0ull;
  struct Node { uint32_t parent; uint8_t prv; uint64_t satp, pc; uint16_t depth; bool trap; };
  struct Key {
    uint32_t node; uint8_t prv; uint64_t satp, pc;
    bool operator==(const Key& o) const { return node == o.node && prv == o.prv && satp == o.satp && pc == o.pc; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.pc * 0x9e3779b97f4a7c15ull ^ (k.satp << 7) ^ ((uint64_t)k.node << 34) ^ k.prv);
    }
  };
  struct Sample { uint64_t cycles = 0, retired = 0, walk = 0; uint32_t raw = 0; };
  struct Region { uint64_t count = 0, total = 0, min = ~0ull, max = 0, walk = 0; };
  struct HartState {
    // latched before the edge
    uint64_t instret = 0, pc = 0, satp_now = 0, sp = 0;
    uint32_t inst = 0, raw = 0;
    uint8_t prv_now = 3;
    bool in = false;  // inside the region filter this cycle
    // shadow stack
    uint32_t node = 0, overflow = 0;
    bool started = false, call_pending = false;
    uint8_t last_prv = 3;
    uint64_t last_satp = 0;
    uint32_t saved[4] = {0, 0, 0, 0};    // stack of each level when it trapped upwards
    uint8_t entered_from[4] = {3, 3, 3, 3};  // level each level was last entered from by a trap
    std::unordered_map<uint64_t, uint32_t> user_stacks;  // (satp, sp) hash -> node
    uint64_t pending = 0, pending_walk = 0, walk_cycles = 0;  // walk: page-table walker busy
    std::unordered_map<Key, Sample, KeyHash> samples;
    std::unordered_map<unsigned, Region> regions;
    uint64_t open_at[2048], walk_at[2048];
    HartState() { for (auto& o : open_at) o = kClosed; }
  };

  static uint64_t user_key(uint64_t satp, uint64_t sp) { return satp * 0x100000001b3ull ^ sp; }

  uint32_t child(uint32_t parent, uint64_t pc, uint8_t prv, uint64_t satp, bool trap) {
    Key k{parent, static_cast<uint8_t>(prv | trap << 2), satp, pc};
    auto it = children_.find(k);
    if (it != children_.end()) return it->second;
    nodes_.push_back({parent, prv, satp, pc, static_cast<uint16_t>(nodes_[parent].depth + 1), trap});
    uint32_t id = static_cast<uint32_t>(nodes_.size() - 1);
    children_.emplace(k, id);
    return id;
  }

  void push(HartState& s, uint64_t pc, uint8_t prv, bool trap) {
    if (nodes_[s.node].depth >= kMaxDepth) { s.overflow++; return; }
    s.node = child(s.node, pc, prv, s.satp_now, trap);
  }

  void pop(HartState& s) {
    if (s.overflow) { s.overflow--; return; }
    if (s.node && !nodes_[s.node].trap) s.node = nodes_[s.node].parent;
  }

  void charge(size_t h, uint64_t pc, uint64_t cycles, uint32_t raw, bool retired, uint64_t walk = 0) {
    HartState& s = st_[h];
    Sample& e = s.samples[Key{s.node, s.prv_now, s.satp_now, pc}];
    e.cycles += cycles;
    e.walk += walk;
    if (retired) { e.retired++; e.raw = raw; }
  }

  void retire(size_t h, HartState& s) {
    const uint8_t prv = s.prv_now;
    if (profile_) {
      if (!s.started) {
        s.started = true;
      } else if (prv > s.last_prv) {  // trap: keep the interrupted level's stack
        if (s.last_prv == 0) s.user_stacks[user_key(s.last_satp, s.sp)] = s.node;
        s.saved[s.last_prv] = s.node;
        s.entered_from[prv] = s.last_prv;
        s.overflow = 0;
        push(s, s.pc, prv, true);
      } else if (prv < s.last_prv) {  // xret: back to the stack of whatever resumes
        s.overflow = 0;
        if (prv == 0) {
          auto it = s.user_stacks.find(user_key(s.satp_now, s.sp));
          s.node = it == s.user_stacks.end() ? 0 : it->second;
        } else if (s.entered_from[s.last_prv] == prv) {
          s.node = s.saved[prv];
        } else {  // e.g. M redirecting a user trap to S: a fresh entry into S
          s.node = s.saved[s.entered_from[s.last_prv]];
          push(s, s.pc, prv, true);
        }
      } else if (s.call_pending) {
        push(s, s.pc, prv, false);
      }
      s.call_pending = false;
      if (trace_ && s.in && trace_left_) {
        trace_left_--;
        fprintf(trace_, "%" PRIu64 " %zu %u %#" PRIx64 " %#" PRIx64 "\n", cycle_, h, prv, s.satp_now, s.pc);
      }
      if (every_ == 1 && (s.pending || filter_ < 0)) {
        charge(h, s.pc, s.pending, s.raw, true, s.pending_walk);
        s.pending = s.pending_walk = 0;
      }
      s.last_prv = prv;
      s.last_satp = s.satp_now;
    }
    const uint32_t i = s.inst;
    const uint32_t op = i & 0x7f, rd = (i >> 7) & 31, rs1 = (i >> 15) & 31;
    if (op == 0x6f || op == 0x67) {  // jal / jalr
      if (rd == 1 || rd == 5) s.call_pending = true;
      else if (op == 0x67 && rd == 0 && (rs1 == 1 || rs1 == 5) && profile_) pop(s);
    } else if ((i & 0xfffff) == 0x02013 || (i & 0xfffff) == 0x03013) {  // slti/sltiu x0, x0, id
      unsigned id = (i >> 20) & 0x7ff;
      if (trace_ && trace_left_) {
        trace_left_--;
        fprintf(trace_, "%" PRIu64 " %zu region %u %s\n", cycle_, h, id, (i & 0x1000) ? "end" : "begin");
      }
      if ((i & 0x1000) == 0) {
        s.open_at[id] = cycle_;
        s.walk_at[id] = s.walk_cycles;
      } else if (s.open_at[id] != kClosed) {
        uint64_t d = cycle_ - s.open_at[id];
        Region& r = s.regions[id];
        r.count++; r.total += d;
        r.walk += s.walk_cycles - s.walk_at[id];
        if (d < r.min) r.min = d;
        if (d > r.max) r.max = d;
        s.open_at[id] = kClosed;
      }
    }
  }

  const std::vector<HartProbe>& harts_;
  const bool profile_;
  const uint64_t every_;
  const int filter_;
  const bool any_;
  std::vector<HartState> st_;
  std::vector<Node> nodes_;
  std::unordered_map<Key, uint32_t, KeyHash> children_;  // (parent, prv|trap, pc) -> node
  uint64_t cycle_ = 0;
  FILE* trace_ = nullptr;
  uint64_t trace_left_ = 0;
};
