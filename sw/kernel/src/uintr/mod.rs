//! User interrupts (docs/uintr-spec.md section 6): per-thread U-mode interrupt state, U-notifications
//! (a Notification with a UINTC receiver slot for its bound thread, and sender-table entries
//! for the threads that signal it), the kernel as a sender, and blocking Wait.
//!
//! Two back ends behind one model. With a UINTC (named in the device tree) the state lives in
//! the hart's CSRs while a thread runs: it is saved on every trap from user mode (so the TCB is
//! current whenever the thread is in the kernel, whichever hart looks at it) and loaded when a
//! hart switches to a different thread, which also makes a receiver's slot Active on that hart;
//! the hart that last ran a thread deactivates its slot when it runs another or idles. Without
//! one, `emulate` applies the same contract to the TCB copy and injects the user trap on the way
//! out. Everything here runs under the kernel lock except `save_on_trap`.
//!
//! Blocking Wait on the hardware: the waiter's slot stays routed to its hart ("parked"). While
//! that hart runs a thread that is not a receiver (or idles), `sideleg` does not delegate USIP,
//! so a signal to a parked slot interrupts the kernel, which wakes the waiter. While it runs
//! another receiver the parked slots are inactive (that receiver must not see their bits) and
//! are polled on each kernel entry there, which the tick bounds.
//!
//! By job: `switch` moves the state between TCBs and a hart's CSRs, `register` hands out slots
//! and sender entries (and takes them back), binds sender tables, `park` signals, waits and parks; `uintc`,
//! `sender`, `ueip` and `emulate` are the hardware (or its emulation) underneath.
mod emulate;
mod park;
mod register;
mod sender;
mod switch;
pub mod ueip;
mod uintc;

pub(crate) use park::wake;
pub use park::{deliver, kernel_signal, on_kernel_entry, parked_unwatched, poll_parked, unpark, wait};
pub use register::{
    cap_deleted, cap_moved, free_receiver, invoke_control, invoke_sender_table, register_receiver, register_sender,
    sender_table_destroyed, tcb_destroyed,
};
pub(crate) use sender::{
    create as sender_table_created, decode as decode_sender_handle, entry_meta as sender_entry_meta,
    for_each as for_each_sender_table, lookup as sender_lookup, next_of as sender_next,
    LINKABLE_LIMIT as SENDER_LINKABLE_LIMIT,
};
pub use switch::{
    entry_addr as hart_csrs_addr, handoff_check, handoff_commit, handoff_finish, on_idle, release, save_on_trap,
    switch_to,
};

use crate::kcell::KCell;
use crate::object::tcb::Tcb;
use crate::{percpu, sched, stats};
use abi::stat;
use core::ptr::null_mut;
use platform::csr;

pub(crate) const UIE: usize = 1;
pub(crate) const UPIE: usize = 1 << 4;
pub(crate) const USIP: usize = 1 << csr::USIP_BIT;
pub(crate) const UEIP: usize = 1 << csr::UEIP_BIT;
const UINTR_BITS: usize = (1 << csr::USIP_BIT) | (1 << csr::UTIP_BIT) | (1 << csr::UEIP_BIT);

/// A thread's user-interrupt state (the U-CSRs of docs/uintr-spec.md section 1 and what the kernel
/// gave it), on two cache lines by who touches them: the first holds what other harts read
/// (a cross-hart waker's `plain` and handoff checks: slot, `sideleg`, `ueip`, `loaded_on`),
/// the second the seven U-CSRs the thread's own hart stores on each of its traps. On one line
/// the two moved that line between the harts twice per cross-hart IPC (~100 cycles a miss).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadState {
    /// Interrupts delegated to this thread: USIP once it is a receiver, UEIP with `ueip`.
    pub sideleg: usize,
    /// PLIC sources routed to this thread's U context on hart `ueip_hart` (`ueip`).
    pub ueip: u64,
    /// The bound sender table's address (0: none).
    pub table: u64,
    /// Emulation: the software-written USIP bit of `uip`.
    pub uip_soft: usize,
    /// `suist` for `table` (0: none), kept beside it (`set_table`): every switch compares it.
    pub suist: usize,
    /// Receiver slot + 1 (0: not a receiver).
    pub slot: u16,
    pub ueip_hart: u8,
    /// Hart + 1 whose CSRs hold this state and where the slot is Active (0: none).
    pub loaded_on: u8,
    /// Blocked in Wait on its slot, parked on hart `park_hart`.
    pub parked: bool,
    pub park_hart: u8,
    /// Fills the first line: the saved U-CSRs start on the second.
    _line: [u8; 18],
    pub utvec: usize,
    pub uscratch: usize,
    pub uepc: usize,
    pub ucause: usize,
    pub utval: usize,
    /// UIE and UPIE only.
    pub ustatus: usize,
    pub uie: usize,
    /// The seven U-CSRs read 0 at its last trap (hardware back end; false until then).
    pub user_zero: bool,
}

const _: () = assert!(core::mem::offset_of!(ThreadState, utvec) == 64);

/// The `suist` value that names sender table `table` (0: none).
pub(crate) fn suist_for(table: u64) -> usize {
    if table != 0 {
        sender::suist(table)
    } else {
        0
    }
}

impl ThreadState {
    /// Bind sender table `table` (0: none), and the `suist` value that names it.
    pub(crate) fn set_table(&mut self, table: u64) {
        self.table = table;
        self.suist = suist_for(table);
    }
}

/// Per slot: the notification and the thread it was registered for.
#[derive(Clone, Copy)]
struct SlotOwner {
    ntfn: u64,
    tcb: *mut Tcb,
}
static OWNERS: KCell<[SlotOwner; platform::uintc::MAX_SLOTS]> =
    KCell::new([SlotOwner { ntfn: 0, tcb: null_mut() }; platform::uintc::MAX_SLOTS]);

fn owners() -> &'static mut [SlotOwner; platform::uintc::MAX_SLOTS] {
    // SAFETY: under the kernel lock.
    unsafe { OWNERS.get() }
}

fn this_hart() -> usize {
    percpu::hart()
}

/// Boot hart, before any thread exists: pick the back end from the device tree.
pub fn init(m: &devtree::Machine) {
    let hw = m.uintc.map(|u| (crate::mm::phys_to_virt(u.reg.base), u.slots as usize));
    uintc::init(hw);
    ueip::init(m);
}

/// Every hart: nothing delegated, no table, no slot; USIP enabled for parked waiters.
pub fn init_hart() {
    if hardware() {
        switch::reset_hart();
    }
}

#[inline(always)]
pub fn hardware() -> bool {
    uintc::hardware()
}

/// `BootInfo::uintr_mode` and `uintr_slots`.
pub fn abi_mode() -> (usize, usize) {
    (if hardware() { abi::uintr::MODE_HARDWARE } else { abi::uintr::MODE_EMULATED }, uintc::count())
}

/// Gauges for DebugStat.
pub fn stat(which: usize) -> Option<u64> {
    Some(match which {
        stat::UINTR_SLOTS_USED => uintc::used(),
        stat::UINTR_ENTRIES_USED => sender::entries_used(),
        stat::UINTR_TABLES_USED => sender::tables_used(),
        _ => return None,
    } as u64)
}

/// Force `t`'s state to be reloaded before it next runs in user mode (the kernel changed what
/// it may use). If it is in user mode on another hart, wait until that hart has left it.
pub(crate) fn reload(t: &mut Tcb) {
    if let Some(h) = t.current_on.filter(|&h| h != this_hart()) {
        sched::kick(h);
    }
    release(t);
}

/// The thread receiver slot `s` was registered for.
pub(crate) fn slot_owner(s: u16) -> Option<&'static mut Tcb> {
    // SAFETY: the slot's thread is live while the slot is allocated.
    unsafe { owners().get(s as usize)?.tcb.as_mut() }
}

/// An illegal instruction in `t`: emulate it if it is a user-interrupt one and there is no
/// hardware for it. True if handled.
pub fn emulate_illegal(t: &mut Tcb, stval: usize) -> bool {
    if hardware() {
        return false;
    }
    let Some(insn) = emulate::fetch(t, stval) else { return false };
    let done = emulate::instruction(t, insn);
    if done {
        stats::count(stat::UINTR_EMULATED);
    }
    done
}
