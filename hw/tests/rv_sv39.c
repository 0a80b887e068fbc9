// Regression: Sv39 translation in S-mode: gigapage and 4 KiB mappings, an alias, read-only and
// unmapped pages (store/load page faults with the faulting VA in mtval), SUM for user pages,
// sfence.vma after a PTE change.
#include "test.h"
const char* test_name = "rv_sv39";

extern char __free[];
#define PT_BASE ((uint64_t)__free + 0x10000)
#define ROOT ((volatile uint64_t*)(PT_BASE))
#define L1 ((volatile uint64_t*)(PT_BASE + 0x1000))
#define L0 ((volatile uint64_t*)(PT_BASE + 0x2000))
#define DATA_PA (PT_BASE + 0x3000)
#define DATA2_PA (PT_BASE + 0x4000)
#define VA0 0x100000000ull            /* data page (RW) */
#define VA1 (VA0 + 0x1000)            /* the same page, read-only */
#define VA2 (VA0 + 0x2000)            /* unmapped */
#define VA3 (VA0 + 0x3000)            /* user page */
#define PTE_V 1
#define PTE_R 2
#define PTE_W 4
#define PTE_X 8
#define PTE_U 16
#define PTE_A 64
#define PTE_D 128
#define PTE(pa, f) ((((uint64_t)(pa)) >> 12 << 10) | (f))

static volatile uint64_t faults, fault_cause, fault_tval;
static int hook(trap_frame* f) {
  if (f->cause == 13 || f->cause == 15) {
    faults++; fault_cause = f->cause; fault_tval = f->tval;
    f->epc += ((*(volatile uint16_t*)(uintptr_t)f->epc) & 3) == 3 ? 4 : 2;
    return 1;
  }
  return 0;
}

static uint64_t s_part(uint64_t arg) {
  (void)arg;
  volatile uint64_t* p0 = (volatile uint64_t*)VA0;
  volatile uint64_t* p1 = (volatile uint64_t*)VA1;
  *p0 = 0x1122334455667788ull;
  if (*p1 != 0x1122334455667788ull) return 1;
  asm volatile("sd %0, 0(%1)" :: "r"(1ull), "r"(p1) : "memory");        // read-only: fault
  if (faults != 1 || fault_cause != 15 || fault_tval != VA1) return 2;
  uint64_t v;
  asm volatile("ld %0, 8(%1)" : "=r"(v) : "r"(VA2) : "memory");          // unmapped: fault
  if (faults != 2 || fault_cause != 13 || fault_tval != VA2 + 8) return 3;
  asm volatile("ld %0, 0(%1)" : "=r"(v) : "r"(VA3) : "memory");          // U page, SUM=0
  if (faults != 3 || fault_cause != 13) return 4;
  asm volatile("csrs sstatus, %0" :: "r"(1ull << 18));                   // SUM
  v = *(volatile uint64_t*)VA3;
  if (faults != 3 || v != 0xabcdef) return 5;
  asm volatile("csrc sstatus, %0" :: "r"(1ull << 18));
  // remap VA1 to another page and make it writable; sfence.vma makes it visible
  L0[1] = PTE(DATA2_PA, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
  asm volatile("sfence.vma %0" :: "r"(VA1) : "memory");
  *p1 = 0x99;
  if (*p0 != 0x1122334455667788ull) return 6;
  return 0;
}

int main(uint64_t hart) {
  if (hart != 0) for (;;) {}
  m_trap_hook = hook;
  for (int i = 0; i < 512; i++) { ROOT[i] = 0; L1[i] = 0; L0[i] = 0; }
  ROOT[1] = PTE(0x40000000, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);           // MMIO, identity
  ROOT[2] = PTE(0x80000000, PTE_V | PTE_R | PTE_W | PTE_X | PTE_A | PTE_D);   // DRAM, identity
  ROOT[4] = PTE(L1, PTE_V);                                                   // VA 4 GiB..
  L1[0] = PTE(L0, PTE_V);
  L0[0] = PTE(DATA_PA, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D);
  L0[1] = PTE(DATA_PA, PTE_V | PTE_R | PTE_A);
  L0[3] = PTE(DATA2_PA + 0x1000, PTE_V | PTE_R | PTE_W | PTE_U | PTE_A | PTE_D);
  *(volatile uint64_t*)(DATA2_PA + 0x1000) = 0xabcdef;
  asm volatile("fence" ::: "memory");
  CSR_WRITE(0x180, (8ull << 60) | (PT_BASE >> 12));                           // satp: Sv39
  asm volatile("sfence.vma" ::: "memory");
  uint64_t rc = run_in_mode(PRV_S, s_part, 0);
  CSR_WRITE(0x180, 0);
  asm volatile("sfence.vma" ::: "memory");
  CHECK_EQ(rc, 0, 1);
  CHECK_EQ(*(volatile uint64_t*)DATA_PA, 0x1122334455667788ull, 2);
  CHECK_EQ(*(volatile uint64_t*)DATA2_PA, 0x99, 3);
  return 0;
}
