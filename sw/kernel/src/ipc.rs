//! Messages: message registers (a2..a5, then the IPC buffer), decoding an invocation, and the
//! transfer of a message (and capabilities) from one thread to another.
use crate::object::{
    at,
    tcb::{self, Tcb},
    KSlots,
};
use abi::{
    ipc::{IpcBuffer, MSG_MAX_EXTRA_CAPS, MSG_MAX_LENGTH, MSG_REGISTERS},
    MessageInfo,
};
use caps::{Cap, Error, SlotRef};

pub const A0: usize = 10;
pub const A1: usize = 11;
const A2: usize = 12;

/// The thread's IPC buffer, through the kernel window (the TCB's buffer cap names the frame;
/// no user pointer is followed).
pub fn buffer(t: &Tcb) -> Option<&'static mut IpcBuffer> {
    let Cap::Frame { base, size_bits, .. } = t.slots[tcb::BUFFER].cap else { return None };
    let offset = t.ipc_buffer as u64 & ((1u64 << size_bits) - 1);
    Some(at::<IpcBuffer>(base + offset))
}

pub fn get_mr(t: &Tcb, i: usize) -> usize {
    if let Some(v) = crate::asyscall::mrs::get(t, i) {
        return v;
    }
    if i < MSG_REGISTERS {
        t.ctx.regs[A2 + i]
    } else {
        buffer(t).map_or(0, |b| b.msg[i])
    }
}

/// Write message register `i`; false if it needs an IPC buffer the thread does not have.
pub fn set_mr(t: &mut Tcb, i: usize, v: usize) -> bool {
    if let Some(ok) = crate::asyscall::mrs::set(t, i, v) {
        return ok;
    }
    if i < MSG_REGISTERS {
        t.ctx.regs[A2 + i] = v;
        true
    } else if let Some(b) = buffer(t).filter(|_| i < MSG_MAX_LENGTH) {
        b.msg[i] = v;
        true
    } else {
        false
    }
}

/// How many message registers a thread can send or receive.
pub fn max_length(t: &Tcb) -> usize {
    if let Some(n) = crate::asyscall::mrs::max_length(t) {
        return n;
    }
    if buffer(t).is_some() {
        MSG_MAX_LENGTH
    } else {
        MSG_REGISTERS
    }
}

/// A decoded invocation: label, length and the extra caps (looked up in the caller's CSpace).
pub struct Msg {
    pub label: usize,
    pub length: usize,
    pub caps: [(Cap, SlotRef); MSG_MAX_EXTRA_CAPS],
    pub ncaps: usize,
}

impl Msg {
    #[inline(always)]
    pub fn decode(me: &Tcb, info: MessageInfo) -> Result<Msg, Error> {
        let mut cptrs = [0; MSG_MAX_EXTRA_CAPS];
        let n = info.extra_caps.min(MSG_MAX_EXTRA_CAPS);
        if n > 0 {
            let b = buffer(me).ok_or(Error::InvalidCapability(1))?;
            cptrs[..n].copy_from_slice(&b.caps_or_badges[..n]);
        }
        Msg::with_caps(me, info.label, info.length, &cptrs[..n])
    }

    /// An invocation whose extra caps are `cptrs` (at most three), looked up in `me`'s CSpace:
    /// the sync path reads them from the IPC buffer, an async request from its item. Inlined:
    /// a call returns the 168-byte `Result<Msg, _>` through memory and its caller copies it
    /// again (~200 cycles per invocation).
    #[inline(always)]
    pub fn with_caps(me: &Tcb, label: usize, length: usize, cptrs: &[usize]) -> Result<Msg, Error> {
        let mut m = Msg { label, length: length.min(max_length(me)), caps: [(Cap::Null, 0); 3], ncaps: 0 };
        for (i, &c) in cptrs.iter().take(MSG_MAX_EXTRA_CAPS).enumerate() {
            m.caps[i] = tcb::lookup_cap_of(me, c).ok_or(Error::InvalidCapability(i as u8 + 1))?;
        }
        m.ncaps = cptrs.len().min(MSG_MAX_EXTRA_CAPS);
        Ok(m)
    }

    /// seL4 answers a short message or a missing cap with TruncatedMessage.
    pub fn need(&self, mrs: usize, caps: usize) -> Result<(), Error> {
        if self.length < mrs || self.ncaps < caps {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    pub fn mr(&self, me: &Tcb, i: usize) -> usize {
        get_mr(me, i)
    }
}

/// Write an invocation's reply into the caller: label 0 and `n` MRs, or the error and its
/// details (seL4's layout of error MRs).
pub fn reply_to_invocation(me: &mut Tcb, r: Result<usize, Error>) {
    let (label, len) = match r {
        Ok(n) => (0, n),
        Err(e) => {
            let (code, details, n) = error_reply(e);
            for (i, d) in details.iter().take(n).enumerate() {
                set_mr(me, i, *d);
            }
            (code, n)
        }
    };
    me.ctx.regs[A0] = 0;
    me.ctx.regs[A1] = MessageInfo::new(label, 0, 0, len).to_word();
}

/// An error as an invocation reply: its code, detail words and how many of them count.
pub fn error_reply(e: Error) -> (usize, [usize; 3], usize) {
    let details = match e {
        Error::InvalidArgument(i) | Error::InvalidCapability(i) => [i as usize, 0, 0],
        Error::RangeError { min, max } => [min as usize, max as usize, 0],
        Error::NotEnoughMemory { available } => [available as usize, 0, 0],
        Error::FailedLookup(f) => [1, crate::fault::lookup_failure_type(&f), 0],
        Error::FailedDestLookup(f) => [0, crate::fault::lookup_failure_type(&f), 0],
        _ => [0, 0, 0],
    };
    let n = match e {
        Error::InvalidArgument(_) | Error::InvalidCapability(_) | Error::NotEnoughMemory { .. } => 1,
        Error::RangeError { .. } | Error::FailedLookup(_) | Error::FailedDestLookup(_) => 2,
        _ => 0,
    };
    (e.code(), details, n)
}

/// Copy a message from `from` (its registers and IPC buffer) to `to`, with `badge`; transfer
/// caps if `grant`. `ep` is the endpoint it went through (caps to it are unwrapped to badges).
pub fn transfer(from: &mut Tcb, to: &mut Tcb, badge: u64, grant: bool, ep: u64) {
    if from.fault != tcb::Fault::None {
        crate::fault::write_message(from, to, badge);
        return;
    }
    let info = MessageInfo::from_word(from.ctx.regs[A1]);
    let len = info.length.min(max_length(from)).min(max_length(to));
    for i in 0..len.min(MSG_REGISTERS) {
        to.ctx.regs[A2 + i] = from.ctx.regs[A2 + i];
    }
    if len > MSG_REGISTERS {
        if let (Some(src), Some(dst)) = (buffer(from), buffer(to)) {
            dst.msg[MSG_REGISTERS..len].copy_from_slice(&src.msg[MSG_REGISTERS..len]);
        }
    }
    let (extra, unwrapped) =
        if grant && info.extra_caps > 0 { transfer_caps(from, to, info.extra_caps, ep) } else { (0, 0) };
    to.ctx.regs[A0] = badge as usize;
    to.ctx.regs[A1] = MessageInfo::new(info.label, unwrapped, extra, len).to_word();
}

/// seL4 transferCaps: caps to the endpoint itself become badges; the first other cap goes to
/// the receiver's receive slot (one per message). Stops at the first cap that cannot go.
fn transfer_caps(from: &Tcb, to: &mut Tcb, count: usize, ep: u64) -> (usize, usize) {
    let (Some(src), Some(dst)) = (buffer(from), buffer(to)) else { return (0, 0) };
    let mut dest_slot = receive_slot(to, dst);
    let (mut n, mut unwrapped) = (0, 0);
    for i in 0..count.min(MSG_MAX_EXTRA_CAPS) {
        let Some((cap, slot)) = tcb::lookup_cap_of(from, src.caps_or_badges[i]) else { break };
        match cap {
            Cap::Endpoint { obj, badge, .. } if obj == ep => {
                dst.caps_or_badges[i] = badge as usize;
                unwrapped |= 1 << i;
            }
            _ => {
                let Some(d) = dest_slot.take() else { break };
                let Ok(derived) = caps::cdt::derive(&KSlots, slot) else { break };
                if caps::cdt::insert(&mut KSlots, slot, d, derived).is_err() {
                    break;
                }
            }
        }
        n += 1;
    }
    (n, unwrapped)
}

/// The receiver's empty receive slot, if it named one.
fn receive_slot(to: &Tcb, b: &IpcBuffer) -> Option<SlotRef> {
    let root = tcb::lookup_cap_of(to, b.receive_cnode)?.0;
    // A depth the user wrote into its buffer: out of 1..=64 means no receive slot (a plain
    // `as u8` made 257 a depth of 1).
    let depth = u8::try_from(b.receive_depth).ok().filter(|d| (1..=64).contains(d))?;
    let slot = caps::cspace::lookup_slot_exact(&KSlots, root, b.receive_index as u64, depth).ok()?;
    crate::object::cap_at(slot).is_null().then_some(slot)
}
