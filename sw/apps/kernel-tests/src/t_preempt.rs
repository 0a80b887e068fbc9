//! Preemption points: a long Retype (zeroing) and a long Revoke stop when the entry's work
//! budget runs out and are restarted, with the same result as in one go; and the benchmark of
//! the worst kernel lock hold while a hostile thread does the longest things it can.
use crate::env::{check_invariants, sadd, sget, sset, wait_for, Env, TResult, BENCH, CNODE, ROOT_DEPTH, VSPACE};
use abi::{error as e, object as o, stat};
use core::sync::atomic::Ordering::SeqCst;
use userlib::invoke::rights;
use userlib::{cnode, syscall, untyped, vspace};

pub const B_LOCK_HOLD: usize = 14;
pub const B_LOCK_PREEMPTIONS: usize = 15;

fn preemptions() -> usize {
    syscall::debug_stat(stat::PREEMPTIONS)
}

/// A 2 MiB frame retyped from memory that held a dirty frame before: zeroed in chunks over
/// several restarted calls, and all zero at the end.
pub fn long_retype(env: &mut Env) -> TResult {
    let u = env.alloc(o::UNTYPED, o::MEGA_PAGE_BITS)?.cptr;
    let f = env.slot()?;
    let va = env.va_region(512);
    let va = (va + (1 << o::MEGA_PAGE_BITS) - 1) & !((1 << o::MEGA_PAGE_BITS) - 1);
    let _ = env.new_pages(1)?;
    // Dirty the memory through a first frame, then give it back.
    ok!(untyped::retype(u, o::MEGA_PAGE, 0, CNODE, 0, 0, f, 1));
    map_mega(env, f, va)?;
    let words = (1usize << o::MEGA_PAGE_BITS) / 8;
    for i in (0..words).step_by(61) {
        // SAFETY: the 2 MiB frame is mapped read-write at `va`.
        unsafe { core::ptr::write_volatile((va as *mut usize).add(i), 0xdead_0000 | i) };
    }
    ok!(vspace::page_unmap(f));
    ok!(cnode::delete(CNODE, f, ROOT_DEPTH));
    let p0 = preemptions();
    ok!(untyped::retype(u, o::MEGA_PAGE, 0, CNODE, 0, 0, f, 1));
    let restarts = preemptions() - p0;
    let need = (1usize << o::MEGA_PAGE_BITS) / 4096 / 64;
    ensure!(
        restarts + 1 >= need,
        "a 2 MiB retype was preempted {} times (budget: 64 pages per entry, so >= {})",
        restarts,
        need - 1
    );
    map_mega(env, f, va)?;
    for i in (0..words).step_by(61) {
        // SAFETY: as above.
        let v = unsafe { core::ptr::read_volatile((va as *const usize).add(i)) };
        ensure!(v == 0, "word {} of the new frame is {:#x} after a preempted retype", i, v);
    }
    ok!(vspace::page_unmap(f));
    // The Untyped is full: nothing else fits.
    let s = env.slot()?;
    expect_err!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, s, 1), e::NOT_ENOUGH_MEMORY);
    check_invariants()
}

fn map_mega(env: &mut Env, f: usize, va: usize) -> TResult {
    match vspace::page_map(f, VSPACE, va, rights::READ_WRITE, 0) {
        Ok(()) => Ok(()),
        Err(err) if err.code == e::FAILED_LOOKUP => {
            let pt = env.alloc_cap(o::PAGE_TABLE)?;
            ok!(vspace::page_table_map(pt, VSPACE, va, 0));
            ok!(vspace::page_map(f, VSPACE, va, rights::READ_WRITE, 0));
            Ok(())
        }
        Err(err) => Err(crate::env::fail(format_args!("Page_Map of a 2 MiB frame: {}", err))),
    }
}

/// Revoking 1000 copies is stopped and restarted a dozen times and deletes all of them.
pub fn long_revoke(env: &mut Env) -> TResult {
    let c = env.alloc(o::CNODE, 10)?.cptr;
    let ep = env.alloc_cap(o::ENDPOINT)?;
    for i in 0..1000 {
        ok!(cnode::mint(c, i, 10, CNODE, ep, ROOT_DEPTH, rights::ALL, i + 1));
    }
    let p0 = preemptions();
    ok!(cnode::revoke(CNODE, ep, ROOT_DEPTH));
    let restarts = preemptions() - p0;
    ensure!(restarts >= 1000 / 64, "revoking 1000 caps was preempted {} times (budget 64 per entry)", restarts);
    // Every copy is gone: moving one out finds an empty slot (first, last and between).
    let s = env.slot()?;
    for i in [0, 1, 63, 64, 500, 998, 999] {
        expect_err!(cnode::move_(CNODE, s, ROOT_DEPTH, c, i, 10), e::FAILED_LOOKUP);
    }
    ok!(cnode::delete(CNODE, c, ROOT_DEPTH));
    check_invariants()
}

/// The worst time one hart holds the kernel lock while a thread on another hart retypes 2 MiB
/// frames from dirty memory and revokes 1000-cap trees over and over (benchmark figure).
pub fn bench_lock_hold(env: &mut Env) -> TResult {
    let other = env.need_other_hart()?;
    let u = env.alloc(o::UNTYPED, o::MEGA_PAGE_BITS + 1)?.cptr;
    let c = env.alloc(o::CNODE, 10)?.cptr;
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let spare = env.slots(2)?;
    sset(0, 0);
    sset(1, u);
    sset(2, c);
    sset(3, ep);
    sset(4, spare);
    syscall::debug_stat_reset(abi::init_cap::DEBUG, stat::LOCK_HOLD_MAX);
    let p0 = preemptions();
    env.spawn_on(hostile, 0, 255, other)?;
    wait_for(0, ROUNDS, 200_000)?;
    let worst = syscall::debug_stat_reset(abi::init_cap::DEBUG, stat::LOCK_HOLD_MAX);
    let restarts = preemptions() - p0;
    ensure!(restarts >= ROUNDS * 8, "the hostile thread's work was preempted only {} times", restarts);
    BENCH[B_LOCK_HOLD].store(worst, SeqCst);
    BENCH[B_LOCK_PREEMPTIONS].store(restarts, SeqCst);
    env.stop_helpers();
    ok!(cnode::revoke(CNODE, u, ROOT_DEPTH));
    ok!(cnode::revoke(CNODE, ep, ROOT_DEPTH));
    check_invariants()
}

/// Rounds of hostile work (one on the RTL, where each costs millions of simulated cycles).
const ROUNDS: usize = if cfg!(feature = "rtl-subset") { 1 } else { 3 };

extern "C" fn hostile(_: usize) -> ! {
    let (u, c, ep, spare) = (sget(1), sget(2), sget(3), sget(4));
    for _ in 0..ROUNDS {
        // Two 2 MiB frames from memory the last round dirtied (the Untyped starts over).
        let _ = cnode::revoke(CNODE, u, ROOT_DEPTH);
        let _ = untyped::retype(u, o::MEGA_PAGE, 0, CNODE, 0, 0, spare, 2);
        for i in 0..1000 {
            let _ = cnode::mint(c, i, 10, CNODE, ep, ROOT_DEPTH, rights::ALL, i + 1);
        }
        let _ = cnode::revoke(CNODE, ep, ROOT_DEPTH);
        sadd(0, 1);
    }
    crate::env::park()
}

struct BigCNodeSetup {
    ut: usize,
    full: usize,
    second: usize,
    tcb: usize,
    ep: usize,
}

/// From a fresh 1 MiB Untyped: a CNode of 2^11 slots holding 1500 badged endpoint caps, a
/// second (empty) CNode of 2^`second_radix` slots and a TCB.
fn big_cnode_setup(env: &mut Env, second_radix: usize) -> Result<BigCNodeSetup, crate::env::Fail> {
    let ut = env.alloc(o::UNTYPED, 20)?.cptr;
    let tmp = env.slots(3)?;
    let (full, second, tcb) = (tmp, tmp + 1, tmp + 2);
    ok!(untyped::retype(ut, o::CNODE, 11, CNODE, 0, 0, full, 1));
    ok!(untyped::retype(ut, o::CNODE, second_radix, CNODE, 0, 0, second, 1));
    ok!(untyped::retype(ut, o::TCB, 0, CNODE, 0, 0, tcb, 1));
    let ep = env.alloc_cap(o::ENDPOINT)?;
    for i in 0..1500 {
        ok!(cnode::mint(full, i, 11, CNODE, ep, ROOT_DEPTH, rights::ALL, i + 1));
    }
    Ok(BigCNodeSetup { ut, full, second, tcb, ep })
}

/// Deleting the last cap of a CNode full of caps (one of them the last cap of another full
/// CNode, and of a TCB) empties it over restarted calls before it goes: every byte comes back.
pub fn big_cnode_delete(env: &mut Env) -> TResult {
    let bytes0 = syscall::debug_stat(stat::OBJECT_BYTES);
    let BigCNodeSetup { ut, full: outer, second: inner, tcb: t, ep } = big_cnode_setup(env, 9)?;
    for i in 0..400 {
        ok!(cnode::mint(inner, i, 9, CNODE, ep, ROOT_DEPTH, rights::ALL, 5000 + i));
    }
    // The TCB's CSpace is the inner CNode; then both move into the outer one, so the outer
    // CNode's cap in our CSpace is the last way to all of them.
    ok!(userlib::tcb::set_space(t, 0, inner, 0, VSPACE, 0));
    ok!(cnode::move_(outer, 2000, 11, CNODE, inner, ROOT_DEPTH));
    ok!(cnode::move_(outer, 2001, 11, CNODE, t, ROOT_DEPTH));
    let p0 = preemptions();
    ok!(cnode::delete(CNODE, outer, ROOT_DEPTH));
    let restarts = preemptions() - p0;
    ensure!(restarts >= 1900 / 64, "deleting a CNode holding 1900 caps was preempted {} times", restarts);
    // Nothing of it is left: the Untyped has no children, so it starts over from its base.
    let s = env.slot()?;
    ok!(untyped::retype(ut, o::CNODE, 13, CNODE, 0, 0, s, 1));
    ok!(cnode::delete(CNODE, s, ROOT_DEPTH));
    // A CNode that holds a copy of itself (as a process's CSpace does) and other caps: revoking
    // its Untyped reaches that copy last, when it is the CNode's last cap and lives inside it.
    ok!(untyped::retype(ut, o::CNODE, 6, CNODE, 0, 0, s, 1));
    ok!(cnode::copy(s, 0, 6, CNODE, s, ROOT_DEPTH, rights::ALL));
    for i in 1..40 {
        ok!(cnode::mint(s, i, 6, CNODE, ep, ROOT_DEPTH, rights::ALL, 9000 + i));
    }
    ok!(cnode::revoke(CNODE, ut, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, s, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, ep, ROOT_DEPTH));
    ensure_eq!(syscall::debug_stat(stat::OBJECT_BYTES), bytes0, "object bytes after deleting everything");
    check_invariants()
}

/// TCB SetSpace replacing a CSpace root that is the last cap to a CNode full of caps: the
/// old CNode is emptied over restarted calls before the new root goes in.
pub fn set_space_big_cnode(env: &mut Env) -> TResult {
    let bytes0 = syscall::debug_stat(stat::OBJECT_BYTES);
    let BigCNodeSetup { ut, full: old, second: new, tcb: t, ep } = big_cnode_setup(env, 4)?;
    ok!(userlib::tcb::set_space(t, 0, old, 0, VSPACE, 0));
    // Now the TCB's CSpace slot holds the old CNode's last cap.
    ok!(cnode::delete(CNODE, old, ROOT_DEPTH));
    let p0 = preemptions();
    ok!(userlib::tcb::set_space(t, 0, new, 0, VSPACE, 0));
    let restarts = preemptions() - p0;
    ensure!(
        restarts >= 1500 / 64,
        "SetSpace over the last cap of a CNode holding 1500 caps was preempted {} times",
        restarts
    );
    ok!(cnode::delete(CNODE, t, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, new, ROOT_DEPTH));
    // Nothing of it is left: the Untyped has no children, so it starts over from its base.
    let s = env.slot()?;
    ok!(untyped::retype(ut, o::CNODE, 13, CNODE, 0, 0, s, 1));
    ok!(cnode::delete(CNODE, s, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, ep, ROOT_DEPTH));
    ensure_eq!(syscall::debug_stat(stat::OBJECT_BYTES), bytes0, "object bytes after deleting everything");
    check_invariants()
}

// A thread that sends on the endpoint cap in s0 and, if that Send ever returns (a Send on an
// empty slot is dropped, as in seL4), raises an unknown-syscall fault: no stack, no IPC
// buffer, so a test can queue many of them cheaply and see each one come back.
core::arch::global_asm!(
    ".globl kt_ep_sender",
    "kt_ep_sender:",
    "   mv a0, s0",
    "   li a1, 0",
    "   li a7, {send}",
    "   ecall",
    "   li a7, -100",
    ".globl kt_ep_sender_fault",
    "kt_ep_sender_fault:",
    "   ecall",
    "   j kt_ep_sender",
    send = const abi::syscall::SEND,
);

extern "C" {
    fn kt_ep_sender();
    fn kt_ep_sender_fault();
}

/// More threads queued on an endpoint than one kernel entry's budget restarts: deleting its
/// last cap is preempted and restarted, and every sender's Send is restarted and finds its
/// cap gone (it then faults on purpose, so its fault endpoint counts it).
pub fn endpoint_waiters_delete(env: &mut Env) -> TResult {
    const SENDERS: usize = 100;
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let (fault_ep, fault_badged) = crate::t_fault::fault_ep(env)?;
    let mut tcbs = [0usize; SENDERS];
    for t in tcbs.iter_mut() {
        *t = env.alloc_cap(o::TCB)?;
        ok!(userlib::tcb::configure(*t, fault_badged, CNODE, 0, VSPACE, 0, 0, 0));
        // At the root's priority on its hart: they run (and block in their Send) when it yields.
        ok!(userlib::tcb::set_sched_params(*t, crate::env::ROOT_TCB, 255, 255));
        ok!(userlib::tcb::set_affinity(*t, env.bi.node_id));
        let mut ctx = userlib::tcb::UserContext::default();
        ctx.regs[userlib::tcb::UserContext::PC] = kt_ep_sender as *const () as usize;
        ctx.regs[userlib::tcb::UserContext::S0] = ep;
        ok!(userlib::tcb::write_registers(*t, false, 0, abi::regs::COUNT, &ctx));
        ok!(userlib::tcb::resume(*t));
    }
    syscall::yield_now();
    let p0 = preemptions();
    ok!(cnode::delete(CNODE, ep, ROOT_DEPTH));
    let restarts = preemptions() - p0;
    ensure!(
        restarts >= SENDERS / 64,
        "deleting an endpoint with {} senders queued was preempted {} times (budget 64 per entry)",
        SENDERS,
        restarts
    );
    // Each sender runs again, its Send on the empty slot is dropped and it faults; the faults
    // queue on the fault endpoint.
    syscall::yield_now();
    let mut faults = 0;
    for _ in 0..SENDERS + 10 {
        let (badge, info, mrs) = syscall::nb_recv(fault_ep);
        if info.label == 0 && badge == 0 {
            break;
        }
        ensure_eq!(info.label, abi::fault::UNKNOWN_SYSCALL, "fault label of a restarted sender");
        ensure_eq!(mrs[0], kt_ep_sender_fault as *const () as usize, "fault pc (after the sender's Send returned)");
        faults += 1;
    }
    ensure_eq!(faults, SENDERS, "senders whose Send came back");
    for t in tcbs {
        ok!(cnode::delete(CNODE, t, ROOT_DEPTH));
    }
    ok!(cnode::delete(CNODE, fault_badged, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, fault_ep, ROOT_DEPTH));
    check_invariants()
}

// A sender for `cancel_badged_sends_many`: s0 its endpoint cap, s1 its MR0, s2 the message
// info; after its Send comes back (received, or dropped when its cap is gone) it faults, as
// `kt_ep_sender` does.
core::arch::global_asm!(
    ".globl kt_badged_sender",
    "kt_badged_sender:",
    "   mv a0, s0",
    "   mv a1, s2",
    "   mv a2, s1",
    "   li a7, {send}",
    "   ecall",
    "   li a7, -100",
    ".globl kt_badged_sender_fault",
    "kt_badged_sender_fault:",
    "   ecall",
    "   j kt_badged_sender",
    send = const abi::syscall::SEND,
);

extern "C" {
    fn kt_badged_sender();
    fn kt_badged_sender_fault();
}

/// CancelBadgedSends over more queued senders than one kernel entry's budget looks at: it is
/// preempted and restarted, goes on where it stopped, restarts exactly the senders with its
/// badge (their cap is gone, so their Send is dropped and they fault) and leaves the others
/// queued in their order.
pub fn cancel_badged_sends_many(env: &mut Env) -> TResult {
    const SENDERS: usize = 200;
    const A: usize = 0xa;
    let mark = env.mark();
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let a_send = env.mint(ep, rights::ALL, A)?;
    let a_cancel = env.mint(ep, rights::ALL, A)?;
    let b = env.mint(ep, rights::ALL, 0xb)?;
    let (fault_ep, fault_badged) = crate::t_fault::fault_ep(env)?;
    let mut tcbs = [0usize; SENDERS];
    for (i, t) in tcbs.iter_mut().enumerate() {
        *t = env.alloc_cap(o::TCB)?;
        ok!(userlib::tcb::configure(*t, fault_badged, CNODE, 0, VSPACE, 0, 0, 0));
        // At the root's priority on its hart: they run (and block in their Send) when it yields.
        ok!(userlib::tcb::set_sched_params(*t, crate::env::ROOT_TCB, 255, 255));
        ok!(userlib::tcb::set_affinity(*t, env.bi.node_id));
        let mut ctx = userlib::tcb::UserContext::default();
        ctx.regs[userlib::tcb::UserContext::PC] = kt_badged_sender as *const () as usize;
        ctx.regs[userlib::tcb::UserContext::S0] = if i % 2 == 0 { a_send } else { b };
        ctx.regs[userlib::tcb::UserContext::index_of(9)] = i;
        ctx.regs[userlib::tcb::UserContext::index_of(18)] = abi::MessageInfo::new(0x5c, 0, 0, 1).to_word();
        ok!(userlib::tcb::write_registers(*t, false, 0, abi::regs::COUNT, &ctx));
        ok!(userlib::tcb::resume(*t));
    }
    syscall::yield_now();
    // Badge A's senders' cap goes first (as after a revoke): their restarted Sends find nothing.
    ok!(cnode::delete(CNODE, a_send, ROOT_DEPTH));
    let p0 = preemptions();
    ok!(cnode::cancel_badged_sends(CNODE, a_cancel, ROOT_DEPTH));
    let restarts = preemptions() - p0;
    ensure!(
        restarts >= SENDERS / 64,
        "cancelling the sends of {} queued senders was preempted {} times (budget 64 per entry)",
        SENDERS,
        restarts
    );
    for k in 0..SENDERS / 2 {
        let (badge, info, mrs) = syscall::nb_recv(ep);
        ensure!(
            badge == 0xb && info.label == 0x5c && mrs[0] == 2 * k + 1,
            "queued message {}: badge {:#x}, label {:#x}, MR0 {} (expected the other badge's senders in their order)",
            k,
            badge,
            info.label,
            mrs[0]
        );
    }
    let (badge, info, _) = syscall::nb_recv(ep);
    ensure!(badge == 0 && info.label == 0, "a sender of badge {:#x} is still queued after the cancel", badge);
    // Every sender's Send came back (the cancelled ones dropped, the others received): each
    // faults once.
    syscall::yield_now();
    let mut faults = 0;
    for _ in 0..SENDERS + 10 {
        let (badge, info, mrs) = syscall::nb_recv(fault_ep);
        if info.label == 0 && badge == 0 {
            break;
        }
        ensure_eq!(mrs[0], kt_badged_sender_fault as *const () as usize, "fault pc (after the sender's Send returned)");
        faults += 1;
    }
    ensure_eq!(faults, SENDERS, "senders whose Send came back");
    env.clean_to(mark)?;
    check_invariants()
}
