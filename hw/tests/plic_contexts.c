// PLIC context numbering on 4 harts (hw/README.md): context 3h is hart h's M context (mip.MEIP),
// 3h+1 its S context (SEIP), 3h+2 its U context (UEIP). Hart 0 enables one context at a time
// for the UART source (THR-empty level in the harness model); every hart reports its
// MEIP/SEIP/UEIP bits, and exactly the expected hart must see exactly the expected bit.
#include "test.h"
const char* test_name = "plic_contexts";
#define NH 4
#define PLIC ((uintptr_t)MEMMAP_PLIC_BASE)
#define PRIO(src) ((volatile uint32_t*)(PLIC + 4 * (src)))
#define ENABLE(ctx) ((volatile uint32_t*)(PLIC + 0x2000 + 0x80 * (ctx)))
#define THRESH(ctx) ((volatile uint32_t*)(PLIC + 0x200000 + 0x1000 * (ctx)))
#define UART_IER ((volatile uint32_t*)(uintptr_t)(MEMMAP_UART_BASE + (1 << CLOCK_UART_REG_SHIFT)))
#define EIP_BITS ((1ull << 11) | (1ull << 9) | UEIP)

static volatile uint64_t seen[NH], round_no, acked[NH];

int main(uint64_t hart) {
  wait_for_harts(NH);
  if (hart != 0) {
    for (uint64_t r = 1; r <= 3 * NH + 1; r++) {
      while (round_no < r) {}
      for (volatile int i = 0; i < 30; i++) {}
      seen[hart] = CSR_READ(CSR_MIP) & EIP_BITS;
      __atomic_store_n(&acked[hart], r, __ATOMIC_RELEASE);
    }
    for (;;) {}
  }
  for (int c = 0; c < 3 * NH; c++) { *ENABLE(c) = 0; *THRESH(c) = 0; }
  *PRIO(IRQ_UART) = 1;
  *UART_IER = 2;
  const uint64_t bit[3] = {1ull << 11, 1ull << 9, UEIP};
  for (int ctx = 0; ctx <= 3 * NH; ctx++) {          // the last round: nothing enabled
    if (ctx < 3 * NH) *ENABLE(ctx) = 1u << IRQ_UART;
    for (volatile int i = 0; i < 30; i++) {}
    round_no = ctx + 1;
    seen[0] = CSR_READ(CSR_MIP) & EIP_BITS;
    for (int h = 1; h < NH; h++) while (__atomic_load_n(&acked[h], __ATOMIC_ACQUIRE) < (uint64_t)ctx + 1) {}
    for (int h = 0; h < NH; h++) {
      uint64_t want = (ctx < 3 * NH && h == ctx / 3) ? bit[ctx % 3] : 0;
      if (seen[h] != want) {
        putstr("context "); putdec(ctx); putstr(" hart "); putdec(h); putstr(": mip bits ");
        puthex(seen[h]); putstr(" expected "); puthex(want); putstr("\n");
        test_fail(10 + ctx);
      }
    }
    if (ctx < 3 * NH) *ENABLE(ctx) = 0;
    for (volatile int i = 0; i < 30; i++) {}
  }
  *UART_IER = 0;
  return 0;
}
