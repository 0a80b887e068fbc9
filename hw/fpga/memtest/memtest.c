// Bare-metal DDR test for first light on the board: every hart that comes up tests its slice of
// the DRAM above this image through the memory port (Rocket -> SmartConnect -> PS S_AXI_HP0 ->
// DDR4), with three patterns per pass, and prints one line per slice and pass on the console
// UART. It runs pass after pass until the board is reset, and stops at the first pass with an
// error. The slices are far larger than the caches, so every read-back comes from the DDR.
// Built with the RTL tests' runtime (hw/tests/common: start.S gives each hart a stack and calls
// main(hart)). MEMTEST_SIM builds a short variant for the simulation: 64 KiB per hart, one
// pass, then the harness's exit device.
#include "test.h"

const char* test_name = "memtest";

#ifdef MEMTEST_SIM
#define SLICE_LIMIT (64u << 10)
#define PASSES 1
#define CHECKIN_MS 1                // 100,000 cycles: seconds of simulation
#else
#define SLICE_LIMIT (~0ull)
#define PASSES 0   // forever
#define CHECKIN_MS 20               // how long hart 0 waits for the others to check in
#endif
#define MAX_REPORTED 8              // error lines per hart and pass

#define UART ((volatile uint32_t*)(uintptr_t)MEMMAP_UART_BASE)
#define UART_REG(n) UART[(n) << CLOCK_UART_REG_SHIFT >> 2]
#define MTIME (*(volatile uint64_t*)(uintptr_t)(MEMMAP_CLINT_BASE + 0xbff8))

extern char __free[];

// The 16550 comes out of reset with divisor 0 (no output): 8N1 at clock.uart_baud, FIFOs on,
// as the firmware sets it (the simulation's UART model takes the same writes).
static void uart_init(void) {
  uint32_t div = (CLOCK_UART_HZ + 8 * CLOCK_UART_BAUD) / (16 * CLOCK_UART_BAUD);
  UART_REG(3) = 0x80;            // LCR: divisor latch access
  UART_REG(0) = div & 0xff;      // DLL
  UART_REG(1) = div >> 8;        // DLM
  UART_REG(3) = 0x03;            // LCR: 8 data bits, no parity, 1 stop bit
  UART_REG(2) = 0x07;            // FCR: FIFOs on and cleared
}

static volatile uint32_t print_lock;
static void lock(void) { while (__atomic_exchange_n(&print_lock, 1, __ATOMIC_ACQUIRE)) {} }
static void unlock(void) { __atomic_store_n(&print_lock, 0, __ATOMIC_RELEASE); }

static void mib(uint64_t bytes) { putdec(bytes >> 20); putstr(" MiB"); }

// Harts check in; hart 0 closes the list after CHECKIN_MS, and each hart's slice is its place
// in the list, so a hart that never starts leaves no hole.
static volatile uint32_t checked_in, harts, uart_ready;
static volatile uint32_t failed;   // any hart's pass found an error: everyone stops after theirs

struct slice { uint64_t lo, hi; };
static struct slice slice_of(unsigned index) {
  uint64_t base = ((uint64_t)(uintptr_t)__free + 4095) & ~4095ull;
  uint64_t end = MEMMAP_DRAM_BASE + MEMMAP_DRAM_SIZE;
  uint64_t size = ((end - base) / harts) & ~7ull;
  if (size > SLICE_LIMIT) size = SLICE_LIMIT;
  struct slice s = { base + index * size, base + index * size + size };
  return s;
}

static unsigned errors_reported;
static uint64_t check(volatile uint64_t* p, uint64_t want, const char* pattern) {
  uint64_t got = *p;
  if (got == want) return 0;
  if (errors_reported++ < MAX_REPORTED) {
    lock();
    putstr("memtest: hart "); putdec(hartid_m()); putstr(": at "); puthex((uint64_t)(uintptr_t)p);
    putstr(" wrote "); puthex(want); putstr(" read "); puthex(got);
    putstr(" (xor "); puthex(want ^ got); putstr(", "); putstr(pattern); putstr(")\n");
    unlock();
  }
  return 1;
}

// Each word holds its own address (mixed with the pass number, so a stale value from the last
// pass does not read as correct): finds address lines that alias as well as bad data bits.
static uint64_t address_pattern(struct slice s, uint64_t seed, int invert) {
  uint64_t errors = 0;
  for (uint64_t a = s.lo; a < s.hi; a += 8) {
    uint64_t v = a ^ seed;
    *(volatile uint64_t*)(uintptr_t)a = invert ? ~v : v;
  }
  for (uint64_t a = s.lo; a < s.hi; a += 8) {
    uint64_t v = a ^ seed;
    errors += check((volatile uint64_t*)(uintptr_t)a, invert ? ~v : v, invert ? "inverted address" : "address");
  }
  return errors;
}

// Walking ones through all 64 data bits at the slice's first word, each flushed to DDR by
// filling a cache-sized stretch behind it before reading it back.
static uint64_t walking_ones(struct slice s) {
  uint64_t errors = 0;
  volatile uint64_t* p = (volatile uint64_t*)(uintptr_t)s.lo;
  uint64_t evict = 256u << 10;
  if (s.hi - s.lo < 2 * evict) evict = (s.hi - s.lo) / 2;
  for (unsigned bit = 0; bit < 64; bit++) {
    *p = 1ull << bit;
    for (uint64_t a = s.lo + evict; a < s.lo + 2 * evict; a += 64) *(volatile uint64_t*)(uintptr_t)a = a;
    errors += check(p, 1ull << bit, "walking one");
  }
  return errors;
}

int main(uint64_t hart) {
  unsigned index = __atomic_fetch_add(&checked_in, 1, __ATOMIC_ACQ_REL);
  if (hart == 0) {
    uart_init();
    uint64_t until = MTIME + CLOCK_TIMEBASE_HZ / 1000 * CHECKIN_MS;
    while (MTIME < until) {}
    harts = __atomic_load_n(&checked_in, __ATOMIC_ACQUIRE);
    struct slice all = { slice_of(0).lo, slice_of(harts - 1).hi };
    putstr("memtest: "); putdec(harts); putstr(" hart(s); DRAM "); puthex(MEMMAP_DRAM_BASE); putstr("..");
    puthex(MEMMAP_DRAM_BASE + MEMMAP_DRAM_SIZE); putstr(", testing "); puthex(all.lo); putstr("..");
    puthex(all.hi); putstr(" ("); mib(all.hi - all.lo); putstr(") in "); putdec(harts); putstr(" slice(s)\n");
    __atomic_store_n(&uart_ready, 1, __ATOMIC_RELEASE);
  }
  while (!__atomic_load_n(&uart_ready, __ATOMIC_ACQUIRE)) {}
  if (index >= harts) for (;;) asm volatile("wfi");   // checked in too late: not counted

  struct slice s = slice_of(index);
  for (uint64_t pass = 1; PASSES == 0 || pass <= PASSES; pass++) {
    uint64_t t0 = MTIME;
    uint64_t errors = address_pattern(s, pass << 32, 0) + address_pattern(s, pass << 32, 1) + walking_ones(s);
    uint64_t ticks = MTIME - t0;
    // Each address pattern writes and reads the slice once: 4 slice lengths moved.
    uint64_t mb_s = ticks ? 4 * (s.hi - s.lo) * CLOCK_TIMEBASE_HZ / ticks / 1000000 : 0;
    errors_reported = 0;
    lock();
    putstr("memtest: pass "); putdec(pass); putstr(" hart "); putdec(hart); putstr(" ");
    puthex(s.lo); putstr(".."); puthex(s.hi); putstr(errors ? " FAILED: " : " ok: ");
    putdec(errors); putstr(" bad words, "); putdec(mb_s); putstr(" MB/s\n");
    unlock();
    if (errors) __atomic_store_n(&failed, 1, __ATOMIC_RELEASE);
    if (__atomic_load_n(&failed, __ATOMIC_ACQUIRE)) break;
  }
  barrier(harts);
#ifdef MEMTEST_SIM
  return failed ? 1 : 0;   // lib.c: hart 0 reports PASS/FAIL through the exit device
#else
  if (hart == 0) putstr(failed ? "memtest: FAILED, stopped\n" : "memtest: done\n");
  for (;;) asm volatile("wfi");
#endif
}
