//! Everything that enters the kernel from user mode: system calls, interrupts taken while a
//! user thread ran, and user faults. The kernel lock is held from here until the thread (or
//! another) goes back to user mode.
use crate::arch::{csr::*, trap::UserContext};
use crate::ipc::{self, Msg, A0, A1};
use crate::object::endpoint::{self, SendArgs};
use crate::object::tcb::{self, Fault, State, Tcb};
use crate::object::{self, at, notification};
use crate::{fault, lock, percpu, sched, stats};
use abi::{stat, syscall as nr, MessageInfo};
use caps::{Cap, SlotRef};
use core::sync::atomic::Ordering;

const A7: usize = 17;
const EXC_ECALL_U: usize = 8;

pub extern "C" fn user_trap(ctx: &mut UserContext) -> ! {
    let cpu = percpu::this();
    // First: a CSR read's result comes at write-back, and the dispatch below waits for it.
    let scause = csrr!("scause");
    let quiet = crate::uintr::save_on_trap(ctx as *mut UserContext as *mut Tcb);
    cpu.in_user.store(false, Ordering::Release);
    lock::acquire();
    stats::count(stat::KERNEL_ENTRIES);
    let me_ptr = ctx as *mut UserContext as *mut Tcb;
    if !quiet {
        // A quiet hart's parked slots are Active: their signals interrupt the kernel.
        crate::uintr::on_kernel_entry();
    }
    // The preemption budget is reset on every way through here but the fastpath's straight
    // exit, which charges nothing.
    if scause & INTERRUPT != 0 {
        crate::preempt::reset();
        stats::count(stat::ENTRIES_INTERRUPT);
        crate::interrupt::handle(scause & !INTERRUPT, cpu);
    } else if sched::current() == me_ptr {
        // SAFETY: the current thread's TCB is live; the lock is held.
        let me = unsafe { &mut *me_ptr };
        me.entries += 1;
        if scause == EXC_ECALL_U {
            me.restart_pc = me.ctx.sepc;
            me.ctx.sepc += 4;
            let mut fast = crate::fastpath::try_fastpath(me, true);
            if let crate::fastpath::Fast::Spin(ntfn) = fast {
                // A Wait that would idle this hart: its signal may be a moment away, and the
                // signaller needs the lock. Without the lock the thread is as if waiting for it
                // (its ecall not yet done, so a stall that takes it from us is harmless).
                me.ctx.sepc = me.restart_pc;
                lock::release();
                if crate::fastpath::spin_for_signal(cpu, me, ntfn) {
                    crate::fastpath::resume_delivered(cpu, me)
                }
                lock::acquire();
                if sched::current() != me_ptr {
                    // Stalled meanwhile: it runs the ecall again when it next runs.
                    sched::exit_to_user()
                }
                me.ctx.sepc += 4;
                fast = crate::fastpath::try_fastpath_again(me);
            }
            if let crate::fastpath::Fast::Switched = fast {
                // The partner is current and nothing here outranks it (the fastpath checked):
                // straight out, no scheduler decision to make.
                sched::run_current()
            }
            crate::preempt::reset();
            match fast {
                crate::fastpath::Fast::No => handle_syscall(me, None),
                crate::fastpath::Fast::Looked(cap, slot) => handle_syscall(me, Some((cap, slot))),
                _ => {}
            }
        } else {
            crate::preempt::reset();
            if fault::exception(me, scause, csrr!("stval")) && sched::keeps_hart(me) {
                // FP state loaded: straight back into the instruction.
                sched::run_current()
            }
        }
    } else {
        crate::preempt::reset();
    }
    // Otherwise another hart stalled this thread while we waited for the lock: it re-executes
    // the instruction when it next runs.
    sched::exit_to_user()
}

/// `looked`: the cap in a0 and its slot, when the fastpath looked it up already (this entry's
/// cspace, nothing changed since). Cold for `user_trap`'s layout: the fastpath is its straight
/// line.
#[cold]
fn handle_syscall(me: &mut Tcb, looked: Option<(Cap, SlotRef)>) {
    let number = me.ctx.regs[A7] as isize;
    match number {
        nr::SEND => send(me, true, false, looked),
        nr::NB_SEND => send(me, false, false, looked),
        nr::CALL => send(me, true, true, None),
        nr::RECV => receive(me, true, looked),
        nr::NB_RECV => receive(me, false, None),
        nr::REPLY => reply(me),
        nr::REPLY_RECV => {
            stats::count(stat::SLOWPATH_IPC);
            reply(me);
            receive(me, true, None);
        }
        nr::YIELD => sched::yield_current(),
        nr::SET_DEADLINE => crate::deadline::set_deadline(me),
        nr::WAKE_SYSCALL_HANDLER => crate::asyscall::wake::syscall(me),
        n if crate::debug::handle(me, n) => {}
        n => {
            me.ctx.sepc = me.restart_pc;
            fault::raise(me, Fault::UnknownSyscall { number: n as usize });
        }
    }
}

/// A cap fault: `lookup` is the seL4_LookupFailureType (2, missing capability, when the cap
/// is there but of the wrong kind or without the right).
fn cap_fault(me: &mut Tcb, cptr: usize, in_recv: bool, lookup: usize) {
    me.ctx.sepc = me.restart_pc;
    fault::raise(me, Fault::Cap { cptr, in_recv, lookup });
}

/// Send, NBSend, Call: IPC on an endpoint, a signal, a reply through a saved reply cap, or an
/// invocation of a kernel object. As in seL4, a cptr that does not resolve is a cap fault, but
/// an empty slot or a cap without the Write right is an InvalidCapability error (replied to a
/// Call, dropped for a Send).
fn send(me: &mut Tcb, blocking: bool, call: bool, looked: Option<(Cap, SlotRef)>) {
    let cptr = me.ctx.regs[A0];
    let (cap, slot) = match looked.map_or_else(|| tcb::lookup_cap(me, cptr), Ok) {
        Ok(v) => v,
        Err(f) => return cap_fault(me, cptr, false, fault::lookup_failure_type(&f)),
    };
    match cap {
        Cap::Endpoint { obj, badge, rights } if rights.write => {
            stats::count(stat::SLOWPATH_IPC);
            endpoint::send(
                me,
                obj,
                SendArgs {
                    badge,
                    can_grant: rights.grant,
                    can_grant_reply: rights.grant_reply,
                    is_call: call,
                    blocking,
                },
            );
        }
        Cap::Notification { .. }
            if call && notification::is_invocation(MessageInfo::from_word(me.ctx.regs[A1]).label) =>
        {
            let info = MessageInfo::from_word(me.ctx.regs[A1]);
            let r = Msg::decode(me, info).and_then(|m| notification::invoke(me, cap, slot, &m));
            ipc::reply_to_invocation(me, r);
        }
        Cap::Notification { obj, badge, rights, .. } if rights.write => {
            // A failed signal (badge no vector of a U-notification) is an error reply to a
            // Call and dropped for a Send, like any failed invocation.
            let r = notification::signal(obj, badge).map(|_| 0);
            if call {
                ipc::reply_to_invocation(me, r);
            }
        }
        Cap::Reply { tcb, can_grant } => do_reply(me, tcb, can_grant, slot),
        _ => {
            let info = MessageInfo::from_word(me.ctx.regs[A1]);
            me.call_key = me.entries;
            // A match, not `and_then`: the closure would take (copy) the whole Msg.
            let r = match Msg::decode(me, info) {
                Ok(m) => invoke(me, cap, slot, &m),
                Err(e) => Err(e),
            };
            if r == Err(caps::Error::Preempted) {
                // Out of budget at a consistent point: the thread re-executes its ecall.
                me.ctx.sepc = me.restart_pc;
                stats::count(stat::PREEMPTIONS);
            } else if call {
                ipc::reply_to_invocation(me, r);
            }
        }
    }
}

/// One invocation of a kernel object by `me` (also how async requests run, `asyscall::exec`).
pub fn invoke(me: &mut Tcb, cap: Cap, slot: u64, m: &Msg) -> object::InvResult {
    match cap {
        Cap::Untyped { .. } => object::untyped::invoke(me, slot, m),
        Cap::CNode { .. } => object::cnode::invoke(me, cap, m),
        Cap::Tcb { obj } => object::tcb::invoke(me, obj, m),
        Cap::Frame { .. } => object::vspace::invoke_frame(me, slot, cap, m),
        Cap::PageTable { .. } => object::vspace::invoke_page_table(me, slot, cap, m),
        Cap::AsidControl => object::asid::invoke_control(me, m),
        Cap::AsidPool { .. } => object::asid::invoke_pool(me, cap, m),
        Cap::IrqControl => object::irq::invoke_control(me, m),
        Cap::UintrControl => crate::uintr::invoke_control(me, m),
        Cap::SenderTable { base } => crate::uintr::invoke_sender_table(me, base, m),
        Cap::IrqHandler { .. } => object::irq::invoke_handler(me, cap, m),
        _ => Err(caps::Error::InvalidCapability(0)),
    }
}

/// Recv, NBRecv (and the receive half of ReplyRecv).
fn receive(me: &mut Tcb, blocking: bool, looked: Option<(Cap, SlotRef)>) {
    let cptr = me.ctx.regs[A0];
    let cap = match looked.map_or_else(|| tcb::lookup_cap(me, cptr), Ok) {
        Ok((c, _)) => c,
        Err(f) => return cap_fault(me, cptr, true, fault::lookup_failure_type(&f)),
    };
    match cap {
        Cap::Endpoint { obj, rights, .. } if rights.read => {
            // A reply cap not used by now is dropped (seL4 deleteCallerCap).
            object::delete_slot(me.slot(tcb::CALLER));
            if notification::take_bound_signal(me) {
                return;
            }
            endpoint::receive(me, obj, blocking, rights.grant);
        }
        Cap::Notification { obj, rights, .. } if rights.read && notification::can_wait(obj, me) => {
            notification::wait(me, obj, blocking);
        }
        _ => cap_fault(me, cptr, true, 2),
    }
}

/// Reply through the caller slot (Reply, ReplyRecv).
fn reply(me: &mut Tcb) {
    let slot = me.slot(tcb::CALLER);
    if let Cap::Reply { tcb, can_grant } = object::cap_at(slot) {
        do_reply(me, tcb, can_grant, slot);
    }
}

pub fn do_reply(me: &mut Tcb, caller: u64, can_grant: bool, slot: u64) {
    let t = at::<Tcb>(caller);
    t.reply_holder = 0;
    caps::cdt::delete(&mut object::KSlots, slot);
    if t.state != State::BlockedOnReply {
        return;
    }
    if t.fault != Fault::None {
        fault::reply(t, me);
    } else {
        ipc::transfer(me, t, 0, can_grant, 0);
        sched::wake(t);
    }
}
