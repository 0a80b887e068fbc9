//! The PLIC's registers (riscv,plic0): source priorities, and per context the enable bits,
//! the threshold and the claim/complete register. Policy lives with the users: IRQHandler
//! objects (the kernel's S context) and user-level device interrupts (the U contexts).
use crate::mm::phys_to_virt;

static mut BASE: usize = 0; // kernel-window address of the register block, 0: no PLIC
static mut PHYS: usize = 0; // its physical address

const ENABLE: usize = 0x2000;
const ENABLE_STRIDE: usize = 0x80;
const CONTEXT: usize = 0x20_0000;
const CONTEXT_STRIDE: usize = 0x1000;

pub fn init(m: &devtree::Machine) {
    if let Some(p) = m.plic {
        // SAFETY: once, on the boot hart, before anything uses it.
        unsafe {
            BASE = phys_to_virt(p.reg.base);
            PHYS = p.reg.base;
        }
    }
}

fn reg(off: usize) -> *mut u32 {
    // SAFETY: written once at boot.
    (unsafe { BASE } + off) as *mut u32
}

fn read(off: usize) -> u32 {
    // SAFETY: a PLIC register, mapped in the kernel window (callers have a PLIC).
    unsafe { reg(off).read_volatile() }
}

fn write(off: usize, v: u32) {
    // SAFETY: as above.
    unsafe { reg(off).write_volatile(v) }
}

/// Physical address of context `ctx`'s threshold + claim/complete page.
pub fn context_page(ctx: u16) -> usize {
    // SAFETY: written once at boot.
    (unsafe { PHYS }) + CONTEXT + CONTEXT_STRIDE * ctx as usize
}

pub fn set_priority(irq: u32, prio: u32) {
    write(4 * irq as usize, prio);
}

pub fn set_enabled(ctx: u16, irq: u32, on: bool) {
    let off = ENABLE + ENABLE_STRIDE * ctx as usize + 4 * (irq as usize / 32);
    let bit = 1 << (irq % 32);
    let v = read(off);
    write(off, if on { v | bit } else { v & !bit });
}

/// Sources 0..63 of context `ctx` at once (the first two enable words).
pub fn set_enabled_low64(ctx: u16, mask: u64) {
    let off = ENABLE + ENABLE_STRIDE * ctx as usize;
    write(off, mask as u32);
    write(off + 4, (mask >> 32) as u32);
}

pub fn set_threshold(ctx: u16, t: u32) {
    write(CONTEXT + CONTEXT_STRIDE * ctx as usize, t);
}

/// The highest-priority pending enabled source (0: none); it stays in flight until completed.
pub fn claim(ctx: u16) -> u32 {
    read(CONTEXT + CONTEXT_STRIDE * ctx as usize + 4)
}

/// Only takes effect if `irq` is enabled in `ctx` (the PLIC ignores other completions).
pub fn complete(ctx: u16, irq: u32) {
    write(CONTEXT + CONTEXT_STRIDE * ctx as usize + 4, irq);
}
