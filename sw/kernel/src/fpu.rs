//! User threads' F/D state (`f0`..`f31`, `fcsr`), switched lazily per hart.
//!
//! A hart's FP registers hold the state of at most one thread, its owner
//! (`PerCpu::fpu_owner`, and the thread's `ThreadFpu::hart` names the hart back). `sstatus.FS`
//! is on only while the owner runs there (`PerCpu::fpu_on`); every other thread runs with FS
//! Off, so its first FP instruction traps as illegal and `on_illegal` makes it the owner, its
//! state loaded from its TCB. A thread that never uses FP never traps, and a switch to it costs
//! two loads (`switch_to`).
//!
//! Saving: when the owner stops running on its hart (another thread or the idle loop takes the
//! hart), its registers go to its TCB if FS says Dirty, under the lock, and FS goes Off; the
//! registers stay as a copy, so the owner coming back with no other FP user in between needs no
//! load. A thread's newest state is therefore in its TCB whenever it does not run,
//! except in one window: another hart stalled it (`sched::stall`) and its hart, now waiting for
//! the lock, has not passed its next `switch_to` yet (its `fpu_on` is still set). A hart that
//! wants that thread's state then meanwhile refuses (`take`): the thread's instruction runs
//! again and traps again until its old hart, next in the lock's queue, has saved it. So no hart
//! ever reads or writes another hart's FP registers, and a thread moving harts needs nothing.
//!
//! A thread that wrote FP state in its last run (`Tcb::fpu_eager`) gets it loaded at its next
//! switch-in, without waiting for the trap: two threads that both compute in FP switch at the
//! cost of one save and one load. One run without an FP write and it is lazy again.
//!
//! Deletion (`tcb_destroyed`) clears the owner pointer of the hart that holds its state; the
//! next owner there loads its whole state over the old registers (a new thread's is zero).
use crate::arch::fpu::{self, FpRegs};
use crate::object::tcb::Tcb;
use crate::percpu::{self, PerCpu};
use crate::stats;
use abi::stat;
use core::ptr::null_mut;
use core::sync::atomic::Ordering::Relaxed;

/// `ThreadFpu::hart` of a thread whose state no hart's registers hold.
pub const NO_HART: usize = usize::MAX;

/// A thread's FP state and where its copy lives.
#[repr(C)]
pub struct ThreadFpu {
    pub regs: FpRegs,
    /// The hart whose registers hold this state (that hart's `fpu_owner` is this thread), or
    /// `NO_HART`.
    pub hart: usize,
}

impl ThreadFpu {
    pub const fn new() -> Self {
        ThreadFpu { regs: FpRegs { f: [0; 32], fcsr: 0 }, hart: NO_HART }
    }
}

/// This hart comes online: FS Off, whatever the firmware left (OpenSBI hands S-mode FS Dirty,
/// which would let every thread use the registers with no trap, sharing one state). After a
/// restart its registers no longer hold its old owner's copy (OpenSBI zeroes them on a start);
/// that state is in the owner's TCB (the hart idled, so saved it, before it stopped).
pub fn init_hart(cpu: &PerCpu, restarted: bool) {
    fpu::disable();
    cpu.fpu_on.store(false, Relaxed);
    if restarted {
        crate::lock::acquire();
        // SAFETY: the owner is live (deletion clears the pointer), and the lock is held.
        if let Some(o) = unsafe { cpu.fpu_owner.load(Relaxed).as_mut() } {
            o.fpu.hart = NO_HART;
        }
        cpu.fpu_owner.store(null_mut(), Relaxed);
        crate::lock::release();
    }
}

/// This hart is about to run `next` in user mode, or idle (null); lock held. FS ends on
/// only for the owner, and for it only if it wrote FP state in its last run (`fpu_eager`): an
/// owner that did not traps once when it uses FP again (`on_illegal`, no load), and a thread
/// that stopped using FP pays nothing at its switches. A thread not eager costs two loads here.
#[inline(always)]
pub fn switch_to(cpu: &PerCpu, next: *mut Tcb) {
    let on = cpu.fpu_on.load(Relaxed);
    if on {
        if next.is_null() || cpu.fpu_owner.load(Relaxed) != next {
            switch_slow(cpu, next)
        }
        // SAFETY: a thread about to run is live.
    } else if !next.is_null() && unsafe { (*next).fpu_eager } {
        switch_slow(cpu, next)
    }
}

#[cold]
#[inline(never)]
fn switch_slow(cpu: &PerCpu, next: *mut Tcb) {
    if cpu.fpu_on.load(Relaxed) {
        switch_out(cpu);
    }
    // SAFETY: a thread about to run is live.
    let Some(n) = (unsafe { next.as_mut() }) else { return };
    if !n.fpu_eager {
        return;
    }
    if core::ptr::eq(cpu.fpu_owner.load(Relaxed), n) {
        fpu::enable();
        cpu.fpu_on.store(true, Relaxed);
    } else {
        take(cpu, n);
    }
}

/// The owner stops running here: its registers to its TCB if it wrote them, FS Off.
fn switch_out(cpu: &PerCpu) {
    let dirty = fpu::dirty();
    // SAFETY: the owner is live (deletion clears the pointer), and the lock is held.
    if let Some(o) = unsafe { cpu.fpu_owner.load(Relaxed).as_mut() } {
        if dirty {
            fpu::save(&mut o.fpu.regs);
            stats::count(stat::FPU_SAVES);
        }
        o.fpu_eager = dirty;
    }
    fpu::disable();
    cpu.fpu_on.store(false, Relaxed);
}

/// Make `t`, about to run here, the owner of this hart's registers (FS Off here): its state
/// from its TCB. False if its newest state is still in another hart's registers (see the
/// module comment); `t` then runs with FS Off and its FP instruction traps again.
fn take(cpu: &PerCpu, t: &mut Tcb) -> bool {
    let here = cpu.index();
    let h = t.fpu.hart;
    if h != NO_HART && h != here {
        let other = percpu::of(h);
        if other.fpu_on.load(Relaxed) {
            stats::count(stat::FPU_WAITS);
            return false;
        }
        // A clean copy there: it stops being one.
        other.fpu_owner.store(null_mut(), Relaxed);
    }
    // SAFETY: the owner is live (deletion clears the pointer), and the lock is held.
    if let Some(o) = unsafe { cpu.fpu_owner.load(Relaxed).as_mut() } {
        o.fpu.hart = NO_HART;
    }
    fpu::load(&t.fpu.regs);
    t.fpu.hart = here;
    cpu.fpu_owner.store(t, Relaxed);
    cpu.fpu_on.store(true, Relaxed);
    stats::count(stat::FPU_LOADS);
    true
}

/// An illegal-instruction trap of `me`, current here (lock held): with FS Off it is taken as
/// `me`'s first FP instruction since it last lost the FPU. True: handled, the instruction runs
/// again (with FS on, or trapping again while another hart still holds the state); false: a
/// real illegal instruction (FS was on), a fault.
pub fn on_illegal(me: &mut Tcb) -> bool {
    let cpu = percpu::this();
    if cpu.fpu_on.load(Relaxed) {
        return false;
    }
    stats::count(stat::FPU_TRAPS);
    if core::ptr::eq(cpu.fpu_owner.load(Relaxed), me) {
        fpu::enable();
        cpu.fpu_on.store(true, Relaxed);
    } else {
        take(cpu, me);
    }
    true
}

/// The idle loop enters user mode with `t`, handed to it by a waker (no lock; this hart went
/// idle through `switch_to`, so FS is Off here): FS on if `t` still owns the registers and is
/// eager (`switch_to`); otherwise its FP instruction traps and `on_illegal` takes it.
pub fn resume_handed(cpu: &PerCpu, t: &Tcb) {
    if t.fpu_eager && core::ptr::eq(cpu.fpu_owner.load(Relaxed), t) {
        fpu::enable();
        cpu.fpu_on.store(true, Relaxed);
    }
}

/// `t` is being deleted (lock held, `t` suspended): no hart keeps a pointer to it.
pub fn tcb_destroyed(t: &mut Tcb) {
    if t.fpu.hart != NO_HART {
        let cpu = percpu::of(t.fpu.hart);
        if core::ptr::eq(cpu.fpu_owner.load(Relaxed), t) {
            cpu.fpu_owner.store(null_mut(), Relaxed);
        }
        t.fpu.hart = NO_HART;
    }
}
