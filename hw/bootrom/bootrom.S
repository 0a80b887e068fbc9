// Boot ROM of the SoC, mapped at memmap.bootrom (0x1_0000); every hart resets to its first
// instruction. It hands each hart to the M-mode firmware at the start of DRAM with the
// conventional arguments (a0 = mhartid, a1 = device tree), the same way for all harts:
// the firmware picks its boot hart itself.
//
// rocket-chip appends the device tree blob right after the last byte of this image, so _dtb
// must be the end of the image (checked by bootrom.mk).
#include "platform.h"

	.section .text.start, "ax", @progbits
	.globl _start
_start:
	csrwi 0x7c1, 0            // Rocket's "chicken bits" CSR resets to all-ones (features off); clear it as upstream's ROM does
	csrr  a0, mhartid
	la    a1, _dtb
	li    t0, IMAGE_FIRMWARE_BASE
	jr    t0

	.balign 8, 0              // a DTB must be 8-byte aligned
	.globl _dtb
_dtb:
