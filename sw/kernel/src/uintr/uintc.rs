//! Receiver slots: the UINTC's registers (docs/uintr-spec.md section 4) or, without one, the same
//! slot state kept in kernel memory for the emulation. Callers hold the kernel lock; the
//! hardware registers are also written by `uipi.*` from user mode at any time, so every
//! hardware access here is a single 8-byte MMIO operation.
use crate::kcell::KCell;
use platform::uintc as reg;
use platform::uintc::{DEFAULT_SLOTS, MAX_SLOTS};

#[derive(Clone, Copy)]
struct EmuSlot {
    pending: u64,
    active: bool,
    hart: u16,
}

struct Slots {
    /// Kernel-window address of the UINTC's registers; 0 when emulated.
    mmio: usize,
    count: usize,
    used: [u64; MAX_SLOTS / 64],
    emu: [EmuSlot; MAX_SLOTS],
}

static SLOTS: KCell<Slots> = KCell::new(Slots {
    mmio: 0,
    count: 0,
    used: [0; MAX_SLOTS / 64],
    emu: [EmuSlot { pending: 0, active: false, hart: 0 }; MAX_SLOTS],
});

fn s() -> &'static mut Slots {
    // SAFETY: under the kernel lock (or at boot, before other harts run).
    unsafe { SLOTS.get() }
}

const LOW_MODE_RV64: u64 = 1 << reg::LOW_MODE_BIT;

fn regp(slot: u16, off: usize) -> *mut u64 {
    (s().mmio + slot as usize * reg::SLOT_BYTES + off) as *mut u64
}

fn write(slot: u16, off: usize, v: u64) {
    // SAFETY: the UINTC is mapped in the kernel window; slot < count.
    unsafe { core::ptr::write_volatile(regp(slot, off), v) }
}

fn read(slot: u16, off: usize) -> u64 {
    // SAFETY: as above.
    unsafe { core::ptr::read_volatile(regp(slot, off)) }
}

/// `mmio`: the UINTC's kernel-window address and implemented slot count, or None to emulate.
pub fn init(mmio: Option<(usize, usize)>) {
    let st = s();
    match mmio {
        Some((base, n)) => {
            st.mmio = base;
            HARDWARE.store(true, core::sync::atomic::Ordering::Relaxed);
            st.count = if n == 0 { DEFAULT_SLOTS } else { n.min(MAX_SLOTS) };
            for i in 0..st.count as u16 {
                reset(i);
            }
        }
        None => st.count = DEFAULT_SLOTS,
    }
}

/// Set once at boot, read on every trap: a plain flag rather than a look into the slot state.
static HARDWARE: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

#[inline(always)]
pub fn hardware() -> bool {
    HARDWARE.load(core::sync::atomic::Ordering::Relaxed)
}

pub fn count() -> usize {
    s().count
}

pub fn used() -> usize {
    s().used.iter().map(|w| w.count_ones() as usize).sum()
}

pub fn alloc() -> Option<u16> {
    let st = s();
    let i = (0..st.count).find(|&i| st.used[i / 64] & (1 << (i % 64)) == 0)?;
    st.used[i / 64] |= 1 << (i % 64);
    reset(i as u16);
    Some(i as u16)
}

pub fn free(slot: u16) {
    reset(slot);
    let i = slot as usize;
    s().used[i / 64] &= !(1 << (i % 64));
}

/// Inactive, hart 0, nothing pending.
pub fn reset(slot: u16) {
    if hardware() {
        write(slot, reg::REG_LOW, LOW_MODE_RV64);
        let _ = read(slot, reg::REG_HIGH);
    } else {
        s().emu[slot as usize] = EmuSlot { pending: 0, active: false, hart: 0 };
    }
}

/// Route the slot to `hart` and set its Active bit.
pub fn set_low(slot: u16, hart: usize, active: bool) {
    if hardware() {
        write(slot, reg::REG_LOW, ((hart as u64) << reg::LOW_HARTID_SHIFT) | LOW_MODE_RV64 | active as u64);
    } else {
        let e = &mut s().emu[slot as usize];
        e.hart = hart as u16;
        e.active = active;
    }
}

pub fn set_active(slot: u16, active: bool) {
    if hardware() {
        write(slot, reg::REG_ACT, active as u64);
    } else {
        s().emu[slot as usize].active = active;
    }
}

/// Read and clear the pending word.
pub fn take(slot: u16) -> u64 {
    if hardware() {
        read(slot, reg::REG_HIGH)
    } else {
        core::mem::take(&mut s().emu[slot as usize].pending)
    }
}

pub fn or_pending(slot: u16, bits: u64) {
    if hardware() {
        write(slot, reg::REG_HIGH, bits);
    } else {
        s().emu[slot as usize].pending |= bits;
    }
}

/// Emulation: whether the slot has pending bits, and the hart it is active on.
pub fn emu_pending(slot: u16) -> bool {
    s().emu[slot as usize].pending != 0
}

pub fn emu_active_on(slot: u16) -> Option<usize> {
    let e = &s().emu[slot as usize];
    e.active.then_some(e.hart as usize)
}
