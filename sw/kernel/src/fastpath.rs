//! The IPC fastpath for Call and ReplyRecv (seL4's conditions): a short message in registers
//! only, no caps, the partner already waiting, on this hart, and not outranked by anything
//! ready here. Then the kernel hands the message over and switches threads directly, with no
//! queue or scheduler work. Everything else takes the slow path in `syscall`.
use crate::ipc::{A0, A1};
use crate::object::endpoint::{unlink, Endpoint, EpState};
use crate::object::notification::{Notification, NtfnState};
use crate::object::tcb::{self, Fault, State, Tcb};
use crate::object::{at, set_reply};
use crate::{sched, stats};
use abi::{ipc::MSG_REGISTERS, stat, syscall as nr, MessageInfo};
use caps::{Cap, Slot, Slots};

const A2: usize = 12;
const A7: usize = 17;

pub fn try_fastpath(me: &mut Tcb) -> bool {
    let number = me.ctx.regs[A7] as isize;
    if number != nr::CALL && number != nr::REPLY_RECV {
        return false;
    }
    let info = MessageInfo::from_word(me.ctx.regs[A1]);
    if info.extra_caps != 0 || info.length > MSG_REGISTERS || me.fault != Fault::None {
        return false;
    }
    let Some((Cap::Endpoint { obj, badge, rights }, _)) = tcb::lookup_cap_of(me, me.ctx.regs[A0]) else { return false };
    let ep = at::<Endpoint>(obj);
    if number == nr::CALL {
        if !rights.write || !(rights.grant || rights.grant_reply) || ep.state != EpState::Recv {
            return false;
        }
        // SAFETY: a Recv-state endpoint has a live head.
        let dest = unsafe { &mut *ep.head };
        if !sched::may_switch_directly(dest) {
            return false;
        }
        unlink(&mut ep.head, &mut ep.tail, dest);
        if ep.head.is_null() {
            ep.state = EpState::Idle;
        }
        dest.blocked_on = 0;
        copy_message(me, dest, info, badge);
        me.state = State::BlockedOnReply;
        let can_grant = dest.recv_can_grant;
        set_reply(dest.slot(tcb::CALLER), me, can_grant);
        dest.state = State::Running;
        sched::switch_direct(me, dest);
        stats::count(stat::FASTPATH_CALL);
        true
    } else {
        if !rights.read || ep.state == EpState::Send {
            return false;
        }
        if me.bound_ntfn != 0 && at::<Notification>(me.bound_ntfn).state == NtfnState::Active {
            return false;
        }
        let caller_slot = me.slot(tcb::CALLER);
        let Cap::Reply { tcb: caller, can_grant: _ } = me.slots[tcb::CALLER].cap else { return false };
        let caller = at::<Tcb>(caller);
        if caller.state != State::BlockedOnReply || caller.fault != Fault::None || !sched::may_switch_directly(caller) {
            return false;
        }
        // Receive half: block on the endpoint.
        me.state = State::BlockedOnReceive;
        me.blocked_on = obj;
        me.recv_can_grant = rights.grant;
        crate::object::endpoint::enqueue(&mut ep.head, &mut ep.tail, me);
        ep.state = EpState::Recv;
        // Reply half: the reply cap is used up.
        caller.reply_holder = 0;
        crate::object::KSlots.set(caller_slot, Slot::default());
        copy_message(me, caller, info, 0);
        caller.state = State::Running;
        sched::switch_direct(me, caller);
        stats::count(stat::FASTPATH_REPLY_RECV);
        true
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
