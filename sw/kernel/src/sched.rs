//! Scheduling: per-hart ready queues with 256 priorities found in O(1) through a two-level
//! bitmap, round-robin time slices, affinity, and the cross-hart operations SMP needs
//! (reschedule IPIs, stalling a thread that runs elsewhere, TLB shootdown). Everything here
//! runs under the kernel lock.
use crate::arch::{self, ipi::Msg};
use crate::kcell::KCell;
use crate::object::tcb::{State, Tcb};
use crate::{lock, percpu, stats};
use abi::sched::{NUM_PRIORITIES, TIME_SLICE_TICKS};
use abi::stat;
use core::ptr::null_mut;
use core::sync::atomic::Ordering;
use platform::image::MAX_HARTS;

/// `repr(C)`, the queues last: what every kernel exit reads (the bitmaps, rotate) shares one
/// cache line instead of three lines 4 KiB apart. The hart's current thread is on its `PerCpu`
/// watched line (`PerCpu::current`): in a cross-hart IPC only the hart itself writes this
/// line, and a waker's look at its bitmaps hits a shared copy.
#[repr(C, align(64))]
struct HartSched {
    /// Bit i: `l2[i]` has a set bit. `l2[i]` bit j: priority 64 i + j has a ready thread.
    l1: u64,
    l2: [u64; NUM_PRIORITIES / 64],
    /// The current thread yielded or used up its slice: it goes behind its equals.
    rotate: bool,
    /// (head, tail) per priority.
    queues: [(*mut Tcb, *mut Tcb); NUM_PRIORITIES],
}

const EMPTY: HartSched = HartSched {
    l1: 0,
    l2: [0; NUM_PRIORITIES / 64],
    rotate: false,
    queues: [(null_mut(), null_mut()); NUM_PRIORITIES],
};

static SCHED: KCell<[HartSched; MAX_HARTS]> = KCell::new([EMPTY; MAX_HARTS]);
static STARTED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// The root task exists: every other hart leaves its boot-time idle for the scheduler's.
pub fn start(boot: usize) {
    STARTED.store(true, Ordering::Release);
    for h in 0..MAX_HARTS {
        if h != boot && percpu::of(h).online.load(Ordering::Acquire) {
            arch::ipi::send(h, Msg::Kick);
        }
    }
}

pub fn started() -> bool {
    STARTED.load(Ordering::Acquire)
}

fn hs(hart: usize) -> &'static mut HartSched {
    debug_assert!(lock::held());
    // SAFETY: only under the kernel lock.
    unsafe { &mut SCHED.get()[hart] }
}

/// This hart's row (`hs(this_hart())` through the pointer `PerCpu` keeps).
#[inline(always)]
fn mine() -> &'static mut HartSched {
    debug_assert!(lock::held());
    // SAFETY: `sched_row` is this hart's row of SCHED (`row_addr`); only under the kernel lock.
    unsafe { &mut *(percpu::this().sched_row as *mut HartSched) }
}

/// Where hart `hart`'s row is (`percpu::install` keeps it for `mine`).
pub fn row_addr(hart: usize) -> usize {
    assert!(hart < MAX_HARTS);
    // SAFETY: an address computation only.
    unsafe { (SCHED.as_ptr() as *mut HartSched).add(hart) as usize }
}

fn this_hart() -> usize {
    percpu::hart()
}

/// The thread current on this hart (null when idle).
#[inline(always)]
pub fn current() -> *mut Tcb {
    debug_assert!(lock::held());
    percpu::this().current.load(Ordering::Relaxed)
}

fn set_current(cpu: &percpu::PerCpu, t: *mut Tcb) {
    debug_assert!(lock::held());
    cpu.current.store(t, Ordering::Relaxed);
}

/// The thread current on hart `h` (null when idle).
pub fn current_of(h: usize) -> *mut Tcb {
    debug_assert!(lock::held());
    percpu::of(h).current.load(Ordering::Relaxed)
}

/// Affinity argument → hart id: the index in the boot-info `hart_ids` list.
pub fn hart_of_index(i: usize) -> Option<usize> {
    let m = crate::machine::try_get()?;
    m.harts.get(i).map(|h| h.id).filter(|&h| percpu::of(h).online.load(Ordering::Acquire))
}

/// The index of hart id `h` (TCB_SetAffinity's argument, BootInfo::hart_ids order).
pub fn index_of_hart(h: usize) -> usize {
    crate::machine::try_get().and_then(|m| m.harts.iter().position(|x| x.id == h)).unwrap_or(0)
}

fn enqueue_on(t: &mut Tcb, at_head: bool) {
    debug_assert!(!t.queued && t.current_on.is_none());
    let s = hs(t.affinity);
    let p = t.prio as usize;
    let (head, tail) = &mut s.queues[p];
    let tp: *mut Tcb = t;
    if head.is_null() {
        *head = tp;
        *tail = tp;
        t.sched_next = null_mut();
        t.sched_prev = null_mut();
    } else if at_head {
        t.sched_next = *head;
        t.sched_prev = null_mut();
        // SAFETY: queued TCBs are live.
        unsafe { (**head).sched_prev = tp };
        *head = tp;
    } else {
        t.sched_prev = *tail;
        t.sched_next = null_mut();
        // SAFETY: as above.
        unsafe { (**tail).sched_next = tp };
        *tail = tp;
    }
    s.l2[p / 64] |= 1 << (p % 64);
    s.l1 |= 1 << (p / 64);
    t.queued = true;
}

/// Whether hart `h` must be prodded to notice a thread of priority `prio` queued there: it
/// would run that thread now, or it runs without its tick and would not look at its queue
/// before its thread enters the kernel.
fn needs_kick(h: usize, prio: u8) -> bool {
    current_prio(h).is_none_or(|p| p < prio) || arch::timer::is_tickless(h)
}

/// Take the thread off its ready queue, if it is on one.
pub fn dequeue(t: &mut Tcb) {
    if !t.queued {
        return;
    }
    let s = hs(t.affinity);
    let p = t.prio as usize;
    let (head, tail) = &mut s.queues[p];
    // SAFETY: neighbours in the queue are live.
    unsafe {
        if t.sched_prev.is_null() {
            *head = t.sched_next;
        } else {
            (*t.sched_prev).sched_next = t.sched_next;
        }
        if t.sched_next.is_null() {
            *tail = t.sched_prev;
        } else {
            (*t.sched_next).sched_prev = t.sched_prev;
        }
    }
    if head.is_null() {
        s.l2[p / 64] &= !(1 << (p % 64));
        if s.l2[p / 64] == 0 {
            s.l1 &= !(1 << (p / 64));
        }
    }
    t.queued = false;
    t.sched_next = null_mut();
    t.sched_prev = null_mut();
}

fn highest(s: &HartSched) -> Option<usize> {
    if s.l1 == 0 {
        return None;
    }
    let i = 63 - s.l1.leading_zeros() as usize;
    Some(i * 64 + 63 - s.l2[i].leading_zeros() as usize)
}

fn current_prio(hart: usize) -> Option<u8> {
    let c = current_of(hart);
    // SAFETY: a hart's current thread is live.
    (!c.is_null()).then(|| unsafe { (*c).prio })
}

/// The thread may run: queue it on its hart, and prod that hart if it should switch to it.
pub fn make_runnable(t: &mut Tcb) {
    t.state = State::Running;
    if t.current_on.is_some() || t.queued {
        return;
    }
    enqueue_on(t, false);
    let h = t.affinity;
    if h != this_hart() && needs_kick(h, t.prio) {
        stats::count(stat::RESCHED_IPIS);
        arch::ipi::send(h, Msg::Kick);
    }
}

/// Values of `PerCpu::handoff` other than a thread: nothing; the hart is idle and watching
/// and takes a thread handed to it; a waker took the slot and is writing the hand-over, the
/// thread comes next (`hand_off`, `take_handoff`).
pub const HANDOFF_NONE: usize = 0;
pub const HANDOFF_OPEN: usize = 1;
pub const HANDOFF_CLAIMED: usize = 2;

/// How long the idle hart leaves its watched line alone when it finds it claimed: about what
/// the waker still needs to get the line back and write the hand-over once the watcher has
/// seen the claim. A look before that takes the line from the waker again (its next store
/// waits ~90 cycles); one later delays the thread. On the 4-core RTL 64 cycles gave a
/// cross-hart round trip of 2,783, 100 gave 2,833.
const HANDOFF_BACKOFF_CYCLES: u64 = 64;

/// `t` was woken by IPC or a signal: make it runnable; when its hart idles and watches its
/// mailbox, hand it over directly (`hand_off`).
pub fn wake(t: &mut Tcb) {
    t.state = State::Running;
    let h = t.affinity;
    if h != this_hart() && t.current_on.is_none() && !t.queued && hand_off(t, h) {
        return;
    }
    make_runnable(t);
}

/// Make `t` the current thread of idle hart `h` on its behalf (lock held), and let `h` enter
/// user mode with it without taking the lock (`take_handoff`): it skips the lock hand-over,
/// `choose` and the idle pass's bookkeeping, and starts while this hart finishes its system
/// call. Only when `h` said it takes one (`HANDOFF_OPEN`: set under the lock before its idle
/// loop let the lock go, so it is between that release and its next look at the slot, touching
/// nothing), nothing queued there outranks `t`, no async-syscall handler is `h`'s to look after,
/// and `t`'s user-interrupt state needs nothing under the lock there (`uintr::handoff_check`).
/// `h` counts as in user mode from here (`in_user`): whoever stalls `t`, changes its state or
/// shoots down its address space kicks `h` and waits until it has entered user mode and
/// trapped back, or given up on the way (mail arrived: it clears `in_user` and takes the lock).
fn hand_off(t: &mut Tcb, h: usize) -> bool {
    // First what needs nothing of `h`'s watched line: its scheduler row (only read, and in a
    // cross-hart IPC written by nobody, so a shared copy hits), the U-CSR and tick decisions.
    let s = hs(h);
    if highest(s).is_some_and(|p| p > t.prio as usize) || crate::asyscall::wake::any_mine(h) {
        return false;
    }
    let Some(load) = crate::uintr::handoff_check(t, h) else { return false };
    let (satp, asid) = crate::object::vspace::satp_of(t);
    // Its tick state, decided here as `run` would (a handed thread is plain: the parked slots
    // there stay watched); `h` sets its timer if that changed it.
    let alone = highest(s).is_none();
    let retick = arch::timer::is_tickless(h) != alone;
    // Then the watched line: the slot claimed first, so that the watcher, whose next load takes
    // the line back, leaves it alone while the hand-over is written (`take_handoff`). Written
    // while the watcher kept looking, each store waited ~90 cycles for the line on the 4-core
    // RTL. Open means `h` is idle: it opens the slot with nothing current, and only a waker
    // closes it, under the lock.
    let cpu = percpu::of(h);
    if cpu.handoff.compare_exchange(HANDOFF_OPEN, HANDOFF_CLAIMED, Ordering::SeqCst, Ordering::Relaxed).is_err() {
        return false;
    }
    debug_assert!(cpu.current.load(Ordering::Relaxed).is_null());
    if retick {
        arch::timer::decide_tickless(h, alone);
    }
    // `in_user` before the thread: once `h` sees it, it may clear it itself.
    let tp: *mut Tcb = t;
    cpu.handoff_satp.store(satp, Ordering::Relaxed);
    cpu.handoff_uintr.store(load, Ordering::Relaxed);
    cpu.handoff_retick.store(retick, Ordering::Relaxed);
    cpu.active_asid.store(asid, Ordering::Relaxed);
    cpu.in_user.store(true, Ordering::Relaxed);
    set_current(cpu, tp);
    cpu.handoff.store(tp as usize, Ordering::SeqCst);
    crate::uintr::handoff_commit(t, h);
    t.current_on = Some(h);
    stats::count(stat::SWITCHES);
    stats::count(stat::HANDOFFS);
    // SeqCst with the idle loop: either `h` still watches (and sees the slot before it sleeps
    // or enters user mode) or we see it stopped watching, and it may be asleep in `wfi`.
    if !cpu.polling.load(Ordering::SeqCst) {
        arch::ipi::wake_up(h);
    }
    true
}

/// `PerCpu::spin_on` once a signaller has completed the spinning Wait (notification
/// addresses are 64-byte aligned kernel-window physical addresses, never this).
pub const SPIN_DELIVERED: usize = 1;
/// `PerCpu::spin_on` once an address-space change ended the spin (`cancel_spins`).
pub const SPIN_CANCELLED: usize = 2;

/// Something a thread's address space depends on changed (lock held: a VTABLE slot, an ASID
/// table entry; `vspace::spaces_changed`). A spinning Wait resumes, if delivered, in its hart's
/// address space without the lock (`fastpath::resume_delivered`), which was the thread's when
/// the spin began: no spin that began before this change may be delivered, so each is ended
/// and its thread runs the Wait again under the lock. Changes are rare (SetSpace, a VSpace
/// made or deleted), and this touches only harts that spin.
pub fn cancel_spins() {
    for h in 0..MAX_HARTS {
        let spin = &percpu::of(h).spin_on;
        let v = spin.load(Ordering::Relaxed);
        if v > SPIN_CANCELLED {
            let _ = spin.compare_exchange(v, SPIN_CANCELLED, Ordering::SeqCst, Ordering::Relaxed);
        }
    }
}

/// A Signal of the idle notification at `pa` (lock held) completes the Wait that hart `h`'s
/// current thread spins on, if it still does: the badge goes to `h` (`PerCpu::spin_badge`),
/// which puts it in the thread's registers and enters user mode without the lock
/// (`fastpath::spin_for_signal`). As in `hand_off`, `h` counts as in user mode from here
/// (`in_user`): whoever stalls the thread kicks `h` and waits until it has entered user mode and
/// trapped back. False when the spin is over or the thread no longer waits there (the signal
/// sets the word instead).
pub fn deliver_to_spinner(h: usize, pa: u64, badge: u64, bound: *mut Tcb) -> bool {
    if h >= MAX_HARTS || h == this_hart() {
        return false;
    }
    let cur = current_of(h);
    // SAFETY: a current thread is live.
    let Some(t) = (unsafe { cur.as_mut() }) else { return false };
    if t.state != State::Running || t.current_on != Some(h) || !(bound.is_null() || core::ptr::eq(bound, t)) {
        return false;
    }
    let cpu = percpu::of(h);
    cpu.in_user.store(true, Ordering::Relaxed);
    // Read only once the swap says it was delivered.
    cpu.spin_badge.store(badge, Ordering::Relaxed);
    // Fails for a spin that an address-space change cancelled (`cancel_spins`): the thread then
    // runs its Wait again under the lock and leaves in the space its TCB names now.
    if cpu.spin_on.compare_exchange(pa as usize, SPIN_DELIVERED, Ordering::SeqCst, Ordering::Relaxed).is_err() {
        // Not spinning for it (any more): the thread runs its Wait again under the lock.
        cpu.in_user.store(false, Ordering::Relaxed);
        return false;
    }
    stats::count(stat::SPIN_DELIVERIES);
    true
}

/// Make sure `t` is not executing on another hart (its registers are saved in its TCB and that
/// hart will schedule again before it returns to user mode). The other hart leaves user mode on
/// an IPI; it cannot get back without the lock, which we hold.
pub fn stall(t: &mut Tcb) {
    let Some(h) = t.current_on else { return };
    if h == this_hart() {
        return;
    }
    kick(h);
    crate::uintr::release(t);
    set_current(percpu::of(h), null_mut());
    t.current_on = None;
    if t.state == State::Running {
        enqueue_on(t, true);
        if h != t.affinity || needs_kick(t.affinity, t.prio) {
            arch::ipi::send(t.affinity, Msg::Kick);
        }
    }
    // The hart we took the thread from must pick something else.
    arch::ipi::send(h, Msg::Kick);
}

/// Make hart `h` run the scheduler again (this hart does on its way out of the kernel).
pub fn reschedule(h: usize) {
    if h != this_hart() {
        stats::count(stat::RESCHED_IPIS);
        arch::ipi::send(h, Msg::Kick);
    }
}

/// Wait until hart `h` is out of user mode.
pub fn kick(h: usize) {
    let cpu = percpu::of(h);
    if !cpu.in_user.load(Ordering::Acquire) {
        return;
    }
    arch::ipi::send(h, Msg::Kick);
    while cpu.in_user.load(Ordering::Acquire) {
        core::hint::spin_loop();
    }
}

pub fn set_affinity(t: &mut Tcb, hart: usize) {
    if t.affinity == hart {
        return;
    }
    if t.queued {
        dequeue(t);
        t.affinity = hart;
        make_runnable(t);
    } else if t.current_on.is_some_and(|h| h != this_hart()) {
        t.affinity = hart;
        stall(t);
    } else {
        // Not runnable, or current here (it moves when this hart schedules).
        t.affinity = hart;
    }
}

/// Pages were unmapped from `asid` (None: from any address space): no hart may use a stale
/// translation once this returns.
pub fn shootdown(asid: Option<u16>) {
    crate::mm::tlb::bump(asid);
    stats::count(stat::SHOOTDOWNS);
    // An async-syscall batch flushes once, at its end, before its replies are seen.
    if crate::asyscall::tlb::defer(asid) {
        return;
    }
    match asid.filter(|&a| crate::object::asid::vspace_of(a).is_some()) {
        // The space lives on: the harts running it drop their translations in M-mode (a remote
        // sfence.vma), without a kernel entry there or a wait for our lock afterwards.
        Some(a) => fence_others(|h| percpu::of(h).active_asid.load(Ordering::Relaxed) == a as usize),
        // The space itself went: an sfence.vma would leave such a hart's satp on the freed
        // root; only a kick (a kernel entry, which then runs its current space) takes it off.
        None => kick_others(|h| asid.is_none_or(|a| percpu::of(h).active_asid.load(Ordering::Relaxed) == a as usize)),
    }
}

/// Every other hart that `which` selects and that is in user mode drops its TLB, through
/// SBI's remote sfence.vma (an M-mode interrupt there, not a kernel entry), which returns once
/// they have: after this none of them holds a translation removed before the call. A hart
/// not in user mode flushes by the TLB generation before it returns there (`mm::tlb`); one
/// that goes there after our check does so under the lock we hold, or flushes by it too.
/// Without RFENCE, they are kicked.
pub fn fence_others(which: impl Fn(usize) -> bool) {
    let me = this_hart();
    let mut mask = 0usize;
    for h in (0..MAX_HARTS).filter(|&h| h != me) {
        // in_user first: its Release store follows the active_asid store in `leave`.
        if percpu::of(h).in_user.load(Ordering::Acquire) && which(h) {
            mask |= 1 << h;
        }
    }
    if mask != 0 && !sbi_defs::call::remote_sfence_vma_all(sbi_defs::HartMask { mask, base: 0 }).is_ok() {
        kick_others(|h| mask & (1 << h) != 0);
    }
}

/// `kick` every other hart that `which` selects: once this returns, none of them is still in
/// the user mode it was in when this was called.
pub fn kick_others(which: impl Fn(usize) -> bool) {
    let me = this_hart();
    for h in (0..MAX_HARTS).filter(|&h| h != me && which(h)) {
        kick(h);
    }
}

/// A mapping was added to `asid`: every hart running it flushes at its next return to user
/// mode. Cores may cache a failed walk (Rocket's TLB keeps the page-fault result), so invalid
/// → valid needs a flush too; a thread that meets such a stale entry before its hart flushes
/// takes a spurious fault that `fault::exception` absorbs.
pub fn tlb_changed(asid: u16) {
    crate::mm::tlb::bump(Some(asid));
}

/// A timer tick on this hart while a thread ran.
pub fn tick() {
    // SAFETY: current is live.
    let Some(c) = (unsafe { current().as_mut() }) else { return };
    c.slice = c.slice.saturating_sub(1);
    if c.slice == 0 {
        c.slice = TIME_SLICE_TICKS as u32;
        mine().rotate = true;
        stats::count(stat::SLICE_ENDS);
    }
}

pub fn yield_current() {
    // SAFETY: current is live.
    if let Some(c) = unsafe { current().as_mut() } {
        c.slice = TIME_SLICE_TICKS as u32;
    }
    mine().rotate = true;
}

/// Whether `to` may take over from the current thread directly: same hart, and nothing
/// queued here outranks it (seL4's fastpath priority rule).
#[inline(always)]
pub fn may_switch_directly(to: &Tcb) -> bool {
    let h = this_hart();
    to.affinity == h && to.current_on.is_none() && !to.queued && highest(mine()).is_none_or(|p| p <= to.prio as usize)
}

/// Whether this hart would idle once `me`, its current thread, blocks: nothing else ready here,
/// no async-syscall handler and no parked U-notification waiter for the idle loop to look
/// after. A Wait may then spin for its signal first (`fastpath::spin_for_signal`).
pub fn idles_without(me: &Tcb) -> bool {
    let h = this_hart();
    core::ptr::eq(current(), me)
        && me.affinity == h
        && highest(mine()).is_none()
        && !crate::uintr::parked_unwatched()
        && !crate::asyscall::wake::any_mine(h)
}

/// Whether `me`, current on this hart, goes on running without a decision (`run_current`):
/// still runnable here, no rotation due and nothing ready here outranks it, so `choose`
/// would keep it.
pub fn keeps_hart(me: &Tcb) -> bool {
    let h = this_hart();
    let s = mine();
    core::ptr::eq(current(), me)
        && me.is_runnable()
        && me.affinity == h
        && !s.rotate
        && highest(s).is_none_or(|p| p <= me.prio as usize)
}

/// Decide what runs next on this hart.
fn choose() -> *mut Tcb {
    let cpu = percpu::this();
    let h = cpu.index();
    let s = mine();
    // Cleared only when set: a store on every pass made the row a line this hart writes, which
    // a waker on another hart then missed on (`hand_off` reads the bitmaps beside it).
    let rotate = s.rotate;
    if rotate {
        s.rotate = false;
    }
    let cur = current();
    if !cur.is_null() {
        // SAFETY: current is live.
        let c = unsafe { &mut *cur };
        if !c.is_runnable() || c.affinity != h {
            set_current(cpu, null_mut());
            c.current_on = None;
            if c.is_runnable() {
                make_runnable(c);
            }
        }
    }
    let cur = current();
    let best = highest(s);
    let next = if cur.is_null() {
        best.map_or(null_mut(), |p| s.queues[p].0)
    } else {
        // SAFETY: current is live.
        let c = unsafe { &mut *cur };
        match best {
            Some(p) if p > c.prio as usize || (rotate && p == c.prio as usize) => {
                let next = s.queues[p].0;
                c.current_on = None;
                enqueue_on(c, !rotate);
                next
            }
            _ => cur,
        }
    };
    if next != cur {
        stats::count(stat::SWITCHES);
    }
    if !next.is_null() && next != cur {
        // SAFETY: queued TCBs are live.
        let n = unsafe { &mut *next };
        dequeue(n);
        n.current_on = Some(h);
    }
    set_current(cpu, next);
    next
}

/// Leave the kernel (lock held): run the chosen thread in user mode, or idle.
pub fn exit_to_user() -> ! {
    let next = choose();
    if next.is_null() {
        // Nothing to run: the idle pass's bookkeeping now, under the lock we hold, then the
        // lock goes once. A partner this entry woke on another hart (cross-hart IPC) is
        // already waiting for it; taking it again for the idle loop's first look put that
        // look on the partner's critical path (it waited for our pass, we for its exit).
        idle(true)
    }
    // SAFETY: chosen threads are live.
    run(unsafe { &mut *next })
}

/// Leave the kernel into this hart's current thread without choosing (the notification
/// fastpath found nothing here to decide).
pub fn run_current() -> ! {
    let cpu = percpu::this();
    let s = mine();
    let cur = current();
    debug_assert!(!cur.is_null());
    // SAFETY: the current thread is live.
    let t = unsafe { &mut *cur };
    // The thread that trapped goes on: its address space is the active one, so the lock can go
    // before the (no-op, unless a flush is due) switch; the trap left `sstatus` right.
    leave(cpu, t, highest(s).is_none(), true, true, false)
}

/// The Call/ReplyRecv fastpath's exit (lock held): `from`, current here, blocked; `to` takes
/// the hart directly (`may_switch_directly` said nothing ready here outranks it, so `choose`
/// would pick it) and the kernel leaves into it. One function with `run`'s steps inlined: the
/// hart's scheduler row, `PerCpu` and the two TCBs are each reached once. Not counted in
/// `stat::SWITCHES` here: the fastpath's own counter of each switch is added when that is read
/// (`stats::read`), one count less per IPC.
#[inline(always)]
pub fn leave_direct(from: &mut Tcb, to: &mut Tcb) -> ! {
    let cpu = percpu::this();
    let s = mine();
    from.current_on = None;
    to.current_on = Some(cpu.hart);
    set_current(cpu, to);
    let alone = highest(s).is_none();
    // The trap from user mode left `sstatus` as user mode wants it, and nothing since wrote it.
    leave(cpu, to, alone, true, false, false)
}

fn run(t: &mut Tcb) -> ! {
    let cpu = percpu::this();
    leave(cpu, t, highest(mine()).is_none(), false, false, true)
}

/// Into user mode with `t`, current here; `alone`: nothing else ready on this hart;
/// `sstatus_ok`: the caller knows `sstatus` is as a trap from user mode left it; `same_space`:
/// `t` trapped on this hart and goes on, so its address space is the active one; `drain`:
/// hand the UART waiting console output once the lock is gone (the slow path's exit; the
/// fastpaths' exits leave that to the others).
#[inline(always)]
fn leave(cpu: &percpu::PerCpu, t: &mut Tcb, alone: bool, sstatus_ok: bool, same_space: bool, drain: bool) -> ! {
    let (satp, asid) = crate::object::vspace::satp_of(t);
    if !same_space {
        crate::fpu::switch_to(cpu, t);
        // A switch to another thread: as it was, all under the lock. Measured on the RTL: the
        // address-space switch after the release cost the same-hart round trip across two
        // spaces ~200 cycles (twice the page walks), where no other hart waits for the lock.
        crate::mm::tlb::switch_space(cpu, satp, asid);
        crate::mm::icache::sync_before_user();
    }
    let polled = crate::uintr::switch_to(t);
    // No tick while this thread is all the hart has to run (asleep waiters that only a kernel
    // entry would notice keep it on).
    let retick = arch::timer::decide_tickless(cpu.index(), alone && !polled);
    if !same_space {
        if retick {
            arch::timer::apply_tick();
        }
        cpu.in_user.store(true, Ordering::Release);
        lock::release();
        if drain && crate::console::pending() {
            crate::console::drain_on_exit();
        }
        arch::trap::enter_user_on(cpu, &mut t.ctx, sstatus_ok)
    }
    // The thread that trapped goes on (`run_current`: a Signal, or a Wait that found its word
    // set). In user mode with `asid` from here for every other hart: a shootdown after the
    // release fences this hart (M-mode, whenever it comes) and a stall kicks it (it traps back
    // right after its `sret`); one before it moved the flush generation `switch_space` reads. What is left is this hart's own (its
    // TLB's freshness, instruction fetch, its timer), done without the lock: a notification's
    // partner on another hart waits for every cycle of the hold.
    cpu.active_asid.store(asid, Ordering::Relaxed);
    cpu.in_user.store(true, Ordering::Release);
    lock::release();
    crate::mm::tlb::switch_space(cpu, satp, asid);
    crate::mm::icache::sync_before_user();
    if retick {
        arch::timer::apply_tick();
    }
    arch::trap::enter_user_on(cpu, &mut t.ctx, sstatus_ok)
}

/// The idle loop after its watch (no lock): the thread a waker handed this hart, if any;
/// `seen`: the slot as the watch last saw it. The slot is closed (none) from here until the
/// idle loop opens it again under the lock.
fn take_handoff(cpu: &percpu::PerCpu, seen: usize) -> Option<&'static mut Tcb> {
    if seen == HANDOFF_CLAIMED {
        // The waker is writing this line: leave it alone meanwhile.
        arch::cpu::spin_cycles(HANDOFF_BACKOFF_CYCLES);
    }
    // An AMO, so the line comes writable (`run_handed` writes it next).
    let mut v = cpu.handoff.swap(HANDOFF_NONE, Ordering::Acquire);
    if v == HANDOFF_CLAIMED {
        // Too early (or claimed since the look): the waker stores the thread over our "none"
        // next, and only it writes the slot until then.
        v = loop {
            arch::cpu::spin_cycles(HANDOFF_BACKOFF_CYCLES);
            let x = cpu.handoff.load(Ordering::Acquire);
            if x != HANDOFF_NONE {
                break x;
            }
        };
        cpu.handoff.store(HANDOFF_NONE, Ordering::Relaxed);
    }
    // SAFETY: a handed-over thread is live until this hart leaves user mode with it (deleting
    // it stalls it first, which waits for that).
    (v > HANDOFF_CLAIMED).then(|| unsafe { &mut *(v as *mut Tcb) })
}

/// Enter user mode with the thread handed to this hart, without the lock: what `run` does,
/// with the satp and the U-CSR decision the waker made under the lock. Mail that came with it
/// or since makes it give up and return: out of "user mode" first (a hart that kicked us
/// waits for that, holding the lock), then the idle loop's locked pass takes the mail and
/// finds the thread current here, unless it was taken away meanwhile.
fn run_handed(cpu: &percpu::PerCpu, t: &mut Tcb) {
    let satp = cpu.handoff_satp.load(Ordering::Relaxed);
    let asid = cpu.active_asid.load(Ordering::Relaxed);
    crate::mm::tlb::switch_space(cpu, satp, asid);
    crate::mm::icache::sync_before_user();
    // Even when giving up: the waker recorded `t` as loaded here.
    crate::uintr::handoff_finish(t, cpu.hart, cpu.handoff_uintr.load(Ordering::Relaxed));
    crate::fpu::resume_handed(cpu, t);
    // The waker decided this hart's tick state under the lock; the timer is this hart's to set.
    if cpu.handoff_retick.load(Ordering::Relaxed) {
        arch::timer::apply_tick();
    }
    // Not watching any more (mail from now on comes with an IPI). The IPI of a waker that found
    // us asleep carries no mail; any later one is posted before it is sent, so the check below
    // sees its mail.
    cpu.polling.store(false, Ordering::SeqCst);
    arch::ipi::clear_pending();
    if cpu.mailbox.load(Ordering::SeqCst) != 0 {
        cpu.in_user.store(false, Ordering::Release);
        return;
    }
    arch::trap::enter_user(&mut t.ctx)
}

/// How long an idle hart watches its mailbox before it sleeps: long enough to cover a partner's
/// turn in a cross-hart IPC, short against the tick.
const IDLE_WATCH_CYCLES: u64 = 20_000;

/// Watch the mailbox (`arch::ipi::watch_mailbox`); while console output waits, hand the UART
/// what it takes between shorter watches, and do not let the caller sleep before the ring is
/// empty (no other hart may pass a drain point for a long while). A pending interrupt ends it
/// as it ends a watch.
fn watch_draining(cpu: &percpu::PerCpu) -> (bool, usize) {
    loop {
        crate::console::drain(crate::console::IDLE_DRAIN_BUDGET);
        let pending = crate::console::pending();
        let (found, slot) = arch::ipi::watch_mailbox(cpu, if pending { DRAIN_WATCH_CYCLES } else { IDLE_WATCH_CYCLES });
        if found || !crate::console::pending() || arch::cpu::interrupt_pending() {
            return (found, slot);
        }
    }
}

/// Between drains of waiting console output: a 16-byte FIFO at 115200 baud empties in ~1.4 ms,
/// a UART that takes every byte at once (QEMU's, the RTL model's) is fed sooner.
const DRAIN_WATCH_CYCLES: u64 = 4_000;

/// A hart with nothing to run: watch the mailbox a while, then sleep in `wfi` with interrupts
/// masked (wfi still wakes on a pending one), then take the lock and look again.
pub fn idle_loop() -> ! {
    idle(false)
}

/// The idle loop; `held`: entered from the kernel's exit with the lock held and nothing to
/// run (`choose` just said so), so the first pass starts at the bookkeeping.
fn idle(mut held: bool) -> ! {
    arch::cpu::interrupts_off();
    let cpu = percpu::this();
    cpu.active_asid.store(usize::MAX, Ordering::Relaxed);
    loop {
        if !held {
            // Not watching any more: mail from now on comes with an IPI (Dekker with `send`;
            // before the lock, whose sleeping waiters need the IPI to wake).
            cpu.polling.store(false, Ordering::SeqCst);
            lock::acquire();
            crate::interrupt::poll(cpu);
            if cpu.mailbox.load(Ordering::SeqCst) != 0 {
                arch::ipi::take_mail(cpu);
            }
            let next = choose();
            if !next.is_null() {
                crate::asyscall::wake::leaving_idle(cpu);
                // SAFETY: chosen threads are live.
                run(unsafe { &mut *next })
            }
        }
        held = false;
        // The last thread's FP state to its TCB (it may run on another hart next).
        crate::fpu::switch_to(cpu, null_mut());
        if crate::asyscall::wake::on_idle(cpu) {
            lock::release();
            crate::console::drain(crate::console::IDLE_DRAIN_BUDGET);
            continue;
        }
        // The tick state stays as the last thread left it: an idle hart needs no tick (its
        // deadlines program the timer, a thread queued here comes with an IPI), and flipping
        // it on every idle pass cost an SBI timer call per cross-hart round trip.
        crate::uintr::on_idle();
        // Watching from here until we clear it (the watch loop, or the checks after it, see any
        // mail posted meanwhile): a partner that takes the lock the moment we let it go, or
        // posts just as the watch ends, must not find us "not watching" and send an SBI IPI,
        // which costs it a firmware call and us an interrupt (in user mode, often).
        cpu.polling.store(true, Ordering::SeqCst);
        // From here until it looks at the slot again this hart touches nothing a waker's
        // `hand_off` decides for it.
        cpu.handoff.store(HANDOFF_OPEN, Ordering::Relaxed);
        lock::release();
        // Idle from here to the wake-up: `stat::IDLE_TIME` (serving handlers above is work).
        stats::idle_begin();
        let (found, mut slot) = watch_draining(cpu);
        if !found {
            // To sleep: say so, then look once more (a sender or waker that still saw us
            // watching posted before this store, one that did not sends an IPI).
            cpu.polling.store(false, Ordering::SeqCst);
            slot = cpu.handoff.load(Ordering::SeqCst);
            if cpu.mailbox.load(Ordering::SeqCst) == 0 && slot == HANDOFF_OPEN {
                stats::count(stat::IDLE_SLEEPS);
                arch::cpu::wait_for_interrupt();
            }
        }
        stats::idle_end();
        if let Some(t) = take_handoff(cpu, slot) {
            run_handed(cpu, t);
        }
        // Idle passes that did not end in a hand-over (the count `selftest` bounds): off the
        // hand-over's path, where the counter's line was one more miss.
        cpu.idle_wakeups.fetch_add(1, Ordering::Relaxed);
    }
}

/// DebugDumpScheduler: every hart's current thread and every thread's state.
pub fn dump() {
    use crate::kprintln;
    for h in 0..MAX_HARTS {
        if !percpu::of(h).online.load(Ordering::Acquire) {
            continue;
        }
        let s = hs(h);
        let c = current_of(h);
        // SAFETY: current is live.
        let cur = if c.is_null() { 0 } else { unsafe { (*c).pa() } };
        kprintln!("[sched] hart {h}: current tcb {:#x} (0 = idle), highest ready prio {:?}", cur, highest(s));
    }
    crate::object::tcb::for_each(|t| {
        kprintln!(
            "[sched]   tcb {:#x}: {:?} prio {} mcp {} hart {} pc {:#x}{}",
            t.pa(),
            t.state,
            t.prio,
            t.mcp,
            t.affinity,
            t.ctx.sepc,
            if t.queued {
                " (ready)"
            } else if t.current_on.is_some() {
                " (current)"
            } else {
                ""
            }
        );
    });
}
