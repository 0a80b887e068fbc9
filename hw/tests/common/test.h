// Bare-metal RTL tests: helpers shared by every test (see hw/tests/README.md).
#pragma once
#include <stdint.h>
#include "platform.h"   /* platform/gen.py --dts: plain numbers, usable from C and assembly */

#define CSR_READ(csr) ({ uint64_t v_; asm volatile("csrr %0, %1" : "=r"(v_) : "i"(csr)); v_; })
#define CSR_WRITE(csr, val) asm volatile("csrw %0, %1" :: "i"(csr), "r"((uint64_t)(val)) : "memory")
#define CSR_SET(csr, val) asm volatile("csrs %0, %1" :: "i"(csr), "r"((uint64_t)(val)) : "memory")
#define CSR_CLEAR(csr, val) asm volatile("csrc %0, %1" :: "i"(csr), "r"((uint64_t)(val)) : "memory")
#define CSR_SWAP(csr, val) ({ uint64_t v_; asm volatile("csrrw %0, %1, %2" : "=r"(v_) : "i"(csr), "r"((uint64_t)(val)) : "memory"); v_; })

// standard CSR numbers the assembler knows by name are used by name; these are the numbers
#define CSR_MSTATUS 0x300
#define CSR_MIDELEG 0x303
#define CSR_MIE 0x304
#define CSR_MIP 0x344
#define CSR_SSTATUS 0x100
#define CSR_SIE 0x104
#define CSR_SIP 0x144
#define CSR_STVEC 0x105
#define CSR_SEPC 0x141
#define CSR_CYCLE 0xC00
#define CSR_INSTRET 0xC02

#define MSTATUS_SIE (1ull << 1)
#define MSTATUS_MIE (1ull << 3)
#define MCAUSE_INT (1ull << 63)
#define CAUSE_ILLEGAL 2
#define CAUSE_ECALL_U 8
#define CAUSE_ECALL_S 9
#define PRV_U 0
#define PRV_S 1

#define USIP (1ull << CSR_USIP_BIT)
#define UTIP (1ull << CSR_UTIP_BIT)
#define UEIP (1ull << CSR_UEIP_BIT)
#define SUIST_ENABLE (1ull << 63)
#define SUIST_SIZE_SHIFT 44
#define SUIRS_ENABLE (1ull << 63)

static inline uint64_t rdcycle(void) { uint64_t v; asm volatile("rdcycle %0" : "=r"(v)); return v; }
static inline uint64_t hartid_m(void) { uint64_t v; asm volatile("mv %0, tp" : "=r"(v)); return v; }  /* any mode */

// ---- uipi (docs/uintr-spec.md section 2): .insn r OPCODE, FUNCT3, op, rd, rs1, x0 ----
#define UIPI(op, rs1) ({ uint64_t rd_; asm volatile(".insn r %1, %2, %3, %0, %4, x0" : "=r"(rd_) \
    : "i"(UIPI_OPCODE), "i"(UIPI_FUNCT3), "i"(op), "r"((uint64_t)(rs1)) : "memory"); rd_; })
#define uipi_send(idx) ((void)UIPI(UIPI_SEND, idx))
#define uipi_read() UIPI(UIPI_READ, 0)
#define uipi_write(v) ((void)UIPI(UIPI_WRITE, v))
#define uipi_activate() ((void)UIPI(UIPI_ACTIVATE, 0))
#define uipi_deactivate() ((void)UIPI(UIPI_DEACTIVATE, 0))

// ---- UINTC MMIO (docs/uintr-spec.md section 4) ----
static inline volatile uint64_t* uintc_reg(unsigned slot, unsigned off) {
  return (volatile uint64_t*)(uintptr_t)(MEMMAP_UINTC_BASE + slot * UINTC_SLOT_BYTES + off);
}
static inline void uintc_set_low(unsigned slot, unsigned hart, int active) {
  *uintc_reg(slot, UINTC_REG_LOW) = ((uint64_t)hart << UINTC_LOW_HARTID_SHIFT) |
      (1ull << UINTC_LOW_MODE_BIT) | ((uint64_t)(active != 0) << UINTC_LOW_ACTIVE_BIT);
}
static inline uint64_t uintc_take_pending(unsigned slot) { return *uintc_reg(slot, UINTC_REG_HIGH); }

// ---- sender-table entries (docs/uintr-spec.md section 3) ----
static inline uint64_t uist_entry(unsigned slot, unsigned vector) {
  return ((uint64_t)slot << UIST_SLOT_SHIFT) | ((uint64_t)vector << UIST_VECTOR_SHIFT) | (1ull << UIST_VALID_BIT);
}
static inline uint64_t suist_value(uint64_t table_pa, unsigned pages) {
  return SUIST_ENABLE | ((uint64_t)pages << SUIST_SIZE_SHIFT) | (table_pa >> 12);
}

// ---- output and exit ----
void putstr(const char* s);
void puthex(uint64_t v);
void putdec(uint64_t v);
void result(const char* key, uint64_t value);            // "result <test> key=value"
void test_pass(void) __attribute__((noreturn));
void test_fail(unsigned code) __attribute__((noreturn));
extern const char* test_name;
#define CHECK(cond, code) do { if (!(cond)) { putstr("FAIL: " #cond "\n"); check_failed(code, __LINE__); } } while (0)
#define CHECK_EQ(a, b, code) do { uint64_t a_ = (a), b_ = (b); if (a_ != b_) { putstr("FAIL: " #a " == " #b ": "); \
    puthex(a_); putstr(" != "); puthex(b_); putstr("\n"); check_failed(code, __LINE__); } } while (0)
void check_failed(unsigned code, int line) __attribute__((noreturn));

// ---- traps and privilege ----
typedef struct { uint64_t x[32]; uint64_t epc, cause, tval, pad; } trap_frame;
// A test may handle M-mode traps itself: return 1 if handled (frame->epc = where to resume).
extern int (*m_trap_hook)(trap_frame* f);
// Expect the next M-mode trap on this hart to have `cause`; the handler then skips the
// faulting instruction. expect_done() returns how many expected traps happened and resets.
void expect_trap(uint64_t cause);
int expect_done(void);
uint64_t last_trap_cause(void);
// Run fn(arg) in mode PRV_U or PRV_S (flat physical addresses unless the test set up satp).
uint64_t run_in_mode(uint64_t mode, uint64_t (*fn)(uint64_t), uint64_t arg);
// U-mode trap vector saving all registers; calls u_trap(frame) (weak default: fail).
extern char u_trap_vector[];
void u_trap(trap_frame* f);
// The test's entry, per hart.
int main(uint64_t hartid);
void barrier(unsigned nharts);
unsigned nharts_present(void);   // harts that reached main (wait_for_harts first)
void wait_for_harts(unsigned n);
