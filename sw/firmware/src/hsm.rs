//! SBI Hart State Management: start, stop, status and retentive suspend.
use crate::{clint, entry};
use core::sync::atomic::{AtomicUsize, Ordering};
use sbi_defs::{error, hsm, SbiRet};

const MAX: usize = entry::MAX_HARTS;

struct HartSlot {
    state: AtomicUsize,
    start_addr: AtomicUsize,
    opaque: AtomicUsize,
}

static HARTS: [HartSlot; MAX] = [const {
    HartSlot { state: AtomicUsize::new(hsm::STOPPED), start_addr: AtomicUsize::new(0), opaque: AtomicUsize::new(0) }
}; MAX];
/// Harts that exist in the device tree, as a bit set over hart ids.
static PRESENT: AtomicUsize = AtomicUsize::new(0);

pub fn init(m: &devtree::Machine, boot_hart: usize) {
    let mut present = 0;
    for h in m.harts.iter().filter(|h| h.id < MAX) {
        present |= 1 << h.id;
    }
    PRESENT.store(present, Ordering::Release);
    HARTS[boot_hart].state.store(hsm::STARTED, Ordering::Release);
}

pub fn present(hart: usize) -> bool {
    hart < MAX && PRESENT.load(Ordering::Acquire) & (1 << hart) != 0
}

/// A stopped hart sleeps here (msip wakes it) until `hart_start` hands it an address.
pub extern "C" fn park_until_started(hart: usize) -> ! {
    let slot = &HARTS[hart];
    loop {
        clint::set_msip(hart, false);
        if slot.state.load(Ordering::Acquire) == hsm::START_PENDING {
            break;
        }
        // SAFETY: wfi only waits; mie.MSIE wakes it even with mstatus.MIE clear.
        unsafe { core::arch::asm!("wfi") };
    }
    let addr = slot.start_addr.load(Ordering::Relaxed);
    let opaque = slot.opaque.load(Ordering::Relaxed);
    slot.state.store(hsm::STARTED, Ordering::Release);
    entry::enter_supervisor(hart, addr, opaque)
}

pub fn start(hart: usize, addr: usize, opaque: usize) -> SbiRet {
    if !present(hart) {
        return SbiRet::err(error::INVALID_PARAM);
    }
    if !addr.is_multiple_of(4) || !crate::machine::get().memory.iter().any(|r| r.contains(addr)) {
        return SbiRet::err(error::INVALID_ADDRESS);
    }
    let slot = &HARTS[hart];
    slot.start_addr.store(addr, Ordering::Relaxed);
    slot.opaque.store(opaque, Ordering::Relaxed);
    if slot.state.compare_exchange(hsm::STOPPED, hsm::START_PENDING, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return SbiRet::err(error::ALREADY_AVAILABLE);
    }
    clint::set_msip(hart, true);
    SbiRet::ok(0)
}

/// Called from the trap handler on the stopping hart: never returns to S-mode.
pub fn stop(hart: usize) -> ! {
    HARTS[hart].state.store(hsm::STOPPED, Ordering::Release);
    crate::csr::csrc!("mie", crate::csr::IRQ_MTI);
    crate::csr::csrc!("mip", crate::csr::IRQ_STI | crate::csr::IRQ_SSI);
    entry::reset_stack_and_call(hart, park_until_started)
}

pub fn status(hart: usize) -> SbiRet {
    if !present(hart) {
        return SbiRet::err(error::INVALID_PARAM);
    }
    SbiRet::ok(HARTS[hart].state.load(Ordering::Acquire))
}

/// Only the default retentive suspend: wait for any interrupt, then return to the caller.
pub fn suspend(hart: usize, kind: usize) -> SbiRet {
    if kind != hsm::SUSPEND_DEFAULT_RETENTIVE {
        return SbiRet::err(error::NOT_SUPPORTED);
    }
    HARTS[hart].state.store(hsm::SUSPENDED, Ordering::Release);
    // SAFETY: wfi only waits.
    unsafe { core::arch::asm!("wfi") };
    HARTS[hart].state.store(hsm::STARTED, Ordering::Release);
    SbiRet::ok(0)
}
