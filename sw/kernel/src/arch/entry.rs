//! Entry from the firmware in S-mode with the MMU off: a0 = hart id, a1 = device tree (boot
//! hart) or opaque (secondary harts started by SBI HSM). A boot page table of 1 GiB pages maps
//! the low 4 GiB both 1:1 (to survive turning the MMU on) and in the kernel window, where the
//! kernel is linked; Rust code only ever runs in the window.
use platform::image::{KERNEL_WINDOW, MAX_HARTS};

pub const STACK_SHIFT: usize = 15; // 32 KiB per hart
pub const STACK_SIZE: usize = 1 << STACK_SHIFT;
const WINDOW_INDEX: usize = (KERNEL_WINDOW >> 30) & 511;
const GIGAPAGES: usize = 4;
/// V | R | W | X | G | A | D
const BOOT_PTE_FLAGS: usize = 0xef;

#[repr(C, align(4096))]
pub struct Table(pub [usize; 512]);

#[no_mangle]
pub static mut BOOT_PAGE_TABLE: Table = Table([0; 512]);

#[repr(C, align(4096))]
struct Stacks([[u8; STACK_SIZE]; MAX_HARTS]);
// Not zeroed at boot (any contents will do for a stack).
#[no_mangle]
#[link_section = ".noinit.stacks"]
static mut KERNEL_STACKS: Stacks = Stacks([[0; STACK_SIZE]; MAX_HARTS]);

core::arch::global_asm!(
    ".section .text.entry, \"ax\"",
    ".globl _start",
    "_start:",
    "   csrw sie, zero",
    "   csrci sstatus, 2",
    "   li t0, {max_harts}",
    "   bgeu a0, t0, .Lpark",
    // zero .bss (addresses are physical here: la is pc-relative)
    "   la t0, _sbss",
    "   la t1, _ebss",
    "1: bgeu t0, t1, 2f",
    "   sd zero, 0(t0)",
    "   addi t0, t0, 8",
    "   j 1b",
    "2: la t0, BOOT_PAGE_TABLE",
    "   li t1, 0",
    "3: slli t2, t1, 28",          // PPN of gigapage i, in PTE position: (i << 30) >> 12 << 10
    "   ori t2, t2, {flags}",
    "   slli t3, t1, 3",
    "   add t3, t3, t0",
    "   sd t2, 0(t3)",              // identity entry i
    "   li t6, {window_off}",
    "   add t6, t6, t3",
    "   sd t2, 0(t6)",              // window entry WINDOW_INDEX + i
    "   addi t1, t1, 1",
    "   li t3, {gigapages}",
    "   blt t1, t3, 3b",
    "   la t5, {boot_main}",
    "   j .Lenable_mmu",
    ".balign 4",                    // SBI hart_start wants a 4-byte aligned address
    ".globl _secondary_start",
    "_secondary_start:",
    "   csrw sie, zero",
    "   csrci sstatus, 2",
    "   li t0, {max_harts}",
    "   bgeu a0, t0, .Lpark",
    "   la t5, {secondary_main}",
    ".Lenable_mmu:",
    "   la t0, BOOT_PAGE_TABLE",
    "   srli t0, t0, 12",
    "   li t1, 8",
    "   slli t1, t1, 60",
    "   or t0, t0, t1",
    "   sfence.vma",
    "   csrw satp, t0",
    "   sfence.vma",
    // continue at the same code in the kernel window
    "   li t4, {window}",
    "   la t0, 4f",
    "   add t0, t0, t4",
    "   jr t0",
    "4: add t5, t5, t4",            // Rust entry, in the window
    "   la sp, KERNEL_STACKS",      // pc-relative: now a window address
    "   addi t0, a0, 1",
    "   slli t0, t0, {stack_shift}",
    "   add sp, sp, t0",
    "   mv tp, zero",
    "   jr t5",
    ".Lpark:",
    "   wfi",
    "   j .Lpark",
    max_harts = const MAX_HARTS,
    flags = const BOOT_PTE_FLAGS,
    window_off = const WINDOW_INDEX * 8,
    gigapages = const GIGAPAGES,
    window = const KERNEL_WINDOW,
    stack_shift = const STACK_SHIFT,
    boot_main = sym crate::boot::boot_main,
    secondary_main = sym crate::smp::secondary_main,
);

extern "C" {
    fn _secondary_start();
    static _stext: u8;
    static _etext: u8;
    static _srodata: u8;
    static _erodata: u8;
    static _sdata: u8;
    static _kernel_end: u8;
}

/// Physical address of the secondary entry point, for SBI `hart_start`.
pub fn secondary_entry_phys() -> usize {
    super::super::mm::virt_to_phys(_secondary_start as *const () as usize)
}

/// Kernel image sections as window addresses: (text, rodata, data+bss) ranges.
pub fn image_sections() -> [(usize, usize); 3] {
    // Linker-defined symbols: only their addresses are used.
    [
        (&raw const _stext as usize, &raw const _etext as usize),
        (&raw const _srodata as usize, &raw const _erodata as usize),
        (&raw const _sdata as usize, &raw const _kernel_end as usize),
    ]
}

/// Stack bounds of a hart (for the trap handler's overflow check).
pub fn stack_of(hart: usize) -> (usize, usize) {
    let base = (&raw const KERNEL_STACKS) as usize + hart * STACK_SIZE;
    (base, base + STACK_SIZE)
}
