//! The fuzzer's spinner (issue #45's class): a thread whose Wait spins without the kernel lock
//! (`fastpath::spin_for_signal`: its hart has nothing else to run), raced by the main fuzz thread
//! changing or deleting its address space while a witness on a third hart signals it.
//!
//! The spinner runs in a small VSpace of its own made from one of the pool's Untypeds (so a
//! revoke of that Untyped, random or shaped, takes it away): its code page, and a data page
//! whose first word it increments after every Wait that returns. The data pages are two of
//! ours, used in turn; the spinner's current space is the only one it can run in that maps
//! one (every race moves it to a space that maps none), so the count says whether user code
//! still runs in that VSpace. A race step (`race`) builds a fresh space for the spinner
//! (`home`), asks the signalling witness for a stream of Signals that covers the move (so the
//! spinner keeps trapping into its Wait while the move holds the lock, with a Signal queued
//! behind it), and meanwhile replaces or deletes the space in one of several ways. Once the
//! move has returned, the race sets a flag in the old data page: the spinner counts, in a
//! second word, every Wait return that sees it, and that count must stay zero (a kernel that
//! resumes it in the old space after the move shows it at its first delivery). The kernel's own
//! checker adds that no hart's `satp` names anything but a live VSpace root.
//!
//! The spinner's TCB is out of the random steps' reach (they could move it back into an old
//! space of its, which would make the count legitimately grow); its space, notification and
//! tables are pool slots every step may name.
use crate::env::{rdcycle, PAGE};
use abi::object as o;
use core::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use userlib::invoke::rights;
use userlib::tcb::UserContext;
use userlib::{cnode, syscall, tcb, untyped, vspace};

// The spinner: a0 the notification, a1 its data page (`COUNT`, `MOVED`, `RAN_AFTER_MOVE`
// words). Wait, count (and count a run after the move if the flag is set), Wait again: only
// registers and its data page, so its VSpace needs nothing but the two pages.
core::arch::global_asm!(
    ".pushsection .text.kt_fuzz_spinner, \"ax\"",
    ".balign 4096",
    ".globl kt_fuzz_spinner",
    "kt_fuzz_spinner:",
    "   mv s1, a0",
    "   mv s2, a1",
    "1: mv a0, s1",
    "   li a7, {recv}",
    "   ecall",
    "   ld t1, {moved}(s2)",
    "   beqz t1, 2f",
    "   ld t0, {after}(s2)",
    "   addi t0, t0, 1",
    "   sd t0, {after}(s2)",
    "2: ld t0, 0(s2)",
    "   addi t0, t0, 1",
    "   sd t0, 0(s2)",
    "   j 1b",
    ".balign 4096",
    ".popsection",
    recv = const abi::syscall::RECV,
    moved = const MOVED_FLAG * 8,
    after = const RAN_AFTER_MOVE * 8,
);

/// Words of the spinner's data page: its count of Wait returns, the flag the race sets once
/// the move has returned, and its count of Wait returns that saw the flag.
const COUNT: usize = 0;
const MOVED_FLAG: usize = 1;
const RAN_AFTER_MOVE: usize = 2;

extern "C" {
    fn kt_fuzz_spinner() -> !;
}

/// The spinner's entry (its code page is the image page that holds it).
pub fn entry() -> usize {
    kt_fuzz_spinner as *const () as usize
}

/// Pool slots of the spinner's objects (random steps name them too): four page tables, the
/// empty root a race moves it to, the notification it waits on, its root, code and data.
const SPIN_TABLES: usize = 24;
const SPIN_EMPTY: usize = 28;
pub const SPIN_NTFN: usize = 29;
const SPIN_ROOT: usize = 30;
const SPIN_CODE: usize = 31;
const SPIN_DATA: usize = 32;
/// Fuzz-CSpace slots out of every argument's reach: the spinner's fault endpoint (badged), a
/// copy of its code frame's cap, the ASID pool, its TCB, and copies of the caps of its two
/// data frames (mapped in our own VSpace at `DATA_VA`).
pub const F_SPIN_FAULT: usize = 66;
pub const F_SPIN_CODE: usize = 67;
pub const F_ASIDS: usize = 68;
pub const F_SPIN_TCB: usize = 69;
pub const F_SPIN_DATA: [usize; 2] = [70, 71];
/// The spinner's data page in its own VSpace: nowhere near anything the sandbox or our image
/// maps, so the spinner moved into another space faults on its store.
const SPIN_DATA_VA: usize = 0x6000_0000;
/// Where the two data frames are mapped in our VSpace (set by the root), and which the
/// spinner's current space maps.
pub static DATA_VA: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];
static CURRENT: AtomicUsize = AtomicUsize::new(0);
/// The pool Untyped the spinner's current space came from.
static SOURCE: AtomicUsize = AtomicUsize::new(0);
/// The CSpace depth of a fuzz-CSpace cptr (guard and radix).
const DEPTH: usize = 64;

/// Requests to the signalling witness (a sequence number; the delay before its first Signal
/// and the gap between them, packed), and the last it served.
static SIGNAL_REQUEST: AtomicUsize = AtomicUsize::new(0);
static SIGNAL_DELAYS: AtomicUsize = AtomicUsize::new(0);
static SIGNAL_DONE: AtomicUsize = AtomicUsize::new(0);
/// Counts for the report: races run, homes built, spinner faults served, races that moved the
/// spinner off its space (each checked), homes that could not be built (the pool had changed).
pub static RACES: AtomicUsize = AtomicUsize::new(0);
pub static HOMES: AtomicUsize = AtomicUsize::new(0);
pub static FAULTS: AtomicUsize = AtomicUsize::new(0);
pub static MOVED: AtomicUsize = AtomicUsize::new(0);
pub static HOMELESS: AtomicUsize = AtomicUsize::new(0);

pub fn reset() {
    for c in [&SIGNAL_REQUEST, &SIGNAL_DELAYS, &SIGNAL_DONE, &RACES, &HOMES, &FAULTS, &MOVED, &HOMELESS] {
        c.store(0, SeqCst);
    }
}

fn delay(cycles: usize) {
    let t0 = rdcycle();
    while rdcycle().wrapping_sub(t0) < cycles {
        core::hint::spin_loop();
    }
}

/// Signals per race: a stream from a random delay on, at random gaps of about one Wait's
/// round (a spin delivered, the count, the next trap), that covers the move (on the RTL a
/// SetSpace holds the lock ~10 k cycles): the spinner keeps trapping into its Wait, so one of
/// those traps waits for the lock behind the move with a Signal queued behind it.
const SIGNALS: usize = 24;
const GAP_MIN: usize = 300;
const GAP_SPAN: usize = 2_700;

/// The signalling witness's part, between its rounds: serve a new request with `SIGNALS`
/// Signals (non-blocking sends: the slot may hold anything by now), the gaps drawn from the
/// request's seed.
pub fn serve_signal_request(last: &mut usize) {
    let req = SIGNAL_REQUEST.load(SeqCst);
    if req == *last {
        return;
    }
    *last = req;
    let d = SIGNAL_DELAYS.load(SeqCst);
    delay(d & 0xf_ffff);
    let mut x = d as u64;
    for k in 0..SIGNALS {
        if k > 0 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            delay(GAP_MIN + (x >> 33) as usize % GAP_SPAN);
        }
        syscall::nb_send(SPIN_NTFN, abi::MessageInfo::default(), [0; 4]);
    }
    SIGNAL_DONE.store(req, SeqCst);
}

/// The request a restarted witness starts after (it does not repeat one).
pub fn pending_request() -> usize {
    SIGNAL_REQUEST.load(SeqCst)
}

/// Word `k` of the spinner's current data page (our mapping of it).
fn word(k: usize) -> *mut usize {
    (DATA_VA[CURRENT.load(SeqCst)].load(SeqCst) + k * 8) as *mut usize
}

fn count_now() -> usize {
    // SAFETY: our mapping of a data frame, read-write for good.
    unsafe { core::ptr::read_volatile(word(COUNT)) }
}

/// Ok or the step gives up (the pool changed under it: not a finding).
fn ok(r: userlib::Result<()>) -> Option<()> {
    r.ok()
}

/// A fresh VSpace for the spinner (its root, tables and notification from the pool's first
/// Untyped, the other data frame, its count zero), and the spinner restarted in it. None: the
/// pool as the random steps left it does not allow it now.
fn home(code_va: usize) -> Option<()> {
    let f = crate::t_fuzz::F_SELF;
    let _ = tcb::suspend(F_SPIN_TCB);
    for s in (SPIN_TABLES..=SPIN_DATA).filter(|&s| s != SPIN_NTFN) {
        let _ = cnode::delete(f, s, DEPTH);
    }
    let data = 1 - CURRENT.load(SeqCst);
    // From whichever of the pool's two Untypeds has room (random steps revoke, delete and
    // fill them); a race may revoke that one.
    let ut = crate::t_fuzz::POOL_UNTYPEDS
        .into_iter()
        .find(|&ut| untyped::retype(ut, o::PAGE_TABLE, 0, f, 0, 0, SPIN_ROOT, 1).is_ok())?;
    SOURCE.store(ut, SeqCst);
    ok(untyped::retype(ut, o::PAGE_TABLE, 0, f, 0, 0, SPIN_TABLES, 4))?;
    if syscall::debug_cap_identify(SPIN_NTFN) != Some(o::NOTIFICATION) {
        let _ = cnode::delete(f, SPIN_NTFN, DEPTH);
        ok(untyped::retype(ut, o::NOTIFICATION, 0, f, 0, 0, SPIN_NTFN, 1))?;
    }
    ok(cnode::copy(f, SPIN_DATA, DEPTH, f, F_SPIN_DATA[data], DEPTH, rights::ALL))?;
    ok(vspace::asid_pool_assign(F_ASIDS, SPIN_ROOT))?;
    // Each Map fills the next missing level (a table that finds its level filled fails; the
    // page maps below say whether both pages have their tables).
    for (k, va) in [(0, code_va), (1, code_va), (2, SPIN_DATA_VA), (3, SPIN_DATA_VA)] {
        let _ = vspace::page_table_map(SPIN_TABLES + k, SPIN_ROOT, va, 0);
    }
    ok(cnode::copy(f, SPIN_CODE, DEPTH, f, F_SPIN_CODE, DEPTH, rights::ALL))?;
    ok(vspace::page_map(SPIN_CODE, SPIN_ROOT, code_va, rights::READ, 0))?;
    ok(vspace::page_map(SPIN_DATA, SPIN_ROOT, SPIN_DATA_VA, rights::READ_WRITE, 0))?;
    CURRENT.store(data, SeqCst);
    for k in [COUNT, MOVED_FLAG, RAN_AFTER_MOVE] {
        // SAFETY: our mapping of the frame; the spinner, suspended, cannot be counting in it.
        unsafe { core::ptr::write_volatile(word(k), 0) };
    }
    ok(tcb::set_space(F_SPIN_TCB, F_SPIN_FAULT, f, 64 - crate::t_fuzz::F_BITS, SPIN_ROOT, 0))?;
    let mut ctx = UserContext::default();
    ctx.regs[UserContext::PC] = entry();
    ctx.set_a(0, SPIN_NTFN);
    ctx.set_a(1, SPIN_DATA_VA);
    ok(tcb::write_registers(F_SPIN_TCB, true, 0, abi::regs::COUNT, &ctx))?;
    HOMES.fetch_add(1, SeqCst);
    Some(())
}

/// How a race takes the spinner's space away.
#[derive(Clone, Copy, Debug)]
pub enum Move {
    /// SetSpace to an empty VSpace; the old root lives on (our cap).
    ToEmptyRootKept,
    /// Our cap to the root deleted first: the SetSpace deletes its last cap.
    ToEmptyRootDeleted,
    /// SetSpace to the sandbox (a live VSpace with other code and data).
    ToSandbox,
    /// A revoke of the pool Untyped the space came from: the root and its tables go.
    RevokeUntyped,
    /// A revoke of the root cap: the TCB's copy goes, the root stays.
    RevokeRoot,
}

const MOVES: [Move; 5] =
    [Move::ToEmptyRootKept, Move::ToEmptyRootDeleted, Move::ToSandbox, Move::RevokeUntyped, Move::RevokeRoot];

/// One race (the main thread, between its steps): Ok(None) if the spinner could not be given
/// a space now, Ok(Some(move)) after a race that passed, Err((move, count at the move, count
/// after, Wait returns after the move)) if the spinner ran user code in a space it had lost.
pub fn race(next: &mut dyn FnMut(usize) -> usize) -> Result<Option<Move>, (Move, usize, usize, usize)> {
    let code_va = entry() & !(PAGE - 1);
    if home(code_va).is_none() {
        HOMELESS.fetch_add(1, SeqCst);
        return Ok(None);
    }
    RACES.fetch_add(1, SeqCst);
    let f = crate::t_fuzz::F_SELF;
    let mv = MOVES[next(MOVES.len())];
    // What a move to an empty VSpace needs is made first, so that the move itself is one
    // invocation, placed among the witness's Signals.
    let ready = match mv {
        Move::ToEmptyRootKept | Move::ToEmptyRootDeleted => {
            let ut = SOURCE.load(SeqCst);
            let empty = untyped::retype(ut, o::PAGE_TABLE, 0, f, 0, 0, SPIN_EMPTY, 1).is_ok()
                && vspace::asid_pool_assign(F_ASIDS, SPIN_EMPTY).is_ok();
            if matches!(mv, Move::ToEmptyRootDeleted) {
                // The TCB's copy is now the root's last cap: the SetSpace deletes it.
                let _ = cnode::delete(f, SPIN_ROOT, DEPTH);
            }
            empty
        }
        _ => true,
    };
    // The spinner starts and traps into its Wait (it spins for a while, then blocks): reach it
    // anywhere in that.
    delay(next(6_000));
    SIGNAL_DELAYS.store(next(3_000) | next(1 << 20) << 20, SeqCst);
    let req = SIGNAL_REQUEST.fetch_add(1, SeqCst) + 1;
    delay(next(6_000));
    let space = |vs| tcb::set_space(F_SPIN_TCB, F_SPIN_FAULT, f, 64 - crate::t_fuzz::F_BITS, vs, 0).is_ok();
    let moved = ready
        && match mv {
            Move::ToEmptyRootKept | Move::ToEmptyRootDeleted => space(SPIN_EMPTY),
            Move::ToSandbox => space(crate::t_fuzz::F_SANDBOX),
            // Moved if the root cap went with the Untyped (the root came from it).
            Move::RevokeUntyped => {
                cnode::revoke(f, SOURCE.load(SeqCst), DEPTH).is_ok() && syscall::debug_cap_identify(SPIN_ROOT).is_none()
            }
            Move::RevokeRoot => cnode::revoke(f, SPIN_ROOT, DEPTH).is_ok(),
        };
    // What the spinner counted by the end of the move; the witness's Signals then land, and a
    // spinner still in the old space would count them, and count them as runs after the move.
    let at_move = count_now();
    if moved {
        // SAFETY: our mapping of the data frame.
        unsafe { core::ptr::write_volatile(word(MOVED_FLAG), 1) };
    }
    let t0 = rdcycle();
    while SIGNAL_DONE.load(SeqCst) < req && rdcycle().wrapping_sub(t0) < 2_000_000 {
        core::hint::spin_loop();
    }
    delay(30_000);
    let after = count_now();
    // SAFETY: our mapping of the data frame.
    let ran_after_move = unsafe { core::ptr::read_volatile(word(RAN_AFTER_MOVE)) };
    if moved {
        MOVED.fetch_add(1, SeqCst);
        if after > at_move + 1 || ran_after_move > 0 {
            return Err((mv, at_move, after, ran_after_move));
        }
    }
    Ok(Some(mv))
}

/// The pool slots the spinner's objects live in (the workers' steps leave them alone).
pub const SLOTS: core::ops::RangeInclusive<usize> = SPIN_TABLES..=SPIN_DATA;
