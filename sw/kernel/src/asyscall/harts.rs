//! Which harts may serve a thread's kernel handler: TCB_SetSyscallHandlerHarts (`abi::label`).
//! A placement choice, seL4 style: the thread (or whoever holds its TCB cap) names the harts
//! by index, as TCB_SetAffinity does; `wake::pick` then only considers those, and with none of
//! them free the handler runs inside WakeSyscallHandler on the caller's own hart. Decoded in
//! full before anything changes.
use crate::ipc::Msg;
use crate::object::tcb::Tcb;
use crate::object::InvResult;
use crate::sched;
use abi::asys;
use caps::Error;
use platform::image::MAX_HARTS;

/// Mask bits that can name a hart (the ABI's bound, and the kernel's hart count).
const BITS: usize = if MAX_HARTS < asys::MAX_HART_BITS { MAX_HARTS } else { asys::MAX_HART_BITS };
const _: () = assert!(BITS < usize::BITS as usize && MAX_HARTS <= 64);

/// The checked argument: a mask of hart ids (bit h = hart h), 0 = any hart.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HartMask(u64);

/// Hart-index mask `m` (bit i = index i) → hart ids. Refused: a bit at or past the kernel's
/// hart count, or no online hart named (a handler nobody may serve would only ever run
/// inside the wake call, which is what a mask naming the caller's hart alone asks for).
pub fn decode(m: usize) -> Result<HartMask, Error> {
    if m == asys::ANY_HART {
        return Ok(HartMask(0));
    }
    if m >> BITS != 0 {
        return Err(Error::InvalidArgument(0));
    }
    let ids =
        (0..BITS).filter(|&i| m & (1 << i) != 0).filter_map(sched::hart_of_index).fold(0u64, |acc, h| acc | 1 << h);
    if ids == 0 {
        return Err(Error::InvalidArgument(0));
    }
    Ok(HartMask(ids))
}

/// Whether hart `h` may serve `t`'s handler.
pub fn allowed(t: &Tcb, h: usize) -> bool {
    t.asys.harts == 0 || t.asys.harts & (1 << h) != 0
}

/// TCB_SetSyscallHandlerHarts on thread `t`. A handler awake on a hart the new mask leaves
/// out is put to sleep if its ring is empty (its next wake picks again); with work queued it
/// finishes it there and sleeps as usual.
pub fn invoke(me: &mut Tcb, t: &mut Tcb, m: &Msg) -> InvResult {
    m.need(1, 0)?;
    let HartMask(ids) = decode(m.mr(me, 0))?;
    t.asys.harts = ids;
    if t.asys.on && t.asys.run.is_some_and(|h| !allowed(t, h)) {
        super::wake::sleep_if_idle(t);
    }
    Ok(0)
}
