//! Faults: a thread that faults is made to Call its fault endpoint with a message describing
//! the fault (seL4's layouts, see `abi::fault`); the handler's reply restarts it.
use crate::ipc::{self, set_mr, A0, A1};
use crate::object::endpoint::{self, SendArgs};
use crate::object::tcb::{self, Fault, State, Tcb};
use crate::{kprintln, sched};
use abi::{fault, MessageInfo};
use caps::{cspace::LookupFault, Cap};

/// seL4_LookupFailureType of a lookup fault.
pub fn lookup_failure_type(f: &LookupFault) -> usize {
    match f {
        LookupFault::InvalidRoot => 1,
        LookupFault::MissingCapability { .. } => 2,
        LookupFault::DepthMismatch { .. } => 3,
        LookupFault::GuardMismatch { .. } => 4,
    }
}

/// Deliver `f` to the thread's fault handler, or stop the thread if it has none.
pub fn raise(me: &mut Tcb, f: Fault) {
    me.fault = f;
    match tcb::lookup_cap_of(me, me.fault_ep).map(|c| c.0) {
        Some(Cap::Endpoint { obj, badge, rights }) if rights.write && (rights.grant || rights.grant_reply) => {
            // The faulting thread Calls the handler; registers stay as they were.
            endpoint::send(
                me,
                obj,
                SendArgs { badge, can_grant: rights.grant, can_grant_reply: true, is_call: true, blocking: true },
            );
        }
        _ => {
            kprintln!(
                "[kernel] thread {:#x}: {:?} at pc {:#x} and no fault handler: thread stopped",
                me.pa(),
                f,
                me.ctx.sepc
            );
            if me.is_root {
                kprintln!("[kernel] the root task cannot continue: ending the run");
                crate::arch::exit::fail(4);
            }
            me.fault = Fault::None;
            tcb::suspend(me);
        }
    }
}

/// A user exception (not a system call) from the trap handler. True: it was the thread's first
/// FP instruction since it last lost the FPU (`fpu::on_illegal`), and the thread goes on as it
/// is, with nothing for the scheduler to decide.
pub fn exception(me: &mut Tcb, scause: usize, stval: usize) -> bool {
    use crate::arch::csr::*;
    if matches!(scause, 12 | 13 | 15) && crate::object::vspace::fault_is_spurious(me, stval, scause) {
        // SAFETY: only drops cached translations of this hart.
        unsafe { core::arch::asm!("sfence.vma") };
        return false;
    }
    if scause == EXC_ILLEGAL {
        if crate::uintr::emulate_illegal(me, stval) {
            return false;
        }
        if crate::fpu::on_illegal(me) {
            return true;
        }
    }
    let f = match scause {
        12 | 13 | 15 | 1 | 5 | 7 => Fault::Vm { addr: stval, cause: scause, fetch: matches!(scause, 12 | 1) },
        // Illegal instructions the emulation did not take, and every other exception.
        _ => Fault::UserException { cause: scause, tval: stval },
    };
    raise(me, f);
    false
}

/// Write the fault message of `from` into `to` (the handler receiving it).
pub fn write_message(from: &Tcb, to: &mut Tcb, badge: u64) {
    let pc = from.ctx.sepc;
    let (label, words): (usize, &[usize]) = match from.fault {
        Fault::Vm { addr, cause, fetch } => (fault::VM_FAULT, &[pc, addr, fetch as usize, cause]),
        Fault::UserException { cause, tval } => (fault::USER_EXCEPTION, &[pc, from.ctx.regs[2], 0, cause, tval]),
        Fault::Cap { cptr, in_recv, lookup } => (fault::CAP_FAULT, &[pc, cptr, in_recv as usize, lookup]),
        Fault::UnknownSyscall { number } => {
            let r = &from.ctx.regs;
            (fault::UNKNOWN_SYSCALL, &[pc, r[2], r[1], r[10], r[11], r[12], r[13], r[14], r[15], r[16], r[17], number])
        }
        Fault::None => (fault::NULL, &[]),
    };
    for (i, w) in words.iter().enumerate() {
        set_mr(to, i, *w);
    }
    to.ctx.regs[A0] = badge as usize;
    to.ctx.regs[A1] = MessageInfo::new(label, 0, 0, words.len()).to_word();
}

/// The handler replied to faulting thread `t` with the message in `from`'s registers.
pub fn reply(t: &mut Tcb, from: &Tcb) {
    let info = MessageInfo::from_word(from.ctx.regs[A1]);
    let mr = |i| ipc::get_mr(from, i);
    match t.fault {
        Fault::UserException { .. } if info.length >= 2 => {
            t.ctx.sepc = mr(0);
            t.ctx.regs[2] = mr(1);
        }
        Fault::UnknownSyscall { .. } if info.length >= fault::UNKNOWN_SYSCALL_LENGTH - 1 => {
            t.ctx.sepc = mr(0);
            t.ctx.regs[2] = mr(1);
            t.ctx.regs[1] = mr(2);
            for i in 0..8 {
                t.ctx.regs[10 + i] = mr(3 + i);
            }
        }
        _ => {}
    }
    t.fault = Fault::None;
    // seL4: a reply with label 0 restarts the thread; any other label leaves it stopped.
    if info.label == 0 {
        sched::make_runnable(t);
    } else {
        t.state = State::Inactive;
    }
}
