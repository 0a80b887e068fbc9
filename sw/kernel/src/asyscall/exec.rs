//! Running a handler's requests: take each from the request ring, check it, run it through the
//! sync path's decoder and invocation code on behalf of the thread, push the reply, and raise
//! the completion vector if the thread said it sleeps. Nothing read from the rings is trusted:
//! indices are validated by `aring` (a broken ring closes the buffer with a fault), lengths
//! and cap counts here, capabilities by the CSpace lookup and the invocation itself.
use super::{frames_alive, mrs, unregister};
use crate::ipc::{self, Msg};
use crate::object::tcb::{self, Tcb};
use crate::stats;
use abi::{asys, stat};
use aring::{Item, Notify, ITEM_WORDS, PAYLOAD_WORDS};
use caps::{Cap, Error};
use core::mem::MaybeUninit;

/// Why a drain stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drained {
    /// No complete request in the ring.
    Empty,
    /// Stopped after its share of work (count or preemption budget): more may be there.
    More,
    /// The reply ring is full: the thread must take replies first.
    Blocked,
    /// The buffer is gone (unregistered, its frames revoked, or a ring broken).
    Closed,
}

/// The calls that may run asynchronously (`abi::asys::ASYNC_LABELS`): non-blocking
/// invocations of kernel objects that touch only objects named by caps, never the caller's
/// registers or scheduling state. IPC caps (endpoints, notifications, replies) are not
/// invocations here: `syscall::invoke` refuses them as it does on the sync path.
fn async_capable(cap: &Cap, l: usize) -> bool {
    asys::is_async(l) && !matches!(cap, Cap::Endpoint { .. } | Cap::Notification { .. } | Cap::Reply { .. })
}

enum Outcome {
    /// Reply label (0 or an error code), words, how many count.
    Done(u32, [usize; PAYLOAD_WORDS], usize),
    /// Out of budget at a consistent point: run it again later (it stays in the ring).
    Preempted,
}

fn error(e: Error) -> Outcome {
    let (code, d, n) = ipc::error_reply(e);
    let mut w = [0; PAYLOAD_WORDS];
    w[..3].copy_from_slice(&d);
    Outcome::Done(code as u32, w, n)
}

fn ok(w0: usize, n: usize) -> Outcome {
    let mut w = [0; PAYLOAD_WORDS];
    w[0] = w0;
    Outcome::Done(0, w, n)
}

/// Console output requests (`abi::asys::OP_PUT_*`): the Console cap's cptr first, then the
/// byte, or the count and the bytes; the reply's word 0 is how many the console ring took.
fn put_output(t: &Tcb, lbl: u32, args: &[usize]) -> Outcome {
    let Some((&cptr, rest)) = args.split_first() else { return error(Error::Truncated) };
    match tcb::lookup_cap(t, cptr) {
        Ok((Cap::Console, _)) => {}
        Ok(_) => return error(Error::InvalidCapability(0)),
        Err(f) => return error(Error::FailedLookup(f)),
    }
    let mut bytes = [0u8; abi::console::PUT_STRING_MAX];
    let n = match (lbl, rest) {
        (asys::OP_PUT_CHAR, [c, ..]) => {
            bytes[0] = *c as u8;
            1
        }
        (asys::OP_PUT_STRING, [count, words @ ..]) => {
            let n = (*count).min(bytes.len()).min(words.len() * 8);
            for (i, b) in bytes[..n].iter_mut().enumerate() {
                *b = (words[i / 8] >> (8 * (i % 8))) as u8;
            }
            n
        }
        _ => return error(Error::Truncated),
    };
    ok(crate::console::put_user(&bytes[..n]), 1)
}

/// Run one request of `t` with `args` (already length-checked).
fn run(t: &mut Tcb, lbl: u32, args: &[usize]) -> Outcome {
    match lbl {
        asys::OP_PUT_CHAR | asys::OP_PUT_STRING => return put_output(t, lbl, args),
        _ => {}
    }
    if args.len() < asys::ARG_FIRST_CAP {
        return error(Error::Truncated);
    }
    let (cptr, ncaps) = (args[asys::ARG_CAP], args[asys::ARG_NCAPS]);
    if ncaps > abi::ipc::MSG_MAX_EXTRA_CAPS {
        return error(Error::RangeError { min: 0, max: abi::ipc::MSG_MAX_EXTRA_CAPS as u64 });
    }
    let first_mr = asys::ARG_FIRST_CAP + ncaps;
    if args.len() < first_mr {
        return error(Error::Truncated);
    }
    // The sync path raises a cap fault here; a request cannot fault, so it is an error reply.
    let (cap, slot) = match tcb::lookup_cap(t, cptr) {
        Ok(v) => v,
        Err(f) => return error(Error::FailedLookup(f)),
    };
    if !async_capable(&cap, lbl as usize) {
        return Outcome::Done(asys::NOT_ASYNC, [0; PAYLOAD_WORDS], 0);
    }
    let mrs_in = &args[first_mr..];
    t.call_key = crate::object::endpoint::ASYNC_KEY | t.requests_run;
    mrs::begin(t, mrs_in);
    // A match, not `and_then`: the closure would take (copy) the whole Msg.
    let r = match Msg::with_caps(t, lbl as usize, mrs_in.len(), &args[asys::ARG_FIRST_CAP..first_mr]) {
        Ok(m) => crate::syscall::invoke(t, cap, slot, &m),
        Err(e) => Err(e),
    };
    let out = mrs::end();
    match r {
        Ok(n) => Outcome::Done(0, out, n.min(PAYLOAD_WORDS)),
        Err(Error::Preempted) => Outcome::Preempted,
        Err(e) => error(e),
    }
}

/// Raise `t`'s completion vector (its reply-ring flag said it sleeps).
fn notify(t: &Tcb) {
    stats::count(stat::ASYS_NOTIFIES);
    if let Some(s) = t.uintr.slot.checked_sub(1) {
        crate::uintr::deliver(s, 1 << t.asys.vector);
    }
}

/// Close the buffer: `fault` when the thread broke a ring.
pub fn close(t: &mut Tcb, fault: bool) -> Drained {
    if fault {
        stats::count(stat::ASYS_FAULTS);
    }
    if t.asys.on {
        unregister(t);
    }
    Drained::Closed
}

fn item_words(i: &Item) -> [usize; ITEM_WORDS] {
    let mut w = [0; ITEM_WORDS];
    w[0] = i.id as usize;
    w[1] = i.label as usize | (i.len as usize) << 32;
    for (d, s) in w[2..].iter_mut().zip(i.payload) {
        *d = s as usize;
    }
    w
}

/// The oldest complete request from `at` items on: its first item, its arguments (or the error for an impossible
/// length) and how many ring items it takes. None: nothing complete yet. Inlined: its answer
/// is ~200 bytes, which a call returns through memory and copies again.
#[allow(clippy::type_complexity)]
#[inline(always)]
fn next_request(
    t: &mut Tcb,
    at: usize,
) -> Result<Option<(Item, Result<([usize; asys::MAX_ARGS], usize), Error>, usize)>, ()> {
    let req = t.asys.req.as_mut().ok_or(())?;
    let Some(first) = req.peek(at).map_err(|_| ())? else { return Ok(None) };
    let len = first.len as usize;
    let mut args = [0; asys::MAX_ARGS];
    for (d, s) in args.iter_mut().zip(first.payload) {
        *d = s as usize;
    }
    if len > asys::MAX_ARGS {
        return Ok(Some((first, Err(Error::RangeError { min: 0, max: asys::MAX_ARGS as u64 }), 1)));
    }
    if len <= asys::FIRST_ITEM_ARGS {
        return Ok(Some((first, Ok((args, len)), 1)));
    }
    let Some(second) = req.peek(at + 1).map_err(|_| ())? else { return Ok(None) };
    args[asys::FIRST_ITEM_ARGS..].copy_from_slice(&item_words(&second));
    Ok(Some((first, Ok((args, len)), 2)))
}

/// Whether a complete request waits (the re-check before a handler sleeps). Err: broken ring.
pub fn ready(t: &mut Tcb) -> Result<bool, ()> {
    next_request(t, 0).map(|r| r.is_some())
}

/// Replies held back per part of a batch, until its TLB shootdown is done (`tlb.rs`).
const CHUNK: usize = 16;

/// Run up to `max` of `t`'s requests (kernel lock held), within this entry's preemption
/// budget (a unit each). Returns how many ran and why it stopped.
pub fn drain(t: &mut Tcb, max: usize) -> (usize, Drained) {
    let mut done = 0;
    loop {
        let (n, why) = drain_chunk(t, (max - done).min(CHUNK));
        done += n;
        // charge(0): whether budget is left.
        if why != Drained::More || done >= max || !crate::preempt::charge(0) {
            return (done, why);
        }
    }
}

/// Up to `max` (<= CHUNK) requests; their replies are published after the part's shootdown.
fn drain_chunk(t: &mut Tcb, max: usize) -> (usize, Drained) {
    // Not zeroed (1 KiB per part): only `held[..n]` is ever written and read.
    let mut held = [const { MaybeUninit::<Item>::uninit() }; CHUNK];
    let mut n = 0;
    let mut signal = false;
    // Request items run so far: taken from the ring together at the end of the part.
    let mut taken = 0;
    super::tlb::begin();
    // Checked here and after every invocation (the only thing in the loop that can take the
    // frames away), not again before each request.
    let alive = frames_alive(t);
    let why = loop {
        if !alive {
            break close(t, false);
        }
        if n == max {
            break Drained::More;
        }
        // The cached count first: a fresh read of the thread's head is a cache miss.
        let free = t.asys.rep.as_mut().map(|r| r.free().and_then(|f| if f > n { Ok(f) } else { r.free_now() }));
        match free {
            Some(Ok(free)) if free > n => {}
            Some(Ok(_)) => break if n == 0 { Drained::Blocked } else { Drained::More },
            _ => break close(t, true),
        }
        let (first, args, items) = match next_request(t, taken) {
            Ok(Some(r)) => r,
            Ok(None) => break Drained::Empty,
            Err(()) => break close(t, true),
        };
        let outcome = match args {
            Ok((a, len)) => run(t, first.label, &a[..len]),
            Err(e) => error(e),
        };
        let Outcome::Done(code, words, len) = outcome else {
            stats::count(stat::PREEMPTIONS);
            break Drained::More;
        };
        // The invocation may have taken the buffer away (its frames revoked, the thread
        // deleted): then nothing more is written.
        if !frames_alive(t) {
            break close(t, false);
        }
        taken += items;
        let mut payload = [0u64; PAYLOAD_WORDS];
        for (d, s) in payload.iter_mut().zip(words) {
            *d = s as u64;
        }
        held[n].write(Item { id: first.id, label: code, len: len as u32, payload });
        n += 1;
        t.requests_run += 1;
        stats::count(stat::ASYS_REQUESTS);
        if !crate::preempt::charge(1) {
            break Drained::More;
        }
    };
    // Whatever happened, translations the part removed go before anything else is seen.
    super::tlb::finish();
    if why != Drained::Closed {
        let skipped = t.asys.req.as_mut().map(|r| r.skip(taken));
        // SAFETY: `held[..n]` were written above (Item is plain data).
        let replies = unsafe { core::slice::from_raw_parts(held.as_ptr() as *const Item, n) };
        let pushed = t.asys.rep.as_mut().map(|p| p.push_all(replies));
        for r in [skipped, pushed] {
            match r {
                Some(Ok(Notify::Signal)) => signal = true,
                Some(Ok(Notify::Quiet)) => {}
                _ => return (n, close(t, true)),
            }
        }
        if signal {
            notify(t);
        }
    }
    (n, why)
}
