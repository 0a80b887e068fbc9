// rvstart: the last partition of the first-light BOOT.BIN, run by the FSBL on A53-0 (EL3,
// caches and MMU off) after it has configured the PL and copied the RISC-V image into the DRAM
// window. It sets the run bit of the reset GPIO, which releases the RISC-V cores, and parks.
// Nothing else runs on the PS: the RISC-V console is on the PL UART pins.
#include "board.h"   /* platform/gen.py --spec board.toml --dts: plain numbers */

	.section .text.start, "ax"
	.globl _start
_start:
	ldr   x0, =PS_RESET_GPIO_BASE + PS_GPIO_DATA
	mov   w1, #(1 << PS_RUN_BIT)
	dsb   sy                  // the FSBL's copy of the image is complete before the release
	str   w1, [x0]
	dsb   sy
1:	wfe
	b     1b
