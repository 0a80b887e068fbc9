// Cross-hart uipi.send (4 harts, all in U-mode): hart 0 sends to receivers on harts 1..3; each
// gets exactly its vector. Hart 3's slot is inactive: the bit stays pending (no interrupt) until
// hart 3 activates its own slot with uipi.activate, then it is delivered. Hart 3 then sends
// back to hart 0.
#include "uintr_setup.h"
const char* test_name = "uipi_cross";
#define NH 4

static volatile uint64_t got[NH], hits[NH], ready[NH], phase2;

void u_trap(trap_frame* f) {
  (void)f;
  unsigned h = hartid_m();
  got[h] |= uipi_read();
  hits[h]++;
}

static uint64_t receiver(uint64_t h) {
  CSR_WRITE(CSR_USTATUS, 1);
  ready[h] = 1;
  if (h == 3) {
    while (!phase2) {}
    for (volatile int i = 0; i < 200; i++) {}
    if (hits[h] != 0) return 100;                // inactive: nothing delivered
    uipi_activate();
    while (hits[h] < 1) {}
    uipi_send(0);                                // answer hart 0
  } else {
    while (!hits[h]) {}
  }
  CSR_WRITE(CSR_USTATUS, 0);
  return 0;
}

static uint64_t sender(uint64_t arg) {
  (void)arg;
  CSR_WRITE(CSR_USTATUS, 1);
  for (unsigned h = 1; h < NH; h++) while (!ready[h]) {}
  for (unsigned h = 1; h < NH; h++) uipi_send(h);
  while (!hits[1] || !hits[2]) {}
  asm volatile("fence" ::: "memory");
  phase2 = 1;
  while (!hits[0]) {}
  CSR_WRITE(CSR_USTATUS, 0);
  return 0;
}

int main(uint64_t hart) {
  wait_for_harts(NH);
  if (hart == 0) {
    uintr_global_setup(NH, 1);
    uintc_set_low(slot_of(3), 3, 0);
  }
  barrier(NH);
  uintr_hart_setup(hart, u_trap_vector);
  barrier(NH);
  uint64_t rc = run_in_mode(PRV_U, hart == 0 ? sender : receiver, hart);
  CHECK_EQ(rc, 0, 1 + hart);
  barrier(NH);
  if (hart != 0) for (;;) {}
  for (unsigned h = 0; h < NH; h++) {
    CHECK_EQ(hits[h], 1, 10 + h);
    CHECK_EQ(got[h], 1ull << vector_of(h), 20 + h);
  }
  return 0;
}
