// Verilator harness for the SoC top used on the board: DRAM on the AXI4 memory port, the UART
// and exit device on the MMIO port, the DMA slave port idle, the UART on external interrupt 1.
//
//   sim +image=build/sw/image.bin [+max-cycles=N] [+fst=out.fst +fst-start=N +fst-end=N]
//       [+mem-latency=N] [+progress=N] [+uart-stdin]
//
// Exit status: the status software wrote to the exit device; 124 if +max-cycles ran out.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include VTOP_HEADER
#include "devices.h"
#include "memory.h"
#include "verilated.h"
#include "verilated_syms.h"
#include <algorithm>
#include <utility>
#include <vector>
#if VM_TRACE
#include "verilated_fst_c.h"
#endif

// Verilator 5 declares ports as references: strip them to get the value types.
using IdT = std::remove_reference_t<decltype(VTOP::mem_axi4_0_aw_bits_id)>;
using MmioIdT = std::remove_reference_t<decltype(VTOP::mmio_axi4_0_aw_bits_id)>;

static const char* plusarg(int argc, char** argv, const char* name) {
  size_t n = strlen(name);
  for (int i = 1; i < argc; i++)
    if (argv[i][0] == '+' && !strncmp(argv[i] + 1, name, n) && (argv[i][n + 1] == '=' || argv[i][n + 1] == 0))
      return argv[i][n + 1] == '=' ? argv[i] + n + 2 : "";
  return nullptr;
}

static uint64_t plusarg_u64(int argc, char** argv, const char* name, uint64_t dflt) {
  const char* v = plusarg(argc, argv, name);
  return v && *v ? strtoull(v, nullptr, 0) : dflt;
}

// Per-hart retired-instruction counters (core patch 0004: CSRFile.uintr_instret, made readable
// by probes.vlt). Found by scope name; the tiles are instantiated in hart order as tile, tile_1,
// tile_2, ... so sorting by (name length, name) gives hart order.
static std::vector<const uint64_t*> find_instret_probes() {
  std::vector<std::pair<std::string, const uint64_t*>> found;
  const VerilatedScopeNameMap* scopes = Verilated::threadContextp()->scopeNameMap();
  if (scopes)
    for (const auto& it : *scopes) {
      const VerilatedScope* scope = it.second;
      if (!scope->varsp()) continue;
      auto var = scope->varsp()->find("uintr_instret");
      if (var != scope->varsp()->end())
        found.emplace_back(it.first, static_cast<const uint64_t*>(var->second.datap()));
    }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first.size() != b.first.size() ? a.first.size() < b.first.size() : a.first < b.first;
  });
  std::vector<const uint64_t*> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  const char* image = plusarg(argc, argv, "image");
  if (!image || !*image) {
    fprintf(stderr, "usage: %s +image=FLAT_BINARY [+max-cycles=N] [+fst=FILE +fst-start=N +fst-end=N]\n"
                    "          [+mem-latency=N] [+progress=N] [+uart-stdin]\n", argv[0]);
    return 2;
  }
  const uint64_t max_cycles = plusarg_u64(argc, argv, "max-cycles", 0);
  const uint64_t progress = plusarg_u64(argc, argv, "progress", 10'000'000);
  const uint64_t latency = plusarg_u64(argc, argv, "mem-latency", 20);

  auto top = std::make_unique<VTOP>();
  Memory<IdT> dram(AXI4_PINS(top, mem_axi4_0), PLATFORM_MEMMAP_DRAM_BASE, PLATFORM_MEMMAP_DRAM_SIZE, latency);
  if (!dram.load_flat(image, PLATFORM_IMAGE_FIRMWARE_BASE)) return 2;
  Uart16550 uart(plusarg(argc, argv, "uart-stdin") != nullptr);
  ExitDevice exitdev;
  MmioBus<MmioIdT> mmio(AXI4_PINS(top, mmio_axi4_0), uart, exitdev);

#if VM_TRACE
  std::unique_ptr<VerilatedFstC> fst;
  const char* fst_path = plusarg(argc, argv, "fst");
  const uint64_t fst_start = plusarg_u64(argc, argv, "fst-start", 0);
  const uint64_t fst_end = plusarg_u64(argc, argv, "fst-end", UINT64_MAX);
  if (fst_path && *fst_path) {
    Verilated::traceEverOn(true);
    fst = std::make_unique<VerilatedFstC>();
    top->trace(fst.get(), 99);
    fst->open(fst_path);
  }
#else
  if (plusarg(argc, argv, "fst")) fprintf(stderr, "sim: built without tracing; rebuild with TRACE=1 for +fst\n");
#endif

  // The DMA slave port is idle in the simulation: no requests, always ready for responses.
  top->l2_frontend_bus_axi4_0_aw_valid = 0;
  top->l2_frontend_bus_axi4_0_w_valid = 0;
  top->l2_frontend_bus_axi4_0_ar_valid = 0;
  top->l2_frontend_bus_axi4_0_b_ready = 1;
  top->l2_frontend_bus_axi4_0_r_ready = 1;

  auto wall0 = std::chrono::steady_clock::now();
  auto last = wall0;
  uint64_t last_cycle = 0, cycle = 0;
  top->reset = 1;
  for (;; cycle++) {
    if (cycle == 16) top->reset = 0;
    dram.drive();
    mmio.drive();
    top->interrupts = uart.irq() ? 1u << (PLATFORM_IRQ_UART - 1) : 0;
    top->clock = 0;
    top->eval();
    dram.sample();
    mmio.sample();
#if VM_TRACE
    if (fst && cycle >= fst_start && cycle < fst_end) fst->dump(2 * cycle);
#endif
    top->clock = 1;
    top->eval();
#if VM_TRACE
    if (fst && cycle >= fst_start && cycle < fst_end) fst->dump(2 * cycle + 1);
#endif
    if (!top->reset) {
      dram.commit();
      mmio.commit();
    }
    if (exitdev.done) break;
    if (max_cycles && cycle >= max_cycles) break;
    if (progress && cycle && cycle % progress == 0) {
      auto now = std::chrono::steady_clock::now();
      double s = std::chrono::duration<double>(now - last).count();
      fprintf(stderr, "[sim] %" PRIu64 " cycles, %.1f kHz\n", cycle, (cycle - last_cycle) / s / 1e3);
      last = now;
      last_cycle = cycle;
    }
  }
  fflush(stdout);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  int status = exitdev.done ? exitdev.status : 124;
  fprintf(stderr, "[sim] %s after %" PRIu64 " cycles in %.1f s (%.1f kHz), status %d\n",
          exitdev.done ? "exit" : "timeout", cycle, secs, cycle / secs / 1e3, status);
  // Every hart shares the one clock: cycles since reset released, and instructions it retired.
  auto instret = find_instret_probes();
  for (size_t h = 0; h < instret.size(); h++)
    fprintf(stderr, "[sim] hart %zu: cycles=%" PRIu64 " instret=%" PRIu64 "\n", h, cycle > 16 ? cycle - 16 : 0, *instret[h]);
  if (instret.empty()) fprintf(stderr, "[sim] no per-hart instret probes found (probes.vlt)\n");
#if VM_TRACE
  if (fst) fst->close();
#endif
  top->final();
  return status;
}
