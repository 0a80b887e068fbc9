//! The IPC fastpath and round-trip cost.
use crate::env::{wall_cycles, Env, TResult, ThreadCfg, BENCH};
use abi::{object as o, stat, MessageInfo};
use core::sync::atomic::Ordering;
use userlib::invoke::rights;
use userlib::{marker, syscall};

/// Round trips per measurement; `KTEST_ROUNDS=N make sw` (at build time) for shorter RTL runs.
pub const ROUNDS: usize = match option_env!("KTEST_ROUNDS") {
    Some(n) => decimal(n),
    None => 1000,
};

const fn decimal(s: &str) -> usize {
    let (b, mut i, mut n) = (s.as_bytes(), 0, 0);
    while i < b.len() {
        assert!(b[i].is_ascii_digit(), "KTEST_ROUNDS: not a number");
        n = n * 10 + (b[i] - b'0') as usize;
        i += 1;
    }
    n
}
/// Where `round_trip_other_space` leaves its figures in `BENCH`.
pub const B_OTHER_SPACE: usize = 16;
pub const B_OTHER_SPACE_ENTRIES: usize = 17;
/// Kernel entries (all harts) per cross-hart round trip, x100.
pub const B_CROSS_ENTRIES: usize = 19;
/// Kernel entries (all harts) per same-hart round trip, x100.
pub const B_SAME_ENTRIES: usize = 20;
/// Threads handed straight to their idle hart (`stat::HANDOFFS`) per cross-hart round trip,
/// x100.
pub const B_CROSS_HANDOFFS: usize = 21;

/// Region ids of the round trips for the RTL profiler (hw/sim/README.md): each measured Call is
/// bracketed, so the harness prints cycles per round trip and `+profile-region=ID` profiles them.
pub const REGION_WARMUP: u16 = 10;
pub const REGION_SAME_HART: u16 = 11;
pub const REGION_CROSS_HART: u16 = 12;
pub const REGION_OTHER_SPACE: u16 = 13;

extern "C" fn ping_server(ep: usize) -> ! {
    let (_, _, mut mrs) = syscall::recv(ep);
    loop {
        (_, _, mrs) = syscall::reply_recv(ep, MessageInfo::new(0, 0, 0, 1), [mrs[0] + 1, 0, 0, 0]);
    }
}

/// `rounds` Call round trips, each one region `R`; returns cycles of wall time per round trip
/// (not `rdcycle`: the caller's hart may sleep in `wfi` while a server on another hart works).
fn ping<const R: u16>(cap: usize, rounds: usize) -> Result<usize, crate::env::Fail> {
    let t0 = wall_cycles();
    for i in 0..rounds {
        marker::begin::<R>();
        let (_, _, mrs) = syscall::call(cap, MessageInfo::new(0, 0, 0, 1), [i, 0, 0, 0]);
        marker::end::<R>();
        ensure_eq!(mrs[0], i + 1, "ping reply");
    }
    Ok((wall_cycles() - t0) / rounds.max(1))
}

pub fn fastpath(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let b = env.mint(ep, rights::ALL, 1)?;
    env.spawn(ping_server, ep, 255)?;
    ping::<REGION_WARMUP>(b, 10)?;
    let (c0, r0, s0) = (
        syscall::debug_stat(stat::FASTPATH_CALL),
        syscall::debug_stat(stat::FASTPATH_REPLY_RECV),
        syscall::debug_stat(stat::SLOWPATH_IPC),
    );
    let e0 = syscall::debug_stat(stat::KERNEL_ENTRIES);
    let cycles = ping::<REGION_SAME_HART>(b, ROUNDS)?;
    let e1 = syscall::debug_stat(stat::KERNEL_ENTRIES);
    BENCH[B_SAME_ENTRIES].store((e1 - e0).saturating_sub(1) * 100 / ROUNDS, Ordering::SeqCst);
    let (c1, r1, s1) = (
        syscall::debug_stat(stat::FASTPATH_CALL),
        syscall::debug_stat(stat::FASTPATH_REPLY_RECV),
        syscall::debug_stat(stat::SLOWPATH_IPC),
    );
    BENCH[0].store(cycles, Ordering::SeqCst);
    BENCH[2].store(c1 - c0, Ordering::SeqCst);
    BENCH[3].store(r1 - r0, Ordering::SeqCst);
    let want = ROUNDS * 9 / 10;
    ensure!(c1 - c0 >= want, "Call fastpath taken {} times in {} round trips (slowpath {})", c1 - c0, ROUNDS, s1 - s0);
    ensure!(
        r1 - r0 >= want,
        "ReplyRecv fastpath taken {} times in {} round trips (slowpath {})",
        r1 - r0,
        ROUNDS,
        s1 - s0
    );
    ensure!(c1 - c0 <= ROUNDS + 10 && r1 - r0 <= ROUNDS + 10, "fastpath counters grew by more than the IPCs made");
    Ok(())
}

pub fn round_trip(env: &mut Env) -> TResult {
    let other = env.need_other_hart()?;
    let ep = env.alloc_cap(o::ENDPOINT)?;
    env.spawn_on(ping_server, ep, 255, other)?;
    ping::<REGION_WARMUP>(ep, 10)?;
    let h0 = syscall::debug_stat(stat::HANDOFFS);
    let e0 = syscall::debug_stat(stat::KERNEL_ENTRIES);
    let cycles = ping::<REGION_CROSS_HART>(ep, ROUNDS)?;
    let e1 = syscall::debug_stat(stat::KERNEL_ENTRIES);
    let h1 = syscall::debug_stat(stat::HANDOFFS);
    BENCH[1].store(cycles, Ordering::SeqCst);
    // The DebugStat call that reads e1 is an entry too.
    BENCH[B_CROSS_ENTRIES].store((e1 - e0).saturating_sub(1) * 100 / ROUNDS, Ordering::SeqCst);
    BENCH[B_CROSS_HANDOFFS].store((h1 - h0) * 100 / ROUNDS, Ordering::SeqCst);
    Ok(())
}

/// The same-hart round trip with the server in an address space of its own (the image mapped
/// again into a fresh VSpace): every IPC switches `satp`, which the one-space figure leaves out.
pub fn round_trip_other_space(env: &mut Env) -> TResult {
    let vs = env.image_vspace()?;
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let b = env.mint(ep, rights::ALL, 1)?;
    let affinity = Some(env.bi.node_id);
    env.spawn_cfg(ping_server as *const () as usize, ep, ThreadCfg { vspace: vs, affinity, ..ThreadCfg::default() })?;
    ping::<REGION_WARMUP>(b, 10)?;
    let (e0, f0) = (syscall::debug_stat(stat::KERNEL_ENTRIES), syscall::debug_stat(stat::FASTPATH_CALL));
    let cycles = ping::<REGION_OTHER_SPACE>(b, ROUNDS)?;
    let (e1, f1) = (syscall::debug_stat(stat::KERNEL_ENTRIES), syscall::debug_stat(stat::FASTPATH_CALL));
    ensure!(
        f1 - f0 >= ROUNDS * 9 / 10,
        "Call fastpath taken {} times in {} round trips across spaces",
        f1 - f0,
        ROUNDS
    );
    BENCH[B_OTHER_SPACE].store(cycles, Ordering::SeqCst);
    // The two debug_stat calls between the samples are entries too.
    BENCH[B_OTHER_SPACE_ENTRIES].store((e1 - e0).saturating_sub(1) * 100 / ROUNDS, Ordering::SeqCst);
    Ok(())
}
