//! TCB invocations and scheduling.
use crate::env::{
    self, identify, park, sadd, sget, sset, tp, wait_for, Env, TResult, ThreadCfg, CNODE, ROOT_TCB, VSPACE,
};
use abi::{error as e, label, object as o, MessageInfo};
use userlib::invoke::{invoke0, rights};
use userlib::syscall;
use userlib::tcb::{self, UserContext};

/// Writes its argument to shared[1] and signals the notification in shared[3].
extern "C" fn report_arg(arg: usize) -> ! {
    sset(1, arg);
    sset(2, tp());
    syscall::signal(sget(3));
    park()
}

pub fn configure_and_resume(env: &mut Env) -> TResult {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    sset(1, 0);
    sset(3, n);
    let t = env.spawn_cfg(
        report_arg as *const () as usize,
        0xabc,
        ThreadCfg { start: false, affinity: Some(env.bi.node_id), ..ThreadCfg::default() },
    )?;
    for _ in 0..5 {
        syscall::yield_now();
    }
    ensure_eq!(sget(1), 0, "thread ran before Resume");
    ok!(tcb::resume(t.tcb));
    syscall::wait(n);
    ensure_eq!(sget(1), 0xabc, "argument in a0");
    ensure_eq!(sget(2), t.ipc_va, "tp (IPC buffer) from WriteRegisters");
    ok!(tcb::resume(t.tcb)); // resuming a running thread: nothing happens
    Ok(())
}

pub fn set_space_and_ipc_buffer(env: &mut Env) -> TResult {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    sset(1, 0);
    sset(3, n);
    let cfg = ThreadCfg { set_space: true, affinity: Some(env.bi.node_id), ..ThreadCfg::default() };
    env.spawn_cfg(report_arg as *const () as usize, 0x5eed, cfg)?;
    syscall::wait(n);
    ensure_eq!(sget(1), 0x5eed, "argument of a thread set up with SetSpace + SetIPCBuffer");
    Ok(())
}

pub fn argument_errors(env: &mut Env) -> TResult {
    let t = env.alloc_cap(o::TCB)?;
    let frame = env.alloc_cap(o::PAGE_4K)?;
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let va = env.va(1);
    env.map_frame(frame, VSPACE, va, rights::READ_WRITE)?;
    // IPC buffer must be 1 KiB aligned and inside the frame.
    expect_err!(tcb::set_ipc_buffer(t, va + 8, frame), e::ALIGNMENT_ERROR);
    ok!(tcb::set_ipc_buffer(t, va + 1024, frame));
    expect_any_err!(tcb::set_ipc_buffer(t, va, ep), e::ILLEGAL_OPERATION, e::INVALID_CAPABILITY);
    // Roots of the wrong type.
    expect_any_err!(tcb::set_space(t, 0, ep, 0, VSPACE, 0), e::ILLEGAL_OPERATION, e::INVALID_CAPABILITY);
    expect_any_err!(tcb::set_space(t, 0, CNODE, 0, ep, 0), e::ILLEGAL_OPERATION, e::INVALID_CAPABILITY);
    expect_any_err!(tcb::configure(t, 0, CNODE, 0, frame, 0, 0, 0), e::ILLEGAL_OPERATION, e::INVALID_CAPABILITY);
    // A page table without an ASID is not a valid VSpace root.
    let pt = env.alloc_cap(o::PAGE_TABLE)?;
    expect_any_err!(tcb::set_space(t, 0, CNODE, 0, pt, 0), e::ILLEGAL_OPERATION, e::INVALID_CAPABILITY);
    ok!(tcb::set_space(t, 0, CNODE, 0, VSPACE, 0));
    // Messages too short, unknown labels.
    expect_err!(invoke0(t, label::TCB_SET_PRIORITY, &[], &[ROOT_TCB]), e::TRUNCATED_MESSAGE);
    expect_err!(invoke0(t, label::TCB_SET_PRIORITY, &[1], &[]), e::TRUNCATED_MESSAGE);
    expect_err!(invoke0(t, label::TCB_CONFIGURE, &[0, 0, 0], &[CNODE, VSPACE, frame]), e::TRUNCATED_MESSAGE);
    expect_err!(invoke0(t, label::UNTYPED_RETYPE, &[0; 6], &[CNODE]), e::ILLEGAL_OPERATION);
    // Affinity beyond the harts.
    expect_err!(tcb::set_affinity(t, env.bi.num_nodes), e::INVALID_ARGUMENT);
    Ok(())
}

// Entry that hands s2 and s3, as WriteRegisters left them, to Rust in a1 and a2.
core::arch::global_asm!(
    ".globl kt_report_regs",
    "kt_report_regs:",
    "   mv a1, s2",
    "   mv a2, s3",
    "   j {f}",
    f = sym report_regs_inner,
);
extern "C" {
    fn kt_report_regs();
}

fn report_regs_pc() -> usize {
    kt_report_regs as *const () as usize
}

/// Reports its a0, s2 and s3 as it started, then parks.
extern "C" fn report_regs_inner(a0: usize, s2: usize, s3: usize) -> ! {
    sset(1, a0);
    sset(4, s2);
    sset(5, s3);
    sadd(0, 1);
    park()
}

pub fn read_write_registers(env: &mut Env) -> TResult {
    let cfg = ThreadCfg { start: false, affinity: Some(env.bi.node_id), ..ThreadCfg::default() };
    let t = env.spawn_cfg(report_regs_pc(), 0x1111, cfg)?;
    let mut ctx = ok!(tcb::read_registers(t.tcb, false, 0, abi::regs::COUNT));
    ensure_eq!(ctx.pc(), report_regs_pc(), "pc read back");
    ensure_eq!(ctx.sp(), t.stack_top, "sp read back");
    ensure_eq!(ctx.a(0), 0x1111, "a0 read back");
    ensure_eq!(ctx.regs[UserContext::TP], t.ipc_va, "tp read back");
    // Every register round-trips.
    for (i, r) in ctx.regs.iter_mut().enumerate() {
        if ![UserContext::PC, UserContext::SP, UserContext::TP, UserContext::GP].contains(&i) {
            *r = 0x5000 + i;
        }
    }
    ok!(tcb::write_registers(t.tcb, false, 0, abi::regs::COUNT, &ctx));
    let back = ok!(tcb::read_registers(t.tcb, false, 0, abi::regs::COUNT));
    for i in 0..abi::regs::COUNT {
        ensure_eq!(back.regs[i], ctx.regs[i], "register round trip");
    }
    // A partial read and a partial write.
    let part = ok!(tcb::read_registers(t.tcb, false, 0, 3));
    ensure_eq!(part.regs[2], t.stack_top, "sp from a 3-register read");
    ensure_eq!(part.regs[3], 0, "register beyond count");
    let mut pc_only = UserContext::default();
    pc_only.regs[0] = report_regs_pc(); // same pc
    ok!(tcb::write_registers(t.tcb, false, 0, 1, &pc_only));
    ensure_eq!(ok!(tcb::read_registers(t.tcb, false, 0, 2)).regs[1], ctx.regs[1], "ra kept by a 1-register write");
    // Errors: reading ourselves, counts out of range.
    expect_err!(tcb::read_registers(ROOT_TCB, false, 0, 4), e::ILLEGAL_OPERATION);
    expect_err!(tcb::read_registers(t.tcb, false, 0, 0), e::RANGE_ERROR);
    expect_err!(tcb::read_registers(t.tcb, false, 0, abi::regs::COUNT + 1), e::RANGE_ERROR);
    expect_any_err!(
        invoke0(t.tcb, label::TCB_WRITE_REGISTERS, &[0, 0, 5, 1, 2], &[]),
        e::RANGE_ERROR,
        e::TRUNCATED_MESSAGE
    );
    // Resume through WriteRegisters' resume_target, with new argument registers.
    sset(0, 0);
    ctx.set_a(0, 0x2222);
    ctx.regs[UserContext::index_of(18)] = 0x5151; // s2
    ctx.regs[UserContext::index_of(19)] = 0x5252; // s3
    ok!(tcb::write_registers(t.tcb, true, 0, abi::regs::COUNT, &ctx));
    wait_for(0, 1, 100)?;
    ensure_eq!(sget(1), 0x2222, "a0 after WriteRegisters with resume");
    ensure_eq!(sget(4), 0x5151, "s2 as written");
    ensure_eq!(sget(5), 0x5252, "s3 as written");
    // Read with suspend_source stops it.
    let _ = ok!(tcb::read_registers(t.tcb, true, 0, 1));
    Ok(())
}

extern "C" fn counter(_: usize) -> ! {
    loop {
        sadd(0, 1);
        syscall::yield_now();
    }
}

fn counter_moves(rounds: usize) -> bool {
    let before = sget(0);
    for _ in 0..rounds {
        syscall::yield_now();
    }
    sget(0) != before
}

pub fn copy_registers(env: &mut Env) -> TResult {
    let cfg = ThreadCfg { start: false, affinity: Some(env.bi.node_id), ..ThreadCfg::default() };
    let src = env.spawn_cfg(report_regs_pc(), 0x3333, cfg)?;
    let dst = env.spawn_cfg(counter as *const () as usize, 0, cfg)?;
    ok!(tcb::copy_registers(dst.tcb, src.tcb, false, false, true, true, 0));
    let a = ok!(tcb::read_registers(src.tcb, false, 0, abi::regs::COUNT));
    let b = ok!(tcb::read_registers(dst.tcb, false, 0, abi::regs::COUNT));
    ensure_eq!(b.pc(), a.pc(), "pc copied");
    ensure_eq!(b.a(0), 0x3333, "a0 copied");
    ensure_eq!(b.sp(), src.stack_top, "sp copied");
    let ep = env.alloc_cap(o::ENDPOINT)?;
    expect_any_err!(
        tcb::copy_registers(dst.tcb, ep, false, false, true, true, 0),
        e::INVALID_CAPABILITY,
        e::ILLEGAL_OPERATION
    );
    Ok(())
}

pub fn suspend_resume(env: &mut Env) -> TResult {
    sset(0, 0);
    let t = env.spawn(counter, 0, 255)?;
    ensure!(counter_moves(10), "counter thread does not run");
    ok!(tcb::suspend(t.tcb));
    ensure!(!counter_moves(10), "counter runs while suspended");
    ok!(tcb::suspend(t.tcb)); // twice: nothing happens
    ok!(tcb::resume(t.tcb));
    ensure!(counter_moves(10), "counter does not run after Resume");
    // ReadRegisters with suspend_source also stops it.
    let _ = ok!(tcb::read_registers(t.tcb, true, 0, 1));
    ensure!(!counter_moves(10), "counter runs after ReadRegisters(suspend_source)");
    ok!(tcb::resume(t.tcb));
    ensure!(counter_moves(10), "counter does not run after the second Resume");
    // A thread blocked in IPC is taken out of it by Suspend, and Resume does not complete it.
    let ep = env.alloc_cap(o::ENDPOINT)?;
    sset(3, 0);
    let r = env.spawn(blocked_receiver, ep, 255)?;
    syscall::yield_now();
    ok!(tcb::suspend(r.tcb));
    syscall::nb_send(ep, MessageInfo::new(1, 0, 0, 0), [0; 4]);
    for _ in 0..5 {
        syscall::yield_now();
    }
    ensure_eq!(sget(3), 0, "suspended receiver got a message");
    Ok(())
}

extern "C" fn blocked_receiver(ep: usize) -> ! {
    syscall::recv(ep);
    sset(3, 1);
    park()
}

pub fn priority_and_mcp(env: &mut Env) -> TResult {
    let t1 = env.alloc_cap(o::TCB)?;
    let t2 = env.alloc_cap(o::TCB)?;
    // A new TCB has MCP 0: as an authority it allows priority 0 only.
    let err = expect_err!(tcb::set_priority(t2, t1, 1), e::RANGE_ERROR);
    ensure_eq!(err.mrs[1], 0, "RangeError max with a fresh authority");
    ok!(tcb::set_priority(t2, t1, 0));
    ok!(tcb::set_sched_params(t1, ROOT_TCB, 100, 50));
    let err = expect_err!(tcb::set_priority(t2, t1, 101), e::RANGE_ERROR);
    ensure_eq!(err.mrs[0], 0, "RangeError min");
    ensure_eq!(err.mrs[1], 100, "RangeError max = authority's MCP");
    ok!(tcb::set_priority(t2, t1, 100));
    expect_err!(tcb::set_mc_priority(t2, t1, 101), e::RANGE_ERROR);
    ok!(tcb::set_mc_priority(t2, t1, 100));
    expect_err!(tcb::set_sched_params(t2, t1, 101, 10), e::RANGE_ERROR);
    expect_err!(tcb::set_sched_params(t2, t1, 10, 101), e::RANGE_ERROR);
    ok!(tcb::set_sched_params(t2, t1, 99, 99));
    expect_err!(tcb::set_priority(t2, ROOT_TCB, 256), e::RANGE_ERROR);
    ok!(tcb::set_priority(t2, ROOT_TCB, 255));
    // The authority must be a TCB.
    expect_any_err!(tcb::set_priority(t2, CNODE, 1), e::INVALID_CAPABILITY, e::ILLEGAL_OPERATION);
    Ok(())
}

extern "C" fn try_raise_self(own: usize) -> ! {
    let r1 = tcb::set_priority(own, own, 150).map(|_| 0).unwrap_or_else(|e| e.code);
    let r2 = tcb::set_priority(own, own, 100).map(|_| 0).unwrap_or_else(|e| e.code);
    let r3 = tcb::set_mc_priority(own, own, 101).map(|_| 0).unwrap_or_else(|e| e.code);
    sset(1, r1);
    sset(2, r2);
    sset(4, r3);
    syscall::signal(sget(3));
    park()
}

/// A thread with MCP 100 cannot give itself (or its MCP) more than 100.
pub fn own_mcp(env: &mut Env) -> TResult {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    sset(3, n);
    let cfg = ThreadCfg { prio: 50, mcp: 100, start: false, affinity: Some(env.bi.node_id), ..ThreadCfg::default() };
    let t = env.spawn_cfg(try_raise_self as *const () as usize, 0, cfg)?;
    // It names itself by its slot in the shared root CNode.
    let mut ctx = ok!(tcb::read_registers(t.tcb, false, 0, abi::regs::COUNT));
    ctx.set_a(0, t.tcb);
    ok!(tcb::write_registers(t.tcb, true, 0, abi::regs::COUNT, &ctx));
    syscall::wait(n);
    ensure_eq!(sget(1), e::RANGE_ERROR, "raising own priority above own MCP");
    ensure_eq!(sget(2), 0, "setting own priority to own MCP");
    ensure_eq!(sget(4), e::RANGE_ERROR, "raising own MCP");
    Ok(())
}

static ORDER: [core::sync::atomic::AtomicUsize; 4] = [const { core::sync::atomic::AtomicUsize::new(0) }; 4];

extern "C" fn log_order(id: usize) -> ! {
    let i = sadd(6, 1);
    if i < 4 {
        ORDER[i].store(id, core::sync::atomic::Ordering::SeqCst);
    }
    syscall::signal(sget(3));
    park()
}

/// Ready threads run highest priority first.
pub fn priority_order(env: &mut Env) -> TResult {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    sset(3, n);
    sset(6, 0);
    env.spawn(log_order, 10, 10)?;
    env.spawn(log_order, 200, 200)?;
    env.spawn(log_order, 100, 100)?;
    // Nothing below us ran yet; now block until all three have.
    ensure_eq!(sget(6), 0, "lower-priority thread ran while the root task was runnable");
    while sget(6) < 3 {
        syscall::wait(n);
    }
    let got = [
        ORDER[0].load(core::sync::atomic::Ordering::SeqCst),
        ORDER[1].load(core::sync::atomic::Ordering::SeqCst),
        ORDER[2].load(core::sync::atomic::Ordering::SeqCst),
    ];
    ensure!(got == [200, 100, 10], "run order {:?}, expected [200, 100, 10]", got);
    Ok(())
}

extern "C" fn report_hart(ep: usize) -> ! {
    loop {
        syscall::send(ep, MessageInfo::new(0, 0, 0, 1), [env::hart(), 0, 0, 0]);
    }
}

pub fn affinity_every_hart(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    for k in 0..userlib::bootinfo::harts(env.bi) {
        let t = env.spawn_on(report_hart, ep, 200, k)?;
        let (_, _, mrs) = syscall::recv(ep);
        ensure_eq!(mrs[0], env.bi.hart_ids[k], "hart of a thread with affinity index k");
        ok!(tcb::suspend(t.tcb));
    }
    Ok(())
}

pub fn affinity_migrate(env: &mut Env) -> TResult {
    let n = userlib::bootinfo::harts(env.bi);
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let t = env.spawn_on(report_hart, ep, 200, 0)?;
    for k in (0..n).rev().chain(0..n) {
        ok!(tcb::set_affinity(t.tcb, k));
        // The next report comes from the new hart (one may still be in flight from the old one).
        let mut hart = usize::MAX;
        for _ in 0..2 {
            hart = syscall::recv(ep).2[0];
            if hart == env.bi.hart_ids[k] {
                break;
            }
        }
        ensure_eq!(hart, env.bi.hart_ids[k], "hart after SetAffinity");
    }
    Ok(())
}

extern "C" fn report_tls(own_ipc: usize) -> ! {
    sset(1, tp());
    userlib::ipc::set_ipc_buffer(own_ipc);
    syscall::signal(sget(3));
    park()
}

pub fn set_tls_base(env: &mut Env) -> TResult {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    sset(3, n);
    let cfg = ThreadCfg { start: false, affinity: Some(env.bi.node_id), ..ThreadCfg::default() };
    let t = env.spawn_cfg(report_tls as *const () as usize, 0, cfg)?;
    let mut ctx = ok!(tcb::read_registers(t.tcb, false, 0, abi::regs::COUNT));
    ctx.set_a(0, t.ipc_va);
    ok!(tcb::write_registers(t.tcb, false, 0, abi::regs::COUNT, &ctx));
    ok!(tcb::set_tls_base(t.tcb, 0x1234_5000));
    ensure_eq!(
        ok!(tcb::read_registers(t.tcb, false, 0, abi::regs::COUNT)).regs[UserContext::TP],
        0x1234_5000,
        "tp read back"
    );
    ok!(tcb::resume(t.tcb));
    syscall::wait(n);
    ensure_eq!(sget(1), 0x1234_5000, "tp seen by the thread");
    Ok(())
}

pub fn bind_unbind(env: &mut Env) -> TResult {
    let t1 = env.alloc_cap(o::TCB)?;
    let t2 = env.alloc_cap(o::TCB)?;
    let n1 = env.alloc_cap(o::NOTIFICATION)?;
    let n2 = env.alloc_cap(o::NOTIFICATION)?;
    ok!(tcb::bind_notification(t1, n1));
    // Already bound: the TCB, and the notification.
    expect_err!(tcb::bind_notification(t1, n2), e::ILLEGAL_OPERATION);
    expect_err!(tcb::bind_notification(t2, n1), e::ILLEGAL_OPERATION);
    ok!(tcb::unbind_notification(t1));
    expect_err!(tcb::unbind_notification(t1), e::ILLEGAL_OPERATION);
    // Unbinding freed both sides.
    ok!(tcb::bind_notification(t2, n1));
    ok!(tcb::bind_notification(t1, n2));
    // Wrong cap type, no receive right.
    let t3 = env.alloc_cap(o::TCB)?;
    let ep = env.alloc_cap(o::ENDPOINT)?;
    expect_any_err!(tcb::bind_notification(t3, ep), e::ILLEGAL_OPERATION, e::INVALID_CAPABILITY);
    let n3 = env.alloc_cap(o::NOTIFICATION)?;
    let wo = env.mint(n3, rights::WRITE, 0)?;
    expect_err!(tcb::bind_notification(t3, wo), e::ILLEGAL_OPERATION);
    // Deleting a bound notification unbinds it from the TCB.
    ok!(userlib::cnode::delete(CNODE, n2, env::ROOT_DEPTH));
    ensure!(identify(n2).is_none(), "notification cap survived Delete");
    ok!(tcb::bind_notification(t1, n3));
    Ok(())
}
