//! User threads' floating-point state (sw/kernel/README.md, "Floating point"): every F/D
//! register and `fcsr` survive preemption, IPC on one hart and across harts, faults, the
//! register invocations and migration; a thread deleted while its state is in a hart's
//! registers leaks nothing to the next thread there; a thread that never uses FP never traps.
//!
//! The suite has no floating-point code of its own, so the routines below own the FP register
//! file: they fill it with a pattern and read it back, and nothing in between touches it.
use crate::env::{park, Env, TResult, ThreadCfg, BENCH, CNODE, ROOT_DEPTH};
use abi::{fault, object as o, stat, MessageInfo};
use core::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use userlib::invoke::rights;
use userlib::{cnode, ipc, print, syscall, tcb, untyped};

core::arch::global_asm!(
    // a0 = seed, a1 = fcsr: f<n> = seed + n * a2.
    ".globl kt_fp_fill",
    "kt_fp_fill:",
    "   .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31",
    "   fmv.d.x f\\n, a0",
    "   add a0, a0, a2",
    "   .endr",
    "   fscsr a1",
    "   ret",
    // a0 = &mut [u64; 33]: f0..f31, fcsr.
    ".globl kt_fp_dump",
    "kt_fp_dump:",
    "   .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31",
    "   fsd f\\n, \\n*8(a0)",
    "   .endr",
    "   frcsr t0",
    "   sd t0, 32*8(a0)",
    "   ret",
    // Cycles of one FP register write (f0 to itself: FS becomes Dirty, the value stays).
    ".globl kt_fp_timed_write",
    "kt_fp_timed_write:",
    "   rdcycle t0",
    "   fmv.d f0, f0",
    "   rdcycle t1",
    "   sub a0, t1, t0",
    "   ret",
    // One FP write, untimed.
    ".globl kt_fp_touch",
    "kt_fp_touch:",
    "   fmv.d f0, f0",
    "   ret",
    // An illegal instruction as the first one: with FS Off the kernel first takes it for an FP
    // use, then (FS on) it is a fault.
    ".globl kt_fp_unimp",
    "kt_fp_unimp:",
    "   .4byte 0",
    "   ret",
);

extern "C" {
    fn kt_fp_fill(seed: u64, fcsr: u64, step: u64);
    fn kt_fp_dump(out: *mut [u64; 33]);
    fn kt_fp_timed_write() -> usize;
    fn kt_fp_touch();
    fn kt_fp_unimp();
}

const STEP: u64 = 0x0101_0101_0101_0101;

/// `fcsr` of a seed: a valid rounding mode and some exception flags.
fn fcsr_of(seed: u64) -> u64 {
    ((seed % 5) << 5) | (seed & 0x1f)
}

/// The FP state from `seed`.
fn fill(seed: u64) {
    // SAFETY: writes the FP registers only (nothing here keeps values in them).
    unsafe { kt_fp_fill(seed, fcsr_of(seed), STEP) }
}

fn dump() -> [u64; 33] {
    let mut out = [0u64; 33];
    // SAFETY: writes `out`.
    unsafe { kt_fp_dump(&mut out) };
    out
}

/// The first register that differs from what `fill(seed)` wrote: (index, got, expected); 32 is
/// fcsr.
fn mismatch(seed: u64) -> Option<(usize, u64, u64)> {
    let d = dump();
    let want = |i: usize| if i == 32 { fcsr_of(seed) } else { seed.wrapping_add(STEP.wrapping_mul(i as u64)) };
    (0..33).find(|&i| d[i] != want(i)).map(|i| (i, d[i], want(i)))
}

fn check(seed: u64, what: &str) -> TResult {
    if let Some((i, got, want)) = mismatch(seed) {
        return Err(crate::env::fail(format_args!("{}: f{} = {:#x}, expected {:#x} (32 = fcsr)", what, i, got, want)));
    }
    Ok(())
}

fn stat(which: usize) -> usize {
    syscall::debug_stat(which)
}

/// Errors seen by helper threads (the first one's register and seed), and their progress.
static ERRS: AtomicUsize = AtomicUsize::new(0);
static FIRST_ERR: AtomicUsize = AtomicUsize::new(0);
static STOP: AtomicUsize = AtomicUsize::new(0);
/// Helper threads that finished (each then signals shared[15]: signals of a notification
/// merge, so the root counts these instead).
static DONE: AtomicUsize = AtomicUsize::new(0);
/// The TCB cap of a `plain_client` that reads its own kernel entries when its Calls are done
/// (0: none), and what it read.
static PROBE_TCB: AtomicUsize = AtomicUsize::new(0);
static PROBED_ENTRIES: AtomicUsize = AtomicUsize::new(0);
static PROGRESS: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];
static PREEMPTED: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];

fn note_err(seed: u64) {
    if let Some((i, _, _)) = mismatch(seed) {
        if ERRS.fetch_add(1, SeqCst) == 0 {
            FIRST_ERR.store((seed as usize) << 8 | i, SeqCst);
        }
    }
}

fn reset_shared() {
    ERRS.store(0, SeqCst);
    FIRST_ERR.store(0, SeqCst);
    STOP.store(0, SeqCst);
    DONE.store(0, SeqCst);
    PROBE_TCB.store(0, SeqCst);
    PROBED_ENTRIES.store(0, SeqCst);
    for i in 0..8 {
        PROGRESS[i].store(0, SeqCst);
        PREEMPTED[i].store(0, SeqCst);
    }
}

/// A helper is done: counted, and the root woken.
fn finish() -> ! {
    DONE.fetch_add(1, SeqCst);
    syscall::signal(crate::env::sget(15));
    park()
}

/// The root waits on `n` until `k` helpers have finished.
fn wait_done(n: usize, k: usize) {
    while DONE.load(SeqCst) < k {
        syscall::wait(n);
    }
}

fn helper_errors() -> TResult {
    let n = ERRS.load(SeqCst);
    ensure!(
        n == 0,
        "{} FP mismatches in helper threads (first: seed {:#x}, register {})",
        n,
        FIRST_ERR.load(SeqCst) >> 8,
        FIRST_ERR.load(SeqCst) & 0xff
    );
    Ok(())
}

// ---- IPC

/// Server: checks its own state on every message, then writes a new one; replies with
/// whether its state had survived.
extern "C" fn ipc_server(ep: usize) -> ! {
    let mut seed = 0x5e00_0000_0000_0000u64 | ep as u64;
    fill(seed);
    let (_, _, mut mrs) = syscall::recv(ep);
    loop {
        let ok = mismatch(seed).is_none();
        seed = seed.wrapping_add(mrs[0] as u64 + 1);
        fill(seed);
        (_, _, mrs) = syscall::reply_recv(ep, MessageInfo::new(0, 0, 0, 1), [ok as usize, 0, 0, 0]);
    }
}

fn ipc_rounds(ep: usize, rounds: usize, what: &str) -> TResult {
    for i in 0..rounds {
        let seed = 0xc11e_0000_0000_0000u64 | (i as u64) << 8;
        fill(seed);
        let (_, _, mrs) = syscall::call(ep, MessageInfo::new(0, 0, 0, 1), [i, 0, 0, 0]);
        check(seed, what)?;
        ensure!(mrs[0] == 1 || i == 0, "{}: the server's FP state changed between two messages (round {})", what, i);
    }
    Ok(())
}

pub fn survive_ipc(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    env.spawn(ipc_server, ep, 255)?;
    let (l0, s0) = (stat(stat::FPU_LOADS), stat(stat::FPU_SAVES));
    ipc_rounds(ep, 200, "same hart")?;
    let (l1, s1) = (stat(stat::FPU_LOADS), stat(stat::FPU_SAVES));
    // Both threads write FP state in every run on one hart: each switch saves and loads.
    ensure!(
        l1 - l0 >= 300 && s1 - s0 >= 300,
        "same-hart FP IPC: {} loads, {} saves in 200 round trips",
        l1 - l0,
        s1 - s0
    );
    if let Some(other) = env.other_hart() {
        let ep2 = env.alloc_cap(o::ENDPOINT)?;
        env.spawn_on(ipc_server, ep2, 255, other)?;
        ipc_rounds(ep2, 200, "across harts")?;
    }
    Ok(())
}

// ---- preemption

/// A pair of threads per hart, both computing in FP without ever blocking: only the timer
/// switches them. Each checks its state continually and counts the times its partner ran in
/// between (it was preempted); it stops once both of the pair saw three.
extern "C" fn spinner(me: usize) -> ! {
    let partner = me ^ 1;
    let mut seed = 0xf100_0000_0000_0000u64 | (me as u64) << 32;
    fill(seed);
    let mut last = PROGRESS[partner].load(SeqCst);
    loop {
        note_err(seed);
        seed = seed.wrapping_add(1);
        fill(seed);
        PROGRESS[me].fetch_add(1, SeqCst);
        let now = PROGRESS[partner].load(SeqCst);
        if now != last {
            PREEMPTED[me].fetch_add(1, SeqCst);
            last = now;
        }
        if (PREEMPTED[me].load(SeqCst) >= 3 && PREEMPTED[partner].load(SeqCst) >= 3) || STOP.load(SeqCst) != 0 {
            finish()
        }
    }
}

pub fn survive_preemption(env: &mut Env) -> TResult {
    reset_shared();
    let n = env.alloc_cap(o::NOTIFICATION)?;
    crate::env::sset(15, n);
    let harts = userlib::bootinfo::harts(env.bi).min(4);
    let s0 = stat(stat::FPU_SAVES);
    for h in 0..harts {
        for k in 0..2 {
            env.spawn_on(spinner, 2 * h + k, 10, h)?;
        }
    }
    // The root (priority 255) blocks here, so the pair on its hart runs too.
    wait_done(n, 2 * harts);
    helper_errors()?;
    for (i, p) in PREEMPTED.iter().enumerate().take(2 * harts) {
        ensure!(p.load(SeqCst) >= 3, "spinner {} preempted {} times", i, p.load(SeqCst));
    }
    ensure!(stat(stat::FPU_SAVES) > s0, "no FP state saved while FP threads were preempted");
    Ok(())
}

// ---- faults

const FAULT_BADGE: usize = 0xf9;

/// Writes FP state, faults on an illegal instruction (FS on: a real fault), and after the
/// handler's reply checks that state.
extern "C" fn faulter(seed: usize) -> ! {
    fill(seed as u64);
    // SAFETY: faults; the handler resumes past it.
    unsafe { kt_fp_unimp() };
    if mismatch(seed as u64).is_some() {
        ERRS.fetch_add(1, SeqCst);
    }
    PROGRESS[0].fetch_add(1, SeqCst);
    finish()
}

/// Its first instruction is illegal (FS Off here: the kernel tries it as an FP use first, then
/// it faults); then its FP state must be a new thread's: zero.
extern "C" fn unimp_first(_: usize) -> ! {
    // SAFETY: faults; the handler resumes past it.
    unsafe { kt_fp_unimp() };
    if dump() != [0; 33] {
        ERRS.fetch_add(1, SeqCst);
    }
    PROGRESS[1].fetch_add(1, SeqCst);
    finish()
}

/// Receive one UserException for an illegal instruction at `kt_fp_unimp`; the handler writes FP
/// state of its own meanwhile; reply past the instruction.
fn handle_unimp(ep: usize, handler_seed: u64) -> TResult {
    let (badge, info) = ipc::recv(ep);
    ensure_eq!(badge, FAULT_BADGE, "fault badge");
    ensure_eq!(info.label, fault::USER_EXCEPTION, "fault label");
    ensure_eq!(ipc::get_mr(0), kt_fp_unimp as *const () as usize, "fault pc");
    ensure_eq!(ipc::get_mr(3), 2, "scause");
    fill(handler_seed);
    let (pc, sp) = (ipc::get_mr(0), ipc::get_mr(1));
    syscall::reply(MessageInfo::new(0, 0, 0, 2), [pc + 4, sp, 0, 0]);
    check(handler_seed, "the fault handler's own state")
}

pub fn survive_faults(env: &mut Env) -> TResult {
    reset_shared();
    let n = env.alloc_cap(o::NOTIFICATION)?;
    crate::env::sset(15, n);
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let fb = env.mint(ep, rights::ALL, FAULT_BADGE)?;
    let here = env.bi.node_id;
    let cfg = ThreadCfg { fault_ep: fb, affinity: Some(here), ..ThreadCfg::default() };
    env.spawn_cfg(faulter as *const () as usize, 0xfa17_0000_0000_0001, cfg)?;
    handle_unimp(ep, 0x4a4d_0000_0000_0001)?;
    wait_done(n, 1);
    ensure_eq!(PROGRESS[0].load(SeqCst), 1, "the faulting thread went on");
    // The root owns this hart's FPU (it just wrote FP state): the new thread's first
    // instruction traps with FS Off.
    fill(0x4a4d_0000_0000_0002);
    let t0 = stat(stat::FPU_TRAPS);
    env.spawn_cfg(unimp_first as *const () as usize, 0, cfg)?;
    handle_unimp(ep, 0x4a4d_0000_0000_0003)?;
    wait_done(n, 2);
    ensure_eq!(PROGRESS[1].load(SeqCst), 1, "the thread with an illegal first instruction went on");
    ensure!(stat(stat::FPU_TRAPS) > t0, "an illegal instruction with FS Off was not tried as an FP use first");
    ensure_eq!(ERRS.load(SeqCst), 0, "FP state wrong after a fault");
    Ok(())
}

// ---- ReadRegisters / WriteRegisters

/// Writes FP state from its argument, reports, and blocks.
extern "C" fn fill_and_block(seed: usize) -> ! {
    fill(seed as u64);
    PROGRESS[2].store(1, SeqCst);
    finish()
}

/// Where WriteRegisters sends it: checks the FP state it had (a0 = its seed).
extern "C" fn check_after_write(seed: usize) -> ! {
    if mismatch(seed as u64).is_some() {
        ERRS.fetch_add(1, SeqCst);
    }
    PROGRESS[3].store(1, SeqCst);
    finish()
}

/// The register invocations cover the integer registers and pc only (as seL4's): FP state is
/// not in them, and rewriting a thread's registers leaves its FP state alone.
pub fn register_invocations(env: &mut Env) -> TResult {
    reset_shared();
    let n = env.alloc_cap(o::NOTIFICATION)?;
    crate::env::sset(15, n);
    let seed = 0x2e95_0000_0000_0007usize;
    let t = env.spawn_on(fill_and_block, seed, 255, env.other_hart().unwrap_or(env.bi.node_id))?;
    wait_done(n, 1);
    let mut ctx = ok!(tcb::read_registers(t.tcb, true, 0, abi::regs::COUNT));
    fill(0x2e95_0000_0000_0008);
    ctx.regs[userlib::tcb::UserContext::PC] = check_after_write as *const () as usize;
    ctx.set_a(0, seed);
    ok!(tcb::write_registers(t.tcb, true, 0, abi::regs::COUNT, &ctx));
    wait_done(n, 2);
    ensure_eq!(PROGRESS[3].load(SeqCst), 1, "the thread ran from its new pc");
    ensure_eq!(ERRS.load(SeqCst), 0, "FP state changed by ReadRegisters/WriteRegisters");
    check(0x2e95_0000_0000_0008, "the invoker's own state")
}

// ---- migration

/// On each hart a lower-priority thread that keeps its own FP state there and yields.
extern "C" fn hart_noise(me: usize) -> ! {
    let seed = 0x7015_e000_0000_0000u64 | (me as u64) << 16;
    fill(seed);
    while STOP.load(SeqCst) == 0 {
        note_err(seed);
        PROGRESS[4 + (me & 3)].fetch_add(1, SeqCst);
        syscall::yield_now();
    }
    finish()
}

/// Moves itself over every hart: new FP state, SetAffinity, the state checked on the new hart.
extern "C" fn self_migrator(own_tcb: usize) -> ! {
    let harts = crate::env::sget(14);
    for k in 0..4 * harts {
        let seed = 0x3160_0000_0000_0000u64 | k as u64;
        fill(seed);
        let _ = tcb::set_affinity(own_tcb, k % harts);
        note_err(seed);
        PROGRESS[0].fetch_add(1, SeqCst);
    }
    finish()
}

/// Computes in FP without blocking while another hart moves it around.
extern "C" fn moved_spinner(_: usize) -> ! {
    let mut seed = 0x3170_0000_0000_0000u64;
    while STOP.load(SeqCst) == 0 {
        fill(seed);
        for _ in 0..8 {
            note_err(seed);
        }
        seed = seed.wrapping_add(1);
        PROGRESS[1].fetch_add(1, SeqCst);
    }
    finish()
}

/// A thread's FP state survives migration between harts whose registers other threads' FP
/// states keep taking: moving itself (it leaves through the scheduler), and moved by another
/// hart while it computes (stalled there, its state possibly not saved yet when its new hart
/// wants it).
pub fn survive_migration(env: &mut Env) -> TResult {
    let harts = userlib::bootinfo::harts(env.bi).min(4);
    if harts < 3 {
        return Err(crate::env::Fail::skip(format_args!("needs 3 harts")));
    }
    reset_shared();
    let n = env.alloc_cap(o::NOTIFICATION)?;
    crate::env::sset(15, n);
    crate::env::sset(14, harts);
    let w0 = stat(stat::FPU_WAITS);
    for h in 0..harts {
        env.spawn_on(hart_noise, h, 10, h)?;
    }
    let me = env.spawn_cfg(
        self_migrator as *const () as usize,
        0,
        ThreadCfg { prio: 100, start: false, affinity: Some(1), ..ThreadCfg::default() },
    )?;
    // Its own TCB cap as its argument (the cap is in the shared CSpace).
    let mut ctx = ok!(tcb::read_registers(me.tcb, false, 0, abi::regs::COUNT));
    ctx.set_a(0, me.tcb);
    ok!(tcb::write_registers(me.tcb, true, 0, abi::regs::COUNT, &ctx));
    wait_done(n, 1);
    ensure_eq!(PROGRESS[0].load(SeqCst), 4 * harts, "self-migrations done");
    // Moved by the root over the other harts while it runs.
    let root = env.bi.node_id;
    let away = |k: usize| (root + 1 + k % (harts - 1)) % harts;
    let sp = env.spawn_on(moved_spinner, 0, 100, away(0))?;
    let mut moves = 0;
    for k in 1..25 {
        let before = PROGRESS[1].load(SeqCst);
        ok!(tcb::set_affinity(sp.tcb, away(k)));
        moves += 1;
        let mut spins = 0;
        while PROGRESS[1].load(SeqCst) < before + 2 && spins < 1_000_000 {
            core::hint::spin_loop();
            spins += 1;
        }
    }
    STOP.store(1, SeqCst);
    wait_done(n, 1 + harts + 1);
    helper_errors()?;
    ensure!(
        PROGRESS[1].load(SeqCst) >= 2 * moves,
        "the moved thread made {} rounds in {} moves",
        PROGRESS[1].load(SeqCst),
        moves
    );
    for h in 0..harts {
        ensure!(PROGRESS[4 + h].load(SeqCst) > 0, "the FP thread of hart {} never ran", h);
    }
    print!("({} moves, {} loads put off while the old hart still held the state) ", moves, stat(stat::FPU_WAITS) - w0);
    Ok(())
}

// ---- deletion of the FPU owner

const SECRET: u64 = 0x5ec2_e700_0000_0000;

/// Fills the FP registers with the secret and keeps them live: computing (`spin`) or blocked.
extern "C" fn secret_holder(spin: usize) -> ! {
    fill(SECRET);
    PROGRESS[0].fetch_add(1, SeqCst);
    if spin != 0 {
        loop {
            note_err(SECRET);
        }
    }
    finish()
}

/// A new thread: its first FP instruction reads its registers, which must be zero.
extern "C" fn fresh_reader(slot: usize) -> ! {
    let d = dump();
    let leaked = d.iter().any(|&v| v & !0xffff == SECRET & !0xffff);
    let zero = d == [0; 33];
    PROGRESS[2 + slot].store(
        if zero {
            1
        } else if leaked {
            2
        } else {
            3
        },
        SeqCst,
    );
    finish()
}

/// Adversarial: a thread is deleted while its FP state is in a hart's registers (running there
/// with FS Dirty, not saved; or blocked, its copy still there), from another hart; then new
/// threads use FP, one on that hart in a TCB at the deleted one's address (its Untyped revoked
/// and retyped), one on another hart. Each must see a zero state: a hart that still took the
/// deleted thread for its owner would hand the new TCB the old registers without a load.
pub fn deleted_owner(env: &mut Env) -> TResult {
    let other = env.need_other_hart()?;
    let harts = userlib::bootinfo::harts(env.bi);
    reset_shared();
    let n = env.alloc_cap(o::NOTIFICATION)?;
    crate::env::sset(15, n);
    let ut = env.alloc(o::UNTYPED, o::TCB_BITS)?.cptr;
    let cfg = |h| ThreadCfg { prio: 200, affinity: Some(h), ..ThreadCfg::default() };
    let mut finished = 0;
    for (round, spin) in [1usize, 0].into_iter().enumerate() {
        let v = env.slot()?;
        ok!(untyped::retype(ut, o::TCB, 0, CNODE, 0, 0, v, 1));
        env.spawn_tcb(v, secret_holder as *const () as usize, spin, cfg(other))?;
        if spin != 0 {
            while PROGRESS[0].load(SeqCst) <= round {
                core::hint::spin_loop();
            }
        } else {
            finished += 1;
            wait_done(n, finished);
        }
        // The thread goes with its Untyped's children; the same memory makes the next TCB.
        ok!(cnode::revoke(CNODE, ut, ROOT_DEPTH));
        ensure!(crate::env::identify(v).is_none(), "the TCB survived its Untyped's revoke");
        for (i, h) in [other, (other + 1) % harts].into_iter().enumerate() {
            let slot = 2 * round + i;
            let t = env.slot()?;
            if i == 0 {
                ok!(untyped::retype(ut, o::TCB, 0, CNODE, 0, 0, t, 1));
                env.spawn_tcb(t, fresh_reader as *const () as usize, slot, cfg(h))?;
            } else {
                env.spawn_cfg(fresh_reader as *const () as usize, slot, cfg(h))?;
            }
            finished += 1;
            wait_done(n, finished);
            let r = PROGRESS[2 + slot].load(SeqCst);
            ensure!(
                r != 2,
                "a new thread on hart index {} read the deleted thread's FP registers (round {})",
                h,
                round
            );
            ensure!(r == 1, "a new thread on hart index {} saw a nonzero FP state (round {})", h, round);
        }
        ok!(cnode::revoke(CNODE, ut, ROOT_DEPTH));
    }
    Ok(())
}

// ---- a thread that never uses FP

extern "C" fn plain_server(ep: usize) -> ! {
    let (_, _, mut mrs) = syscall::recv(ep);
    loop {
        (_, _, mrs) = syscall::reply_recv(ep, MessageInfo::new(0, 0, 0, 1), [mrs[0] + 1, 0, 0, 0]);
    }
}

extern "C" fn fp_server(ep: usize) -> ! {
    let (_, _, mut mrs) = syscall::recv(ep);
    loop {
        // SAFETY: an FP register write.
        unsafe { kt_fp_touch() };
        (_, _, mrs) = syscall::reply_recv(ep, MessageInfo::new(0, 0, 0, 1), [mrs[0] + 1, 0, 0, 0]);
    }
}

/// Calls its server 100 times, never using FP; then reads its own kernel entries if asked to
/// (itself, not the root after `finish`: the root may look before or after its last Wait).
extern "C" fn plain_client(ep: usize) -> ! {
    for i in 0..100 {
        let (_, _, mrs) = syscall::call(ep, MessageInfo::new(0, 0, 0, 1), [i, 0, 0, 0]);
        if mrs[0] != i + 1 {
            ERRS.fetch_add(1, SeqCst);
        }
    }
    let me = PROBE_TCB.load(SeqCst);
    if me != 0 {
        let entries = syscall::debug_thread_entries(abi::init_cap::DEBUG, me).unwrap_or(usize::MAX);
        PROBED_ENTRIES.store(entries, SeqCst);
    }
    finish()
}

/// Two threads that never use FP exchange 100 round trips on one hart: no FP trap, load or save
/// anywhere. Then the server computes in FP: the client still never traps and never gets a
/// state loaded (it makes exactly its 100 kernel entries), the server's state stays in the
/// registers (no load after its first).
pub fn never_used_never_pays(env: &mut Env) -> TResult {
    reset_shared();
    let n = env.alloc_cap(o::NOTIFICATION)?;
    crate::env::sset(15, n);
    let h = env.other_hart().unwrap_or(env.bi.node_id);
    let all = || [stat(stat::FPU_TRAPS), stat(stat::FPU_LOADS), stat(stat::FPU_SAVES)];
    let ep = env.alloc_cap(o::ENDPOINT)?;
    env.spawn_on(plain_server, ep, 200, h)?;
    let before = all();
    env.spawn_on(plain_client, ep, 100, h)?;
    wait_done(n, 1);
    let after = all();
    ensure!(before == after, "FP traps/loads/saves {:?} -> {:?} with no thread using FP", before, after);
    let ep2 = env.alloc_cap(o::ENDPOINT)?;
    env.spawn_on(fp_server, ep2, 200, h)?;
    let c = env.spawn_cfg(
        plain_client as *const () as usize,
        ep2,
        ThreadCfg { prio: 100, start: false, affinity: Some(h), ..ThreadCfg::default() },
    )?;
    let l0 = stat(stat::FPU_LOADS);
    PROBE_TCB.store(c.tcb, SeqCst);
    ok!(tcb::resume(c.tcb));
    wait_done(n, 2);
    // Its 100 Calls and the read itself (counted on entry): an FP trap would be one more.
    ensure_eq!(PROBED_ENTRIES.load(SeqCst), 101, "kernel entries of the client that never used FP");
    ensure!(stat(stat::FPU_LOADS) - l0 <= 1, "{} FP loads with one FP thread on the hart", stat(stat::FPU_LOADS) - l0);
    ensure_eq!(ERRS.load(SeqCst), 0, "wrong replies");
    Ok(())
}

// ---- benchmark (RTL figures: bench/results/fp.jsonl)

/// Where the figures go in `BENCH`.
pub const B_FIRST_USE: usize = 26;
pub const B_WRITE_ON: usize = 27;
pub const B_RT_FP: usize = 28;
pub const B_RT_PLAIN: usize = 29;

const BENCH_ROUNDS: usize = 64;

/// Cycles of the first FP write after a switch (the trap and the load), best and the plain
/// write with FS on; and the same-hart Call+ReplyRecv round trip when both threads write FP
/// state in each run against two threads that never used FP. The root's hart, server at 255;
/// the trap and the write are timed with `rdcycle` (the hart does not sleep in between), the
/// round trips with wall time as the other IPC benchmarks.
pub fn bench(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let b = env.mint(ep, rights::ALL, 1)?;
    env.spawn(fp_server, ep, 255)?;
    let call = |i: usize| syscall::call(b, MessageInfo::new(0, 0, 0, 1), [i, 0, 0, 0]);
    // Warm-up, and the FP write with FS on.
    let mut write_on = usize::MAX;
    for i in 0..8 {
        call(i);
        // SAFETY: FP register writes.
        unsafe { kt_fp_touch() };
        write_on = write_on.min(unsafe { kt_fp_timed_write() });
    }
    // First use after a switch: a run with an FP write (state loaded at the next switch-in),
    // one without (no longer loaded ahead), then the timed write traps and loads.
    let (mut first, mut sum) = (usize::MAX, 0);
    let t0 = stat(stat::FPU_TRAPS);
    for i in 0..BENCH_ROUNDS {
        // SAFETY: an FP register write.
        unsafe { kt_fp_touch() };
        call(i);
        call(i);
        // SAFETY: as above.
        let c = unsafe { kt_fp_timed_write() };
        first = first.min(c);
        sum += c;
    }
    ensure!(
        stat(stat::FPU_TRAPS) - t0 >= BENCH_ROUNDS,
        "{} FP traps in {} first uses",
        stat(stat::FPU_TRAPS) - t0,
        BENCH_ROUNDS
    );
    // Round trips, both threads writing FP state every run.
    let w0 = crate::env::wall_cycles();
    for i in 0..crate::t_bench::ROUNDS {
        // SAFETY: an FP register write.
        unsafe { kt_fp_touch() };
        call(i);
    }
    let rt_fp = (crate::env::wall_cycles() - w0) / crate::t_bench::ROUNDS;
    // Two threads that never used FP, the same way (a fresh client on this hart).
    let ep2 = env.alloc_cap(o::ENDPOINT)?;
    env.spawn(plain_server, ep2, 255)?;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    crate::env::sset(15, n);
    crate::env::sset(13, ep2);
    reset_shared();
    env.spawn(plain_timer, 0, 255)?;
    wait_done(n, 1);
    let rt_plain = crate::env::sget(12);
    BENCH[B_FIRST_USE].store(sum / BENCH_ROUNDS, SeqCst);
    BENCH[B_WRITE_ON].store(write_on, SeqCst);
    BENCH[B_RT_FP].store(rt_fp, SeqCst);
    BENCH[B_RT_PLAIN].store(rt_plain, SeqCst);
    print!(
        "(first use {} cycles best {}, write {}; round trip {} FP, {} plain) ",
        sum / BENCH_ROUNDS,
        first,
        write_on,
        rt_fp,
        rt_plain
    );
    Ok(())
}

/// The plain round trip, timed by a fresh thread that never used FP (shared[13]: the endpoint;
/// result in shared[12]).
extern "C" fn plain_timer(_: usize) -> ! {
    let ep = crate::env::sget(13);
    let call = |i: usize| syscall::call(ep, MessageInfo::new(0, 0, 0, 1), [i, 0, 0, 0]);
    for i in 0..10 {
        call(i);
    }
    let w0 = crate::env::wall_cycles();
    for i in 0..crate::t_bench::ROUNDS {
        call(i);
    }
    crate::env::sset(12, (crate::env::wall_cycles() - w0) / crate::t_bench::ROUNDS);
    finish()
}
