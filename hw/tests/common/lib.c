// Shared runtime of the RTL tests: console, exit device, trap dispatch, barriers.
#include "test.h"

#define UART ((volatile uint32_t*)(uintptr_t)MEMMAP_UART_BASE)
#define UART_REG(n) UART[(n) << CLOCK_UART_REG_SHIFT >> 2]

static volatile uint32_t print_lock;
static void lock(void) { while (__atomic_exchange_n(&print_lock, 1, __ATOMIC_ACQUIRE)) {} }
static void unlock(void) { __atomic_store_n(&print_lock, 0, __ATOMIC_RELEASE); }

static void putc_raw(char c) {
  while (!(UART_REG(5) & 0x20)) {}
  UART_REG(0) = (uint8_t)c;
}
void putstr(const char* s) { while (*s) putc_raw(*s++); }
void puthex(uint64_t v) {
  putstr("0x");
  for (int i = 60; i >= 0; i -= 4) putc_raw("0123456789abcdef"[(v >> i) & 15]);
}
void putdec(uint64_t v) {
  char b[24]; int n = 0;
  do { b[n++] = '0' + v % 10; v /= 10; } while (v);
  while (n) putc_raw(b[--n]);
}
void result(const char* key, uint64_t value) {
  lock();
  putstr("result test="); putstr(test_name); putstr(" "); putstr(key); putstr("="); putdec(value); putstr("\n");
  unlock();
}

static void __attribute__((noreturn)) exit_with(uint32_t v) {
  *(volatile uint32_t*)(uintptr_t)MEMMAP_SIM_EXIT_BASE = v;
  for (;;) {}
}
void test_pass(void) {
  lock(); putstr("PASS "); putstr(test_name); putstr("\n"); unlock();
  exit_with(EXITDEV_PASS);
}
void test_fail(unsigned code) {
  putstr("FAIL "); putstr(test_name); putstr(" code "); putdec(code); putstr("\n");
  exit_with((code << EXITDEV_CODE_SHIFT) | EXITDEV_FAIL);
}
void check_failed(unsigned code, int line) {
  putstr("  at line "); putdec(line); putstr(" hart "); putdec(hartid_m()); putstr("\n");
  test_fail(code ? code : 1);
}
void test_main_returned(uint64_t rc) {
  if (rc) test_fail(rc);
  if (hartid_m() == 0) test_pass();
  for (;;) {}
}

// ---- harts ----
static volatile uint32_t arrived;
static volatile uint32_t bar_count, bar_gen;
void wait_for_harts(unsigned n) {
  static volatile uint32_t registered[8];
  uint64_t h = hartid_m();
  if (!registered[h]) { registered[h] = 1; __atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL); }
  while (__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < n) {}
}
unsigned nharts_present(void) { return arrived; }
void barrier(unsigned n) {
  uint32_t gen = __atomic_load_n(&bar_gen, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&bar_count, 1, __ATOMIC_ACQ_REL) == n) {
    bar_count = 0;
    __atomic_store_n(&bar_gen, gen + 1, __ATOMIC_RELEASE);
  } else {
    while (__atomic_load_n(&bar_gen, __ATOMIC_ACQUIRE) == gen) {}
  }
}

// ---- traps ----
int (*m_trap_hook)(trap_frame* f);
static uint64_t expected[8], expected_hits[8], last_cause[8];
void expect_trap(uint64_t cause) { uint64_t h = hartid_m(); expected[h] = cause | (1ull << 62); }
int expect_done(void) { uint64_t h = hartid_m(); int n = expected_hits[h]; expected_hits[h] = 0; expected[h] = 0; return n; }
uint64_t last_trap_cause(void) { return last_cause[hartid_m()]; }
void mode_return(uint64_t v) __attribute__((noreturn));

void m_trap(trap_frame* f) {
  uint64_t h = hartid_m();
  last_cause[h] = f->cause;
  if (f->cause == CAUSE_ECALL_U || f->cause == CAUSE_ECALL_S) {
    if (f->x[17] == 0x5e7) {                 // the run_in_mode trampoline: back to M
      uint64_t ms = CSR_READ(CSR_MSTATUS);
      CSR_WRITE(CSR_MSTATUS, ms | (3ull << 11));   // MPP = M (nothing returns through it)
      mode_return(f->x[10]);
    }
  }
  if (m_trap_hook && m_trap_hook(f)) return;
  if (expected[h] && (expected[h] & ~(1ull << 62)) == f->cause) {
    expected[h] = 0;
    expected_hits[h]++;
    if (!(f->cause & MCAUSE_INT)) {
      uint16_t lo = *(volatile uint16_t*)(uintptr_t)f->epc;
      f->epc += (lo & 3) == 3 ? 4 : 2;
    }
    return;
  }
  lock();
  putstr("unexpected trap: mcause="); puthex(f->cause); putstr(" mepc="); puthex(f->epc);
  putstr(" mtval="); puthex(f->tval); putstr(" hart "); putdec(h); putstr("\n");
  unlock();
  test_fail(0xff);
}

__attribute__((weak)) void u_trap(trap_frame* f) {
  (void)f;
  putstr("unexpected user trap: ucause="); puthex(CSR_READ(CSR_UCAUSE)); putstr("\n");
  test_fail(0xfe);
}

// freestanding: the compiler may emit calls to these
void* memset(void* d, int c, unsigned long n) { char* p = d; while (n--) *p++ = (char)c; return d; }
void* memcpy(void* d, const void* s, unsigned long n) { char* p = d; const char* q = s; while (n--) *p++ = *q++; return d; }
