// Regression: RV64 F and D against the compiler's constant folder (IEEE-754, round to nearest):
// arithmetic, fused multiply-add, sqrt, min/max, compares, conversions, sign injection, fcsr
// flags and rounding-mode field.
#include "test.h"
const char* test_name = "rv_fp";

static volatile double dl_; static volatile float fl_; static volatile int64_t il_;
#define VD(x) ({ dl_ = (x); dl_; })
#define VF(x) ({ fl_ = (x); fl_; })
#define VI(x) ({ il_ = (x); il_; })
static unsigned nchecks;
static uint64_t bits_d(double d) { union { double d; uint64_t u; } x = {d}; return x.u; }
static uint64_t bits_f(float f) { union { float f; uint32_t u; } x = {f}; return x.u; }
#define EQD(rt, ct) do { nchecks++; CHECK_EQ(bits_d(rt), bits_d(ct), 1); } while (0)
#define EQF(rt, ct) do { nchecks++; CHECK_EQ(bits_f(rt), bits_f(ct), 2); } while (0)
#define EQI(rt, ct) do { nchecks++; CHECK_EQ((uint64_t)(rt), (uint64_t)(ct), 3); } while (0)

static double fmin_d(double a, double b) { double r; asm("fmin.d %0, %1, %2" : "=f"(r) : "f"(a), "f"(b)); return r; }
static double fmax_d(double a, double b) { double r; asm("fmax.d %0, %1, %2" : "=f"(r) : "f"(a), "f"(b)); return r; }
#define TD(A, B, C) do { double a = VD(A), b = VD(B), c = VD(C); \
  EQD(a + b, (A) + (B)); EQD(a - b, (A) - (B)); EQD(a * b, (A) * (B)); EQD(a / b, (A) / (B)); \
  EQD(__builtin_fma(a, b, c), __builtin_fma((A), (B), (C))); EQD(__builtin_fma(-a, b, c), __builtin_fma(-(A), (B), (C))); \
  EQD(__builtin_sqrt(__builtin_fabs(a)), __builtin_sqrt(__builtin_fabs(A))); \
  EQD(fmin_d(a, b), __builtin_fmin((A), (B))); EQD(fmax_d(a, b), __builtin_fmax((A), (B))); \
  EQI(a < b, (A) < (B)); EQI(a <= b, (A) <= (B)); EQI(a == b, (A) == (B)); \
  EQD(__builtin_copysign(a, b), __builtin_copysign((A), (B))); \
  EQF((float)a, (float)(A)); EQD((double)(float)b, (double)(float)(B)); \
  if (__builtin_fabs(A) < 9e18) { EQI((int64_t)a, (int64_t)(A)); EQI((int32_t)(a / 4e9), (int32_t)((A) / 4e9)); } \
} while (0)
#define TF(A, B, C) do { float a = VF(A), b = VF(B), c = VF(C); \
  EQF(a + b, (A) + (B)); EQF(a - b, (A) - (B)); EQF(a * b, (A) * (B)); EQF(a / b, (A) / (B)); \
  EQF(__builtin_fmaf(a, b, c), __builtin_fmaf((A), (B), (C))); \
  EQF(__builtin_sqrtf(__builtin_fabsf(a)), __builtin_sqrtf(__builtin_fabsf(A))); \
  EQI(a < b, (A) < (B)); \
} while (0)

static uint64_t fcsr(void) { uint64_t v; asm volatile("frcsr %0" : "=r"(v)); return v; }

int main(uint64_t hart) {
  if (hart != 0) for (;;) {}
  TD(1.0, 3.0, 0.5); TD(-2.5, 1e-300, 7.0); TD(1e308, 10.0, -1e308); TD(0.1, 0.2, 0.3);
  TD(-0.0, 0.0, -0.0); TD(3.141592653589793, 2.718281828459045, 1.4142135623730951);
  TD(123456789.125, -0.000123, 1e10); TD(5e-324, 0.5, 1e-320); TD(-7.75, -7.75, 60.0625);
  TF(1.0f, 3.0f, 0.5f); TF(-2.5f, 1e-30f, 7.0f); TF(3e38f, 10.0f, -3e38f); TF(0.1f, 0.2f, 0.3f);
  TF(1.17549435e-38f, 0.5f, 1e-40f);
  // integer <-> FP conversions
  EQD((double)VI(-123456789012345ll), (double)-123456789012345ll);
  EQD((double)(uint64_t)VI(-1), (double)0xffffffffffffffffull);
  EQF((float)VI(16777217), (float)16777217);
  EQI((uint64_t)VD(1.8e19), (uint64_t)1.8e19);
  // fcsr: flags accumulate, frm field reads back
  asm volatile("fscsr zero");
  volatile double x = VD(1.0) / VD(3.0); (void)x;
  CHECK_EQ(fcsr() & 0x1f, 0x01, 4);                         // NX
  x = VD(1.0) / VD(0.0);
  CHECK_EQ(fcsr() & 0x1f, 0x09, 5);                         // + DZ
  x = __builtin_sqrt(VD(-1.0));
  CHECK_EQ(fcsr() & 0x1f, 0x19, 6);                         // + NV
  asm volatile("fsrm %0" :: "r"(1));                        // RTZ
  CHECK_EQ(fcsr() >> 5, 1, 7);
  double r; asm volatile("fdiv.d %0, %1, %2" : "=f"(r) : "f"(VD(2.0)), "f"(VD(3.0)));
  CHECK_EQ(bits_d(r), 0x3fe5555555555555ull, 8);            // 2/3 truncated
  asm volatile("fscsr zero");
  asm volatile("fdiv.d %0, %1, %2" : "=f"(r) : "f"(VD(2.0)), "f"(VD(3.0)));
  CHECK_EQ(bits_d(r), 0x3fe5555555555555ull + 0 * 1, 9);    // nearest-even rounds the same way here
  asm volatile("fdiv.d %0, %1, %2, rup" : "=f"(r) : "f"(VD(2.0)), "f"(VD(3.0)));
  CHECK_EQ(bits_d(r), 0x3fe5555555555556ull, 10);           // static rounding mode: up
  result("checks", nchecks);
  return 0;
}
