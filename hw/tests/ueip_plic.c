// mip.UEIP from the PLIC's U-mode context (hart h: context 3h+2, see hw/README.md): the UART's
// THR-empty interrupt (harness model) on PLIC source IRQ_UART reaches a U-mode handler with
// ucause = interrupt | 8, which claims and completes it at the U context itself.
#include "test.h"
const char* test_name = "ueip_plic";

#define PLIC ((uintptr_t)MEMMAP_PLIC_BASE)
#define PRIO(src) ((volatile uint32_t*)(PLIC + 4 * (src)))
#define ENABLE(ctx) ((volatile uint32_t*)(PLIC + 0x2000 + 0x80 * (ctx)))
#define THRESH(ctx) ((volatile uint32_t*)(PLIC + 0x200000 + 0x1000 * (ctx)))
#define CLAIM(ctx) ((volatile uint32_t*)(PLIC + 0x200004 + 0x1000 * (ctx)))
#define UART_IER ((volatile uint32_t*)(uintptr_t)(MEMMAP_UART_BASE + (1 << CLOCK_UART_REG_SHIFT)))
#define UCTX(h) (3 * (h) + 2)

static volatile uint64_t u_hits, u_cause, claimed;
void u_trap(trap_frame* f) {
  (void)f;
  u_cause = CSR_READ(CSR_UCAUSE);
  uint32_t id = *CLAIM(UCTX(0));
  claimed = id;
  *UART_IER = 0;                     // quiet the source, then complete
  *CLAIM(UCTX(0)) = id;
  u_hits++;
}
static uint64_t u_wait(uint64_t arg) {
  CSR_WRITE(CSR_USTATUS, 1);
  for (volatile int i = 0; i < (int)arg; i++) {}
  CSR_WRITE(CSR_USTATUS, 0);
  return u_hits;
}
static void spin(int n) { for (volatile int i = 0; i < n; i++) {} }

int main(uint64_t hart) {
  if (hart != 0) for (;;) {}
  for (int c = 0; c < 3; c++) { *ENABLE(c) = 0; *THRESH(c) = 0; }
  *PRIO(IRQ_UART) = 1;
  *UART_IER = 2;
  spin(20);
  CHECK_EQ(CSR_READ(CSR_MIP) & (UEIP | (1 << 9) | (1 << 11)), 0, 1);   // no context enabled
  *ENABLE(UCTX(0)) = 1u << IRQ_UART;
  spin(20);
  CHECK_EQ(CSR_READ(CSR_MIP) & (UEIP | (1 << 9) | (1 << 11)), UEIP, 2);  // only U context
  CSR_WRITE(CSR_MIDELEG, (1 << 1) | (1 << 5) | (1 << 9) | USIP | UTIP | UEIP);
  CSR_WRITE(CSR_SIDELEG, UEIP);
  CSR_WRITE(CSR_MIE, UEIP);
  CSR_WRITE(CSR_UTVEC, (uint64_t)u_trap_vector);
  CHECK_EQ(run_in_mode(PRV_U, u_wait, 30), 1, 3);
  CHECK_EQ(u_cause, MCAUSE_INT | 8, 4);
  CHECK_EQ(claimed, IRQ_UART, 5);
  spin(20);
  CHECK_EQ(CSR_READ(CSR_MIP) & UEIP, 0, 6);
  // the S context of this hart still works as before (seip), U context off
  *ENABLE(UCTX(0)) = 0;
  *ENABLE(1) = 1u << IRQ_UART;
  *UART_IER = 2;
  spin(20);
  CHECK_EQ(CSR_READ(CSR_MIP) & (UEIP | (1 << 9)), 1 << 9, 7);
  *UART_IER = 0;
  uint32_t id = *CLAIM(1);
  *CLAIM(1) = id;
  CHECK_EQ(id, IRQ_UART, 8);
  return 0;
}
