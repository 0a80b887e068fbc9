//! Async system calls (issue #18; ABI: `abi::asys`, `sw/abi` README "Async system calls").
//!
//! A thread registers a syscall buffer: a request ring and a reply ring (`aring`) in frames it
//! owns. Its kernel handler (this state, kept in its TCB: nothing to leak, it goes with the
//! thread) takes requests from the request ring and runs each as the thread would through the
//! sync path's decoder and invocation code (`exec.rs`), then pushes the reply. Handlers run on
//! a hart the kernel picks (`wake.rs`): an idle or lower-priority one through an IPI, or the
//! caller's own inside WakeSyscallHandler. Everything here runs under the kernel lock.
//!
//! | file | job |
//! | --- | --- |
//! | `mod.rs` | the per-thread handler state, registration, the list of registered handlers, teardown |
//! | `harts.rs` | which harts may serve a thread's handler (TCB_SetSyscallHandlerHarts) |
//! | `mrs.rs` | message registers of the request being run, in place of the thread's registers |
//! | `exec.rs` | taking, validating and running requests, pushing replies and completion signals |
//! | `tlb.rs` | one TLB shootdown per batch, through SBI remote fences, before its replies are seen |
//! | `wake.rs` | WakeSyscallHandler, per-hart execution priority, serving on other harts, polling |
//!
//! The kernel keeps its own copies of the frame caps (TCB slots `ASYS_REQ`, `ASYS_REP`), as it
//! does for the IPC buffer: revoking or deleting the user's frame deletes the copy, and the
//! handler checks its copies before every access to the rings, closing the buffer when one is
//! gone, so it never writes memory the thread no longer owns.
pub mod exec;
pub mod harts;
pub mod mrs;
pub mod tlb;
pub mod wake;

use crate::ipc::Msg;
use crate::object::tcb::{self, Tcb};
use crate::object::{cap_at, InvResult, KSlots};
use abi::asys;
use aring::{Consumer, Producer, RingMem};
use caps::{Cap, Error};
use core::ptr::null_mut;

/// A thread's kernel handler (in its TCB).
pub struct Handler {
    /// Registered: the rings below are attached.
    pub on: bool,
    pub req: Option<Consumer>,
    pub rep: Option<Producer>,
    /// The frames (base) the rings live in, as registered: the TCB's copies must still name them.
    req_base: u64,
    rep_base: u64,
    /// Completion vector raised on the thread's U-notification receiver slot.
    pub vector: u8,
    /// The hart serving the handler (awake), or None (asleep: the thread must wake it).
    pub run: Option<usize>,
    /// How long an idle hart polls the empty request ring before it sleeps the handler, in
    /// timebase ticks (never below `wake::poll_min`: 0 reads as that), and when it last went to sleep (`wake::sleep`): the
    /// window adapts to the thread's pace (`wake::adapt`).
    pub poll: u64,
    pub slept_at: Option<u64>,
    /// The harts (by id, bit h = hart h) that may serve the handler; 0 = any
    /// (TCB_SetSyscallHandlerHarts, `harts.rs`). Survives re-registration.
    pub harts: u64,
    /// Registered handlers, linked through their TCBs.
    next: *mut Tcb,
    prev: *mut Tcb,
}

impl Default for Handler {
    fn default() -> Handler {
        Handler {
            on: false,
            req: None,
            rep: None,
            req_base: 0,
            rep_base: 0,
            vector: 0,
            run: None,
            poll: 0,
            slept_at: None,
            harts: 0,
            next: null_mut(),
            prev: null_mut(),
        }
    }
}

static mut HEAD: *mut Tcb = null_mut();
static mut COUNT: u64 = 0;

/// Registered handlers (`abi::stat::ASYS_HANDLERS`).
pub fn handlers() -> u64 {
    // SAFETY: a plain read of a counter written under the kernel lock.
    unsafe { core::ptr::read_volatile(&raw const COUNT) }
}

/// Every registered handler's thread (lock held). `f` may not unregister.
pub fn for_each(mut f: impl FnMut(&mut Tcb)) {
    // SAFETY: under the kernel lock; listed TCBs are live (teardown unlinks).
    let mut p = unsafe { HEAD };
    while !p.is_null() {
        let t = unsafe { &mut *p };
        p = t.asys.next;
        f(t);
    }
}

/// Whether `p` is a registered handler's thread (a hart that let the lock go re-checks its
/// handler this way before touching it).
pub fn is_registered(p: *mut Tcb) -> bool {
    let mut found = false;
    for_each(|t| found |= core::ptr::eq(t, p));
    found
}

fn link(t: &mut Tcb) {
    // SAFETY: under the kernel lock.
    unsafe {
        t.asys.prev = null_mut();
        t.asys.next = HEAD;
        if !HEAD.is_null() {
            (*HEAD).asys.prev = t;
        }
        HEAD = t;
        COUNT += 1;
    }
}

fn unlink(t: &mut Tcb) {
    // SAFETY: under the kernel lock; neighbours are live.
    unsafe {
        if t.asys.prev.is_null() {
            HEAD = t.asys.next;
        } else {
            (*t.asys.prev).asys.next = t.asys.next;
        }
        if !t.asys.next.is_null() {
            (*t.asys.next).asys.prev = t.asys.prev;
        }
        COUNT -= 1;
    }
}

/// Drop `t`'s buffer: off the list, rings forgotten, the kernel's frame copies deleted.
pub fn unregister(t: &mut Tcb) {
    if t.asys.on {
        unlink(t);
    }
    // The hart mask is the thread's choice, not the buffer's: it stays.
    t.asys = Handler { harts: t.asys.harts, ..Handler::default() };
    for i in [tcb::ASYS_REQ, tcb::ASYS_REP] {
        crate::object::delete_slot(t.slot(i));
    }
}

/// The thread is being destroyed.
pub fn tcb_destroyed(t: &mut Tcb) {
    unregister(t);
}

/// The ring memory is still the thread's: both frame copies are there and name the frames
/// registered. False closes the buffer (the caller unregisters).
pub fn frames_alive(t: &Tcb) -> bool {
    let alive = |slot: usize, base: u64| matches!(t.slots[slot].cap, Cap::Frame { base: b, .. } if b == base);
    t.asys.on && alive(tcb::ASYS_REQ, t.asys.req_base) && alive(tcb::ASYS_REP, t.asys.rep_base)
}

/// A ring's place in a frame cap: RAM, readable and writable, `offset` 64-byte aligned and the
/// whole ring inside. Returns (frame base, ring start, frame size).
fn ring_place(cap: Cap, offset: usize, capacity: usize, arg: u8) -> Result<(u64, u64), Error> {
    let Cap::Frame { base, size_bits, rights, .. } = cap else { return Err(Error::InvalidCapability(arg)) };
    if !crate::mm::is_ram(base) || !rights.read || !rights.write {
        return Err(Error::InvalidCapability(arg));
    }
    if !capacity.is_power_of_two() || !(asys::MIN_CAPACITY..=asys::MAX_CAPACITY).contains(&capacity) {
        return Err(Error::RangeError { min: asys::MIN_CAPACITY as u64, max: asys::MAX_CAPACITY as u64 });
    }
    let size = 1u64 << size_bits;
    let bytes = aring::ring_bytes(capacity) as u64;
    if !offset.is_multiple_of(64) {
        return Err(Error::AlignmentError);
    }
    if (offset as u64).checked_add(bytes).is_none_or(|end| end > size) {
        return Err(Error::InvalidArgument(if arg == 1 { 0 } else { 2 }));
    }
    Ok((base, base + offset as u64))
}

/// TCB_RegisterSyscallBuffer on thread `t` (see `abi::label`).
pub fn register(me: &mut Tcb, t: &mut Tcb, m: &Msg) -> InvResult {
    m.need(5, 2)?;
    let (req_off, req_cap, rep_off, rep_cap, vector) =
        (m.mr(me, 0), m.mr(me, 1), m.mr(me, 2), m.mr(me, 3), m.mr(me, 4));
    let (req_base, req_at) = ring_place(m.caps[0].0, req_off, req_cap, 1)?;
    let (rep_base, rep_at) = ring_place(m.caps[1].0, rep_off, rep_cap, 2)?;
    if vector > abi::uintr::MAX_VECTOR {
        return Err(Error::RangeError { min: 0, max: abi::uintr::MAX_VECTOR as u64 });
    }
    // The two rings may share a frame, not bytes.
    let (req_end, rep_end) = (req_at + aring::ring_bytes(req_cap) as u64, rep_at + aring::ring_bytes(rep_cap) as u64);
    if req_at < rep_end && rep_at < req_end {
        return Err(Error::InvalidArgument(2));
    }
    // Completions are raised on the thread's own receiver slot, as deadlines are.
    if t.uintr.slot == 0 {
        return Err(Error::IllegalOperation);
    }
    let (req_cap_copy, rep_cap_copy) = (m.caps[0].0.derive()?, m.caps[1].0.derive()?);
    let (req_src, rep_src) = (m.caps[0].1, m.caps[1].1);
    unregister(t);
    // Deleting the old copies can destroy objects: insert only from sources that still name
    // the frames (as TCB Configure does).
    if !caps::cdt::same_object(&req_cap_copy, &cap_at(req_src))
        || !caps::cdt::same_object(&rep_cap_copy, &cap_at(rep_src))
    {
        return Err(Error::InvalidCapability(1));
    }
    caps::cdt::insert(&mut KSlots, req_src, t.slot(tcb::ASYS_REQ), req_cap_copy)?;
    if let Err(e) = caps::cdt::insert(&mut KSlots, rep_src, t.slot(tcb::ASYS_REP), rep_cap_copy) {
        unregister(t);
        return Err(e);
    }
    let va = |pa: u64| crate::mm::phys_to_virt(pa as usize) as *mut u8;
    // SAFETY: inside a RAM frame the thread owns (checked above), which stays allocated while
    // our copies of its cap exist; every access through the ring is atomic and validated.
    let (req, rep) = unsafe { (RingMem::attach(va(req_at), req_cap), RingMem::attach(va(rep_at), rep_cap)) };
    let (Ok(req), Ok(rep)) = (req, rep) else {
        unregister(t);
        return Err(Error::InvalidArgument(1));
    };
    let h = &mut t.asys;
    h.on = true;
    h.req = Some(req.consumer());
    h.rep = Some(rep.producer());
    h.req_base = req_base;
    h.rep_base = rep_base;
    h.vector = vector as u8;
    h.run = None;
    // Asleep from the start: the thread's first push finds the flag set and wakes us.
    if let Some(c) = h.req.as_ref() {
        c.prepare_sleep();
    }
    link(t);
    Ok(0)
}

/// TCB_UnregisterSyscallBuffer on thread `t`.
pub fn unregister_invocation(t: &mut Tcb) -> InvResult {
    if !t.asys.on {
        return Err(Error::IllegalOperation);
    }
    unregister(t);
    Ok(0)
}
