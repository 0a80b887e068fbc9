// Entry of every RTL test image. The boot ROM sends every hart here in M-mode with a0 = hart id.
// Sets up per-hart stacks, the M trap vector, a PMP entry giving S/U access to everything,
// FS=XS=Initial (FP and custom-3 = uipi usable), counters readable from S/U, then calls
// main(hartid). Hart 0 zeroes .bss first; the others wait for it.
#include "platform.h"
#define RUN_STACK 16384
#define TRAP_STACK 4096

	.section .text.start, "ax", @progbits
	.globl _start
_start:
	csrr  a0, mhartid
	li    t0, RUN_STACK + TRAP_STACK
	mul   t1, a0, t0
	la    t2, __stacks
	add   t2, t2, t1
	li    t0, RUN_STACK
	add   sp, t2, t0            // run stack top
	li    t0, TRAP_STACK
	add   t0, sp, t0            // trap stack top
	csrw  mscratch, t0
	la    t0, m_trap_entry
	csrw  mtvec, t0
	li    t0, -1
	csrw  pmpaddr0, t0
	li    t0, 0x1f              // NAPOT, RWX: S and U may access everything
	csrw  pmpcfg0, t0
	li    t0, (1 << 13) | (1 << 15)   // FS = Initial, XS = Initial
	csrs  mstatus, t0
	li    t0, -1
	csrw  mcounteren, t0
	csrw  scounteren, t0
	csrw  satp, zero
	bnez  a0, 2f
	la    t0, __bss_start
	la    t1, __bss_end
1:	bgeu  t0, t1, 3f
	sd    zero, 0(t0)
	addi  t0, t0, 8
	j     1b
3:	fence
	la    t0, boot_flag
	li    t1, 1
	sw    t1, 0(t0)
	j     4f
2:	la    t0, boot_flag
5:	lw    t1, 0(t0)
	beqz  t1, 5b
	fence
4:	csrr  a0, mhartid
	mv    tp, a0                // tp = hart id in every mode (my_hart())
	call  main
	call  test_main_returned
6:	j     6b

	.data
	.balign 4
boot_flag: .word 0

// ---- M-mode trap entry: frame on the per-hart trap stack (mscratch = its top) ----
	.text
	.balign 4
	.globl m_trap_entry
m_trap_entry:
	csrrw sp, mscratch, sp
	addi  sp, sp, -36*8
	.irp n,1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	sd    x\n, \n*8(sp)
	.endr
	csrr  t0, mscratch          // the interrupted sp
	sd    t0, 2*8(sp)
	csrr  t0, mepc
	sd    t0, 32*8(sp)
	csrr  t0, mcause
	sd    t0, 33*8(sp)
	csrr  t0, mtval
	sd    t0, 34*8(sp)
	addi  t0, sp, 36*8
	csrw  mscratch, t0          // re-arm (the handler may longjmp away)
	mv    a0, sp
	call  m_trap
	ld    t0, 32*8(sp)
	csrw  mepc, t0
	.irp n,1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	ld    x\n, \n*8(sp)
	.endr
	ld    sp, 2*8(sp)
	mret

// ---- run_in_mode(mode, fn, arg): run fn(arg) in S- or U-mode; returns fn's return value ----
// The lower mode returns by `ecall` with a7 = ECALL_RETURN (done by the trampoline below);
// m_trap then calls mode_return(value), which restores this function's context.
	.globl run_in_mode
run_in_mode:
	csrr  t0, mhartid
	la    t1, mode_ctx
	slli  t0, t0, 7
	add   t1, t1, t0            // this hart's 16-dword context
	sd    ra, 0(t1)
	sd    sp, 8(t1)
	sd    s0, 16(t1)
	sd    s1, 24(t1)
	sd    s2, 32(t1)
	sd    s3, 40(t1)
	sd    s4, 48(t1)
	sd    s5, 56(t1)
	sd    s6, 64(t1)
	sd    s7, 72(t1)
	sd    s8, 80(t1)
	sd    s9, 88(t1)
	sd    s10, 96(t1)
	sd    s11, 104(t1)
	sd    gp, 112(t1)
	sd    tp, 120(t1)
	li    t0, 3 << 11
	csrc  mstatus, t0           // MPP = U ...
	slli  a0, a0, 11
	csrs  mstatus, a0           // ... or S
	la    t0, mode_trampoline
	csrw  mepc, t0
	mv    a0, a2
	addi  sp, sp, -64           // the lower mode continues on this stack
	mret
mode_trampoline:
	jalr  a1
	li    a7, 0x5e7
	ecall
7:	j     7b

	.globl mode_return
mode_return:                        // (value): back to run_in_mode's caller, in M-mode
	csrr  t0, mhartid
	la    t1, mode_ctx
	slli  t0, t0, 7
	add   t1, t1, t0
	ld    ra, 0(t1)
	ld    sp, 8(t1)
	ld    s0, 16(t1)
	ld    s1, 24(t1)
	ld    s2, 32(t1)
	ld    s3, 40(t1)
	ld    s4, 48(t1)
	ld    s5, 56(t1)
	ld    s6, 64(t1)
	ld    s7, 72(t1)
	ld    s8, 80(t1)
	ld    s9, 88(t1)
	ld    s10, 96(t1)
	ld    s11, 104(t1)
	ld    gp, 112(t1)
	ld    tp, 120(t1)
	ret

	.bss
	.balign 8
mode_ctx: .space 8 * 16 * 8

// ---- a generic U-mode trap vector: saves every register on the U stack, calls u_trap(frame),
// then uret. 256-byte aligned so it can also be the base of vectored mode.
	.text
	.balign 256
	.globl u_trap_vector
u_trap_vector:
	addi  sp, sp, -34*8
	.irp n,1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	sd    x\n, \n*8(sp)
	.endr
	mv    a0, sp
	call  u_trap
	.irp n,1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	ld    x\n, \n*8(sp)
	.endr
	addi  sp, sp, 34*8
	.word UIPI_URET           // uret (not in this binutils)
