// Regression: RV64 I and M instructions give the same results as the compiler's constant
// folder (the reference): every operation runs on values laundered through volatile memory and
// is compared with the same expression on literals, which gcc evaluates at compile time.
#include "test.h"
// the constant folder sees the guarded division-by-zero/overflow cases too
#pragma GCC diagnostic ignored "-Wdiv-by-zero"
#pragma GCC diagnostic ignored "-Woverflow"
const char* test_name = "rv_int";

static volatile uint64_t launder_;
#define V(x) ({ launder_ = (uint64_t)(x); launder_; })
typedef int64_t s64; typedef uint64_t u64; typedef int32_t s32; typedef uint32_t u32;
static unsigned nchecks;
#define EQ(rt, ct) do { nchecks++; CHECK_EQ((u64)(rt), (u64)(ct), 1); } while (0)

#define T(A, B) do { \
  u64 a = V(A), b = V(B); \
  EQ(a + b, (u64)(A) + (u64)(B)); EQ(a - b, (u64)(A) - (u64)(B)); \
  EQ(a & b, (u64)(A) & (u64)(B)); EQ(a | b, (u64)(A) | (u64)(B)); EQ(a ^ b, (u64)(A) ^ (u64)(B)); \
  EQ(a << (b & 63), (u64)(A) << ((u64)(B) & 63)); EQ(a >> (b & 63), (u64)(A) >> ((u64)(B) & 63)); \
  EQ((s64)a >> (b & 63), (s64)(A) >> ((u64)(B) & 63)); \
  EQ((s64)a < (s64)b, (s64)(A) < (s64)(B)); EQ(a < b, (u64)(A) < (u64)(B)); \
  EQ((s64)(s32)((u32)a + (u32)b), (s64)(s32)((u32)(A) + (u32)(B))); \
  EQ((s64)(s32)((u32)a - (u32)b), (s64)(s32)((u32)(A) - (u32)(B))); \
  EQ((s64)(s32)((u32)a << (b & 31)), (s64)(s32)((u32)(A) << ((u64)(B) & 31))); \
  EQ((s64)(s32)((u32)a >> (b & 31)), (s64)(s32)((u32)(A) >> ((u64)(B) & 31))); \
  EQ((s64)((s32)a >> (b & 31)), (s64)((s32)(A) >> ((u64)(B) & 31))); \
  EQ(a * b, (u64)(A) * (u64)(B)); \
  EQ((u64)(((unsigned __int128)a * b) >> 64), (u64)(((unsigned __int128)(u64)(A) * (u64)(B)) >> 64)); \
  EQ((u64)(((__int128)(s64)a * (s64)b) >> 64), (u64)(((__int128)(s64)(A) * (s64)(B)) >> 64)); \
  EQ((u64)(((__int128)(s64)a * (unsigned __int128)b) >> 64), (u64)(((__int128)(s64)(A) * (unsigned __int128)(u64)(B)) >> 64)); \
  EQ((s64)(s32)((u32)a * (u32)b), (s64)(s32)((u32)(A) * (u32)(B))); \
  if ((u64)(B) != 0) { \
    EQ(a / b, (u64)(A) / (u64)(B)); EQ(a % b, (u64)(A) % (u64)(B)); \
    if (!((s64)(A) == INT64_MIN && (s64)(B) == -1)) { EQ((s64)a / (s64)b, (s64)(A) / (s64)(B)); EQ((s64)a % (s64)b, (s64)(A) % (s64)(B)); } \
  } \
  if ((u32)(B) != 0) { \
    EQ((s64)(s32)((u32)a / (u32)b), (s64)(s32)((u32)(A) / (u32)(B))); \
    EQ((s64)(s32)((u32)a % (u32)b), (s64)(s32)((u32)(A) % (u32)(B))); \
    if (!((s32)(A) == INT32_MIN && (s32)(B) == -1)) EQ((s64)((s32)a / (s32)b), (s64)((s32)(A) / (s32)(B))); \
  } \
} while (0)


// RISC-V specifics the C expressions above cannot reach: division by zero and overflow
static u64 divu(u64 a, u64 b) { u64 r; asm volatile("divu %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); return r; }
static u64 divs(u64 a, u64 b) { u64 r; asm volatile("div %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); return r; }
static u64 rems(u64 a, u64 b) { u64 r; asm volatile("rem %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); return r; }
static u64 remu(u64 a, u64 b) { u64 r; asm volatile("remu %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); return r; }
static u64 divw(u64 a, u64 b) { u64 r; asm volatile("divw %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); return r; }

int main(uint64_t hart) {
  if (hart != 0) for (;;) {}
  T(0, 0); T(1, 1); T(3, 7); T(-1, 1); T(-1, -1); T(0x7fffffffffffffffull, 1);
  T(0x8000000000000000ull, -1); T(0x8000000000000000ull, 0x8000000000000000ull);
  T(0x123456789abcdef0ull, 0x0fedcba987654321ull); T(0xdeadbeefcafebabeull, 37);
  T(0x80000000ull, 0xffffffffull); T(0xffffffff80000000ull, -1); T(12345, -678);
  T(-1000000007ll, 998244353); T(0x5555555555555555ull, 0xaaaaaaaaaaaaaaaaull); T(1ull << 63, 63);
  T(0x00000000ffffffffull, 0x0000000100000001ull); T(-7, 2); T(7, -2); T(-7, -2);
  // division by zero / overflow (RISC-V defines the results)
  EQ(divu(V(5), V(0)), ~0ull); EQ(remu(V(5), V(0)), 5); EQ(divs(V(-5), V(0)), ~0ull);
  EQ(rems(V(-5), V(0)), (u64)-5); EQ(divs(V(INT64_MIN), V(-1)), (u64)INT64_MIN);
  EQ(rems(V(INT64_MIN), V(-1)), 0); EQ(divw(V(0x80000000), V(-1)), (u64)(s64)INT32_MIN);
  // loads/stores of every width, sign and zero extension
  static volatile uint8_t buf[16] __attribute__((aligned(16)));
  for (int i = 0; i < 16; i++) buf[i] = 0xf0 + i;
  EQ(*(volatile int8_t*)&buf[1], (s64)(int8_t)0xf1);
  EQ(*(volatile uint16_t*)&buf[2], 0xf3f2);
  EQ(*(volatile int16_t*)&buf[2], (s64)(int16_t)0xf3f2);
  EQ(*(volatile int32_t*)&buf[4], (s64)(int32_t)0xf7f6f5f4);
  EQ(*(volatile uint32_t*)&buf[4], 0xf7f6f5f4ull);
  EQ(*(volatile uint64_t*)&buf[8], 0xfffefdfcfbfaf9f8ull);
  *(volatile uint16_t*)&buf[6] = 0x1234;
  EQ(*(volatile uint64_t*)&buf[0], 0x1234f5f4f3f2f1f0ull);
  // branches and jumps: a small recursion
  u64 fib[20]; fib[0] = 0; fib[1] = 1;
  for (int i = 2; i < 20; i++) fib[i] = fib[i - 1] + fib[i - 2] + V(0);
  EQ(fib[19], 4181);
  result("checks", nchecks);
  return 0;
}
