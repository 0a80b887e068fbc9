// Shared set-up for the multi-hart uipi tests: slot (h + 1) receives for hart h; sender-table
// entry h targets hart h's slot with vector (h + 8). Call uintr_hart_setup on every hart.
#pragma once
#include "test.h"
extern char __free[];
#define XTABLE ((volatile uint64_t*)__free)
static inline unsigned slot_of(unsigned hart) { return hart + 1; }
static inline unsigned vector_of(unsigned hart) { return hart + 8; }

static inline void uintr_global_setup(unsigned nharts, int active) {   // hart 0 only
  for (int i = 0; i < 512; i++) XTABLE[i] = 0;
  for (unsigned h = 0; h < nharts; h++) {
    XTABLE[h] = uist_entry(slot_of(h), vector_of(h));
    uintc_set_low(slot_of(h), h, active);
    (void)uintc_take_pending(slot_of(h));
  }
  asm volatile("fence" ::: "memory");
}
static inline void uintr_hart_setup(unsigned hart, void* utvec) {
  CSR_WRITE(CSR_MIDELEG, (1 << 1) | (1 << 5) | (1 << 9) | USIP | UTIP | UEIP);
  CSR_WRITE(CSR_SIDELEG, USIP);
  CSR_WRITE(CSR_MIE, USIP);
  CSR_WRITE(CSR_UTVEC, (uint64_t)utvec);
  CSR_WRITE(CSR_SUIST, suist_value((uint64_t)XTABLE, 1));
  CSR_WRITE(CSR_SUIRS, SUIRS_ENABLE | slot_of(hart));
  CSR_WRITE(CSR_USTATUS, 0);
}
