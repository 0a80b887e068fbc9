// No spurious user interrupt after a handler's last read (docs/uintr-spec.md section 1, uret).
// A U-mode handler that clears its slot and returns at once must not be entered again for the
// same send: `uret` may re-enable user interrupts only once the clearing read's effect on the
// hart's USIP line is visible. Two handlers, each ending in the read directly followed by uret
// (no use of the result in between, which would hide the race):
//   read: `uipi.read t1; uret`
//   mmio: `ld t1, HIGH(slot); uret`   (the UINTC's read-to-clear register over the bus)
// The handler cannot look at t1 before uret, so it logs the previous read's value at entry:
// log[0] is a marker, log[k] the value the k-th entry's read returned (the last one stored by
// the loop after it). Each of N self-sends must give exactly one entry whose read returned the
// vector's bit; an entry whose read returned 0 is a spurious one.
#include "uintr_setup.h"
const char* test_name = "uret_race";
#define N 32
#define MAXLOG (4 * N + 4)
#define STR(x) #x
#define XSTR(x) STR(x)
#define UIPI_ASM(op, rd, rs1) ".insn r " XSTR(UIPI_OPCODE) ", " XSTR(UIPI_FUNCT3) ", " XSTR(op) ", " #rd ", " #rs1 ", x0\n"
#define URET_ASM ".word " XSTR(UIPI_URET) "\n"

static uint64_t logbuf[MAXLOG];

// t5 = log cursor, t6 = the slot's HIGH register (mmio handler); both reserved by the loop
asm(".text\n.balign 4\n.globl race_read_vec\nrace_read_vec:\n"
    "  sd t1, 0(t5)\n  addi t5, t5, 8\n"
    UIPI_ASM(UIPI_READ, t1, x0)
    URET_ASM
    ".balign 4\n.globl race_mmio_vec\nrace_mmio_vec:\n"
    "  sd t1, 0(t5)\n  addi t5, t5, 8\n"
    "  ld t1, 0(t6)\n"
    URET_ASM);
extern char race_read_vec[], race_mmio_vec[];

// U-mode: N self-sends, each followed by a pause long enough for a re-entry to happen.
static uint64_t sender(uint64_t vec) {
  CSR_WRITE(CSR_UTVEC, vec);
  uint64_t end;
  asm volatile(
      "  li t1, -1\n  mv t5, %1\n  mv t6, %2\n  li a4, %3\n"
      "  csrsi %4, 1\n"
      "1:" UIPI_ASM(UIPI_SEND, x0, x0)
      "  li a5, 100\n2: addi a5, a5, -1\n  bnez a5, 2b\n"
      "  addi a4, a4, -1\n  bnez a4, 1b\n"
      "  csrci %4, 1\n"
      "  sd t1, 0(t5)\n  addi t5, t5, 8\n  mv %0, t5\n"
      : "=r"(end)
      : "r"(logbuf), "r"(uintc_reg(slot_of(0), UINTC_REG_HIGH)), "i"(N), "i"(CSR_USTATUS)
      : "t1", "t5", "t6", "a4", "a5", "memory");
  return (end - (uint64_t)logbuf) / 8;
}

typedef struct { uint64_t words, entries, spurious, good; } outcome;

// Runs one handler and prints its counts; main checks them after both ran.
static outcome run(const char* name, uint64_t vec) {
  for (int i = 0; i < MAXLOG; i++) logbuf[i] = 0x5a5a;
  uint64_t words = run_in_mode(PRV_U, sender, vec);
  CHECK(words >= 1 && words <= MAXLOG, 1);
  CHECK_EQ(logbuf[0], ~0ull, 2);
  uint64_t entries = words - 1, spurious = 0, good = 0;
  for (uint64_t k = 1; k < words; k++) {
    if (logbuf[k] == 0) spurious++;
    else if (logbuf[k] == 1ull << vector_of(0)) good++;
  }
  char key[48]; int n = 0;
  for (const char* s = name; *s; s++) key[n++] = *s;
  const char* suf[] = {"_entries", "_spurious"};
  uint64_t val[] = {entries, spurious};
  for (int j = 0; j < 2; j++) {
    int m = n;
    for (const char* s = suf[j]; *s; s++) key[m++] = *s;
    key[m] = 0;
    result(key, val[j]);
  }
  return (outcome){words, entries, spurious, good};
}

int main(uint64_t hart) {
  if (hart != 0) for (;;) {}
  uintr_global_setup(1, 1);
  uintr_hart_setup(0, u_trap_vector);
  outcome r = run("read_then_uret", (uint64_t)race_read_vec);
  outcome m = run("mmio_read_then_uret", (uint64_t)race_mmio_vec);
  CHECK_EQ(r.spurious, 0, 10);
  CHECK_EQ(r.good, N, 11);
  CHECK_EQ(r.entries, N, 12);
  CHECK_EQ(m.spurious, 0, 20);
  CHECK_EQ(m.good, N, 21);
  CHECK_EQ(m.entries, N, 22);
  return 0;
}
