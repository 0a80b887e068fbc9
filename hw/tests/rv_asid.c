// ASID-tagged TLBs (core patch 0006): satp.ASID holds 16 bits; a switch of satp between two
// address spaces needs no sfence.vma and keeps both spaces' translations; global pages hit in
// every space; `sfence.vma x0, asid` drops only that space's non-global entries, `sfence.vma va,
// asid` that page, `sfence.vma` everything. Translations are observed as stale on purpose: a
// PTE changed without a fence still reads through the old entry while the TLB keeps it.
// On an untagged TLB step 2 reads space A's page through space B (fails with code 12).
#include "test.h"
const char* test_name = "rv_asid";

extern char __free[];
#define BASE ((uint64_t)__free + 0x10000)
#define TABLE(i) ((volatile uint64_t*)(BASE + 0x1000 * (i)))
#define ROOT_A TABLE(0)
#define L1_A TABLE(1)
#define L0_A TABLE(2)
#define ROOT_B TABLE(3)
#define L1_B TABLE(4)
#define L0_B TABLE(5)
#define PAGE(i) (BASE + 0x1000 * (6 + (i)))   /* data pages; page i holds the word 0x10 + i */
#define VA0 0x100000000ull                   /* A: page 0, later page 2; B: page 1, later page 3 */
#define VG (VA0 + 0x1000)                    /* A: page 4, global; B: page 5 */
#define ASID_A 1
#define ASID_B 0x8002                        /* bit 15 set: all 16 bits take part */
#define PTE_V 1
#define PTE_R 2
#define PTE_W 4
#define PTE_X 8
#define PTE_G 32
#define PTE_A 64
#define PTE_D 128
#define PTE(pa, f) ((((uint64_t)(pa)) >> 12 << 10) | (f))
#define DATA (PTE_V | PTE_R | PTE_W | PTE_A | PTE_D)
#define SATP(root, asid) ((8ull << 60) | ((uint64_t)(asid) << 44) | ((uint64_t)(root) >> 12))

static uint64_t rd(uint64_t va) { return *(volatile uint64_t*)va; }
static void space(volatile uint64_t* root, uint64_t asid) { CSR_WRITE(0x180, SATP(root, asid)); }
static void flush_asid(uint64_t asid) { asm volatile("sfence.vma x0, %0" :: "r"(asid) : "memory"); }

// Returns 0, or the number of the first step that read the wrong page.
static uint64_t s_part(uint64_t arg) {
  (void)arg;
  space(ROOT_A, ASID_A);
  asm volatile("sfence.vma" ::: "memory");
  if (rd(VA0) != 0x10) return 11;
  space(ROOT_B, ASID_B);                                  // no fence: tags keep them apart
  if (rd(VA0) != 0x11) return 12;
  // A's entry survives B: change A's PTE without a fence, visit B, come back.
  L0_A[0] = PTE(PAGE(2), DATA);
  asm volatile("fence" ::: "memory");
  space(ROOT_A, ASID_A);
  if (rd(VA0) != 0x10) return 13;                         // A's entry still there (stale)
  space(ROOT_B, ASID_B);
  if (rd(VA0) != 0x11) return 14;
  space(ROOT_A, ASID_A);
  if (rd(VA0) != 0x10) return 15;                         // kept across the switch to B and back
  flush_asid(ASID_B);                                     // another space's flush keeps A's
  if (rd(VA0) != 0x10) return 16;
  flush_asid(ASID_A);
  if (rd(VA0) != 0x12) return 17;                         // now A walks again
  // A global page filled in A hits in B, survives B's ASID flush, not a full one.
  if (rd(VG) != 0x14) return 21;
  space(ROOT_B, ASID_B);
  if (rd(VG) != 0x14) return 22;
  flush_asid(ASID_B);
  if (rd(VG) != 0x14) return 23;
  asm volatile("sfence.vma" ::: "memory");
  if (rd(VG) != 0x15) return 24;
  // One page of one space.
  if (rd(VA0) != 0x11) return 31;
  L0_B[0] = PTE(PAGE(3), DATA);
  asm volatile("fence" ::: "memory");
  if (rd(VA0) != 0x11) return 32;                         // stale until fenced
  asm volatile("sfence.vma %0, %1" :: "r"(VA0), "r"((uint64_t)ASID_B) : "memory");
  if (rd(VA0) != 0x13) return 33;
  return 0;
}

static void identity(volatile uint64_t* root) {
  // MMIO and DRAM (code, stack, tables) identity-mapped, global: the same in both spaces.
  root[1] = PTE(0x40000000, DATA | PTE_G);
  root[2] = PTE(0x80000000, DATA | PTE_X | PTE_G);
}

int main(uint64_t hart) {
  if (hart != 0) for (;;) {}
  // satp.ASID is 16 bits wide (WARL: written with mode Bare, read back).
  CSR_WRITE(0x180, 0xffffull << 44);
  CHECK_EQ((CSR_READ(0x180) >> 44) & 0xffff, 0xffff, 1);
  CSR_WRITE(0x180, 0);
  for (int t = 0; t < 6; t++)
    for (int i = 0; i < 512; i++) TABLE(t)[i] = 0;
  for (int p = 0; p < 6; p++) *(volatile uint64_t*)PAGE(p) = 0x10 + p;
  identity(ROOT_A);
  identity(ROOT_B);
  ROOT_A[4] = PTE(L1_A, PTE_V);
  L1_A[0] = PTE(L0_A, PTE_V);
  L0_A[0] = PTE(PAGE(0), DATA);
  L0_A[1] = PTE(PAGE(4), DATA | PTE_G);
  ROOT_B[4] = PTE(L1_B, PTE_V);
  L1_B[0] = PTE(L0_B, PTE_V);
  L0_B[0] = PTE(PAGE(1), DATA);
  L0_B[1] = PTE(PAGE(5), DATA);
  asm volatile("fence" ::: "memory");
  uint64_t rc = run_in_mode(PRV_S, s_part, 0);
  CSR_WRITE(0x180, 0);
  asm volatile("sfence.vma" ::: "memory");
  CHECK_EQ(rc, 0, 2);
  return 0;
}
