// User trap entry and uret (docs/uintr-spec.md section 1): ucause/uepc/utval, UIE/UPIE, privilege
// stays U, direct and vectored utvec, U CSRs usable from U, S CSRs illegal from U, uret illegal
// outside U, ranking below M-level interrupts, never taken in S-mode or with UIE=0.
#include "test.h"
const char* test_name = "utrap";

#define CLINT_MSIP(h) ((volatile uint32_t*)(uintptr_t)(MEMMAP_CLINT_BASE + 4 * (h)))

static volatile uint64_t illegal_count, illegal_mpp_bad, seq[8], nseq;
static volatile uint64_t u_cause, u_epc, u_tval, u_status, u_hits, vec_hit;

static int hook(trap_frame* f) {
  if (f->cause == CAUSE_ILLEGAL) {
    illegal_count++;
    uint64_t mpp = (CSR_READ(CSR_MSTATUS) >> 11) & 3;
    if (f->x[5] == 0x5a5a && mpp != PRV_U) illegal_mpp_bad++;   // probe from the U handler
    uint16_t lo = *(volatile uint16_t*)(uintptr_t)f->epc;
    f->epc += (lo & 3) == 3 ? 4 : 2;
    return 1;
  }
  if (f->cause == CAUSE_ECALL_U && f->x[17] == 0x100) {   // U handler asks: clear mip.UEIP
    CSR_CLEAR(CSR_MIP, UEIP);
    f->epc += 4;
    return 1;
  }
  if (f->cause == (MCAUSE_INT | 3)) {                      // MSIP: record and clear
    seq[nseq++] = 3;
    *CLINT_MSIP(0) = 0;
    return 1;
  }
  return 0;
}

void u_trap(trap_frame* f) {
  u_cause = CSR_READ(CSR_UCAUSE);
  u_epc = CSR_READ(CSR_UEPC);
  u_tval = CSR_READ(CSR_UTVAL);
  u_status = CSR_READ(CSR_USTATUS);
  u_hits++;
  seq[nseq++] = u_cause & 0xff;
  // still in U-mode: reading an S CSR traps to M with MPP = U
  asm volatile("li t0, 0x5a5a; csrr t1, %0; li t0, 0" ::"i"(CSR_SUIST) : "t0", "t1");
  if ((u_cause & 0xff) == 0) CSR_CLEAR(CSR_UIP, USIP);
  else { register uint64_t a7 asm("a7") = 0x100; asm volatile("ecall" :: "r"(a7)); }
}

// ---- vectored mode: entries at base + 4*cause record which one was used ----
asm(".text\n.balign 256\n.globl u_vec_table\nu_vec_table:\n"
    "  csrw 0x040, t0\n  li t0, 100\n  j u_vec_common\n"
    ".balign 32\n  csrw 0x040, t0\n  li t0, 108\n  j u_vec_common\n"   /* +32 = cause 8 */
    "u_vec_common:\n  addi sp, sp, -16\n  sd t1, 0(sp)\n  la t1, vec_hit\n  sd t0, 0(t1)\n"
    "  ld t1, 0(sp)\n  addi sp, sp, 16\n  csrr t0, 0x040\n  j u_trap_vector\n");
extern char u_vec_table[];

static uint64_t u_part_csrs(uint64_t arg) {
  (void)arg;
  // U CSRs work from U
  CSR_WRITE(CSR_USCRATCH, 0x55);
  if (CSR_READ(CSR_USCRATCH) != 0x55) return 1;
  (void)CSR_READ(CSR_UIP); (void)CSR_READ(CSR_UIE); (void)CSR_READ(CSR_UTVEC);
  // S CSRs trap (5 accesses)
  asm volatile("csrr t0, %0" ::"i"(CSR_SIDELEG) : "t0");
  asm volatile("csrr t0, %0" ::"i"(CSR_SUIST) : "t0");
  asm volatile("csrr t0, %0" ::"i"(CSR_SUIRS) : "t0");
  asm volatile("csrw %0, %1" ::"i"(CSR_SUIST), "r"(~0ull));
  asm volatile("csrw %0, %1" ::"i"(CSR_SIDELEG), "r"(~0ull));
  return 0;
}

static uint64_t u_part_trap(uint64_t arg) {
  (void)arg;
  CSR_WRITE(CSR_USTATUS, 0);
  CSR_SET(CSR_UIP, USIP);                         // pending, but UIE = 0: not taken
  for (volatile int i = 0; i < 20; i++) {}
  if (u_hits != 0) return 10;
  if (!(CSR_READ(CSR_UIP) & USIP)) return 11;
  uint64_t expect_epc;
  asm volatile("la %0, 1f\n csrsi %1, 1\n 1: nop" : "=&r"(expect_epc) : "i"(CSR_USTATUS));
  if (u_hits != 1) return 12;
  if (u_epc != expect_epc) return 13;
  if (u_cause != (MCAUSE_INT | 0)) return 14;
  if (u_tval != 0) return 15;
  if (u_status != 0x10) return 16;                // in the handler: UIE = 0, UPIE = 1
  if (CSR_READ(CSR_USTATUS) != 0x11) return 17;   // after uret: UIE = UPIE (1), UPIE = 1
  if (CSR_READ(CSR_UIP) & USIP) return 18;
  return 0;
}

static uint64_t u_wait(uint64_t arg) {           // spin a little, report how many U traps
  for (volatile int i = 0; i < (int)arg; i++) {}
  return u_hits;
}

static uint64_t s_part(uint64_t arg) {
  (void)arg;
  asm volatile(".word %0" ::"i"(UIPI_URET));      // uret in S: illegal
  for (volatile int i = 0; i < 50; i++) {}        // pending+enabled U interrupt: not taken in S
  return u_hits;
}

int main(uint64_t hart) {
  if (hart != 0) for (;;) {}
  m_trap_hook = hook;
  CSR_WRITE(CSR_MIDELEG, (1 << 1) | (1 << 5) | (1 << 9) | USIP | UTIP | UEIP);
  CSR_WRITE(CSR_SIDELEG, USIP | UEIP);
  CSR_WRITE(CSR_MIE, USIP | UEIP);
  CSR_WRITE(CSR_UTVEC, (uint64_t)u_trap_vector);

  // uret in M-mode: illegal
  asm volatile(".word %0" ::"i"(UIPI_URET));
  CHECK_EQ(illegal_count, 1, 1);
  // U CSRs from U, S CSRs illegal from U
  CHECK_EQ(run_in_mode(PRV_U, u_part_csrs, 0), 0, 2);
  CHECK_EQ(illegal_count, 6, 3);
  CHECK_EQ(CSR_READ(CSR_SUIST), 0, 4);
  CHECK_EQ(CSR_READ(CSR_SIDELEG), USIP | UEIP, 5);
  // trap entry / uret
  CHECK_EQ(run_in_mode(PRV_U, u_part_trap, 0), 0, 6);
  CHECK_EQ(illegal_mpp_bad, 0, 7);
  CHECK_EQ(illegal_count, 7, 8);                 // the handler's S-CSR probe trapped from U

  // not in S-mode: pending USIP with UIE=1 stays pending; uret in S is illegal
  u_hits = 0;
  CSR_WRITE(CSR_USTATUS, 1);
  CSR_SET(CSR_MIP, USIP);
  CHECK_EQ(run_in_mode(PRV_S, s_part, 0), 0, 9);
  CHECK_EQ(illegal_count, 8, 10);
  CHECK(CSR_READ(CSR_MIP) & USIP, 11);
  // ... and taken as soon as U-mode runs
  CHECK_EQ(run_in_mode(PRV_U, u_wait, 10), 1, 12);

  // ranking: MSIP and USIP pending at the first U instruction: M first, then U
  u_hits = 0; nseq = 0;
  *CLINT_MSIP(0) = 1;
  CSR_SET(CSR_MIE, 1 << 3);
  CSR_SET(CSR_MIP, USIP);
  CSR_WRITE(CSR_USTATUS, 1);
  CHECK_EQ(run_in_mode(PRV_U, u_wait, 10), 1, 13);
  CHECK_EQ(nseq, 2, 14);
  CHECK_EQ(seq[0], 3, 15);
  CHECK_EQ(seq[1], 0, 16);
  CSR_CLEAR(CSR_MIE, 1 << 3);

  // not delegated by sideleg: not a user interrupt (USIP -> S would be taken; use UEIP off)
  // vectored mode: UEIP (cause 8) enters at base + 32
  u_hits = 0; nseq = 0; vec_hit = 0;
  CSR_WRITE(CSR_UTVEC, (uint64_t)u_vec_table | 1);
  CSR_SET(CSR_MIP, UEIP);
  CSR_WRITE(CSR_USTATUS, 1);
  CHECK_EQ(run_in_mode(PRV_U, u_wait, 10), 1, 17);
  CHECK_EQ(vec_hit, 108, 18);
  CHECK_EQ(u_cause, MCAUSE_INT | 8, 19);
  CHECK_EQ(CSR_READ(CSR_MIP) & UEIP, 0, 20);
  // vectored, cause 0 enters at base
  CSR_SET(CSR_MIP, USIP);
  CHECK_EQ(run_in_mode(PRV_U, u_wait, 10), 2, 21);
  CHECK_EQ(vec_hit, 100, 22);
  // UIE = 0 after a handler would re-enable: with ustatus.UIE cleared nothing is taken
  CSR_WRITE(CSR_USTATUS, 0);
  CSR_SET(CSR_MIP, USIP);
  CHECK_EQ(run_in_mode(PRV_U, u_wait, 10), 2, 23);
  CSR_CLEAR(CSR_MIP, USIP);
  return 0;
}
