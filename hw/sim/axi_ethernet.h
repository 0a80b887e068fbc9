// The board's AXI 1G/2.5G Ethernet Subsystem (PG138) as its driver sees it: the registers a
// driver uses (interrupts, unicast address and filter, RX/TX enable, speed, statistics, MDIO
// master with the KSZ9031 behind it), the TX and RX FIFOs between the AXI streams and the MAC,
// and a 1 Gb/s wire: a frame occupies it for (preamble 8 + frame padded to 60 + FCS 4 + IFG 12)
// bytes x 8 ns = 0.8 cycles per byte at 100 MHz. Frames on the streams carry no FCS (the MAC
// adds it on TX and strips it on RX). Registers outside the implemented set stop the simulation
// through the fatal hook rather than reading as something a driver might believe.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <string>
#include <vector>
#include "mdio_phy.h"

class AxiEthernet {
 public:
  using Frame = std::vector<uint8_t>;
  using Fatal = std::function<void(const std::string&)>;

  // Register offsets (PG138).
  enum : uint32_t {
    RAF = 0x000, TPF = 0x004, IFGP = 0x008, IS = 0x00C, IP = 0x010, IE = 0x014, TTAG = 0x018,
    RTAG = 0x01C, UAWL = 0x020, UAWU = 0x024, TPID0 = 0x028, TPID1 = 0x02C, PPST = 0x030,
    STATS = 0x200, STATS_END = 0x400,
    RCW0 = 0x400, RCW1 = 0x404, TC = 0x408, FCC = 0x40C, EMMC = 0x410, PHYC = 0x414,
    ID = 0x4F8, ABILITY = 0x4FC,
    MC = 0x500, MCR = 0x504, MWD = 0x508, MRD = 0x50C,
    MIS = 0x600, MIP = 0x620, MIE = 0x640, MIC = 0x660,
    UAW0 = 0x700, UAW1 = 0x704, FMI = 0x708, AF0 = 0x710, AF1 = 0x714,
  };
  // IS / IP / IE bits.
  enum : uint32_t { INT_RX_CMPLT = 1u << 2, INT_RX_REJECT = 1u << 3, INT_RX_FIFO_OVR = 1u << 4,
                    INT_TX_CMPLT = 1u << 5, INT_MGT_RDY = 1u << 7 };
  enum : uint32_t { RCW_RX_EN = 1u << 28, TC_TX_EN = 1u << 28, CW_RST = 1u << 31, CW_FCS = 1u << 29,
                    CW_JUMBO = 1u << 30 };
  // Statistics counter indices (offset = STATS + 8 * index).
  enum Stat : unsigned {
    RX_BYTES = 0, TX_BYTES = 1, RX_UNDERSIZE = 2, RX_64 = 4, RX_OVERSIZE = 10, TX_64 = 11,
    RX_GOOD = 18, RX_BCAST = 20, RX_MCAST = 21, TX_GOOD = 27, TX_BCAST = 28, TX_MCAST = 29,
    NSTATS = 64,
  };

  static constexpr size_t kFifoBytes = 16384;     // TX and RX FIFO depth each
  static constexpr size_t kMaxFrame = 1514, kMaxJumbo = 9014;

  AxiEthernet(Ksz9031& phy, Fatal fatal) : phy_(phy), fatal_(std::move(fatal)) { reset(); }

  // Where transmitted frames go (the harness: pcap/trace, and the host link if attached).
  std::function<void(const Frame&)> wire_out;

  void reset() {
    raf_ = tpf_ = ifgp_ = is_ = ie_ = ttag_ = rtag_ = tpid0_ = tpid1_ = 0;
    is_ = INT_MGT_RDY;                       // the transceiver is ready from reset on (RGMII)
    uaw_lo_ = uaw_hi_ = fmi_ = af0_ = af1_ = 0;
    rcw0_ = rcw1_ = tc_ = fcc_ = phyc_ = 0;
    emmc_ = 2u << 30;                        // 1000 Mb/s
    mc_ = mwd_ = mrd_ = 0;
    mdio_busy_until_ = 0; mdio_busy_ = false;
    mis_ = mie_ = 0;
    for (auto& s : stats_) s = 0;
    flush_streams();
    speed_warned_ = false;
  }

  // The DMA's reset also resets the stream interfaces (board wiring of the reset outputs).
  void flush_streams() {
    tx_fifo_.clear(); tx_fifo_bytes_ = 0;
    rx_fifo_.clear(); rx_fifo_bytes_ = 0;
  }

  // ---- registers (32-bit) -------------------------------------------------------------
  uint32_t read(uint32_t off) {
    if (off >= STATS && off < STATS_END) {
      uint64_t v = stats_[(off - STATS) / 8];
      return (off & 4) ? uint32_t(v >> 32) : uint32_t(v);
    }
    switch (off) {
      case RAF: return raf_;
      case TPF: return tpf_;
      case IFGP: return ifgp_;
      case IS: return is_;
      case IP: return is_ & ie_;
      case IE: return ie_;
      case TTAG: return ttag_;
      case RTAG: return rtag_;
      case UAWL: case UAW0: return uaw_lo_;
      case UAWU: case UAW1: return uaw_hi_;
      case TPID0: return tpid0_;
      case TPID1: return tpid1_;
      case PPST: return phy_.link() ? 0x3 : 0;        // link status as the PCS/PMA sees it
      case RCW0: return rcw0_;
      case RCW1: return rcw1_;
      case TC: return tc_;
      case FCC: return fcc_;
      case EMMC: return emmc_ | (1u << 29);          // bit 29: RGMII interface
      case PHYC: return phyc_;
      case ID: return 0x09000000;                    // major version 9
      case ABILITY: return 0x00000107;               // 10/100/1000 Mb/s, statistics counters
      case MC: return mc_;
      case MCR: return (mcr_ & ~((1u << 7) | (1u << 11))) | (mdio_busy_ ? 0 : 1u << 7);
      case MWD: return mwd_;
      case MRD: return mrd_;
      case MIS: return mis_;
      case MIP: return mis_ & mie_;
      case MIE: return mie_;
      case FMI: return fmi_;
      case AF0: return af0_;
      case AF1: return af1_;
      default: unimplemented("read", off); return 0;
    }
  }

  void write(uint32_t off, uint32_t v, uint64_t now) {
    if (off >= STATS && off < STATS_END) return;     // counters are read-only
    switch (off) {
      case RAF: raf_ = v; return;
      case TPF: tpf_ = v; return;
      case IFGP: ifgp_ = v; return;
      case IS: is_ = (is_ & ~v) | INT_MGT_RDY; return;   // write 1 to clear; MgtRdy stays while ready
      case IP: return;
      case IE: ie_ = v; return;
      case TTAG: ttag_ = v; return;
      case RTAG: rtag_ = v; return;
      case UAWL: case UAW0: uaw_lo_ = v; return;
      case UAWU: case UAW1: uaw_hi_ = v & 0xffff; return;
      case TPID0: tpid0_ = v; return;
      case TPID1: tpid1_ = v; return;
      case PPST: return;
      case RCW0: rcw0_ = v; return;
      case RCW1:
        if (v & CW_FCS) return fatal_("[nic] Ethernet RCW1: in-band FCS (bit 29) is not modelled");
        rcw1_ = v & ~CW_RST;
        return;
      case TC:
        if (v & CW_FCS) return fatal_("[nic] Ethernet TC: in-band FCS (bit 29) is not modelled");
        tc_ = v & ~CW_RST;
        return;
      case FCC: fcc_ = v; return;
      case EMMC:
        emmc_ = v & 0xc0000000;
        if ((v >> 30) != 2 && !speed_warned_) {
          speed_warned_ = true;
          fprintf(stderr, "[nic] Ethernet EMMC speed set to %u, but the PHY link is 1000 Mb/s: frames keep 1 Gb/s timing\n", v >> 30);
        }
        return;
      case PHYC: phyc_ = v; return;
      case ID: case ABILITY: return;
      case MC: mc_ = v & 0x7f; return;
      case MCR: mcr_write(v, now); return;
      case MWD: mwd_ = v & 0xffff; return;
      case MRD: return;
      case MIS: mis_ &= ~v; return;
      case MIP: return;
      case MIE: mie_ = v; return;
      case MIC: mis_ &= ~v; return;
      case FMI: fmi_ = v; return;
      case AF0: af0_ = v; return;
      case AF1: af1_ = v; return;
      default: unimplemented("write", off); return;
    }
  }

  bool irq() const { return (is_ & ie_) != 0; }     // `interrupt` output (PLIC irq.eth)
  bool mac_irq() const { return false; }            // nothing in the model raises mac_irq

  // ---- AXI streams (to/from the DMA) -------------------------------------------------
  size_t tx_fifo_free() const { return kFifoBytes - tx_fifo_bytes_; }
  void tx_stream_frame(Frame f) {                 // a whole frame from MM2S (SOF..EOF)
    tx_fifo_bytes_ += f.size();
    tx_fifo_.push_back(std::move(f));
  }
  bool rx_available() const { return !rx_fifo_.empty(); }
  const Frame& rx_front() const { return rx_fifo_.front(); }
  void rx_pop() { rx_fifo_bytes_ -= rx_fifo_.front().size(); rx_fifo_.pop_front(); }

  // ---- the wire ------------------------------------------------------------------------
  // A frame arriving from the link (no FCS); it is serialized at 1 Gb/s behind earlier ones.
  void wire_in(Frame f) { rx_wire_.push_back(std::move(f)); }

  // Wire time of a frame in tenths of a cycle: 8 ns per byte at 10 ns per cycle.
  static uint64_t wire_tenths(size_t len) { return (8 + std::max<size_t>(len, 60) + 4 + 12) * 8; }

  void tick(uint64_t now) {
    const uint64_t t10 = now * 10;
    if (mdio_busy_ && now >= mdio_busy_until_) mdio_busy_ = false;
    // TX: the MAC takes the next frame when enabled and the wire is free.
    if (tx_busy_ && t10 >= tx_done_at_) {
      tx_busy_ = false;
      const Frame& f = tx_frame_;
      count_frame(f, false);
      is_ |= INT_TX_CMPLT;
      if (wire_out) wire_out(f);   // with the link down it reaches nothing (no cable)
    }
    if (!tx_busy_ && (tc_ & TC_TX_EN) && !tx_fifo_.empty()) {
      tx_frame_ = std::move(tx_fifo_.front());
      tx_fifo_bytes_ -= tx_frame_.size();
      tx_fifo_.pop_front();
      if (tx_frame_.size() < 60) tx_frame_.resize(60, 0);   // the MAC pads short frames
      tx_busy_ = true;
      tx_done_at_ = std::max(t10, tx_done_at_) + wire_tenths(tx_frame_.size());
    }
    // RX: a frame has arrived once its last byte is off the wire.
    if (!rx_busy_ && !rx_wire_.empty()) {
      rx_frame_ = std::move(rx_wire_.front());
      rx_wire_.pop_front();
      rx_busy_ = true;
      rx_done_at_ = std::max(t10, rx_done_at_) + wire_tenths(rx_frame_.size());
    }
    if (rx_busy_ && t10 >= rx_done_at_) {
      rx_busy_ = false;
      receive(std::move(rx_frame_));
    }
  }

  bool wire_idle() const { return !tx_busy_ && !rx_busy_ && rx_wire_.empty(); }
  uint64_t stat(unsigned i) const { return stats_[i]; }
  uint32_t is() const { return is_; }

 private:
  void unimplemented(const char* what, uint32_t off) {
    char buf[128];
    snprintf(buf, sizeof buf, "[nic] unimplemented Ethernet register %s at offset 0x%03x", what, off);
    fatal_(buf);
  }

  void mcr_write(uint32_t v, uint64_t now) {
    mcr_ = v & 0x1f1fc000;
    if (!(v & (1u << 11))) return;
    if (mdio_busy_) return fatal_("[nic] Ethernet MDIO: initiate while a transaction is in progress (MCR ready = 0)");
    unsigned div = mc_ & 0x3f;
    if (!(mc_ & (1u << 6)) || div == 0)
      return fatal_("[nic] Ethernet MDIO: initiate with the MDIO master disabled or clock divisor 0 (set MC first)");
    unsigned phyad = (v >> 24) & 0x1f, regad = (v >> 16) & 0x1f, op = (v >> 14) & 3;
    if (op == 2) mrd_ = phyad == Ksz9031::kAddress ? phy_.read(regad) : 0xffff;
    else if (op == 1) { if (phyad == Ksz9031::kAddress) phy_.write(regad, uint16_t(mwd_)); }
    else return fatal_("[nic] Ethernet MDIO: MCR op must be 01 (write) or 10 (read)");
    // 32 preamble + 32 frame bits, MDC = clock / (2 * (divisor + 1)).
    mdio_busy_ = true;
    mdio_busy_until_ = now + 64ull * 2 * (div + 1);
  }

  bool is_broadcast(const Frame& f) const {
    for (int i = 0; i < 6; i++) if (f[i] != 0xff) return false;
    return true;
  }

  bool accept(const Frame& f) const {
    if (fmi_ & (1u << 31)) return true;                  // promiscuous
    if (is_broadcast(f)) return true;
    uint8_t mac[6] = {uint8_t(uaw_lo_), uint8_t(uaw_lo_ >> 8), uint8_t(uaw_lo_ >> 16), uint8_t(uaw_lo_ >> 24),
                      uint8_t(uaw_hi_), uint8_t(uaw_hi_ >> 8)};
    for (int i = 0; i < 6; i++) if (f[i] != mac[i]) return false;
    return true;
  }

  void receive(Frame f) {
    if (!(rcw1_ & RCW_RX_EN)) return;                    // receiver off: the MAC ignores the wire
    if (f.size() < 60) f.resize(60, 0);                  // what a minimum frame looks like after FCS strip
    size_t max = (rcw1_ & CW_JUMBO) ? kMaxJumbo : kMaxFrame;
    if (f.size() > max) { stats_[RX_OVERSIZE]++; is_ |= INT_RX_REJECT; return; }
    if (!accept(f)) { is_ |= INT_RX_REJECT; return; }
    if (rx_fifo_bytes_ + f.size() > kFifoBytes) {
      is_ |= INT_RX_FIFO_OVR;
      // As on the board the frame is lost (TCP recovers after its timeout, in simulated time);
      // said on stderr because a drop costs a retransmission timeout of simulated time.
      if (overflows_++ % 1000 == 0)
        fprintf(stderr, "[nic] RX FIFO full (%zu bytes waiting for S2MM descriptors): frame dropped (%llu so far)\n",
                rx_fifo_bytes_, (unsigned long long)overflows_);
      return;
    }
    count_frame(f, true);
    is_ |= INT_RX_CMPLT;
    rx_fifo_bytes_ += f.size();
    rx_fifo_.push_back(std::move(f));
  }

  void count_frame(const Frame& f, bool rx) {
    size_t n = f.size() + 4;                            // counters include the FCS
    unsigned bucket = n <= 64 ? 0 : n <= 127 ? 1 : n <= 255 ? 2 : n <= 511 ? 3 : n <= 1023 ? 4 : 5;
    stats_[rx ? RX_BYTES : TX_BYTES] += n;
    stats_[(rx ? RX_64 : TX_64) + bucket]++;
    stats_[rx ? RX_GOOD : TX_GOOD]++;
    if (is_broadcast(f)) stats_[rx ? RX_BCAST : TX_BCAST]++;
    else if (f[0] & 1) stats_[rx ? RX_MCAST : TX_MCAST]++;
  }

  Ksz9031& phy_;
  Fatal fatal_;
  uint32_t raf_, tpf_, ifgp_, is_, ie_, ttag_, rtag_, tpid0_, tpid1_;
  uint32_t uaw_lo_, uaw_hi_, fmi_, af0_, af1_;
  uint32_t rcw0_, rcw1_, tc_, fcc_, emmc_, phyc_;
  uint32_t mc_, mcr_ = 0, mwd_, mrd_, mis_, mie_;
  bool mdio_busy_ = false, speed_warned_ = false;
  uint64_t mdio_busy_until_ = 0;
  uint64_t stats_[NSTATS];
  uint64_t overflows_ = 0;
  std::deque<Frame> tx_fifo_, rx_fifo_, rx_wire_;
  size_t tx_fifo_bytes_ = 0, rx_fifo_bytes_ = 0;
  Frame tx_frame_, rx_frame_;
  bool tx_busy_ = false, rx_busy_ = false;
  uint64_t tx_done_at_ = 0, rx_done_at_ = 0;  // tenths of a cycle
};
