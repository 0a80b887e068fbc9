//! CNode invocations and CSpace addressing.
use crate::env::{identify, park, sadd, sget, sset, wait_for, Env, TResult, ThreadCfg, CNODE, ROOT_DEPTH};
use abi::{error as e, label, object as o, MessageInfo};
use userlib::invoke::{cnode_cap_data, invoke0, lookup_failure as lf, rights};
use userlib::{cnode, syscall, tcb};

/// A notification and a badged cap to it: signalling the cap and polling the notification
/// proves which object a cap names.
fn badged_ntfn(env: &mut Env, badge: usize) -> Result<(usize, usize), crate::env::Fail> {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let b = env.mint(n, rights::ALL, badge)?;
    Ok((n, b))
}

pub fn copy(env: &mut Env) -> TResult {
    let (n, b) = badged_ntfn(env, 0x10)?;
    let c = env.copy(b)?;
    ensure!(identify(c) == Some(o::NOTIFICATION), "copy holds {:?}", identify(c));
    syscall::signal(c);
    ensure_eq!(syscall::poll(n), 0x10, "badge through a copy of a badged cap");
    // Copy masks rights: a read-only copy can wait but not signal (signalling through it would
    // be a cap fault, tested in t_fault); it still names the same notification.
    let ro = env.slot()?;
    ok!(cnode::copy(CNODE, ro, ROOT_DEPTH, CNODE, b, ROOT_DEPTH, rights::READ));
    syscall::signal(c);
    ensure_eq!(syscall::poll(ro), 0x10, "poll through a read-only copy");
    // Destination occupied; source empty.
    expect_err!(cnode::copy(CNODE, c, ROOT_DEPTH, CNODE, b, ROOT_DEPTH, rights::ALL), e::DELETE_FIRST);
    let empty = env.slot()?;
    let dst = env.slot()?;
    let err = expect_err!(cnode::copy(CNODE, dst, ROOT_DEPTH, CNODE, empty, ROOT_DEPTH, rights::ALL), e::FAILED_LOOKUP);
    ensure_eq!(err.mrs[0], 1, "FailedLookup was-source flag");
    ensure_eq!(err.mrs[1], lf::MISSING_CAPABILITY, "lookup failure type (+1)");
    // An Untyped with children cannot be copied (seL4 deriveCap: RevokeFirst).
    let u = env.alloc(o::UNTYPED, 12)?.cptr;
    let child = env.slot()?;
    ok!(userlib::untyped::retype(u, o::ENDPOINT, 0, CNODE, 0, 0, child, 1));
    expect_err!(cnode::copy(CNODE, dst, ROOT_DEPTH, CNODE, u, ROOT_DEPTH, rights::ALL), e::REVOKE_FIRST);
    // IRQControl cannot be derived.
    expect_err!(
        cnode::copy(CNODE, dst, ROOT_DEPTH, CNODE, abi::init_cap::IRQ_CONTROL, ROOT_DEPTH, rights::ALL),
        e::ILLEGAL_OPERATION
    );
    ensure!(identify(dst).is_none(), "failed copies filled the slot");
    expect_err!(invoke0(CNODE, label::CNODE_COPY, &[dst, ROOT_DEPTH, b, ROOT_DEPTH], &[CNODE]), e::TRUNCATED_MESSAGE);
    expect_err!(
        invoke0(CNODE, label::CNODE_COPY, &[dst, ROOT_DEPTH, b, ROOT_DEPTH, rights::ALL], &[]),
        e::TRUNCATED_MESSAGE
    );
    Ok(())
}

pub fn mint(env: &mut Env) -> TResult {
    let (n, b) = badged_ntfn(env, 0x5)?;
    let b2 = env.mint(n, rights::ALL, 0x40)?;
    syscall::signal(b);
    ensure_eq!(syscall::poll(n), 0x5, "badge of the first minted cap");
    syscall::signal(b2);
    ensure_eq!(syscall::poll(n), 0x40, "badge of the second minted cap");
    // A badged cap cannot be re-badged.
    let dst = env.slot()?;
    expect_err!(cnode::mint(CNODE, dst, ROOT_DEPTH, CNODE, b, ROOT_DEPTH, rights::ALL, 0x7), e::ILLEGAL_OPERATION);
    // Rights: a write-only minted cap signals, a read-only one does not.
    let wo = env.mint(n, rights::WRITE, 0x100)?;
    let ro = env.mint(n, rights::READ, 0x200)?;
    syscall::signal(ro);
    ensure_eq!(syscall::poll(n), 0, "signal through a read-only minted cap");
    syscall::signal(wo);
    ensure_eq!(syscall::poll(n), 0x100, "signal through a write-only minted cap");
    // Minting from a reduced cap cannot add rights back.
    let ro2 = env.slot()?;
    ok!(cnode::copy(CNODE, ro2, ROOT_DEPTH, CNODE, ro, ROOT_DEPTH, rights::ALL));
    syscall::signal(ro2);
    ensure_eq!(syscall::poll(n), 0, "rights grew back through a copy");
    expect_err!(
        invoke0(CNODE, label::CNODE_MINT, &[dst, ROOT_DEPTH, n, ROOT_DEPTH, rights::ALL], &[CNODE]),
        e::TRUNCATED_MESSAGE
    );
    Ok(())
}

pub fn move_(env: &mut Env) -> TResult {
    let (n, b) = badged_ntfn(env, 0x20)?;
    let d = env.slot()?;
    ok!(cnode::move_(CNODE, d, ROOT_DEPTH, CNODE, b, ROOT_DEPTH));
    ensure!(identify(b).is_none(), "source still full after Move");
    ensure!(identify(d) == Some(o::NOTIFICATION), "Move destination holds {:?}", identify(d));
    syscall::signal(d);
    ensure_eq!(syscall::poll(n), 0x20, "moved cap keeps its badge");
    expect_err!(cnode::move_(CNODE, n, ROOT_DEPTH, CNODE, d, ROOT_DEPTH), e::DELETE_FIRST);
    expect_err!(cnode::move_(CNODE, b, ROOT_DEPTH, CNODE, b, ROOT_DEPTH), e::FAILED_LOOKUP);
    Ok(())
}

pub fn mutate(env: &mut Env) -> TResult {
    let cn = env.alloc(o::CNODE, 4)?.cptr;
    let d = env.slot()?;
    // Give the CNode cap a 4-bit guard of 0: it then resolves 8 bits.
    ok!(cnode::mutate(CNODE, d, ROOT_DEPTH, CNODE, cn, ROOT_DEPTH, cnode_cap_data(0, 4)));
    ensure!(identify(cn).is_none(), "Mutate left the source");
    ensure!(identify(d) == Some(o::CNODE), "Mutate destination holds {:?}", identify(d));
    let (n, b) = badged_ntfn(env, 0x3)?;
    ok!(cnode::copy(d, 5, 8, CNODE, b, ROOT_DEPTH, rights::ALL));
    let err = expect_err!(cnode::copy(d, 6, 4, CNODE, b, ROOT_DEPTH, rights::ALL), e::FAILED_LOOKUP);
    ensure_eq!(err.mrs[1], lf::DEPTH_MISMATCH, "lookup failure with the guard not counted");
    let out = env.slot()?;
    ok!(cnode::copy(CNODE, out, ROOT_DEPTH, d, 5, 8, rights::ALL));
    syscall::signal(out);
    ensure_eq!(syscall::poll(n), 0x3, "cap stored through the guarded CNode");
    // seL4: Mutate cannot badge endpoint/notification caps, nor give a guard that overflows.
    let m = env.slot()?;
    expect_err!(cnode::mutate(CNODE, m, ROOT_DEPTH, CNODE, n, ROOT_DEPTH, 0x9), e::ILLEGAL_OPERATION);
    ensure!(identify(n) == Some(o::NOTIFICATION), "failed Mutate moved the cap");
    expect_err!(cnode::mutate(CNODE, m, ROOT_DEPTH, CNODE, d, ROOT_DEPTH, cnode_cap_data(0, 61)), e::ILLEGAL_OPERATION);
    Ok(())
}

pub fn rotate(env: &mut Env) -> TResult {
    let a = env.alloc_cap(o::TCB)?;
    let b = env.alloc_cap(o::PAGE_4K)?;
    let d = env.slot()?;
    // src a -> pivot b, pivot b -> dest d.
    ok!(cnode::rotate(CNODE, d, ROOT_DEPTH, CNODE, b, ROOT_DEPTH, 0, CNODE, a, ROOT_DEPTH, 0));
    ensure!(identify(a).is_none(), "rotate left the source full");
    ensure!(identify(b) == Some(o::TCB), "pivot holds {:?}, expected the TCB", identify(b));
    ensure!(identify(d) == Some(o::PAGE_4K), "dest holds {:?}, expected the frame", identify(d));
    // dest == src: a swap.
    ok!(cnode::rotate(CNODE, b, ROOT_DEPTH, CNODE, d, ROOT_DEPTH, 0, CNODE, b, ROOT_DEPTH, 0));
    ensure!(identify(b) == Some(o::PAGE_4K), "swap: b holds {:?}", identify(b));
    ensure!(identify(d) == Some(o::TCB), "swap: d holds {:?}", identify(d));
    // Errors: pivot == src, dest occupied, empty source, badgeable caps.
    expect_err!(
        cnode::rotate(CNODE, a, ROOT_DEPTH, CNODE, b, ROOT_DEPTH, 0, CNODE, b, ROOT_DEPTH, 0),
        e::ILLEGAL_OPERATION
    );
    let other = env.alloc_cap(o::PAGE_4K)?;
    expect_err!(
        cnode::rotate(CNODE, other, ROOT_DEPTH, CNODE, b, ROOT_DEPTH, 0, CNODE, d, ROOT_DEPTH, 0),
        e::DELETE_FIRST
    );
    expect_err!(
        cnode::rotate(CNODE, a, ROOT_DEPTH, CNODE, b, ROOT_DEPTH, 0, CNODE, a, ROOT_DEPTH, 0),
        e::FAILED_LOOKUP
    );
    let n1 = env.alloc_cap(o::NOTIFICATION)?;
    let n2 = env.alloc_cap(o::NOTIFICATION)?;
    expect_err!(
        cnode::rotate(CNODE, a, ROOT_DEPTH, CNODE, n2, ROOT_DEPTH, 0, CNODE, n1, ROOT_DEPTH, 0),
        e::ILLEGAL_OPERATION
    );
    ensure!(identify(n1).is_some() && identify(n2).is_some() && identify(a).is_none(), "failed rotate moved caps");
    Ok(())
}

pub fn delete(env: &mut Env) -> TResult {
    let n = env.alloc_cap(o::ENDPOINT)?;
    let c = env.copy(n)?;
    ok!(cnode::delete(CNODE, c, ROOT_DEPTH));
    ensure!(identify(c).is_none(), "slot full after Delete");
    ensure!(identify(n) == Some(o::ENDPOINT), "deleting a copy removed the original");
    ok!(cnode::delete(CNODE, c, ROOT_DEPTH)); // empty slot: nothing to do
    expect_err!(cnode::delete(CNODE, n, 12), e::FAILED_LOOKUP);
    expect_err!(cnode::delete(CNODE, n, 0), e::RANGE_ERROR);
    expect_err!(invoke0(CNODE, label::CNODE_DELETE, &[n], &[]), e::TRUNCATED_MESSAGE);
    ok!(cnode::delete(CNODE, n, ROOT_DEPTH));
    ensure!(identify(n).is_none(), "original survived Delete");
    Ok(())
}

pub fn revoke(env: &mut Env) -> TResult {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let a = env.copy(n)?;
    let b = env.mint(a, rights::ALL, 5)?;
    let c = env.copy(b)?;
    ok!(cnode::revoke(CNODE, b, ROOT_DEPTH));
    ensure!(identify(c).is_none(), "child of the badged cap survived its revoke");
    ensure!(identify(b).is_some() && identify(a).is_some(), "revoke removed the revoked cap or its parent");
    ok!(cnode::revoke(CNODE, n, ROOT_DEPTH));
    ensure!(identify(a).is_none() && identify(b).is_none(), "descendants survived revoking the original");
    ensure!(identify(n) == Some(o::NOTIFICATION), "revoke removed the original itself");
    ok!(cnode::revoke(CNODE, n, ROOT_DEPTH)); // no children: nothing to do
    let empty = env.slot()?;
    ok!(cnode::revoke(CNODE, empty, ROOT_DEPTH));
    Ok(())
}

pub fn lookup_errors(env: &mut Env) -> TResult {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let d = env.slot()?;
    expect_err!(cnode::copy(CNODE, d, 0, CNODE, n, ROOT_DEPTH, rights::ALL), e::RANGE_ERROR);
    expect_err!(cnode::copy(CNODE, d, 65, CNODE, n, ROOT_DEPTH, rights::ALL), e::RANGE_ERROR);
    let err = expect_err!(cnode::copy(CNODE, d, 12, CNODE, n, ROOT_DEPTH, rights::ALL), e::FAILED_LOOKUP);
    ensure_eq!(err.mrs[0], 0, "a destination failure is not the source");
    ensure_eq!(err.mrs[1], lf::DEPTH_MISMATCH, "lookup failure type (+1) for depth 12");
    let err =
        expect_err!(cnode::copy(CNODE, d | (1 << 40), ROOT_DEPTH, CNODE, n, ROOT_DEPTH, rights::ALL), e::FAILED_LOOKUP);
    ensure_eq!(err.mrs[1], lf::GUARD_MISMATCH, "lookup failure type (+1) for a bad guard");
    let err = expect_err!(cnode::copy(CNODE, d, ROOT_DEPTH, n, 0, ROOT_DEPTH, rights::ALL), e::FAILED_LOOKUP);
    ensure_eq!(err.mrs[0], 1, "source failure flag");
    ensure_eq!(err.mrs[1], lf::INVALID_ROOT, "lookup failure type (+1) for a non-CNode root");
    expect_err!(invoke0(CNODE, label::UNTYPED_RETYPE, &[0, 0], &[]), e::ILLEGAL_OPERATION);
    expect_err!(invoke0(CNODE, label::CNODE_REVOKE, &[d], &[]), e::TRUNCATED_MESSAGE);
    Ok(())
}

const C1_BITS: usize = 8;
const C2_BITS: usize = 4;
const C2_GUARD: usize = 0x5;
const C2_GUARD_BITS: usize = 4;

/// A two-level CSpace: C1 (radix 8) whose slot 3 holds C2 (radix 4) with a 4-bit guard of 5.
fn build_two_level(env: &mut Env) -> Result<(usize, usize), crate::env::Fail> {
    let c1 = env.alloc(o::CNODE, C1_BITS)?.cptr;
    let c2 = env.alloc(o::CNODE, C2_BITS)?.cptr;
    ok_f(cnode::mint(c1, 3, C1_BITS, CNODE, c2, ROOT_DEPTH, rights::ALL, cnode_cap_data(C2_GUARD, C2_GUARD_BITS)))?;
    Ok((c1, c2))
}

fn ok_f(r: userlib::Result<()>) -> TResult {
    r.map_err(|e| crate::env::fail(format_args!("building the CSpace: {}", e)))
}

/// The index of C2 slot `i` from C1, resolved over 16 bits.
const fn c2_index(guard: usize, i: usize) -> usize {
    (3 << (C2_GUARD_BITS + C2_BITS)) | (guard << C2_BITS) | i
}

pub fn two_level_cspace(env: &mut Env) -> TResult {
    let (c1, c2) = build_two_level(env)?;
    let (n, b) = badged_ntfn(env, 0x77)?;
    let depth = C1_BITS + C2_GUARD_BITS + C2_BITS;
    ok!(cnode::copy(c1, c2_index(C2_GUARD, 9), depth, CNODE, b, ROOT_DEPTH, rights::ALL));
    // Read it back through both paths.
    let out = env.slot()?;
    ok!(cnode::copy(CNODE, out, ROOT_DEPTH, c1, c2_index(C2_GUARD, 9), depth, rights::ALL));
    syscall::signal(out);
    ensure_eq!(syscall::poll(n), 0x77, "cap read back through two levels");
    let out2 = env.slot()?;
    ok!(cnode::copy(CNODE, out2, ROOT_DEPTH, c2, 9, C2_BITS, rights::ALL));
    syscall::signal(out2);
    ensure_eq!(syscall::poll(n), 0x77, "cap read back from the second level directly");
    // Guard mismatch, depth ending inside the second level, and a non-CNode on the way.
    let d = env.slot()?;
    let err = expect_err!(cnode::copy(CNODE, d, ROOT_DEPTH, c1, c2_index(6, 9), depth, rights::ALL), e::FAILED_LOOKUP);
    ensure_eq!(err.mrs[1], lf::GUARD_MISMATCH, "lookup failure type (+1), wrong guard");
    let err = expect_err!(
        cnode::copy(CNODE, d, ROOT_DEPTH, c1, c2_index(C2_GUARD, 9) >> 2, depth - 2, rights::ALL),
        e::FAILED_LOOKUP
    );
    ensure_eq!(err.mrs[1], lf::DEPTH_MISMATCH, "lookup failure type (+1), depth inside a level");
    ok!(cnode::copy(c1, 4, C1_BITS, CNODE, n, ROOT_DEPTH, rights::ALL));
    let err = expect_err!(cnode::copy(CNODE, d, ROOT_DEPTH, c1, (4 << 8) | 0x59, depth, rights::ALL), e::FAILED_LOOKUP);
    ensure_eq!(err.mrs[1], lf::DEPTH_MISMATCH, "lookup failure type (+1), bits left at a non-CNode");
    ensure!(identify(d).is_none(), "failed lookups filled the slot");
    Ok(())
}

extern "C" fn guarded_child(cptr: usize) -> ! {
    syscall::signal(cptr);
    // Our own TCB is in C1 slot 1: with a 48-bit guard on C1, its cptr is 1 << 8.
    let r = tcb::suspend(1 << C1_BITS);
    sset(1, 0xdead);
    sset(2, r.map(|_| 0).unwrap_or_else(|e| e.code));
    park()
}

/// A thread whose CSpace is the two-level tree, with a guard on its root so 64-bit cptrs
/// resolve exactly: 48 + 8 + 4 + 4 = 64 bits.
pub fn guarded_thread_cspace(env: &mut Env) -> TResult {
    let (c1, _c2) = build_two_level(env)?;
    let (n, b) = badged_ntfn(env, 0x99)?;
    ok!(cnode::copy(c1, c2_index(C2_GUARD, 9), 16, CNODE, b, ROOT_DEPTH, rights::ALL));
    sset(1, 0);
    let cfg = ThreadCfg {
        cspace: c1,
        cspace_data: cnode_cap_data(0, 64 - C1_BITS - C2_GUARD_BITS - C2_BITS),
        start: false,
        affinity: Some(env.bi.node_id),
        set_space: true,
        ..ThreadCfg::default()
    };
    let t = env.spawn_cfg(guarded_child as *const () as usize, c2_index(C2_GUARD, 9), cfg)?;
    ok!(cnode::copy(c1, 1, C1_BITS, CNODE, t.tcb, ROOT_DEPTH, rights::ALL));
    ok!(tcb::resume(t.tcb));
    ensure_eq!(syscall::wait(n), 0x99, "signal from the thread through its own CSpace");
    for _ in 0..20 {
        syscall::yield_now();
    }
    ensure!(sget(1) == 0, "the thread ran past suspending itself (code {:#x})", sget(2));
    Ok(())
}

extern "C" fn sender(cap: usize) -> ! {
    syscall::send(cap, MessageInfo::new(0x51, 0, 0, 1), [cap, 0, 0, 0]);
    sadd(0, 1);
    park()
}

pub fn cancel_badged_sends(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let b1 = env.mint(ep, rights::ALL, 1)?;
    let b2 = env.mint(ep, rights::ALL, 2)?;
    sset(0, 0);
    env.spawn(sender, b1, 255)?;
    syscall::yield_now(); // sender 1 runs and blocks
    env.spawn(sender, b2, 255)?;
    syscall::yield_now(); // sender 2 queues behind it
    ensure_eq!(sget(0), 0, "a send completed with nobody receiving");
    ok!(cnode::cancel_badged_sends(CNODE, ep, ROOT_DEPTH)); // unbadged: nothing happens
    ok!(cnode::cancel_badged_sends(CNODE, b1, ROOT_DEPTH));
    // Sender 1 was restarted and re-sends behind sender 2.
    let (badge, info, _) = syscall::recv(ep);
    ensure_eq!(badge, 2, "first message after cancelling badge 1");
    ensure_eq!(info.label, 0x51, "label");
    let (badge, _, _) = syscall::recv(ep);
    ensure_eq!(badge, 1, "restarted sender's message");
    let n = env.alloc_cap(o::NOTIFICATION)?;
    expect_err!(cnode::cancel_badged_sends(CNODE, n, ROOT_DEPTH), e::ILLEGAL_OPERATION);
    Ok(())
}

extern "C" fn caller(ep: usize) -> ! {
    let (_, info, mrs) = syscall::call(ep, MessageInfo::new(0x33, 0, 0, 1), [0x1234, 0, 0, 0]);
    sset(1, mrs[0]);
    sset(2, info.label);
    sadd(0, 1);
    park()
}

pub fn save_caller(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let b = env.mint(ep, rights::ALL, 0x7)?;
    let r = env.slot()?;
    ok!(cnode::save_caller(CNODE, r, ROOT_DEPTH)); // no caller: nothing saved
    ensure!(identify(r).is_none(), "SaveCaller with no caller filled the slot");
    sset(0, 0);
    env.spawn(caller, b, 255)?;
    let (badge, info, mrs) = syscall::recv(ep);
    ensure_eq!(badge, 7, "caller's badge");
    ensure_eq!(info.label, 0x33, "call label");
    ensure_eq!(mrs[0], 0x1234, "call MR0");
    ok!(cnode::save_caller(CNODE, r, ROOT_DEPTH));
    ensure!(identify(r).is_some(), "SaveCaller left the slot empty");
    let occupied = env.alloc_cap(o::NOTIFICATION)?;
    expect_err!(cnode::save_caller(CNODE, occupied, ROOT_DEPTH), e::DELETE_FIRST);
    // Reply through the saved cap with a plain Send.
    syscall::send(r, MessageInfo::new(0x44, 0, 0, 1), [0x4321, 0, 0, 0]);
    wait_for(0, 1, 100)?;
    ensure_eq!(sget(1), 0x4321, "reply MR0 through the saved reply cap");
    ensure_eq!(sget(2), 0x44, "reply label");
    ensure!(identify(r).is_none(), "reply cap still present after use");
    Ok(())
}
