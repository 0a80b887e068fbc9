// Regression: Zicsr instruction forms, misa/mhartid, counters, M-mode timer (CLINT mtimecmp)
// and software (CLINT msip) interrupts, an S-mode software interrupt and an S-mode illegal
// instruction delegated through mideleg/medeleg to an S trap vector.
#include "test.h"
const char* test_name = "rv_csr_irq";

#define CLINT_MSIP0 ((volatile uint32_t*)(uintptr_t)MEMMAP_CLINT_BASE)
#define MTIMECMP0 ((volatile uint64_t*)(uintptr_t)(MEMMAP_CLINT_BASE + 0x4000))
#define MTIME ((volatile uint64_t*)(uintptr_t)(MEMMAP_CLINT_BASE + 0xbff8))

static volatile uint64_t m_timer, m_soft, s_hits, s_cause, s_illegal;

static int hook(trap_frame* f) {
  if (f->cause == (MCAUSE_INT | 7)) { m_timer++; *MTIMECMP0 = ~0ull; return 1; }
  if (f->cause == (MCAUSE_INT | 3)) { m_soft++; *CLINT_MSIP0 = 0; return 1; }
  return 0;
}

// S-mode trap vector: save caller-saved registers, call s_trap, sret
asm(".text\n.balign 4\n.globl s_vec\ns_vec:\n  addi sp, sp, -34*8\n"
    ".irp n,1,5,6,7,10,11,12,13,14,15,16,17,28,29,30,31\n  sd x\\n, \\n*8(sp)\n.endr\n"
    "  mv a0, sp\n  call s_trap\n"
    ".irp n,1,5,6,7,10,11,12,13,14,15,16,17,28,29,30,31\n  ld x\\n, \\n*8(sp)\n.endr\n"
    "  addi sp, sp, 34*8\n  sret\n");
extern char s_vec[];
void s_trap(uint64_t* regs) {
  (void)regs;
  uint64_t c; asm volatile("csrr %0, scause" : "=r"(c));
  s_cause = c; s_hits++;
  if (c == (MCAUSE_INT | 1)) asm volatile("csrc sip, %0" :: "r"(2));
  else { uint64_t e; asm volatile("csrr %0, sepc" : "=r"(e)); asm volatile("csrw sepc, %0" :: "r"(e + 4)); s_illegal++; }
}
static uint64_t s_part(uint64_t arg) {
  (void)arg;
  asm volatile("csrw stvec, %0" :: "r"(s_vec));
  asm volatile("csrs sie, %0" :: "r"(2));
  asm volatile("csrs sstatus, %0" :: "r"(2));     // SIE
  asm volatile("csrs sip, %0" :: "r"(2));         // SSIP -> trap to s_vec at once
  for (volatile int i = 0; i < 10; i++) {}
  if (s_hits != 1 || s_cause != (MCAUSE_INT | 1)) return 1;
  asm volatile("csrr t0, mstatus" ::: "t0");      // illegal in S, delegated by medeleg
  if (s_hits != 2 || s_cause != CAUSE_ILLEGAL || s_illegal != 1) return 2;
  asm volatile("csrc sstatus, %0" :: "r"(2));
  uint64_t c0 = rdcycle(), i0; asm volatile("rdinstret %0" : "=r"(i0));
  for (volatile int i = 0; i < 10; i++) {}
  uint64_t c1 = rdcycle(), i1; asm volatile("rdinstret %0" : "=r"(i1));
  if (c1 <= c0 || i1 <= i0 + 10) return 3;        // counters readable from S and counting
  return 0;
}

int main(uint64_t hart) {
  if (hart != 0) for (;;) {}
  m_trap_hook = hook;
  uint64_t old;
  CSR_WRITE(0x140, 0x1234);   // sscratch (mscratch belongs to the runtime)
  asm volatile("csrrw %0, sscratch, %1" : "=r"(old) : "r"(0xf0f0ull)); CHECK_EQ(old, 0x1234, 1);
  asm volatile("csrrs %0, sscratch, %1" : "=r"(old) : "r"(0x0f00ull)); CHECK_EQ(old, 0xf0f0, 2);
  asm volatile("csrrc %0, sscratch, %1" : "=r"(old) : "r"(0x00f0ull)); CHECK_EQ(old, 0xfff0, 3);
  asm volatile("csrrwi %0, sscratch, 21" : "=r"(old)); CHECK_EQ(old, 0xff00, 4);
  asm volatile("csrrsi %0, sscratch, 8" : "=r"(old)); CHECK_EQ(old, 21, 5);
  asm volatile("csrrci %0, sscratch, 1" : "=r"(old)); CHECK_EQ(old, 29, 6);
  CHECK_EQ(CSR_READ(0x140), 28, 7);
  uint64_t misa = CSR_READ(0x301);
  CHECK_EQ(misa >> 62, 2, 8);                                                 // RV64
  uint64_t ext = 0; const char* want = "IMAFDCSU";
  for (const char* c = want; *c; c++) ext |= 1ull << (*c - 'A');
  CHECK_EQ(misa & ext, ext, 9);
  CHECK_EQ(CSR_READ(0xf14), 0, 10);                                           // mhartid

  // M timer interrupt
  CSR_WRITE(CSR_MIE, 1 << 7);
  *MTIMECMP0 = *MTIME + 20;
  CSR_SET(CSR_MSTATUS, MSTATUS_MIE);
  uint64_t t0 = rdcycle();
  while (!m_timer && rdcycle() - t0 < 100000) {}
  CHECK_EQ(m_timer, 1, 11);
  // M software interrupt
  CSR_WRITE(CSR_MIE, 1 << 3);
  *CLINT_MSIP0 = 1;
  for (volatile int i = 0; i < 20; i++) {}
  CHECK_EQ(m_soft, 1, 12);
  CSR_CLEAR(CSR_MSTATUS, MSTATUS_MIE);
  CSR_WRITE(CSR_MIE, 0);
  // S-mode: delegated software interrupt and illegal instruction
  CSR_WRITE(CSR_MIDELEG, 1 << 1);
  CSR_WRITE(0x302, 1 << CAUSE_ILLEGAL);                                       // medeleg
  CHECK_EQ(run_in_mode(PRV_S, s_part, 0), 0, 13);
  CSR_WRITE(0x302, 0);
  return 0;
}
