// Models of the devices on the SoC's MMIO port: the board's 16550 UART (32-bit register
// stride) and the harness-only exit device (sifive,test0 protocol). Addresses come from the
// shared constants (platform.h, generated from platform/platform.toml).
#pragma once
#include <fcntl.h>
#include <unistd.h>
#include <cstdio>
#include <deque>
#include "axi4_slave.h"
#include "platform.h"

class Uart16550 {
 public:
  explicit Uart16550(bool stdin_input) : stdin_input_(stdin_input) {
    if (stdin_input_) fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
  }

  uint32_t read(unsigned reg) {
    poll_input();
    switch (reg) {
      case 0:
        if (lcr_ & 0x80) return dll_;
        if (rx_.empty()) return 0;
        { uint8_t c = rx_.front(); rx_.pop_front(); return c; }
      case 1: return (lcr_ & 0x80) ? dlm_ : ier_;
      case 2: return (ier_ & 1) && !rx_.empty() ? 0xc4 : (ier_ & 2) ? 0xc2 : 0xc1;  // FIFOs on; RX data / THR empty / none
      case 3: return lcr_;
      case 4: return mcr_;
      case 5: return 0x60 | (rx_.empty() ? 0 : 1);  // THR empty, transmitter empty, data ready
      case 7: return scr_;
      default: return 0;
    }
  }

  void write(unsigned reg, uint32_t v) {
    switch (reg) {
      case 0:
        if (lcr_ & 0x80) { dll_ = v; break; }
        putchar(int(v & 0xff));
        if ((v & 0xff) == '\n') fflush(stdout);
        break;
      case 1: if (lcr_ & 0x80) dlm_ = v; else ier_ = v & 0xf; break;
      case 3: lcr_ = v; break;
      case 4: mcr_ = v; break;
      case 7: scr_ = v; break;
      default: break;
    }
  }

  // Level interrupt to PLIC source 1: received data available and enabled.
  // RX data available (IER bit 0), or THR empty (IER bit 1: the model's THR is always empty,
  // so this is a level the RTL tests use to drive a PLIC source on demand)
  bool irq() { poll_input(); return ((ier_ & 1) && !rx_.empty()) || (ier_ & 2); }

 private:
  void poll_input() {
    if (!stdin_input_ || ++poll_count_ % 1024) return;  // reading stdin every access is slow
    char c;
    while (::read(0, &c, 1) == 1) rx_.push_back(uint8_t(c));
  }
  bool stdin_input_;
  uint64_t poll_count_ = 0;
  std::deque<uint8_t> rx_;
  uint8_t dll_ = 0, dlm_ = 0, ier_ = 0, lcr_ = 0, mcr_ = 0, scr_ = 0;
};

// Software ends the run by writing (code << 16) | 0x3333 (fail) or 0x5555 (pass).
struct ExitDevice {
  bool done = false;
  int status = 0;
  void write(uint32_t v) {
    uint32_t kind = v & 0xffff;
    if (kind == PLATFORM_EXITDEV_PASS) { done = true; status = 0; }
    else if (kind == PLATFORM_EXITDEV_FAIL) { done = true; status = int(v >> PLATFORM_EXITDEV_CODE_SHIFT) ? int(v >> PLATFORM_EXITDEV_CODE_SHIFT) : 1; }
    else if (kind == PLATFORM_EXITDEV_RESET) { done = true; status = 0; }
  }
};

// A further device on the MMIO port (the NIC model, nic.h): claims its address windows.
struct MmioTarget {
  virtual ~MmioTarget() = default;
  virtual bool claims(uint64_t addr) const = 0;
  virtual uint64_t read_beat(uint64_t addr, uint8_t size, uint8_t& resp) = 0;
  virtual void write_beat(uint64_t addr, uint64_t data, uint8_t strb, uint8_t& resp) = 0;
};

template <typename IdT>
class MmioBus : public Axi4Slave<IdT> {
 public:
  MmioBus(const Axi4Pins<IdT>& pins, Uart16550& uart, ExitDevice& exit, MmioTarget* extra = nullptr)
      : Axi4Slave<IdT>(pins, 1), uart_(uart), exit_(exit), extra_(extra) {}

 protected:
  uint64_t read_beat(uint64_t addr, uint8_t size, uint8_t& resp) override {
    if (extra_ && extra_->claims(addr)) return extra_->read_beat(addr, size, resp);
    if (in(addr, PLATFORM_MEMMAP_UART_BASE, PLATFORM_MEMMAP_UART_SIZE)) {
      // 32-bit registers on a 4-byte stride; read only the register addressed (RBR pops).
      unsigned reg = unsigned((addr - PLATFORM_MEMMAP_UART_BASE) >> PLATFORM_CLOCK_UART_REG_SHIFT);
      uint64_t v = uart_.read(reg);
      if (size == 3 && (addr & 7) == 0) v |= uint64_t(uart_.read(reg + 1)) << 32;
      return (addr & 4) ? v << 32 : v;
    }
    if (in(addr, PLATFORM_MEMMAP_SIM_EXIT_BASE, PLATFORM_MEMMAP_SIM_EXIT_SIZE)) return 0;
    resp = AXI_DECERR;
    return 0;
  }
  void write_beat(uint64_t addr, uint64_t data, uint8_t strb, uint8_t& resp) override {
    if (extra_ && extra_->claims(addr)) return extra_->write_beat(addr, data, strb, resp);
    if (in(addr, PLATFORM_MEMMAP_UART_BASE, PLATFORM_MEMMAP_UART_SIZE)) {
      unsigned reg = unsigned((addr - PLATFORM_MEMMAP_UART_BASE) >> PLATFORM_CLOCK_UART_REG_SHIFT);
      if (strb & 0x0f) uart_.write(reg, uint32_t(data));
      if (strb & 0xf0) uart_.write(reg + 1, uint32_t(data >> 32));
      return;
    }
    if (in(addr, PLATFORM_MEMMAP_SIM_EXIT_BASE, PLATFORM_MEMMAP_SIM_EXIT_SIZE)) {
      if (addr == PLATFORM_MEMMAP_SIM_EXIT_BASE && (strb & 0x0f)) exit_.write(uint32_t(data));
      return;
    }
    resp = AXI_DECERR;
  }

 private:
  static bool in(uint64_t a, uint64_t base, uint64_t size) { return a >= base && a - base < size; }
  Uart16550& uart_;
  ExitDevice& exit_;
  MmioTarget* extra_;
};
