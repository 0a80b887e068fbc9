//! A thread never runs user code in an address space it no longer has, and no hart keeps a
//! freed VSpace root in `satp`. The kernel keeps a hart's address space in paths that run
//! without the lock (a Wait spinning for its signal, a thread handed to an idle hart, an idle
//! hart's last table); these tests race a VSpace's deletion against them from other harts. The
//! races happen on the RTL: under QEMU the host clock ends every spin before the lock holder
//! is done, and the tests then check the plain paths.
use crate::env::{
    park, rdcycle, sadd, sget, sset, wall_cycles, Env, TResult, ThreadCfg, CNODE, PAGE, ROOT_DEPTH, VSPACE,
};
use abi::{fault, object as o, stat};
use userlib::invoke::rights;
use userlib::{cnode, syscall, tcb, vspace};

// The waiter runs in a VSpace of its own that maps only its code page (`kt_stale_waiter`,
// page-aligned assembly: copying our whole image into a VSpace per round cost ~3 M cycles on
// the RTL), a page of words it shares with us, and its stack and IPC buffer.
core::arch::global_asm!(
    ".pushsection .text.kt_stale_waiter, \"ax\"",
    ".balign 4096",
    ".globl kt_stale_waiter",
    "kt_stale_waiter:",
    // a0: the shared page (`Words`). Wait for the go, let `delay` cycles pass, Wait on the
    // notification; after it, say so and park.
    "   mv s1, a0",
    "1: ld t0, {go}(s1)",
    "   beqz t0, 1b",
    "   ld t1, {delay}(s1)",
    "   rdcycle t2",
    "2: rdcycle t3",
    "   sub t3, t3, t2",
    "   bltu t3, t1, 2b",
    "   ld a0, {ntfn}(s1)",
    "   li a7, {recv}",
    "   ecall",
    "   li t0, 1",
    "   sd t0, {resumed}(s1)",
    "   ld a0, {park}(s1)",
    "3: li a7, {recv}",
    "   ecall",
    "   j 3b",
    ".balign 4096",
    ".popsection",
    go = const core::mem::offset_of!(Words, go),
    delay = const core::mem::offset_of!(Words, delay),
    ntfn = const core::mem::offset_of!(Words, ntfn),
    resumed = const core::mem::offset_of!(Words, resumed),
    park = const core::mem::offset_of!(Words, park),
    recv = const abi::syscall::RECV,
);

extern "C" {
    fn kt_stale_waiter(words: usize) -> !;
}

/// The page the waiter shares with us.
#[repr(C)]
struct Words {
    go: usize,
    delay: usize,
    ntfn: usize,
    /// The waiter ran user code after its Wait returned.
    resumed: usize,
    park: usize,
}

fn word(words: usize, offset: usize) -> usize {
    // SAFETY: `words` is the shared page, mapped read-write here.
    unsafe { core::ptr::read_volatile((words + offset) as *const usize) }
}

fn set_word(words: usize, offset: usize, v: usize) {
    // SAFETY: as in `word`.
    unsafe { core::ptr::write_volatile((words + offset) as *mut usize, v) }
}

const READY: usize = 0;
const GO: usize = 1;

/// Cycles the waiter lets pass after the go before its Wait, so that the root's SetSpace is
/// first in the lock's queue; the signaller's delay puts it after the Wait, while the SetSpace
/// (~10 k cycles on the RTL) still holds the lock.
const WAITER_DELAY: usize = 400;
const SIGNALLER_DELAY: usize = 3_000;
const ROUNDS: usize = 6;

fn delay(cycles: usize) {
    let t0 = rdcycle();
    while rdcycle().wrapping_sub(t0) < cycles {
        core::hint::spin_loop();
    }
}

fn wait_for_go() {
    while sget(GO) == 0 {
        core::hint::spin_loop();
    }
}

extern "C" fn late_signaller(ntfn: usize) -> ! {
    sadd(READY, 1);
    wait_for_go();
    delay(SIGNALLER_DELAY);
    syscall::signal(ntfn);
    park()
}

/// How the waiter is waiting when its VSpace goes.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    /// Trapping into its Wait while the SetSpace holds the lock, signalled from a third hart
    /// right after; the SetSpace deletes the old root's last cap, so the waiter's hart is
    /// moved off it (`ROOT_RETIRES`) while it waits for the lock.
    Racing,
    /// The same, with the old root kept alive (we keep a cap): nothing interrupts the waiter's
    /// hart, its Wait spins without the lock and is delivered there (on the RTL), and it must
    /// resume in the address space its TCB names now, not the one its hart had.
    RacingRootKept,
    /// The waiter's Wait first (spinning, on the RTL) and the SetSpace during its spin, the
    /// old root kept: the change cancels the spin (`sched::cancel_spins`).
    SpinningFirst,
    /// Blocked long before, its hart idle with the old root still in `satp`.
    Blocked,
}

/// One round: the waiter runs in a small VSpace of its own on `waiter_hart`; the root replaces
/// it with an empty one (deleting the old root's last cap, unless the phase keeps it); the
/// waiter must fault in the empty one and never run on in the old.
fn replace_under_waiter(
    env: &mut Env,
    phase: Phase,
    round: usize,
    harts: (usize, usize),
    fault: (usize, usize),
) -> TResult {
    let (waiter_hart, signal_hart) = harts;
    let (ep, fault_badged) = fault;
    sset(READY, 0);
    sset(GO, 0);
    let mark = env.mark();
    let old = env.alloc_cap(o::PAGE_TABLE)?;
    ok!(vspace::asid_pool_assign(abi::init_cap::ASID_POOL, old));
    let code_va = kt_stale_waiter as *const () as usize & !(PAGE - 1);
    let code = env.image_frame(code_va)?;
    env.map_frame(code, old, code_va, rights::READ_WRITE)?;
    let words_va = env.va(1);
    let words = env.new_page_at(VSPACE, words_va)?;
    let words_there = env.copy(words.cptr)?;
    env.map_frame(words_there, old, words_va, rights::READ_WRITE)?;
    let empty = env.alloc_cap(o::PAGE_TABLE)?;
    ok!(vspace::asid_pool_assign(abi::init_cap::ASID_POOL, empty));
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let racing = phase != Phase::Blocked;
    set_word(words_va, core::mem::offset_of!(Words, go), !racing as usize);
    let waiter_delay = if phase == Phase::Racing || phase == Phase::RacingRootKept { WAITER_DELAY } else { 0 };
    set_word(words_va, core::mem::offset_of!(Words, delay), waiter_delay);
    set_word(words_va, core::mem::offset_of!(Words, ntfn), n);
    set_word(words_va, core::mem::offset_of!(Words, resumed), 0);
    set_word(words_va, core::mem::offset_of!(Words, park), crate::env::PARK.load(core::sync::atomic::Ordering::SeqCst));
    let cfg = ThreadCfg { vspace: old, affinity: Some(waiter_hart), fault_ep: fault_badged, ..ThreadCfg::default() };
    let waiter = env.spawn_cfg(kt_stale_waiter as *const () as usize, words_va, cfg)?;
    if racing {
        env.spawn_on(late_signaller, n, 255, signal_hart)?;
        crate::env::wait_for(READY, 1, 100_000)?;
        // The waiter is watching for the go by now.
        delay(20_000);
    } else {
        // Past its spin: blocked, and its hart idle.
        delay(200_000);
    }
    if phase == Phase::Racing || phase == Phase::Blocked {
        // The waiter's VTABLE slot now holds the old root's last cap: the SetSpace deletes it.
        ok!(cnode::delete(CNODE, old, ROOT_DEPTH));
    }
    let resumed = || word(words_va, core::mem::offset_of!(Words, resumed));
    set_word(words_va, core::mem::offset_of!(Words, go), 1);
    sset(GO, 1);
    if phase == Phase::SpinningFirst {
        // Inside the waiter's spin (4,000 cycles), before the signaller.
        delay(WAITER_DELAY * 3);
    }
    ok!(tcb::set_space(waiter.tcb, fault_badged, CNODE, 0, empty, 0));
    if phase == Phase::Blocked {
        syscall::signal(n);
    }
    let mut fault = None;
    // A waiter that ran on in the old VSpace parks (no fault follows): stop looking then. Up
    // to a second of wall time (QEMU on one host thread may run the other harts seldom).
    let t0 = wall_cycles();
    while wall_cycles().wrapping_sub(t0) < platform::clock::CORE_HZ {
        if resumed() != 0 {
            break;
        }
        let (badge, info, mrs) = syscall::nb_recv(ep);
        if badge != 0 {
            fault = Some((badge, info, mrs));
            break;
        }
        syscall::yield_now();
    }
    ensure!(resumed() == 0, "round {}: the waiter ran user code in its deleted VSpace", round);
    let Some((badge, info, mrs)) = fault else {
        return Err(crate::env::fail(format_args!("round {}: no fault from the waiter in its empty VSpace", round)));
    };
    ensure_eq!(badge, FAULT_BADGE, "fault badge");
    ensure_eq!(info.label, fault::VM_FAULT, "the waiter's fault in the empty VSpace");
    ensure_eq!(mrs[2], 1, "an instruction fetch faulted (PrefetchFault)");
    ensure_eq!(mrs[0], mrs[1], "fetch fault address is the pc");
    ok!(tcb::suspend(waiter.tcb));
    give_back(env, mark);
    Ok(())
}

/// Delete every cap made since `mark` and give the slots back (the suite's root CNode is
/// shared by every test). Slots that cannot be emptied stay taken.
fn give_back(env: &mut Env, mark: usize) {
    let end = env.mark();
    for s in (mark..end).rev() {
        let _ = cnode::delete(CNODE, s, ROOT_DEPTH);
    }
    let _ = env.release_slots(mark, end - mark);
}

/// The badge `t_fault::fault_ep` gives fault messages.
const FAULT_BADGE: usize = 0xfa;

/// #45: a thread on hart A waits on a notification while the root on hart 0 replaces its
/// VSpace with an empty one by `TCB_SetSpace`, deleting the last cap of the old root (its ASID
/// released, its page free for Retype); a signaller on hart B completes the Wait. Whether the
/// Wait spun without the lock (and was delivered there) or blocked, the thread goes on in the
/// empty VSpace: its next fetch faults, and it never writes `resumed` through the freed root.
/// In the rounds that free the old root, hart A had it in `satp` when it went, so it was moved
/// off it (`ROOT_RETIRES`); in the others the old VSpace stays alive and the waiter must still
/// resume in the empty one its TCB names.
pub fn spin_wait_vspace_replaced(env: &mut Env) -> TResult {
    let n_harts = userlib::bootinfo::harts(env.bi);
    if n_harts < 3 {
        return Err(crate::env::Fail::skip(format_args!("needs three harts")));
    }
    let harts = ((env.bi.node_id + 1) % n_harts, (env.bi.node_id + 2) % n_harts);
    let fault = crate::t_fault::fault_ep(env)?;
    let retires0 = syscall::debug_stat(stat::ROOT_RETIRES);
    let deliveries0 = syscall::debug_stat(stat::SPIN_DELIVERIES);
    for round in 0..ROUNDS {
        let phase = [Phase::Racing, Phase::RacingRootKept, Phase::SpinningFirst][round % 3];
        replace_under_waiter(env, phase, round, harts, fault)?;
    }
    let deleting = ROUNDS.div_ceil(3);
    let retires = syscall::debug_stat(stat::ROOT_RETIRES) - retires0;
    ensure!(retires >= deleting, "{} harts moved off a freed root in {} rounds that freed one", retires, deleting);
    let deliveries = syscall::debug_stat(stat::SPIN_DELIVERIES) - deliveries0;
    userlib::print!("({} of {} Waits delivered while spinning) ", deliveries, ROUNDS);
    Ok(())
}

/// The waiter blocked long before and its hart idle: the idle hart, whose `satp` still names
/// the old root, is moved off it before the SetSpace returns (`ROOT_RETIRES`), and the Signal
/// after it wakes the waiter into the empty VSpace (handed to its idle hart).
pub fn idle_hart_leaves_freed_root(env: &mut Env) -> TResult {
    let waiter_hart = env.need_other_hart()?;
    let fault = crate::t_fault::fault_ep(env)?;
    let retires0 = syscall::debug_stat(stat::ROOT_RETIRES);
    replace_under_waiter(env, Phase::Blocked, 0, (waiter_hart, waiter_hart), fault)?;
    let retires = syscall::debug_stat(stat::ROOT_RETIRES) - retires0;
    ensure!(retires >= 1, "the idle hart with the freed root in satp was not moved off it");
    Ok(())
}
