// The board's AXI DMA (PG021) in scatter-gather mode with 64-bit descriptor addresses, the
// data realignment engine and the status stream on: MM2S feeds the Ethernet's TX stream, S2MM
// takes its RX stream and writes the RX status words into the APP fields. Descriptors and data
// move through DmaBus (the frontbus AXI4 master in the harness), each step waiting for its
// responses as the engine does: fetch the descriptor, move the buffer, then write its status.
// Unsupported modes (direct register mode, keyhole, cyclic) stop the simulation.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>
#include "axi_ethernet.h"
#include "axi_master.h"

class AxiDma {
 public:
  using Fatal = std::function<void(const std::string&)>;
  enum : uint32_t { DMACR = 0x00, DMASR = 0x04, CURDESC = 0x08, CURDESC_MSB = 0x0C, TAILDESC = 0x10,
                    TAILDESC_MSB = 0x14, SG_CTL = 0x2C, S2MM = 0x30 };
  enum : uint32_t {
    CR_RS = 1u << 0, CR_RESET = 1u << 2, CR_KEYHOLE = 1u << 3, CR_CYCLIC = 1u << 4,
    CR_IOC_EN = 1u << 12, CR_DLY_EN = 1u << 13, CR_ERR_EN = 1u << 14,
    SR_HALTED = 1u << 0, SR_IDLE = 1u << 1, SR_SGINCLD = 1u << 3, SR_DMA_INT = 1u << 4,
    SR_DMA_SLV = 1u << 5, SR_DMA_DEC = 1u << 6, SR_SG_INT = 1u << 8, SR_SG_SLV = 1u << 9,
    SR_SG_DEC = 1u << 10, SR_IOC = 1u << 12, SR_DLY = 1u << 13, SR_ERR = 1u << 14,
  };
  // Descriptor fields.
  enum : uint32_t { D_NEXT = 0x00, D_BUF = 0x08, D_CTRL = 0x18, D_STATUS = 0x1C, D_APP = 0x20, D_SIZE = 0x40 };
  enum : uint32_t { LEN_MASK = (1u << 26) - 1, CTRL_EOF = 1u << 26, CTRL_SOF = 1u << 27,
                    ST_RXEOF = 1u << 26, ST_RXSOF = 1u << 27, ST_INT_ERR = 1u << 28, ST_SLV_ERR = 1u << 29,
                    ST_DEC_ERR = 1u << 30, ST_CMPLT = 1u << 31 };
  static constexpr uint64_t kDelayUnit = 125;  // cycles per IRQDelay count (delay timer resolution)

  AxiDma(DmaBus& bus, AxiEthernet& eth, Fatal fatal) : bus_(bus), eth_(eth), fatal_(std::move(fatal)) {
    ch_[0].s2mm = false;
    ch_[1].s2mm = true;
    reset_all();
  }

  uint32_t read(uint32_t off) {
    if (off == SG_CTL) return sg_ctl_;
    Channel* c = channel(off);
    if (!c) { unimplemented("read", off); return 0; }
    switch (off % S2MM) {
      case DMACR: return c->cr | (1u << 1) | (resetting_ ? CR_RESET : 0u);
      case DMASR: return status(*c);
      case CURDESC: return uint32_t(c->cur);
      case CURDESC_MSB: return uint32_t(c->cur >> 32);
      case TAILDESC: return uint32_t(c->tail);
      case TAILDESC_MSB: return uint32_t(c->tail >> 32);
    }
    unimplemented("read", off);
    return 0;
  }

  void write(uint32_t off, uint32_t v) {
    if (off == SG_CTL) { sg_ctl_ = v & 0x0f0f; return; }   // SG cache/user bits: no effect on a coherent port
    Channel* c = channel(off);
    if (!c) return unimplemented("write", off);
    switch (off % S2MM) {
      case DMACR: return write_cr(*c, v);
      case DMASR: c->sr &= ~(v & (SR_IOC | SR_DLY | SR_ERR)); return;
      case CURDESC: if (halted(*c)) c->cur = (c->cur & ~0xffffffffull) | (v & ~0x3fu); return;
      case CURDESC_MSB: if (halted(*c)) c->cur = (c->cur & 0xffffffffull) | (uint64_t(v) << 32); return;
      case TAILDESC_MSB: c->tail_hi = v; return;
      case TAILDESC:
        if (halted(*c)) return;                 // PG021: no effect while halted
        c->tail = (uint64_t(c->tail_hi) << 32) | (v & ~0x3fu);
        c->tail_valid = true;
        // The engine compares the tail with descriptors as it FETCHES them (it fetches ahead):
        // a new tail written while the old tail's descriptor is in flight lets it go on.
        if (c->busy && c->at_tail && c->tail != c->cur) c->at_tail = false;
        if (c->idle && c->cur_done) { c->cur = c->next; c->cur_done = false; }
        c->idle = false;
        return;
    }
    unimplemented("write", off);
  }

  bool mm2s_irq() const { return irq(ch_[0]); }
  bool s2mm_irq() const { return irq(ch_[1]); }

  void tick(uint64_t now) {
    now_ = now;
    if (resetting_ && !bus_.busy()) resetting_ = false;
    if (resetting_) return;
    for (Channel& c : ch_) {
      if (c.dly_deadline && now >= c.dly_deadline) {
        c.dly_deadline = 0;
        c.sr |= SR_DLY;
        c.thr_count = threshold(c);
      }
      if (c.busy || c.halted || c.error) continue;
      if (!(c.cr & CR_RS)) { c.halted = true; continue; }       // stop at a descriptor boundary
      if (!c.tail_valid || c.idle) continue;
      if (c.s2mm && !eth_.rx_available()) continue;              // nothing to receive yet
      fetch(c);
    }
  }

  bool trace = false;

 private:
  struct Channel {
    bool s2mm = false;
    uint32_t cr = 0, sr = 0, tail_hi = 0;
    bool halted = true, idle = false, error = false, busy = false, tail_valid = false, cur_done = false;
    bool at_tail = false;         // the descriptor in flight was the tail when it was fetched
    uint64_t cur = 0, tail = 0, next = 0;
    uint8_t thr_count = 1;
    uint64_t dly_deadline = 0;
    // the descriptor being processed
    uint64_t d_next = 0, d_buf = 0; uint32_t d_ctrl = 0, d_status = 0;
    std::vector<uint8_t> frame;   // MM2S: the frame gathered so far (SOF..EOF)
    size_t rx_off = 0;            // S2MM: bytes of the RX FIFO's front frame already written
  };

  static uint8_t threshold(const Channel& c) { return uint8_t(c.cr >> 16); }
  static bool halted(const Channel& c) { return c.halted && !(c.cr & CR_RS); }
  static bool irq(const Channel& c) {
    return ((c.sr & SR_IOC) && (c.cr & CR_IOC_EN)) || ((c.sr & SR_DLY) && (c.cr & CR_DLY_EN)) ||
           ((c.sr & SR_ERR) && (c.cr & CR_ERR_EN));
  }

  uint32_t status(const Channel& c) const {
    uint32_t dly = c.dly_deadline ? uint32_t((c.dly_deadline - now_ + kDelayUnit - 1) / kDelayUnit) : 0;
    return c.sr | (c.halted ? SR_HALTED : 0u) | (c.idle && !c.halted ? SR_IDLE : 0u) | SR_SGINCLD |
           (uint32_t(c.thr_count) << 16) | (std::min<uint32_t>(dly, 255) << 24);
  }

  Channel* channel(uint32_t off) {
    if (off <= TAILDESC_MSB) return &ch_[0];
    if (off >= S2MM && off <= S2MM + TAILDESC_MSB) return &ch_[1];
    return nullptr;
  }

  void unimplemented(const char* what, uint32_t off) {
    char buf[160];
    snprintf(buf, sizeof buf, "[nic] unimplemented DMA register %s at offset 0x%02x (scatter-gather mode only)", what, off);
    fatal_(buf);
  }

  void reset_all() {
    for (Channel& c : ch_) {
      bool s2mm = c.s2mm;
      c = Channel();
      c.s2mm = s2mm;
      c.cr = 1u << 16;       // IRQThreshold 1
    }
    sg_ctl_ = 0;
    pending_tx_ = nullptr;
    gen_++;                  // answers to requests issued before the reset are dropped
    resetting_ = bus_.busy();
    eth_.flush_streams();
  }

  void write_cr(Channel& c, uint32_t v) {
    if (v & CR_RESET) { reset_all(); return; }
    if (v & (CR_KEYHOLE | CR_CYCLIC)) return fatal_("[nic] DMA: keyhole and cyclic BD modes are not modelled");
    uint32_t thr = (v >> 16) & 0xff;
    if (thr == 0) thr = threshold(c);
    else c.thr_count = uint8_t(thr);
    bool was_run = c.cr & CR_RS;
    c.cr = (v & (CR_RS | CR_IOC_EN | CR_DLY_EN | CR_ERR_EN | 0xff000000u)) | (thr << 16);
    if ((v & CR_RS) && !was_run && !c.error) {
      c.halted = false;
      c.idle = false;
      c.tail_valid = false;
      c.cur_done = false;
    }
    if (!(v & CR_RS) && !c.busy) c.halted = true;
  }

  void fail(Channel& c, uint32_t sr_bits, const char* what) {
    c.sr |= sr_bits | SR_ERR;
    c.error = true;
    c.halted = true;
    c.busy = false;
    c.cr &= ~CR_RS;
    if (trace) fprintf(stderr, "[nic] DMA %s error at descriptor 0x%llx: %s\n", c.s2mm ? "S2MM" : "MM2S",
                       (unsigned long long)c.cur, what);
  }

  static uint32_t err_bits(uint8_t resp, uint32_t slv, uint32_t dec) { return resp == AXI_SLVERR ? slv : dec; }

  static uint32_t le32(const std::vector<uint8_t>& b, size_t o) {
    return uint32_t(b[o]) | uint32_t(b[o + 1]) << 8 | uint32_t(b[o + 2]) << 16 | uint32_t(b[o + 3]) << 24;
  }
  static void put32(std::vector<uint8_t>& b, size_t o, uint32_t v) {
    for (int i = 0; i < 4; i++) b[o + i] = uint8_t(v >> (8 * i));
  }

  void fetch(Channel& c) {
    c.busy = true;
    uint64_t gen = gen_;
    bus_.read(c.cur, D_SIZE, [this, &c, gen](uint8_t resp, const std::vector<uint8_t>& d) {
      if (gen != gen_) return;
      if (resp != AXI_OKAY) return fail(c, err_bits(resp, SR_SG_SLV, SR_SG_DEC), "descriptor fetch");
      c.d_next = (uint64_t(le32(d, D_NEXT + 4)) << 32 | le32(d, D_NEXT)) & ~0x3full;
      c.d_buf = uint64_t(le32(d, D_BUF + 4)) << 32 | le32(d, D_BUF);
      c.d_ctrl = le32(d, D_CTRL);
      c.d_status = le32(d, D_STATUS);
      c.at_tail = c.cur == c.tail;
      if (c.d_status & ST_CMPLT) return fail(c, SR_SG_INT, "fetched descriptor already has Cmplt set");
      if ((c.d_ctrl & LEN_MASK) == 0) return write_status(c, ST_INT_ERR, SR_DMA_INT);
      c.s2mm ? rx_data(c) : tx_data(c);
    });
  }

  void tx_data(Channel& c) {
    uint32_t len = c.d_ctrl & LEN_MASK;
    if (c.d_ctrl & CTRL_SOF) c.frame.clear();
    // The data waits for room in the Ethernet's TX FIFO (the stream backpressures the engine).
    if (c.frame.size() + len > eth_.tx_fifo_free()) {
      if (c.frame.size() + len > AxiEthernet::kFifoBytes)
        return fatal_("[nic] DMA MM2S: frame larger than the Ethernet TX FIFO (16 KiB)");
      pending_tx_ = &c;
      return;
    }
    uint64_t gen = gen_;
    bus_.read(c.d_buf, len, [this, &c, gen, len](uint8_t resp, const std::vector<uint8_t>& data) {
      if (gen != gen_) return;
      if (resp != AXI_OKAY) return write_status(c, resp == AXI_SLVERR ? ST_SLV_ERR : ST_DEC_ERR,
                                                err_bits(resp, SR_DMA_SLV, SR_DMA_DEC));
      c.frame.insert(c.frame.end(), data.begin(), data.end());
      write_status(c, ST_CMPLT | len, 0);
    });
  }

  void rx_data(Channel& c) {
    const std::vector<uint8_t>& f = eth_.rx_front();
    uint32_t len = c.d_ctrl & LEN_MASK;
    size_t n = std::min<size_t>(len, f.size() - c.rx_off);
    bool sof = c.rx_off == 0, eof = c.rx_off + n == f.size();
    std::vector<uint8_t> chunk(f.begin() + c.rx_off, f.begin() + c.rx_off + n);
    uint64_t gen = gen_;
    bus_.write(c.d_buf, std::move(chunk), [this, &c, gen, n, sof, eof](uint8_t resp) {
      if (gen != gen_) return;
      if (resp != AXI_OKAY) return write_status(c, resp == AXI_SLVERR ? ST_SLV_ERR : ST_DEC_ERR,
                                                err_bits(resp, SR_DMA_SLV, SR_DMA_DEC));
      c.rx_off += n;
      write_status(c, ST_CMPLT | uint32_t(n) | (sof ? ST_RXSOF : 0u) | (eof ? ST_RXEOF : 0u), 0);
    });
  }

  // Write the descriptor's STATUS; for an S2MM end of frame first the status stream into
  // APP0-4 (APP4[15:0] = frame length), so software that sees Cmplt also sees the APP words.
  // sr_err != 0: a data error; the channel halts after the update.
  void write_status(Channel& c, uint32_t st, uint32_t sr_err) {
    bool rx_eof = c.s2mm && (st & ST_RXEOF);
    uint64_t gen = gen_;
    auto status = [this, &c, gen, st, sr_err, rx_eof]() {
      std::vector<uint8_t> b(4);
      put32(b, 0, st);
      bus_.write(c.cur + D_STATUS, std::move(b), [this, &c, gen, st, sr_err, rx_eof](uint8_t resp) {
        if (gen != gen_) return;
        if (resp != AXI_OKAY) return fail(c, err_bits(resp, SR_SG_SLV, SR_SG_DEC), "descriptor status update");
        if (sr_err) return fail(c, sr_err, "data transfer");
        bool eof = c.s2mm ? rx_eof : (c.d_ctrl & CTRL_EOF) != 0;
        if (eof) {
          if (c.s2mm) { eth_.rx_pop(); c.rx_off = 0; }
          else { eth_.tx_stream_frame(std::move(c.frame)); c.frame.clear(); }
          ioc_event(c);
        }
        if (trace) fprintf(stderr, "[nic] DMA %s descriptor 0x%llx done: status 0x%08x\n", c.s2mm ? "S2MM" : "MM2S",
                           (unsigned long long)c.cur, st);
        advance(c);
      });
    };
    if (!rx_eof) return status();
    std::vector<uint8_t> app(20, 0);
    put32(app, 16, uint32_t(eth_.rx_front().size() & 0xffff));
    bus_.write(c.cur + D_APP, std::move(app), [this, &c, gen, status](uint8_t resp) {
      if (gen != gen_) return;
      if (resp != AXI_OKAY) return fail(c, err_bits(resp, SR_SG_SLV, SR_SG_DEC), "descriptor APP update");
      status();
    });
  }

  void ioc_event(Channel& c) {
    if (--c.thr_count == 0) {
      c.sr |= SR_IOC;
      c.thr_count = threshold(c);
      c.dly_deadline = 0;
    } else if (c.cr >> 24) {
      c.dly_deadline = now_ + (c.cr >> 24) * kDelayUnit;
    }
  }

  void advance(Channel& c) {
    c.busy = false;
    if (c.at_tail) { c.idle = true; c.cur_done = true; c.next = c.d_next; }
    else c.cur = c.d_next;
    if (!(c.cr & CR_RS)) c.halted = true;
  }

 public:
  // Called each cycle after tick(): a TX descriptor waiting for FIFO room retries.
  void retry() {
    if (pending_tx_ && !pending_tx_->error) {
      Channel& c = *pending_tx_;
      pending_tx_ = nullptr;
      tx_data(c);
    }
  }

 private:
  DmaBus& bus_;
  AxiEthernet& eth_;
  Fatal fatal_;
  Channel ch_[2];
  uint32_t sg_ctl_ = 0;
  uint64_t gen_ = 0, now_ = 0;
  bool resetting_ = false;
  Channel* pending_tx_ = nullptr;
};
