//! The IPC fastpath for Call and ReplyRecv (seL4's conditions): a short message in registers
//! only, no caps, the partner already waiting. On this hart and not outranked by anything
//! ready here, the kernel hands the message over and switches threads directly, with no queue
//! or scheduler work. A partner whose affinity is another hart gets the message the same way
//! and is woken there (`sched::wake`: handed straight to that hart when it idles), and this
//! hart schedules. Everything else takes the slow path in `syscall`.
use crate::arch::cpu::own_line;
use crate::ipc::{A0, A1};
use crate::object::endpoint::{unlink, Endpoint, EpState};
use crate::object::notification::{Notification, NtfnState};
use crate::object::tcb::{self, Fault, State, Tcb};
use crate::object::{at, set_reply, KSlots};
use crate::{sched, stats};
use abi::{ipc::MSG_REGISTERS, stat, syscall as nr, MessageInfo};
use caps::{Cap, Rights, Slot, SlotRef, Slots};

const A2: usize = 12;
const A7: usize = 17;

/// What the fastpath did.
#[derive(PartialEq, Eq)]
pub enum Fast {
    /// Not taken: the slow path handles the system call.
    No,
    /// Not taken, but the system call's cap was looked up already (Send, NBSend, Recv on
    /// something else than a notification): the slow path goes on with it.
    Looked(Cap, SlotRef),
    /// The partner (for a notification: the caller itself) is current on this hart and
    /// nothing here outranks it: leave straight into it.
    Switched,
    /// The partner was woken on its own hart and the caller blocked (or a notification's
    /// waiter was woken here, or its Wait blocked): schedule this hart.
    Woken,
    /// A Wait on the notification at this address would block and leave the hart idle: spin
    /// for its signal without the lock first (`spin_for_signal`); a signaller may complete the
    /// Wait meanwhile, else it runs again.
    Spin(u64),
}

/// How long a Wait spins for its signal before it blocks (cycles). The hart would idle anyway;
/// a partner's answer across harts takes ~1-2 k cycles on the RTL. Blocking and the wake-up
/// of an idle hart (`sched::hand_off`, the idle loop) cost the two harts ~2 k together, and the
/// blocking Wait holds the lock the signaller needs meanwhile.
pub const WAIT_SPIN_CYCLES: u64 = 4_000;

/// Spin without the lock (taken by the caller after `note_spinner` and `PerCpu::spin_on`) until
/// a signaller delivers the notification's signal into the thread (`sched::deliver_to_spinner`),
/// this hart has mail or an interrupt pending, or `WAIT_SPIN_CYCLES` pass. True: delivered, the
/// badge is in `me`'s registers, its `ecall` done, and the hart counts as in user mode
/// (`resume_delivered` next).
/// False: the caller takes the lock and runs the Wait again. Meanwhile the thread is as if
/// still waiting for the lock: current here and Running, its registers in its TCB, so another
/// hart may stall it (it kicks this hart, which then finds its thread gone and schedules).
pub fn spin_for_signal(cpu: &crate::percpu::PerCpu, me: &mut Tcb, pa: u64) -> bool {
    use crate::arch::csr::*;
    use core::sync::atomic::Ordering;
    let t0 = crate::arch::cpu::cycles();
    while cpu.spin_on.load(Ordering::Relaxed) == pa as usize
        && cpu.mailbox.load(Ordering::Relaxed) == 0
        && csrr!("sip") & csrr!("sie") == 0
        && crate::arch::cpu::cycles().wrapping_sub(t0) < WAIT_SPIN_CYCLES
    {
        crate::mm::root_retire::answer(cpu);
        core::hint::spin_loop();
    }
    stats::count(stat::WAIT_SPINS);
    match cpu.spin_on.compare_exchange(pa as usize, 0, Ordering::SeqCst, Ordering::Acquire) {
        Ok(_) => false,
        Err(v) if v != sched::SPIN_DELIVERED => {
            // SPIN_CANCELLED: an address-space change came meanwhile (`sched::cancel_spins`).
            cpu.spin_on.store(0, Ordering::Relaxed);
            false
        }
        Err(_) => {
            // SPIN_DELIVERED: the Wait is done (the spin rewound the pc to its `ecall`).
            me.ctx.regs[A0] = cpu.spin_badge.load(Ordering::Relaxed) as usize;
            me.ctx.sepc = me.restart_pc + 4;
            cpu.spin_on.store(0, Ordering::Relaxed);
            true
        }
    }
}

/// Back to user mode with `t`, whose Wait a signaller completed while it spun (no lock: the
/// thread stayed current here and Running, its user-interrupt state and tick unchanged). Its
/// address space is the hart's: any change to what a thread's address space depends on
/// (`TCB_SetSpace`, a VSpace made or deleted) cancels every spin in progress
/// (`sched::cancel_spins`), so a delivered spin saw none. Only the space's flush generation and
/// the instruction-fetch epoch may have moved meanwhile. Mail or an interrupt that came since
/// is pending and traps at once.
pub fn resume_delivered(cpu: &crate::percpu::PerCpu, t: &mut Tcb) -> ! {
    use core::sync::atomic::Ordering;
    crate::mm::tlb::switch_space(cpu, cpu.active_satp.load(Ordering::Relaxed), cpu.active_asid.load(Ordering::Relaxed));
    crate::mm::icache::sync_before_user();
    crate::arch::trap::enter_user_on(cpu, &mut t.ctx, true)
}

/// Whether the partner can be woken on another hart from the fastpath: it is blocked (neither
/// current anywhere nor queued) and belongs to another hart.
fn elsewhere(t: &Tcb) -> bool {
    t.affinity != crate::percpu::this().hart && t.current_on.is_none() && !t.queued
}

/// `may_spin`: a Wait that would block and idle the hart may ask to spin first (`Fast::Spin`).
/// Inline in `user_trap`: a call of its own saved eight registers on every system call for
/// nothing (neither returns when it switches).
#[inline(always)]
pub fn try_fastpath(me: &mut Tcb, may_spin: bool) -> Fast {
    let number = me.ctx.regs[A7] as isize;
    if number == nr::SEND || number == nr::NB_SEND || number == nr::RECV {
        return notification(me, number, may_spin);
    }
    if number != nr::CALL && number != nr::REPLY_RECV {
        return Fast::No;
    }
    let info = MessageInfo::from_word(me.ctx.regs[A1]);
    if info.extra_caps != 0 || info.length > MSG_REGISTERS || me.fault != Fault::None {
        return Fast::No;
    }
    let cptr = me.ctx.regs[A0];
    let looked;
    let (obj, badge, rights) = match endpoint_in_one_level(me, cptr) {
        Some(found) => found,
        None => {
            looked = tcb::lookup_cap_of(me, cptr);
            match &looked {
                Some((Cap::Endpoint { obj, badge, rights }, _)) => (*obj, *badge, rights),
                _ => return Fast::No,
            }
        }
    };
    let ep = at::<Endpoint>(obj);
    // Lines read here and written below, last written by the partner if it runs on another
    // hart, as it did last time: taken writable at once (`own_line`), not read and then
    // upgraded. On one hart they are this hart's already and the AMOs would only cost.
    let remote = me.remote_partner;
    if remote {
        own_line(ep);
    }
    if number == nr::CALL {
        if !rights.write || !(rights.grant || rights.grant_reply) || ep.state != EpState::Recv {
            return Fast::No;
        }
        // SAFETY: a Recv-state endpoint has a live head.
        let dest = unsafe { &mut *ep.head };
        if remote {
            own_line(&dest.state);
        }
        let here = sched::may_switch_directly(dest);
        if !here && !elsewhere(dest) {
            return Fast::No;
        }
        me.remote_partner = !here;
        if !here {
            own_line(&dest.slots[tcb::CALLER]);
        }
        unlink(&mut ep.head, &mut ep.tail, dest);
        if ep.head.is_null() {
            ep.state = EpState::Idle;
        }
        dest.blocked_on = 0;
        copy_message(me, dest, info, badge);
        me.state = State::BlockedOnReply;
        let can_grant = dest.recv_can_grant;
        put_reply(dest, me, can_grant);
        run_partner(me, dest, here, stat::FASTPATH_CALL)
    } else {
        if !rights.read || ep.state == EpState::Send {
            return Fast::No;
        }
        if me.bound_ntfn != 0 && at::<Notification>(me.bound_ntfn).state == NtfnState::Active {
            return Fast::No;
        }
        if remote {
            own_line(&me.slots[tcb::CALLER]);
        }
        let Cap::Reply { tcb: caller, can_grant: _ } = me.slots[tcb::CALLER].cap else { return Fast::No };
        let caller = at::<Tcb>(caller);
        if remote {
            own_line(&caller.state);
        }
        if caller.state != State::BlockedOnReply || caller.fault != Fault::None {
            return Fast::No;
        }
        let here = sched::may_switch_directly(caller);
        if !here && !elsewhere(caller) {
            return Fast::No;
        }
        me.remote_partner = !here;
        // Receive half: block on the endpoint.
        me.state = State::BlockedOnReceive;
        me.blocked_on = obj;
        me.recv_can_grant = rights.grant;
        crate::object::endpoint::enqueue(&mut ep.head, &mut ep.tail, me);
        ep.state = EpState::Recv;
        // Reply half: the reply cap is used up.
        caller.reply_holder = 0;
        // In place (it holds a reply cap, checked above: no page-table bookkeeping to do).
        me.slots[tcb::CALLER] = Slot::default();
        copy_message(me, caller, info, 0);
        run_partner(me, caller, here, stat::FASTPATH_REPLY_RECV)
    }
}

/// The second try of a Wait that spun in vain (`user_trap`), out of line.
#[cold]
#[inline(never)]
pub fn try_fastpath_again(me: &mut Tcb) -> Fast {
    try_fastpath(me, false)
}

/// Signal (Send, NBSend) and Wait (Recv) on a notification cap: what the slow path does with
/// them, without its dispatch, and leaving straight back into the caller when nothing here
/// has to be decided (the waiter it woke is on another hart, handed to it there if it idles;
/// or the Wait found the word set). A Wait that blocks lets the hart schedule.
fn notification(me: &mut Tcb, number: isize, may_spin: bool) -> Fast {
    if me.fault != Fault::None {
        return Fast::No;
    }
    let Some(looked) = tcb::lookup_cap_of(me, me.ctx.regs[A0]) else { return Fast::No };
    let (Cap::Notification { obj, badge, rights, .. }, _) = looked else { return Fast::Looked(looked.0, looked.1) };
    if number == nr::RECV {
        if !rights.read || !crate::object::notification::can_wait(obj, me) {
            return Fast::No;
        }
        // A spin resumes in the hart's address space (`resume_delivered`): only when that is
        // the thread's now (a SetSpace may have come while it waited for the lock).
        if may_spin
            && crate::object::notification::would_block_alone(obj)
            && sched::idles_without(me)
            && crate::mm::tlb::runs_space_of(me)
        {
            let cpu = crate::percpu::this();
            crate::object::notification::note_spinner(obj, cpu.hart);
            cpu.spin_on.store(obj as usize, core::sync::atomic::Ordering::Relaxed);
            return Fast::Spin(obj);
        }
        crate::object::notification::wait(me, obj, true);
    } else {
        if !rights.write {
            return Fast::No;
        }
        // A failed signal (a U-notification's badge that is no vector) is dropped for a Send.
        let _ = crate::object::notification::signal(obj, badge);
    }
    if sched::keeps_hart(me) {
        Fast::Switched
    } else {
        Fast::Woken
    }
}

/// The endpoint cap `cptr` names when the caller's CSpace resolves it in one level (the root
/// CNode's guard and radix take the top bits; an Endpoint in the slot ends the walk whether
/// bits are left or not): seL4's fastpath lookup, without the generic walk's loop, its error
/// values and its copies of whole caps. None: anything else, which `lookup_cap_of` decides.
/// The rights by reference: a copy assembled the four flags byte by byte, and the fastpath
/// reads two or three of them.
#[inline(always)]
fn endpoint_in_one_level(me: &Tcb, cptr: usize) -> Option<(u64, u64, &'static Rights)> {
    let Cap::CNode { base, radix, guard, guard_bits } = &me.slots[tcb::CTABLE].cap else { return None };
    let (radix, guard_bits) = (*radix as u32, *guard_bits as u32);
    let level = radix + guard_bits;
    if level == 0 || level > 64 {
        return None;
    }
    let cptr = cptr as u64;
    if guard_bits != 0 && cptr >> (64 - guard_bits) != *guard {
        return None;
    }
    let index = if radix == 0 { 0 } else { (cptr >> (64 - level)) & (u64::MAX >> (64 - radix)) };
    match &at::<Slot>(KSlots.cnode_slot(*base, index)).cap {
        Cap::Endpoint { obj, badge, rights } => Some((*obj, *badge, rights)),
        _ => None,
    }
}

/// `set_reply` into `dest`'s caller slot, written in place: a TCB's caller slot holds a
/// reply cap or nothing, so the generic slot write's page-table check and its copy of a whole
/// `Slot` through a temporary have nothing to do. Anything else there takes `set_reply`.
#[inline(always)]
fn put_reply(dest: &mut Tcb, caller: &mut Tcb, can_grant: bool) {
    let at = dest.slot(tcb::CALLER);
    let slot = &mut dest.slots[tcb::CALLER];
    if !matches!(slot.cap, Cap::Null | Cap::Reply { .. }) {
        return set_reply(at, caller, can_grant);
    }
    slot.cap = Cap::Reply { tcb: caller.pa(), can_grant };
    slot.mdb = Default::default();
    caller.reply_holder = at;
}

/// The message is in `to` and `me` is blocked: leave straight into `to` here (no return), or
/// wake it on its hart.
#[inline(always)]
fn run_partner(me: &mut Tcb, to: &mut Tcb, here: bool, counter: usize) -> Fast {
    if here {
        to.state = State::Running;
        stats::count(counter);
        sched::leave_direct(me, to)
    } else {
        sched::wake(to);
        stats::count(stat::FASTPATH_CROSS);
        Fast::Woken
    }
}

#[inline(always)]
fn copy_message(from: &Tcb, to: &mut Tcb, info: MessageInfo, badge: u64) {
    // At most MSG_REGISTERS words (checked): a loop the compiler keeps inline, not a memcpy
    // call.
    for i in 0..MSG_REGISTERS {
        if i < info.length {
            to.ctx.regs[A2 + i] = from.ctx.regs[A2 + i];
        }
    }
    to.ctx.regs[A0] = badge as usize;
    to.ctx.regs[A1] = MessageInfo::new(info.label, 0, 0, info.length).to_word();
}
