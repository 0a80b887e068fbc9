//! Per-hart kernel state, reached through `tp`.
use crate::kcell::KCell;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use platform::image::MAX_HARTS;

/// One cache line per hart at least: an idle hart spins on its own `mailbox` while the others
/// write their own `in_user` on every kernel entry and exit, and a shared line would bounce.
/// `repr(C)`: the first line holds what an idle or spinning hart watches (`mailbox`, `handoff`,
/// `spin_on`) and everything a waker or signaller reads or writes there (`current`, `in_user`,
/// the `handoff_*` words, `active_asid`, `spin_badge`), so a hand-over or a delivery moves one
/// line between the two harts instead of two. The waker claims the slot, stores them back to
/// back and then the thread, while the watcher leaves the line alone (`sched::hand_off`,
/// `take_handoff`): each look of a watcher took the line back, and the waker's next store
/// waited ~90 cycles for it on the 4-core RTL. The rest, which only this hart writes, is on the
/// lines after it.
#[repr(C, align(64))]
pub struct PerCpu {
    /// Requests posted by other harts (bits of `arch::ipi::Msg`).
    pub mailbox: AtomicUsize,
    /// `sched::HANDOFF_NONE`, `HANDOFF_OPEN` (idle and watching: a waker may hand it a thread),
    /// `HANDOFF_CLAIMED` (a waker is writing the hand-over), or the `Tcb` handed over; with
    /// the satp to run it with and the user-interrupt work left for this hart
    /// (`uintr::Handoff`).
    pub handoff: AtomicUsize,
    /// 0, or the notification a Wait of this hart's current thread spins for without the lock
    /// (`fastpath::spin_for_signal`), or `SPIN_DELIVERED` by a signaller that completed the
    /// Wait with `spin_badge` (`sched::deliver_to_spinner`). On the watched line, so the
    /// signaller writes one line of this hart's, and not the thread's registers (three misses).
    pub spin_on: AtomicUsize,
    pub spin_badge: AtomicU64,
    pub handoff_satp: AtomicUsize,
    /// ASID of the address space the hart uses (`mm::tlb::switch_space`); set by a waker for
    /// the thread it hands over.
    pub active_asid: AtomicUsize,
    /// The thread current on this hart (null when idle); `sched`'s, under the kernel lock. Here
    /// and not in the hart's scheduler row: a waker that hands this hart a thread writes it, and
    /// the hart reads it on its next kernel entry, both on a line they touch anyway (it was one
    /// more miss on each side of every cross-hart IPC).
    pub current: AtomicPtr<crate::object::tcb::Tcb>,
    /// The idle loop is watching `mailbox` instead of sleeping: posting is enough, no IPI.
    pub polling: AtomicBool,
    /// This hart is executing user code (set under the kernel lock just before leaving it,
    /// cleared first thing on a trap from user mode), or is on its way there with a thread
    /// handed to it (`sched::hand_off`) or a Wait completed (`sched::deliver_to_spinner`).
    pub in_user: AtomicBool,
    /// The handed thread's U-CSRs must be loaded here (`uintr::handoff_finish`) ...
    pub handoff_uintr: AtomicBool,
    /// ... and the waker changed this hart's tick state (`timer::decide_tickless`).
    pub handoff_retick: AtomicBool,
    _second_line: Line,
    pub hart: usize,
    /// satp (with the hardware ASID in it, if any) the hart uses (`mm::tlb::switch_space`).
    pub active_satp: AtomicUsize,
    pub online: AtomicBool,
    /// Timer interrupts taken.
    pub ticks: AtomicU64,
    /// IPIs taken.
    pub ipis: AtomicU64,
    /// Resume address for an expected fault (see `mm::probe`); 0 when none is expected.
    pub fault_fixup: AtomicUsize,
    /// How many times this hart has come online (HSM restarts count).
    pub starts: AtomicU64,
    /// Times the idle loop came out of `wfi`: about one per interrupt when idling properly.
    pub idle_wakeups: AtomicU64,
    /// This hart's row of the scheduler (`sched::mine`): one load instead of the row's index
    /// arithmetic and bounds check on every kernel entry and exit. Set by `install`.
    pub sched_row: usize,
    /// This hart holds the kernel lock (`lock::held`): off the lines other harts write, so
    /// taking the lock after another hart costs no miss on a shared "holder" word.
    pub holds_lock: AtomicBool,
    /// The lock holder asks this hart to move off a VSpace root that went away
    /// (`mm::root_retire`); cleared by this hart once its `satp` is the kernel's table.
    pub leave_root: AtomicBool,
    /// This hart is quiet for user interrupts (`uintr::switch`, which alone writes it):
    /// a plain thread's trap and switch need not look further.
    pub uintr_quiet: AtomicBool,
    /// `sstatus.FS` is on: the FP registers hold `fpu_owner`'s state, maybe newer than its
    /// TCB's copy (crate::fpu; only this hart writes it).
    pub fpu_on: AtomicBool,
    /// The thread whose F/D state this hart's FP registers hold, or null (crate::fpu; written
    /// under the kernel lock, by another hart too when it takes the state or deletes the thread).
    pub fpu_owner: AtomicPtr<crate::object::tcb::Tcb>,
    /// The instruction-fetch epoch this hart last synchronised with (`mm::icache`; 0: none).
    pub fetch_epoch: AtomicU64,
    /// The top of this hart's kernel stack, which every exit to user mode leaves in the
    /// thread's context for the trap vector (set by `install`).
    pub kstack_top: usize,
    /// This hart's entry of the user-interrupt CSR table (`uintr::switch`): one load on the
    /// switch's straight path instead of the index arithmetic (set by `install`).
    pub uintr_csrs: usize,
    /// This hart's event counters (`stats`), on lines of their own: counting is a load and a
    /// store relative to `tp`, no index arithmetic or bounds check on the hot path.
    pub stats: crate::stats::Row,
}

/// Starts the next field on a new cache line (a zero-sized field of 64-byte alignment).
#[repr(align(64))]
struct Line;

const _: () = assert!(core::mem::offset_of!(PerCpu, handoff_retick) < 64);
const _: () = assert!(core::mem::offset_of!(PerCpu, hart) == 64);

#[allow(clippy::declare_interior_mutable_const)]
const INIT: PerCpu = PerCpu {
    hart: 0,
    _second_line: Line,
    online: AtomicBool::new(false),
    ticks: AtomicU64::new(0),
    ipis: AtomicU64::new(0),
    mailbox: AtomicUsize::new(0),
    polling: AtomicBool::new(false),
    spin_on: AtomicUsize::new(0),
    spin_badge: AtomicU64::new(0),
    fault_fixup: AtomicUsize::new(0),
    starts: AtomicU64::new(0),
    idle_wakeups: AtomicU64::new(0),
    in_user: AtomicBool::new(false),
    handoff: AtomicUsize::new(0),
    handoff_satp: AtomicUsize::new(0),
    handoff_uintr: AtomicBool::new(false),
    handoff_retick: AtomicBool::new(false),
    active_satp: AtomicUsize::new(0),
    active_asid: AtomicUsize::new(usize::MAX),
    current: AtomicPtr::new(core::ptr::null_mut()),
    sched_row: 0,
    holds_lock: AtomicBool::new(false),
    leave_root: AtomicBool::new(false),
    uintr_quiet: AtomicBool::new(false),
    fpu_on: AtomicBool::new(false),
    fpu_owner: AtomicPtr::new(core::ptr::null_mut()),
    fetch_epoch: AtomicU64::new(0),
    kstack_top: 0,
    uintr_csrs: 0,
    stats: crate::stats::ROW,
};

static CPUS: KCell<[PerCpu; MAX_HARTS]> = KCell::new([INIT; MAX_HARTS]);

/// Point `tp` at this hart's record. Called first thing on every hart.
pub fn install(hart: usize) {
    assert!(hart < MAX_HARTS);
    // SAFETY: each hart writes only its own `hart` field, before anyone else reads it.
    unsafe {
        let cpu = &raw mut (*CPUS.as_ptr())[hart];
        (*cpu).hart = hart;
        (*cpu).sched_row = crate::sched::row_addr(hart);
        (*cpu).kstack_top = crate::arch::entry::stack_of(hart).1;
        (*cpu).uintr_csrs = crate::uintr::hart_csrs_addr(hart);
        core::arch::asm!("mv tp, {0}", in(reg) cpu);
    }
}

pub fn this() -> &'static PerCpu {
    let p: *const PerCpu;
    // SAFETY: tp was set by `install` before any caller runs.
    unsafe {
        // `tp` is set once per hart, before any caller: the read may be merged or hoisted.
        core::arch::asm!("mv {0}, tp", out(reg) p, options(pure, nomem, nostack, preserves_flags));
        &*p
    }
}

impl PerCpu {
    /// The hart's index, known to the compiler to be below MAX_HARTS, so indexing a per-hart
    /// table with it needs no bounds check.
    #[inline(always)]
    pub fn index(&self) -> usize {
        let h = self.hart;
        // SAFETY: `hart` is 0 (INIT) or what `install` set after asserting it below MAX_HARTS.
        unsafe { core::hint::assert_unchecked(h < MAX_HARTS) };
        h
    }
}

/// This hart's index (`PerCpu::index`).
#[inline(always)]
pub fn hart() -> usize {
    this().index()
}

pub fn of(hart: usize) -> &'static PerCpu {
    // SAFETY: shared references to atomics only.
    unsafe { &(*CPUS.as_ptr())[hart] }
}

pub fn online_count() -> usize {
    (0..MAX_HARTS).filter(|&h| of(h).online.load(Ordering::Acquire)).count()
}
