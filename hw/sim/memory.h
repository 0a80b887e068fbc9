// DRAM behind the SoC's AXI4 memory port: a flat array covering the board's DRAM window.
#pragma once
#include <sys/mman.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include "axi4_slave.h"

template <typename IdT>
class Memory : public Axi4Slave<IdT> {
 public:
  Memory(const Axi4Pins<IdT>& pins, uint64_t base, uint64_t size, uint64_t latency)
      : Axi4Slave<IdT>(pins, latency), base_(base), size_(size) {
    // Anonymous mapping: zeroed, and only touched pages cost host memory.
    mem_ = static_cast<uint8_t*>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (mem_ == MAP_FAILED) { perror("mmap"); exit(1); }
  }
  ~Memory() override { munmap(mem_, size_); }

  // Copy a flat binary to `addr` (a physical address inside the window).
  bool load_flat(const std::string& path, uint64_t addr) {
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) { perror(path.c_str()); return false; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (addr < base_ || addr - base_ + n > size_) {
      fprintf(stderr, "sim: %s (%ld bytes) does not fit DRAM at %#lx\n", path.c_str(), n, (unsigned long)addr);
      fclose(f);
      return false;
    }
    bool ok = fread(mem_ + (addr - base_), 1, n, f) == (size_t)n;
    fclose(f);
    return ok;
  }

  uint8_t* at(uint64_t addr) { return addr >= base_ && addr - base_ < size_ ? mem_ + (addr - base_) : nullptr; }

 protected:
  uint64_t read_beat(uint64_t addr, uint8_t, uint8_t& resp) override {
    uint64_t v = 0;
    if (uint8_t* p = at(addr & ~7ull)) memcpy(&v, p, 8); else resp = AXI_DECERR;
    return v;
  }
  void write_beat(uint64_t addr, uint64_t data, uint8_t strb, uint8_t& resp) override {
    uint8_t* p = at(addr);
    if (!p) { resp = AXI_DECERR; return; }
    for (int i = 0; i < 8; i++)
      if (strb & (1 << i)) p[i] = uint8_t(data >> (8 * i));
  }

 private:
  uint64_t base_, size_;
  uint8_t* mem_;
};
