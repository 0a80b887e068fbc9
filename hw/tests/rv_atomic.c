// Regression: the A extension on 4 harts: amoadd/lr-sc counters and an amoswap spinlock under
// contention, and every AMO's result on one hart against the compiler's constant folder.
#include "test.h"
const char* test_name = "rv_atomic";
#define NH 4
#define N 100

static volatile uint64_t c_amo, c_lrsc, c_lock, lockword;
static volatile uint32_t c_amo_w;

static void lrsc_inc(volatile uint64_t* p) {
  uint64_t t, ok;
  asm volatile("1: lr.d %0, (%2)\n addi %0, %0, 1\n sc.d %1, %0, (%2)\n bnez %1, 1b"
               : "=&r"(t), "=&r"(ok) : "r"(p) : "memory");
}
static uint64_t amo(int op, volatile uint64_t* p, uint64_t v) {
  uint64_t r;
  switch (op) {
    case 0: asm volatile("amoswap.d %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory"); break;
    case 1: asm volatile("amoand.d %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory"); break;
    case 2: asm volatile("amoor.d %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory"); break;
    case 3: asm volatile("amoxor.d %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory"); break;
    case 4: asm volatile("amomin.d %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory"); break;
    case 5: asm volatile("amomax.d %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory"); break;
    case 6: asm volatile("amominu.d %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory"); break;
    default: asm volatile("amomaxu.d %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory"); break;
  }
  return r;
}

int main(uint64_t hart) {
  wait_for_harts(NH);
  barrier(NH);
  for (int i = 0; i < N; i++) {
    __atomic_fetch_add(&c_amo, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c_amo_w, 1, __ATOMIC_RELAXED);
    lrsc_inc(&c_lrsc);
    while (__atomic_exchange_n(&lockword, 1, __ATOMIC_ACQUIRE)) {}
    c_lock = c_lock + 1;
    __atomic_store_n(&lockword, 0, __ATOMIC_RELEASE);
  }
  barrier(NH);
  if (hart != 0) for (;;) {}
  CHECK_EQ(c_amo, NH * N, 1);
  CHECK_EQ(c_amo_w, NH * N, 2);
  CHECK_EQ(c_lrsc, NH * N, 3);
  CHECK_EQ(c_lock, NH * N, 4);
  static volatile uint64_t m;
  const uint64_t a = 0x8000000000000123ull, b = 0x00000000ffff0f0full;
  const uint64_t expect[8] = { b, a & b, a | b, a ^ b, (int64_t)a < (int64_t)b ? a : b,
                               (int64_t)a > (int64_t)b ? a : b, a < b ? a : b, a > b ? a : b };
  for (int op = 0; op < 8; op++) {
    m = a;
    CHECK_EQ(amo(op, &m, b), a, 10 + op);
    CHECK_EQ(m, expect[op], 20 + op);
  }
  uint64_t t, fail;                              // sc without a reservation fails
  asm volatile("sc.d %0, %2, (%1)" : "=r"(fail) : "r"(&m), "r"(5ull) : "memory");
  CHECK(fail != 0, 30);
  asm volatile("lr.d %0, (%1)" : "=r"(t) : "r"(&m) : "memory");
  asm volatile("sc.d %0, %2, (%1)" : "=r"(fail) : "r"(&m), "r"(5ull) : "memory");
  CHECK_EQ(fail, 0, 31);
  CHECK_EQ(m, 5, 32);
  return 0;
}
