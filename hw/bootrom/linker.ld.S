/* Link the boot ROM at its bus address (preprocessed with platform.h). */
#include "platform.h"
OUTPUT_ARCH("riscv")
ENTRY(_start)
SECTIONS
{
  . = MEMMAP_BOOTROM_BASE;
  .text : { *(.text.start) *(.text*) }
  /DISCARD/ : { *(.riscv.attributes) *(.comment) *(.note*) }
}
