// The uipi unit on one hart (docs/uintr-spec.md sections 2-4): send/read/write/activate/deactivate,
// pending kept while Active=0 and delivered when Active is set, every check (suist.Enable,
// Size, Valid, implemented slots, suirs.Enable, a faulting table address) has no effect and
// never traps, uipi.read with suirs disabled writes 0 and the core continues, funct7 > 4 is
// illegal, and uipi.send from S-mode with a kernel table interrupts a U-mode receiver.
#include "test.h"
const char* test_name = "uipi_basic";

extern char __free[];
#define TABLE ((volatile uint64_t*)__free)                  /* 2 pages: user sender table */
#define BAD_PAGE ((uint64_t)__free + 0x2000)                /* S-mode PMP denies this page */
#define KTABLE ((volatile uint64_t*)(__free + 0x3000))      /* kernel sender table */
#define SLOT 5
#define NSLOTS UINTC_DEFAULT_SLOTS

static volatile uint64_t illegal_count, u_hits, u_got;

static int hook(trap_frame* f) {
  if (f->cause == CAUSE_ILLEGAL) {
    illegal_count++;
    f->epc += ((*(volatile uint16_t*)(uintptr_t)f->epc) & 3) == 3 ? 4 : 2;
    return 1;
  }
  return 0;
}
void u_trap(trap_frame* f) {
  (void)f;
  u_got |= uipi_read();
  u_hits++;
}
static void spin(int n) { for (volatile int i = 0; i < n; i++) {} }
static uint64_t pending_mmio(unsigned slot) { asm volatile("fence" ::: "memory"); return uintc_take_pending(slot); }

// ---- U-mode: receiver and sender on this hart ----
static uint64_t u_active(uint64_t arg) {
  (void)arg;
  CSR_WRITE(CSR_USTATUS, 1);
  uipi_send(0);                                   // slot inactive: stays pending
  asm volatile("fence" ::: "memory");
  spin(30);
  if (u_hits) return 1;
  uipi_activate();                                // now delivered
  spin(30);
  if (u_hits != 1 || u_got != (1ull << 3)) return 2;
  u_got = 0;
  uipi_write(0x30);                               // OR mask -> interrupt
  spin(30);
  if (u_hits != 2 || u_got != 0x30) return 3;
  u_got = 0;
  uipi_deactivate();
  uipi_send(0);
  asm volatile("fence" ::: "memory");
  spin(30);
  if (u_hits != 2) return 4;
  CSR_WRITE(CSR_USTATUS, 0);
  if (*uintc_reg(SLOT, UINTC_REG_ACT) != 0) return 5;
  if (uipi_read() != (1ull << 3)) return 6;        // read works while inactive; clears
  if (uipi_read() != 0) return 7;
  return 0;
}

// ---- S-mode: the checks (S may rewrite suist/suirs) ----
#define FAILRET(n) do { return n; } while (0)
static uint64_t s_checks(uint64_t arg) {
  (void)arg;
  uint64_t tbl = (uint64_t)TABLE;
  CSR_WRITE(CSR_SUIST, suist_value(tbl, 1));
  CSR_WRITE(CSR_SUIRS, SUIRS_ENABLE | SLOT);
  uipi_send(0);
  if (pending_mmio(SLOT) != (1ull << 3)) FAILRET(20);
  uipi_send(1);                                   // Valid = 0
  if (pending_mmio(SLOT) != 0) FAILRET(21);
  uipi_send(2);                                   // slot 100 >= implemented slots
  if (pending_mmio(SLOT) != 0 || pending_mmio(100 % NSLOTS) != 0) FAILRET(22);
  uipi_send(511);                                 // last entry of a 1-page table
  if (pending_mmio(SLOT) != (1ull << 6)) FAILRET(23);
  uipi_send(512);                                 // index = Size*512: out of bounds
  if (pending_mmio(SLOT) != 0) FAILRET(24);
  uipi_send(1ull << 40);
  uipi_send(~0ull);
  if (pending_mmio(SLOT) != 0) FAILRET(25);
  CSR_WRITE(CSR_SUIST, suist_value(tbl, 2));      // 2 pages: entry 512 is in range
  uipi_send(512);
  if (pending_mmio(SLOT) != (1ull << 7)) FAILRET(26);
  CSR_WRITE(CSR_SUIST, suist_value(tbl, 2) & ~SUIST_ENABLE);
  uipi_send(0);
  if (pending_mmio(SLOT) != 0) FAILRET(27);
  // a table the S-mode PMP denies, and one where no memory is: no effect, no trap, no hang
  CSR_WRITE(CSR_SUIST, suist_value(BAD_PAGE, 1));
  uipi_send(0);
  if (pending_mmio(SLOT) != 0) FAILRET(28);
  CSR_WRITE(CSR_SUIST, suist_value(0x40000000, 1));
  uipi_send(0);
  uipi_send(3);
  if (pending_mmio(SLOT) != 0) FAILRET(29);
  CSR_WRITE(CSR_SUIST, suist_value(tbl, 1));
  uipi_send(0);
  if (pending_mmio(SLOT) != (1ull << 3)) FAILRET(30);

  // suirs disabled: read writes 0 to rd (and the core goes on), write/activate do nothing
  *uintc_reg(SLOT, UINTC_REG_HIGH) = 0xff;
  CSR_WRITE(CSR_SUIRS, SLOT);
  uint64_t rd;
  asm volatile("li %0, -1\n .insn r %1, %2, %3, %0, x0, x0\n addi %0, %0, 0" : "=&r"(rd)
               : "i"(UIPI_OPCODE), "i"(UIPI_FUNCT3), "i"(UIPI_READ));
  if (rd != 0) FAILRET(31);
  uipi_write(0x100);
  uipi_activate();
  asm volatile("fence" ::: "memory");
  if (*uintc_reg(SLOT, UINTC_REG_ACT) != 0) FAILRET(32);
  CSR_WRITE(CSR_SUIRS, SUIRS_ENABLE | 200);       // enabled, but slot not implemented
  if (uipi_read() != 0) FAILRET(33);
  uipi_activate();
  CSR_WRITE(CSR_SUIRS, SUIRS_ENABLE | SLOT);
  if (uipi_read() != 0xff) FAILRET(34);           // untouched by the failed ones
  // several uipi back to back, result used at once
  uipi_write(1); uipi_write(2); uipi_write(4);
  if (uipi_read() != 7) FAILRET(35);

  // funct7 > 4: illegal instruction (rd unchanged)
  asm volatile("li %0, 77\n .insn r %1, %2, 5, %0, x0, x0" : "=&r"(rd) : "i"(UIPI_OPCODE), "i"(UIPI_FUNCT3));
  asm volatile(".insn r %0, %1, 6, x0, x0, x0" :: "i"(UIPI_OPCODE), "i"(UIPI_FUNCT3));
  asm volatile(".insn r %0, %1, 127, x0, x0, x0" :: "i"(UIPI_OPCODE), "i"(UIPI_FUNCT3));
  if (rd != 77) FAILRET(36);
  return 0;
}

// ---- S-mode as sender with its own table, then a U-mode receiver on this hart ----
static uint64_t u_receive(uint64_t arg) {
  (void)arg;
  CSR_WRITE(CSR_USTATUS, 1);
  spin(40);
  CSR_WRITE(CSR_USTATUS, 0);
  return u_hits;
}
static uint64_t s_kernel_send(uint64_t arg) {
  (void)arg;
  CSR_WRITE(CSR_SUIST, suist_value((uint64_t)KTABLE, 1));
  uipi_send(9);
  asm volatile("fence" ::: "memory");
  return 0;
}

int main(uint64_t hart) {
  if (hart != 0) for (;;) {}
  m_trap_hook = hook;
  for (int i = 0; i < 1024; i++) TABLE[i] = 0;
  TABLE[0] = uist_entry(SLOT, 3);
  TABLE[1] = uist_entry(SLOT, 4) & ~(1ull << UIST_VALID_BIT);
  TABLE[2] = uist_entry(100, 5);
  TABLE[3] = uist_entry(SLOT, 8);
  TABLE[511] = uist_entry(SLOT, 6);
  TABLE[512] = uist_entry(SLOT, 7);
  for (int i = 0; i < 512; i++) KTABLE[i] = 0;
  KTABLE[9] = uist_entry(SLOT, 42);
  asm volatile("fence" ::: "memory");
  // PMP: entry 0 denies BAD_PAGE to S/U, entry 1 allows the rest
  CSR_WRITE(0x3b0, (BAD_PAGE >> 2) | 0x1ff);      // pmpaddr0: NAPOT 4 KiB
  CSR_WRITE(0x3b1, ~0ull);                        // pmpaddr1: everything
  CSR_WRITE(0x3a0, 0x18 | (0x1f << 8));           // pmpcfg0: NAPOT none, NAPOT RWX
  asm volatile("sfence.vma" ::: "memory");

  CSR_WRITE(CSR_MIDELEG, (1 << 1) | (1 << 5) | (1 << 9) | USIP | UTIP | UEIP);
  CSR_WRITE(CSR_SIDELEG, USIP);
  CSR_WRITE(CSR_MIE, USIP);
  CSR_WRITE(CSR_UTVEC, (uint64_t)u_trap_vector);
  uintc_set_low(SLOT, 0, 0);
  CSR_WRITE(CSR_SUIST, suist_value((uint64_t)TABLE, 1));
  CSR_WRITE(CSR_SUIRS, SUIRS_ENABLE | SLOT);

  CHECK_EQ(run_in_mode(PRV_U, u_active, 0), 0, 1);
  CHECK_EQ(illegal_count, 0, 2);
  CHECK_EQ(run_in_mode(PRV_S, s_checks, 0), 0, 3);
  CHECK_EQ(illegal_count, 3, 4);

  u_hits = 0; u_got = 0;
  uintc_set_low(SLOT, 0, 1);
  CHECK_EQ(run_in_mode(PRV_S, s_kernel_send, 0), 0, 5);
  CHECK_EQ(run_in_mode(PRV_U, u_receive, 0), 1, 6);
  CHECK_EQ(u_got, 1ull << 42, 7);
  return 0;
}
