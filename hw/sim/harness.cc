// Verilator harness for the SoC top used on the board: DRAM on the AXI4 memory port, the UART,
// the NIC's registers (AXI DMA + AXI Ethernet, nic.h) and the exit device on the MMIO port, the
// NIC's DMA master on the frontbus slave port, the UART and NIC on their PLIC sources.
//
//   sim +image=build/sw/image.bin [+max-cycles=N] [+fst=out.fst +fst-start=N +fst-end=N]
//       [+mem-latency=N] [+progress=N] [+inspect=N] [+uart-stdin]
//       [+nic] [+hostfwd=HOSTPORT[:GUESTPORT]] [+nic-poll=N] [+nic-pcap=FILE] [+nic-trace]
//       [+profile=FILE [+profile-every=N] [+profile-region=ID [+profile-region-any]] [+profile-trace=FILE [+profile-trace-max=N]]]
//
// +inspect=N prints every hart's pc, privilege, wfi and instret every N cycles; SIGUSR1 prints
// them once; Ctrl-C (SIGINT) stops the run after the current cycle and prints them.
// +profile=FILE writes where each hart's cycles went (profiler.h; scripts/profile.py reads it);
// region markers in the software are always counted and printed at the end.
// Exit status: the status software wrote to the exit device; 124 if +max-cycles ran out; 130
// if stopped by SIGINT; 3 if software used the NIC in a way the model does not implement.
#include <algorithm>
#include <chrono>
#include <csignal>
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
#include "nic.h"
#include "profiler.h"
#ifdef SIM_JTAG
#include "jtag.h"
#endif
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
using FbusIdT = std::remove_reference_t<decltype(VTOP::l2_frontend_bus_axi4_0_aw_bits_id)>;

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

// Per-hart state the harness reads by name (probes.vlt makes the signals public): the
// retired-instruction counter core patch 0004 adds to CSRFile, the privilege level, wfi flag and
// satp root of the CSR file, and the PC and instruction in the core's write-back stage and the
// integer register file (HartProbe, profiler.h). The tiles are instantiated in hart order as
// tile, tile_1, tile_2, ... so sorting the CSRFile scopes by (name length, name) gives hart
// order; the core (Rocket) is the CSRFile scope's parent.
static const VerilatedVar* scope_varp(const VerilatedScopeNameMap* scopes, const std::string& scope, const char* var) {
  auto it = scopes->find(scope.c_str());
  if (it == scopes->end() || !it->second->varsp()) return nullptr;
  auto v = it->second->varsp()->find(var);
  return v == it->second->varsp()->end() ? nullptr : &v->second;
}

static const void* scope_var(const VerilatedScopeNameMap* scopes, const std::string& scope, const char* var) {
  const VerilatedVar* v = scope_varp(scopes, scope, var);
  return v ? v->datap() : nullptr;
}

// The register file has no name of its own in the Verilog (FIRRTL calls it _T_<n>); the Makefile
// makes the core's one 31 x 64-bit memory public (rf.vlt), and it is recognised by its shape.
static const uint64_t* find_regfile(const VerilatedScopeNameMap* scopes, const std::string& core) {
  auto it = scopes->find(core.c_str());
  if (it == scopes->end() || !it->second->varsp()) return nullptr;
  for (const auto& v : *it->second->varsp())
    if (v.second.udims() == 1 && v.second.unpacked().elements() == 31 && v.second.entSize() == 8)
      return static_cast<const uint64_t*>(v.second.datap());
  return nullptr;
}

static std::vector<HartProbe> find_hart_probes() {
  std::vector<std::string> csr_scopes;
  const VerilatedScopeNameMap* scopes = Verilated::threadContextp()->scopeNameMap();
  if (!scopes) return {};
  for (const auto& it : *scopes)
    if (scope_var(scopes, it.first, "uintr_instret")) csr_scopes.emplace_back(it.first);
  std::sort(csr_scopes.begin(), csr_scopes.end(), [](const auto& a, const auto& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  std::vector<HartProbe> out;
  for (const auto& csr : csr_scopes) {
    std::string core = csr.substr(0, csr.rfind('.'));
    HartProbe p;
    p.instret = static_cast<const uint64_t*>(scope_var(scopes, csr, "uintr_instret"));
    p.pc = static_cast<const uint64_t*>(scope_var(scopes, core, "wb_reg_pc"));
    p.prv = static_cast<const uint8_t*>(scope_var(scopes, csr, "reg_mstatus_prv"));
    p.wfi = static_cast<const uint8_t*>(scope_var(scopes, csr, "reg_wfi"));
    p.inst = static_cast<const uint32_t*>(scope_var(scopes, core, "wb_reg_inst"));
    p.raw = static_cast<const uint32_t*>(scope_var(scopes, core, "wb_reg_raw_inst"));
    p.satp_ppn = static_cast<const uint64_t*>(scope_var(scopes, csr, "reg_satp_ppn"));
    p.rf = find_regfile(scopes, core);
    p.ptw = static_cast<const uint8_t*>(scope_var(scopes, core.substr(0, core.rfind('.')) + ".ptw", "state"));
    out.push_back(p);
  }
  return out;
}

// One line per hart: where it is and what it has done. `cycles` counts from reset release.
static void print_harts(const std::vector<HartProbe>& harts, uint64_t cycles) {
  for (size_t h = 0; h < harts.size(); h++) {
    const HartProbe& p = harts[h];
    fprintf(stderr, "[sim] hart %zu: cycles=%" PRIu64 " instret=%" PRIu64, h, cycles, *p.instret);
    if (p.pc && p.prv)
      fprintf(stderr, " pc=%#" PRIx64 " priv=%c%s", sext_pc(*p.pc), "USHM"[*p.prv & 3], p.wfi && *p.wfi ? " wfi" : "");
    fputc('\n', stderr);
  }
  if (harts.empty()) fprintf(stderr, "[sim] no per-hart probes found (probes.vlt)\n");
}

// Ctrl-C stops the run after the current cycle (state printed, status 130); SIGUSR1 prints the
// harts' state and goes on.
static volatile sig_atomic_t g_stop = 0, g_dump = 0;
static void on_signal(int sig) { (sig == SIGUSR1 ? g_dump : g_stop) = 1; }

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  const char* image = plusarg(argc, argv, "image");
  if (!image || !*image) {
    fprintf(stderr, "usage: %s +image=FLAT_BINARY [+max-cycles=N] [+fst=FILE +fst-start=N +fst-end=N]\n"
                    "          [+mem-latency=N] [+progress=N] [+inspect=N] [+uart-stdin] [+jtag-port=N (debug config)]\n"
                    "          [+profile=FILE [+profile-every=N] [+profile-region=ID [+profile-region-any]] [+profile-trace=FILE [+profile-trace-max=N]]]\n"
                    "          [+nic] [+hostfwd=HOSTPORT[:GUESTPORT]] [+nic-poll=N] [+nic-pcap=FILE] [+nic-trace]\n", argv[0]);
    return 2;
  }
  const uint64_t max_cycles = plusarg_u64(argc, argv, "max-cycles", 0);
  const uint64_t progress = plusarg_u64(argc, argv, "progress", 10'000'000);
  const uint64_t latency = plusarg_u64(argc, argv, "mem-latency", 20);
  const uint64_t inspect = plusarg_u64(argc, argv, "inspect", 0);

  auto top = std::make_unique<VTOP>();
  Memory<IdT> dram(AXI4_PINS(top, mem_axi4_0), PLATFORM_MEMMAP_DRAM_BASE, PLATFORM_MEMMAP_DRAM_SIZE, latency);
  if (!dram.load_flat(image, PLATFORM_IMAGE_FIRMWARE_BASE)) return 2;
  Uart16550 uart(plusarg(argc, argv, "uart-stdin") != nullptr);
  ExitDevice exitdev;
  // The NIC is always on the bus (as on the board); +nic / +hostfwd plug in the cable.
  NicOptions nic_opt;
  if (const char* fwd = plusarg(argc, argv, "hostfwd")) {
    nic_opt.host_port = atoi(fwd);
    const char* colon = strchr(fwd, ':');
    nic_opt.guest_port = colon ? atoi(colon + 1) : nic_opt.host_port;
    if (nic_opt.host_port <= 0 || nic_opt.host_port > 65535 || nic_opt.guest_port <= 0 || nic_opt.guest_port > 65535) {
      fprintf(stderr, "sim: +hostfwd=HOSTPORT[:GUESTPORT] wants ports 1..65535, got '%s'\n", fwd);
      return 2;
    }
  }
  nic_opt.link = plusarg(argc, argv, "nic") != nullptr || nic_opt.host_port;
  nic_opt.poll_every = std::max<uint64_t>(1, plusarg_u64(argc, argv, "nic-poll", 256));
  if (const char* p = plusarg(argc, argv, "nic-pcap")) nic_opt.pcap = p;
  nic_opt.trace = plusarg(argc, argv, "nic-trace") != nullptr;
  top->l2_frontend_bus_axi4_0_aw_bits_lock = 0;
  top->l2_frontend_bus_axi4_0_aw_bits_cache = 0;
  top->l2_frontend_bus_axi4_0_aw_bits_prot = 0;
  top->l2_frontend_bus_axi4_0_aw_bits_qos = 0;
  top->l2_frontend_bus_axi4_0_ar_bits_lock = 0;
  top->l2_frontend_bus_axi4_0_ar_bits_cache = 0;
  top->l2_frontend_bus_axi4_0_ar_bits_prot = 0;
  top->l2_frontend_bus_axi4_0_ar_bits_qos = 0;
  Nic<FbusIdT> nic(AXI4_PINS(top, l2_frontend_bus_axi4_0), nic_opt);
  MmioBus<MmioIdT> mmio(AXI4_PINS(top, mmio_axi4_0), uart, exitdev, &nic);

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

  const std::vector<HartProbe> harts = find_hart_probes();
  const char* profile_path = plusarg(argc, argv, "profile");
  const bool profile = profile_path && *profile_path;
  bool probes_ok = !harts.empty();
  for (const HartProbe& p : harts) probes_ok = probes_ok && p.profilable();
  if (!probes_ok) fprintf(stderr, "sim: write-back probes missing (probes.vlt): no profile, no region counts\n");
  if (profile && probes_ok && !harts[0].rf) fprintf(stderr, "sim: register file probe missing: user call stacks restart at each switch\n");
  const long region_filter = static_cast<long>(plusarg_u64(argc, argv, "profile-region", ~0ull));
  Profiler prof(harts, profile && probes_ok, plusarg_u64(argc, argv, "profile-every", 1),
                region_filter >= 0 && region_filter < 2048 ? static_cast<int>(region_filter) : -1,
                plusarg(argc, argv, "profile-region-any") != nullptr);
  const char* trace_path = plusarg(argc, argv, "profile-trace");
  if (trace_path && *trace_path) {
    if (!profile || !probes_ok) {
      fprintf(stderr, "sim: +profile-trace needs +profile (and the write-back probes)\n");
      return 2;
    }
    if (!prof.trace_to(trace_path, plusarg_u64(argc, argv, "profile-trace-max", 4000000))) return 2;
  }
  signal(SIGINT, on_signal);
  signal(SIGUSR1, on_signal);
#ifdef SIM_JTAG
  // The debug config's JTAG DTM, driven by OpenOCD over remote bitbang (jtag.h). IDCODE fields
  // as rocket-chip's own test harness sets them (version 1, manufacturer 0x489).
  RemoteBitbang jtag(static_cast<uint16_t>(plusarg_u64(argc, argv, "jtag-port", 9823)));
  if (!jtag.ok()) return 2;
  top->debug_systemjtag_mfr_id = 0x489;
  top->debug_systemjtag_part_number = 0;
  top->debug_systemjtag_version = 1;
#endif

  auto wall0 = std::chrono::steady_clock::now();
  auto last = wall0;
  uint64_t last_cycle = 0, cycle = 0;
  top->reset = 1;
  for (;; cycle++) {
    if (cycle == 16) top->reset = 0;
    dram.drive();
    mmio.drive();
    nic.drive();
    top->interrupts = (uart.irq() ? 1u << (PLATFORM_IRQ_UART - 1) : 0) | nic.irq_bits();
#ifdef SIM_JTAG
    if (top->reset) {     // the DTM's reset is synchronous to TCK: clock it during reset
      top->debug_systemjtag_reset = 1;
      top->debug_systemjtag_jtag_TCK = cycle & 1;
    } else {
      jtag.tick(top->debug_systemjtag_jtag_TDO_data);
      top->debug_systemjtag_reset = jtag.trst;
      top->debug_systemjtag_jtag_TCK = jtag.tck;
      top->debug_systemjtag_jtag_TMS = jtag.tms;
      top->debug_systemjtag_jtag_TDI = jtag.tdi;
    }
#endif
    top->clock = 0;
    top->eval();
    dram.sample();
    mmio.sample();
    nic.sample();
#if VM_TRACE
    if (fst && cycle >= fst_start && cycle < fst_end) fst->dump(2 * cycle);
#endif
    const bool probe = probes_ok && !top->reset;
    if (probe) prof.before(cycle - 16);
    top->clock = 1;
    top->eval();
    if (probe) prof.after();
#if VM_TRACE
    if (fst && cycle >= fst_start && cycle < fst_end) fst->dump(2 * cycle + 1);
#endif
    if (!top->reset) {
      dram.commit();
      mmio.commit();
      nic.commit(cycle);
    }
    if (exitdev.done || g_stop || nic.failed()) break;
    if (max_cycles && cycle >= max_cycles) break;
    if (g_dump || (inspect && cycle && cycle % inspect == 0)) {
      g_dump = 0;
      fprintf(stderr, "[sim] state at cycle %" PRIu64 ":\n", cycle);
      print_harts(harts, cycle > 16 ? cycle - 16 : 0);
    }
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
  int status = exitdev.done ? exitdev.status : nic.failed() ? 3 : g_stop ? 130 : 124;
  fprintf(stderr, "[sim] %s after %" PRIu64 " cycles in %.1f s (%.1f kHz), status %d\n",
          exitdev.done ? "exit" : nic.failed() ? "NIC model stop" : g_stop ? "stopped" : "timeout", cycle, secs,
          cycle / secs / 1e3, status);
  if (nic.failed()) fprintf(stderr, "[sim] %s\n", nic.failure().c_str());
  // Every hart shares the one clock: cycles since reset released, instructions it retired, and
  // where it stopped.
  print_harts(harts, cycle > 16 ? cycle - 16 : 0);
  prof.print_regions(stderr);
  if (profile && probes_ok && prof.write(profile_path, cycle > 16 ? cycle - 16 : 0))
    fprintf(stderr, "[sim] profile written to %s\n", profile_path);
#if VM_TRACE
  if (fst) fst->close();
#endif
  top->final();
  return status;
}
