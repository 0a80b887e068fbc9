// The board's network interface in the simulation: AXI DMA (axi_dma.h) + AXI Ethernet
// (axi_ethernet.h) + KSZ9031 PHY (mdio_phy.h) at their board addresses on the MMIO port, the
// DMA mastering memory through the frontbus AXI4 port (axi_master.h), and optionally the host
// network through libslirp (slirp_link.h). The harness only wires this to the Verilated top.
//
// Plusargs (parsed by the harness into NicOptions):
//   +nic               attach the host network (PHY link up); without it the link is down
//   +hostfwd=H[:G]     TCP 127.0.0.1:H -> guest 10.0.2.15:G (G defaults to H); implies +nic
//   +nic-poll=N        service slirp's sockets every N cycles (default 256)
//   +nic-pcap=FILE     every frame on the wire, both directions, stamped with simulated time
//   +nic-trace         a line per frame and per descriptor on stderr
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include "axi_dma.h"
#include "axi_ethernet.h"
#include "axi_master.h"
#include "devices.h"
#include "mdio_phy.h"
#include "platform.h"
#include "slirp_link.h"

struct NicOptions {
  bool link = false;        // +nic
  int host_port = 0, guest_port = 0;
  uint64_t poll_every = 256;
  std::string pcap;
  bool trace = false;
};

template <typename IdT>
class Nic : public MmioTarget {
 public:
  Nic(const Axi4Pins<IdT>& fbus, const NicOptions& o)
      : opt_(o), master_(fbus), phy_(o.link), eth_(phy_, [this](const std::string& m) { fatal(m); }),
        dma_(master_, eth_, [this](const std::string& m) { fatal(m); }) {
    dma_.trace = o.trace;
    if (o.link) {
      link_ = std::make_unique<SlirpLink>([this](SlirpLink::Frame f) {
        record(f, "rx");
        eth_.wire_in(std::move(f));
      });
      if (o.host_port) {
        if (!link_->forward_tcp(o.host_port, o.guest_port ? o.guest_port : o.host_port)) {
          fprintf(stderr, "[nic] cannot forward 127.0.0.1:%d (port in use?)\n", o.host_port);
          exit(2);
        }
        fprintf(stderr, "[nic] connect to 127.0.0.1:%d (forwarded to 10.0.2.15:%d; slirp runs on simulated time)\n",
                o.host_port, o.guest_port ? o.guest_port : o.host_port);
      }
    }
    eth_.wire_out = [this](const AxiEthernet::Frame& f) {
      record(f, "tx");
      if (link_) link_->from_guest(f);
    };
    if (!o.pcap.empty()) open_pcap(o.pcap);
  }
  ~Nic() override { if (pcap_) fclose(pcap_); }

  bool claims(uint64_t a) const override { return owns(a); }
  static bool owns(uint64_t a) {
    return (a >= PLATFORM_MEMMAP_DMA_BASE && a - PLATFORM_MEMMAP_DMA_BASE < PLATFORM_MEMMAP_DMA_SIZE) ||
           (a >= PLATFORM_MEMMAP_ETHERNET_BASE && a - PLATFORM_MEMMAP_ETHERNET_BASE < PLATFORM_MEMMAP_ETHERNET_SIZE);
  }

  // 32-bit registers. A 64-bit access covers two registers, low address first (as the board's
  // 64-to-32-bit AXI width converter splits it).
  uint32_t read32(uint64_t a) {
    if (a >= PLATFORM_MEMMAP_ETHERNET_BASE) return eth_.read(uint32_t(a - PLATFORM_MEMMAP_ETHERNET_BASE));
    return dma_.read(uint32_t(a - PLATFORM_MEMMAP_DMA_BASE));
  }
  void write32(uint64_t a, uint32_t v) {
    if (a >= PLATFORM_MEMMAP_ETHERNET_BASE) eth_.write(uint32_t(a - PLATFORM_MEMMAP_ETHERNET_BASE), v, now_);
    else dma_.write(uint32_t(a - PLATFORM_MEMMAP_DMA_BASE), v);
  }

  uint64_t read_beat(uint64_t addr, uint8_t size, uint8_t&) override {
    if (size < 2) { fatal("[nic] byte/halfword read of a NIC register (registers are 32-bit)"); return 0; }
    uint64_t v = read32(addr & ~3ull);
    if (size == 3) v |= uint64_t(read32((addr & ~7ull) + 4)) << 32;
    return (addr & 4) ? v << 32 : v;
  }
  void write_beat(uint64_t addr, uint64_t data, uint8_t strb, uint8_t&) override {
    uint8_t lo = strb & 0x0f, hi = strb >> 4;
    if ((lo && lo != 0x0f) || (hi && hi != 0x0f))
      return fatal("[nic] byte/halfword write to a NIC register (registers are 32-bit)");
    if (lo) write32(addr & ~7ull, uint32_t(data));
    if (hi) write32((addr & ~7ull) + 4, uint32_t(data >> 32));
  }

  // Per cycle: drive the frontbus master before the clock edges are evaluated, sample after the
  // falling edge, and advance everything after the rising edge.
  void drive() { master_.drive(); }
  void sample() { master_.sample(); }
  void commit(uint64_t cycle) {
    now_ = cycle;
    master_.commit();
    dma_.tick(cycle);
    dma_.retry();
    eth_.tick(cycle);
    if (link_) {
      link_->set_cycle(cycle);
      if (cycle % opt_.poll_every == 0) link_->poll_once();
    }
  }

  // Interrupt lines, as bits of the SoC's `interrupts` input (bit n = PLIC source n+1).
  uint32_t irq_bits() const {
    return (eth_.mac_irq() ? 1u << (PLATFORM_IRQ_ETH_MAC - 1) : 0) | (eth_.irq() ? 1u << (PLATFORM_IRQ_ETH - 1) : 0) |
           (dma_.mm2s_irq() ? 1u << (PLATFORM_IRQ_DMA_TX - 1) : 0) | (dma_.s2mm_irq() ? 1u << (PLATFORM_IRQ_DMA_RX - 1) : 0);
  }

  // Test hook: every frame on the wire (tx = from the guest), at the time it is on the wire.
  std::function<void(const std::vector<uint8_t>&, bool tx)> tap;

  // Set when the software used the NIC in a way the model does not implement: the harness stops.
  bool failed() const { return !fatal_.empty(); }
  const std::string& failure() const { return fatal_; }

  AxiEthernet& eth() { return eth_; }
  AxiDma& dma() { return dma_; }
  SlirpLink* link() { return link_.get(); }
  Axi4Master<IdT>& master() { return master_; }

 private:
  void fatal(const std::string& m) {
    if (fatal_.empty()) { fatal_ = m; fprintf(stderr, "%s\n", m.c_str()); }
  }

  void open_pcap(const std::string& path) {
    pcap_ = fopen(path.c_str(), "wb");
    if (!pcap_) { perror(path.c_str()); exit(2); }
    // nanosecond-resolution pcap, Ethernet link type
    uint32_t h[6] = {0xa1b23c4d, 0x00040002, 0, 0, 65535, 1};
    fwrite(h, sizeof h, 1, pcap_);
  }

  void record(const std::vector<uint8_t>& f, const char* dir) {
    if (tap) tap(f, dir[0] == 't');
    if (opt_.trace) fprintf(stderr, "[nic] %s frame %zu bytes at cycle %llu\n", dir, f.size(), (unsigned long long)now_);
    if (!pcap_) return;
    uint64_t ns = now_ * SlirpLink::kNsPerCycle;
    uint32_t r[4] = {uint32_t(ns / 1000000000), uint32_t(ns % 1000000000), uint32_t(f.size()), uint32_t(f.size())};
    fwrite(r, sizeof r, 1, pcap_);
    fwrite(f.data(), 1, f.size(), pcap_);
    fflush(pcap_);
  }

  NicOptions opt_;
  Axi4Master<IdT> master_;
  Ksz9031 phy_;
  AxiEthernet eth_;
  AxiDma dma_;
  std::unique_ptr<SlirpLink> link_;
  FILE* pcap_ = nullptr;
  uint64_t now_ = 0;
  std::string fatal_;
};
