//! Timers (issue #16): the kernel deadline (SetDeadline: its errors, replace, a past time fires
//! at once, cancel; one per thread, gone with its thread or its receiver slot, off the lists
//! while suspended, following SetAffinity) and the runtime's `sleep`/`timeout` on top of it
//! (`userlib::task::timer`), on one hart and on every hart at once.
//!
//! Times are timebase ticks. "Not absurdly late" is a generous bound (`late`, two seconds),
//! not a speed claim: QEMU's vCPUs can stall for a long while on a loaded host.
use crate::env::{sadd, sget, sset, Env, Fail, TResult, ThreadCfg, CNODE, ROOT_DEPTH, ROOT_TCB};
use abi::{error, object as o, stat};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use userlib::chan::ThreadPark;
use userlib::syscall::{self, DeadlineError};
use userlib::task::timer::{Elapsed, KernelClock, TimerHandle, Timers};
use userlib::task::{Executor, Handle, Park};
use userlib::{cnode, print, tcb, time, uintr};

/// The vector the kernel deadline raises.
const TV: usize = 62;
const VBIT: u64 = 1 << TV;

const SLOTS: usize = 16;
const SLOT_BYTES: usize = 320;
type Rt = Handle<SLOTS, SLOT_BYTES>;
/// Runtimes (executor, park hook, timers, clock), each claimed once by one thread.
const NRT: usize = 16;
static EXECS: [Executor<SLOTS, SLOT_BYTES>; NRT] = [const { Executor::new() }; NRT];
static PARKS: [ThreadPark; NRT] = [const { ThreadPark::new() }; NRT];
static TIMERS: [Timers; NRT] = [const { Timers::new() }; NRT];
static CLOCKS: [KernelClock; NRT] = [const { KernelClock::new(TV) }; NRT];
static NEXT_RT: AtomicUsize = AtomicUsize::new(0);

/// The calling thread's runtime: its executor parks through `Timers`, around a `ThreadPark` that
/// blocks in Wait on `ntfn` (bound to the thread, registered as its receiver).
fn runtime(ntfn: usize) -> Option<(Rt, TimerHandle, &'static ThreadPark)> {
    let i = NEXT_RT.fetch_add(1, SeqCst);
    if i >= NRT {
        return None;
    }
    PARKS[i].setup(ntfn, 0);
    let th = TIMERS[i].claim(&PARKS[i], &CLOCKS[i])?;
    let rt = EXECS[i].claim(&TIMERS[i])?;
    Some((rt, th, &PARKS[i]))
}

fn root_runtime(ntfn: usize) -> Result<(Rt, TimerHandle, &'static ThreadPark), Fail> {
    runtime(ntfn).ok_or_else(|| Fail::new(file!(), line!(), format_args!("out of runtimes (NRT)")))
}

fn st(which: usize) -> usize {
    syscall::debug_stat(which)
}

fn hz(env: &Env) -> u64 {
    env.bi.timebase_hz as u64
}

/// The generous "not absurdly late" bound.
fn late(env: &Env) -> u64 {
    2 * hz(env)
}

/// Yield until the timebase reaches `t`.
fn spin_until(t: u64) {
    while time::now() < t {
        syscall::yield_now();
    }
}

/// Yield until `cond`, for at most `ticks`; whether it held.
fn wait_until(ticks: u64, cond: impl Fn() -> bool) -> bool {
    let end = time::now() + ticks;
    while !cond() {
        if time::now() > end {
            return cond();
        }
        syscall::yield_now();
    }
    true
}

/// Run `f` with the root task the receiver of a fresh U-notification (undone after, which also
/// frees its slot and so cancels any deadline it left armed).
fn with_root_receiver(env: &mut Env, f: impl FnOnce(&mut Env, usize) -> TResult) -> TResult {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    ok!(tcb::bind_notification(ROOT_TCB, n));
    // Its user-interrupt handler (if an earlier test installed one) must not take the bits.
    uintr::disable();
    let r = match uintr::register_receiver(n) {
        Ok(_) => f(env, n),
        Err(e) => Err(Fail::new(file!(), line!(), format_args!("register_receiver: {}", e))),
    };
    let _ = tcb::unbind_notification(ROOT_TCB);
    r
}

fn deadline_err(r: Result<u64, DeadlineError>) -> Option<(usize, u64)> {
    r.err().map(|e| (e.code, e.detail))
}

// ---------------------------------------------------------------------------------------------

/// SetDeadline's contract: no receiver slot, a bad vector, a time too far ahead or u64::MAX are
/// errors that arm nothing; arming returns the deadline it replaced and one thread has one;
/// cancel returns it; a time in the past raises the vector at once; a replaced deadline never
/// fires, its replacement wakes a blocked Wait no earlier than its time; losing the receiver
/// slot cancels an armed deadline.
pub fn deadline_abi(env: &mut Env) -> TResult {
    let base = st(stat::DEADLINES_ARMED);
    let hz = hz(env);
    let late = late(env);
    let now = time::now();
    ensure_eq!(
        deadline_err(syscall::set_deadline(now + hz, TV)).unwrap_or_default().0,
        error::ILLEGAL_OPERATION,
        "no receiver slot"
    );
    ensure_eq!(
        ok!(syscall::set_deadline(abi::deadline::CANCEL as u64, 0)),
        0,
        "cancelling nothing is fine and returns 0"
    );
    with_root_receiver(env, |_, n| {
        let now = time::now();
        ensure!(deadline_err(syscall::set_deadline(now + hz, 64)) == Some((error::INVALID_ARGUMENT, 1)), "vector 64");
        ensure!(
            deadline_err(syscall::set_deadline(now + hz, usize::MAX)) == Some((error::INVALID_ARGUMENT, 1)),
            "vector 2^64-1"
        );
        let far = now + abi::deadline::MAX_AHEAD + hz;
        let e = deadline_err(syscall::set_deadline(far, TV));
        ensure!(
            matches!(e, Some((error::RANGE_ERROR, latest)) if latest >= now + abi::deadline::MAX_AHEAD && latest <= time::now() + abi::deadline::MAX_AHEAD),
            "a deadline past MAX_AHEAD: {:?}",
            e
        );
        ensure!(matches!(deadline_err(syscall::set_deadline(u64::MAX, TV)), Some((error::RANGE_ERROR, _))), "u64::MAX");
        ensure_eq!(st(stat::DEADLINES_ARMED), base, "refused deadlines armed nothing");

        let a = time::now() + 100 * hz;
        ensure_eq!(ok!(syscall::set_deadline(a, TV)), 0, "first arming replaces nothing");
        ensure_eq!(st(stat::DEADLINES_ARMED), base + 1, "armed");
        ensure_eq!(ok!(syscall::set_deadline(a + hz, TV)), a, "re-arming returns what it replaced");
        ensure_eq!(st(stat::DEADLINES_ARMED), base + 1, "still one deadline for the thread");
        ensure_eq!(ok!(syscall::set_deadline(0, 0)), a + hz, "cancel returns the armed deadline");
        ensure_eq!(st(stat::DEADLINES_ARMED), base, "cancelled");

        uintr::poll();
        let fired = st(stat::DEADLINES_FIRED);
        ensure_eq!(ok!(syscall::set_deadline(1, TV)), 0, "a past deadline");
        ensure_eq!(uintr::poll(), VBIT, "a past deadline raises its vector at once");
        ensure_eq!(st(stat::DEADLINES_FIRED), fired + 1, "counted as fired");
        ensure_eq!(st(stat::DEADLINES_ARMED), base, "and leaves nothing armed");

        // Replace with a later one: nothing at the first time, Wait wakes at the second. (A host
        // that stalls this vCPU past the first time between the two calls gets another go.)
        let d = hz / 20;
        let mut t0 = 0;
        for _ in 0..3 {
            t0 = time::now();
            ok!(syscall::set_deadline(t0 + d, TV));
            if ok!(syscall::set_deadline(t0 + 3 * d, TV)) == t0 + d {
                break;
            }
            ensure!(uintr::poll() == VBIT && time::now() >= t0 + d, "the first deadline went early");
            t0 = 0;
        }
        ensure!(t0 != 0, "re-arming never found the first deadline armed");
        spin_until(t0 + 2 * d);
        ensure_eq!(uintr::poll(), 0, "the replaced deadline raised nothing");
        let bits = uintr::wait(n);
        let t1 = time::now();
        ensure!(bits & VBIT != 0, "Wait returned {:#x} without the deadline's vector", bits);
        ensure!(t1 >= t0 + 3 * d, "woken {} ticks early", t0 + 3 * d - t1);
        ensure!(t1 <= t0 + 3 * d + late, "woken {} ticks late", t1 - t0 - 3 * d);
        ensure_eq!(st(stat::DEADLINES_ARMED), base, "a fired deadline is spent");

        ok!(syscall::set_deadline(time::now() + 100 * hz, TV));
        ensure_eq!(st(stat::DEADLINES_ARMED), base + 1, "armed before the slot goes");
        Ok(())
    })?;
    ensure_eq!(st(stat::DEADLINES_ARMED), base, "unbinding the U-notification cancelled the deadline");
    Ok(())
}

// ---------------------------------------------------------------------------------------------

/// Counts while it runs: a thread below the root's priority on its hart makes progress only
/// while the root is blocked.
extern "C" fn witness(i: usize) -> ! {
    loop {
        sadd(i, 1);
    }
}

const DURATIONS: [u64; 10] = [7, 3, 12, 1, 9, 3, 15, 5, 11, 2];
/// Per task: deadline and wake time; and the order tasks woke in.
static DEADLINE: [AtomicU64; 10] = [const { AtomicU64::new(0) }; 10];
static WOKE: [AtomicU64; 10] = [const { AtomicU64::new(0) }; 10];
static ORDER: [AtomicUsize; 10] = [const { AtomicUsize::new(0) }; 10];
static NWOKE: AtomicUsize = AtomicUsize::new(0);

/// Ten coroutines sleep 1..15 units (100 µs) at once: each wakes no earlier than its deadline
/// and not absurdly late, they wake in deadline order, the executor blocked in the kernel (a
/// lower-priority thread on its hart ran meanwhile: no spinning) and kernel deadlines fired;
/// nothing is left in the wheel or armed in the kernel. Short enough for the RTL.
pub fn sleep_wakes_in_order(env: &mut Env) -> TResult {
    let base = st(stat::DEADLINES_ARMED);
    let fired = st(stat::DEADLINES_FIRED);
    let unit = hz(env) / 10_000;
    let late = late(env);
    with_root_receiver(env, |env, n| {
        sset(0, 0);
        env.spawn(witness, 0, 1)?;
        let (rt, th, park) = root_runtime(n)?;
        // A host that stalls this vCPU past every deadline before the executor blocks leaves
        // the witness no time to run: such a round gets another go. An executor that spins
        // never lets it run, in any round.
        let mut ran = 0;
        for _ in 0..3 {
            NWOKE.store(0, SeqCst);
            let mut hs: [Option<userlib::task::JoinHandle<()>>; 10] = [const { None }; 10];
            for (i, h) in hs.iter_mut().enumerate() {
                let fut = async move {
                    let s = th.sleep(DURATIONS[i] * unit);
                    DEADLINE[i].store(s.deadline(), SeqCst);
                    s.await;
                    WOKE[i].store(th.now(), SeqCst);
                    ORDER[NWOKE.fetch_add(1, SeqCst)].store(i, SeqCst);
                };
                *h = Some(rt.spawn(5, fut).map_err(|e| Fail::new(file!(), line!(), format_args!("spawn: {:?}", e)))?);
            }
            let ran_before = sget(0);
            rt.block_on(async {
                for h in hs.iter_mut() {
                    if let Some(h) = h.take() {
                        h.await;
                    }
                }
            });
            ran = sget(0) - ran_before;
            ensure_eq!(NWOKE.load(SeqCst), 10, "tasks woken");
            for i in 0..10 {
                let (d, w) = (DEADLINE[i].load(SeqCst), WOKE[i].load(SeqCst));
                ensure!(w >= d, "task {} woke {} ticks early", i, d - w);
                ensure!(w <= d + late, "task {} woke {} ticks late", i, w - d);
            }
            for k in 1..10 {
                let (a, b) = (ORDER[k - 1].load(SeqCst), ORDER[k].load(SeqCst));
                ensure!(
                    DEADLINE[a].load(SeqCst) <= DEADLINE[b].load(SeqCst),
                    "task {} (deadline {}) woke before task {} (deadline {})",
                    a,
                    DEADLINE[a].load(SeqCst),
                    b,
                    DEADLINE[b].load(SeqCst)
                );
            }
            ensure!(park.waits.load(SeqCst) >= 1, "the executor never blocked in the kernel");
            if ran >= 100 {
                break;
            }
        }
        ensure!(ran >= 100, "the lower-priority thread hardly ran ({} counts): the executor spun", ran);
        ensure!(st(stat::DEADLINES_FIRED) > fired, "no kernel deadline fired");
        ensure_eq!(th.pending(), 0, "timers left in the wheel");
        ensure_eq!(st(stat::DEADLINES_ARMED), base, "a kernel deadline left armed");
        print!(
            "({} waits, {} deadlines armed, witness {}) ",
            park.waits.load(SeqCst),
            th.timers().arms.load(SeqCst),
            ran
        );
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------

/// timeout(d, fut): the output when fut completes first (and its timer is gone), `Elapsed`
/// when the time runs out first (no earlier than d, and fut is dropped with its timer), also
/// for a future that never completes.
pub fn timeout(env: &mut Env) -> TResult {
    let unit = hz(env) / 1000;
    let late = late(env);
    with_root_receiver(env, |_, n| {
        let (rt, th, _) = root_runtime(n)?;
        // 1 ms against 200: QEMU's clock is the host's, and a loaded host can stall a vCPU for
        // milliseconds (a 5 ms margin failed there once).
        let r = rt.block_on(th.timeout(200 * unit, async {
            th.sleep(unit).await;
            7
        }));
        ensure!(r == Ok(7), "inner completes first: {:?}", r);
        ensure_eq!(th.pending(), 0, "the timeout's timer went with it");
        let t0 = th.now();
        let r = rt.block_on(th.timeout(2 * unit, async {
            th.sleep(50 * unit).await;
            7
        }));
        let t1 = th.now();
        ensure!(r == Err(Elapsed), "time runs out first: {:?}", r);
        ensure!(
            t1 >= t0 + 2 * unit && t1 <= t0 + 2 * unit + late,
            "timed out after {} ticks, wanted {}",
            t1 - t0,
            2 * unit
        );
        ensure_eq!(th.pending(), 0, "the inner sleep was dropped with its future");
        let r = rt.block_on(th.timeout(unit, core::future::pending::<()>()));
        ensure!(r == Err(Elapsed), "a future that never completes: {:?}", r);
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------

static LONG_DONE: AtomicUsize = AtomicUsize::new(0);

/// A sleeping task dropped: its timer leaves the wheel at once, the next park withdraws the
/// kernel deadline it had armed, and when its time passes no vector is raised and nothing fires.
pub fn dropped_sleep_cancelled(env: &mut Env) -> TResult {
    let base = st(stat::DEADLINES_ARMED);
    let hz = hz(env);
    with_root_receiver(env, |_, n| {
        let (rt, th, park) = root_runtime(n)?;
        LONG_DONE.store(0, SeqCst);
        let long = hz / 50;
        let h = rt
            .spawn(1, async move {
                th.sleep(long).await;
                LONG_DONE.store(1, SeqCst);
            })
            .map_err(|e| Fail::new(file!(), line!(), format_args!("spawn: {:?}", e)))?;
        rt.run_ready();
        ensure_eq!(th.pending(), 1, "the sleep is in the wheel");
        // A park cut short (the inner hook was unparked) arms its deadline in the kernel.
        park.unpark_from_irq();
        th.timers().park();
        let armed = th.armed();
        ensure!(armed != 0, "nothing armed");
        ensure_eq!(st(stat::DEADLINES_ARMED), base + 1, "kernel deadline armed");
        drop(h);
        ensure_eq!(th.pending(), 0, "the dropped sleep left the wheel");
        park.unpark_from_irq();
        th.timers().park();
        ensure_eq!(th.armed(), 0, "withdrawn");
        ensure_eq!(st(stat::DEADLINES_ARMED), base, "the kernel deadline was cancelled");
        uintr::poll();
        let fired = st(stat::DEADLINES_FIRED);
        spin_until(armed + hz / 100);
        ensure_eq!(uintr::poll() & VBIT, 0, "a wake-up arrived for the dropped sleep");
        ensure_eq!(st(stat::DEADLINES_FIRED), fired, "a deadline fired");
        ensure_eq!(LONG_DONE.load(SeqCst), 0, "the dropped task ran on");
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------

/// What helper thread k is told and reports: its U-notification, its deadline, its result
/// (0 running, 1 done, else the failing line + 2), wake-ups seen and when, the hart it woke on.
struct Cfg {
    ntfn: AtomicUsize,
    deadline: AtomicU64,
    result: AtomicUsize,
    wakes: AtomicUsize,
    woke_at: AtomicU64,
    woke_hart: AtomicUsize,
    /// For `sleeper`: the late bound and the unit of its sleeps.
    late: AtomicU64,
    unit: AtomicU64,
}

impl Cfg {
    const fn new() -> Cfg {
        Cfg {
            ntfn: AtomicUsize::new(0),
            deadline: AtomicU64::new(0),
            result: AtomicUsize::new(0),
            wakes: AtomicUsize::new(0),
            woke_at: AtomicU64::new(0),
            woke_hart: AtomicUsize::new(0),
            late: AtomicU64::new(0),
            unit: AtomicU64::new(0),
        }
    }
    fn reset(&self, ntfn: usize, deadline: u64) {
        self.ntfn.store(ntfn, SeqCst);
        self.deadline.store(deadline, SeqCst);
        for a in [&self.result, &self.wakes, &self.woke_hart] {
            a.store(0, SeqCst);
        }
        self.woke_at.store(0, SeqCst);
    }
}

static CFG: [Cfg; 8] = [const { Cfg::new() }; 8];

/// A helper thread (not started) that receives a fresh U-notification.
fn helper(env: &mut Env, entry: extern "C" fn(usize) -> !, k: usize, hart: usize) -> Result<(usize, usize), Fail> {
    let cfg = ThreadCfg { start: false, affinity: Some(hart), ..ThreadCfg::default() };
    let t = env.spawn_cfg(entry as *const () as usize, k, cfg)?.tcb;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    ok!(tcb::bind_notification(t, n));
    ok!(uintr::register_receiver(n));
    Ok((t, n))
}

/// Arms its deadline, then waits for the vector and records the wake-up (again and again).
extern "C" fn arm_and_wait(k: usize) -> ! {
    let c = &CFG[k];
    let n = c.ntfn.load(SeqCst);
    let r = syscall::set_deadline(c.deadline.load(SeqCst), TV);
    c.result.store(if r.is_ok() { 1 } else { line!() as usize + 2 }, SeqCst);
    loop {
        // A Wait cut by Suspend returns at Resume with whatever a0 held: only the vector counts.
        if uintr::wait(n) & VBIT != 0 {
            c.woke_at.store(time::now(), SeqCst);
            c.woke_hart.store(crate::env::hart(), SeqCst);
            c.wakes.fetch_add(1, SeqCst);
        }
    }
}

/// A thread's deadline through its life: deleting the thread with one armed leaves nothing (the
/// hart's list, the gauge, the checker); a suspended thread's deadline is off the list and does
/// not fire, and fires at once on Resume once its time passed; a thread blocked in Wait and
/// moved to another hart is woken there at its time.
pub fn deadline_follows_the_thread(env: &mut Env) -> TResult {
    let base = st(stat::DEADLINES_ARMED);
    let hz = hz(env);
    let late = late(env);
    let me = env.bi.node_id;

    // Deleted with a deadline armed far ahead.
    let (t, n) = helper(env, arm_and_wait, 0, me)?;
    CFG[0].reset(n, time::now() + 100 * hz);
    ok!(tcb::resume(t));
    ensure!(wait_until(late, || CFG[0].result.load(SeqCst) != 0), "helper 0 did not arm");
    ensure_eq!(CFG[0].result.load(SeqCst), 1, "helper 0's SetDeadline");
    ensure_eq!(st(stat::DEADLINES_ARMED), base + 1, "armed");
    ok!(cnode::delete(CNODE, t, ROOT_DEPTH));
    ensure_eq!(st(stat::DEADLINES_ARMED), base, "deleting the thread cancelled its deadline");
    crate::env::check_invariants()?;

    // Suspended past its deadline, then resumed.
    let (t, n) = helper(env, arm_and_wait, 1, me)?;
    // Far enough ahead that a stalled host does not let it pass before the Suspend.
    let dl = time::now() + hz / 4;
    CFG[1].reset(n, dl);
    ok!(tcb::resume(t));
    ensure!(wait_until(late, || CFG[1].result.load(SeqCst) != 0), "helper 1 did not arm");
    ensure_eq!(CFG[1].result.load(SeqCst), 1, "helper 1's SetDeadline");
    ok!(tcb::suspend(t));
    ensure_eq!(st(stat::DEADLINES_ARMED), base, "a suspended thread's deadline is off its hart's list");
    crate::env::check_invariants()?;
    let fired = st(stat::DEADLINES_FIRED);
    spin_until(dl + hz / 100);
    ensure_eq!(st(stat::DEADLINES_FIRED), fired, "fired while suspended");
    ensure_eq!(CFG[1].wakes.load(SeqCst), 0, "woken while suspended");
    ok!(tcb::resume(t));
    ensure_eq!(st(stat::DEADLINES_FIRED), fired + 1, "its time passed: Resume fires it");
    ensure!(wait_until(late, || CFG[1].wakes.load(SeqCst) == 1), "not woken after Resume");
    ensure_eq!(st(stat::DEADLINES_ARMED), base, "spent");
    ok!(tcb::suspend(t));

    // Moved to another hart while it waits: it wakes there, at its time.
    if let Some(other) = env.other_hart() {
        let (t, n) = helper(env, arm_and_wait, 2, me)?;
        let dl = time::now() + hz / 4;
        CFG[2].reset(n, dl);
        ok!(tcb::resume(t));
        ensure!(wait_until(late, || CFG[2].result.load(SeqCst) != 0), "helper 2 did not arm");
        ok!(tcb::set_affinity(t, other));
        ensure_eq!(st(stat::DEADLINES_ARMED), base + 1, "still armed after the move");
        crate::env::check_invariants()?;
        ensure!(
            wait_until(dl - time::now().min(dl) + late, || CFG[2].wakes.load(SeqCst) == 1),
            "not woken after the move"
        );
        let at = CFG[2].woke_at.load(SeqCst);
        ensure!(at >= dl, "woken {} ticks early", dl - at);
        ensure_eq!(CFG[2].woke_hart.load(SeqCst), env.bi.hart_ids[other], "woken on the hart it was moved to");
        ensure_eq!(st(stat::DEADLINES_ARMED), base, "spent");
        ok!(tcb::suspend(t));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------

/// Sleep durations (in units) of each task of a helper's runtime.
const HSLEEPS: [u64; 6] = [9, 2, 14, 5, 5, 1];
/// Per helper: the latest deadline whose sleep ended so far, and the line of a failed check.
static HLAST: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];
static HBAD: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];

fn helper_failed(k: usize, line: u32) -> ! {
    CFG[k].result.store(line as usize + 2, SeqCst);
    crate::env::park()
}

/// Helper k: its own runtime, six sleeping tasks at once; result 1 if each woke in deadline
/// order, no earlier than its deadline and no later than `late` after it.
extern "C" fn sleeper(k: usize) -> ! {
    let c = &CFG[k];
    let Some((rt, th, _)) = runtime(c.ntfn.load(SeqCst)) else { helper_failed(k, line!()) };
    let (late, unit) = (c.late.load(SeqCst), c.unit.load(SeqCst));
    HLAST[k].store(0, SeqCst);
    HBAD[k].store(0, SeqCst);
    let mut hs: [Option<userlib::task::JoinHandle<()>>; 6] = [const { None }; 6];
    for (h, &d) in hs.iter_mut().zip(&HSLEEPS) {
        let task = async move {
            let s = th.sleep(d * unit);
            let dl = s.deadline();
            s.await;
            let now = th.now();
            if now < dl || now > dl + late || dl < HLAST[k].load(SeqCst) {
                HBAD[k].store(line!() as usize, SeqCst);
            }
            HLAST[k].store(dl, SeqCst);
        };
        match rt.spawn(5, task) {
            Ok(j) => *h = Some(j),
            Err(_) => helper_failed(k, line!()),
        }
    }
    rt.block_on(async {
        for h in hs.iter_mut() {
            if let Some(h) = h.take() {
                h.await;
            }
        }
    });
    if HBAD[k].load(SeqCst) != 0 {
        helper_failed(k, HBAD[k].load(SeqCst) as u32);
    }
    c.woke_hart.store(crate::env::hart(), SeqCst);
    c.result.store(1, SeqCst);
    crate::env::park()
}

/// A runtime on every hart at once, each with six concurrent sleeps: every hart's deadlines
/// fire (each helper's sleeps wake in order, on time), and nothing stays armed.
pub fn deadlines_on_every_hart(env: &mut Env) -> TResult {
    let harts = userlib::bootinfo::harts(env.bi).min(CFG.len());
    if harts < 2 {
        return Err(Fail::skip(format_args!("needs a second hart")));
    }
    let base = st(stat::DEADLINES_ARMED);
    let fired = st(stat::DEADLINES_FIRED);
    let unit = hz(env) / 2000;
    let late = late(env);
    let mut threads = [0usize; 8];
    for (h, t) in threads.iter_mut().enumerate().take(harts) {
        let (tcb_, n) = helper(env, sleeper, h, h)?;
        CFG[h].reset(n, 0);
        CFG[h].late.store(late, SeqCst);
        CFG[h].unit.store(unit, SeqCst);
        *t = tcb_;
    }
    for &t in &threads[..harts] {
        ok!(tcb::resume(t));
    }
    let all_done = || (0..harts).all(|h| CFG[h].result.load(SeqCst) != 0);
    ensure!(wait_until(20 * unit + 2 * late, all_done), "helpers did not finish");
    for (h, cfg) in CFG.iter().enumerate().take(harts) {
        let r = cfg.result.load(SeqCst);
        ensure!(r == 1, "helper on hart index {} failed at line {}", h, r - 2);
        ensure_eq!(cfg.woke_hart.load(SeqCst), env.bi.hart_ids[h], "the helper ran on its hart");
    }
    ensure!(
        st(stat::DEADLINES_FIRED) >= fired + harts,
        "kernel deadlines fired: {}",
        st(stat::DEADLINES_FIRED) - fired
    );
    ensure_eq!(st(stat::DEADLINES_ARMED), base, "left armed");
    for &t in &threads[..harts] {
        ok!(tcb::suspend(t));
    }
    Ok(())
}

/// Threads of `many_deadlines_one_hart`: their deadlines, and how many have armed.
const MANY: usize = 24;
/// The later group (armed first): the rest share one earlier time.
const MANY_LATER: usize = 4;
static M_AT: [AtomicU64; MANY] = [const { AtomicU64::new(0) }; MANY];
static M_ARMED: AtomicUsize = AtomicUsize::new(0);
static M_FAILED: AtomicUsize = AtomicUsize::new(0);

/// Thread k of `many_deadlines_one_hart`: arms its deadline and parks (its vector is only
/// counted by the kernel: nobody waits for it).
extern "C" fn many_armer(k: usize) -> ! {
    if syscall::set_deadline(M_AT[k].load(SeqCst), TV).is_err() {
        M_FAILED.fetch_add(1, SeqCst);
    }
    M_ARMED.fetch_add(1, SeqCst);
    crate::env::park()
}

/// More deadlines on one hart than one timer interrupt fires, armed latest first (the worst
/// order for a sorted list), most at one time: every one fires, and the queue (an AVL tree in
/// the kernel) passes the checker while they are armed and is empty after.
pub fn many_deadlines_one_hart(env: &mut Env) -> TResult {
    let hart = env.need_other_hart()?;
    let base = st(stat::DEADLINES_ARMED);
    let fired = st(stat::DEADLINES_FIRED);
    let mark = env.mark();
    M_ARMED.store(0, SeqCst);
    M_FAILED.store(0, SeqCst);
    let mut threads = [0usize; MANY];
    for (k, t) in threads.iter_mut().enumerate() {
        *t = helper(env, many_armer, k, hart)?.0;
    }
    // Far enough ahead for every thread to arm first, even on a slow QEMU hart.
    let at = time::now() + hz(env);
    let unit = hz(env) / 1000;
    for (k, &t) in threads.iter().enumerate() {
        M_AT[k].store(if k < MANY_LATER { at + unit } else { at }, SeqCst);
        ok!(tcb::resume(t));
    }
    // Generous: QEMU on a loaded host may give the helpers' hart little time.
    if !wait_until(5 * late(env), || M_ARMED.load(SeqCst) >= MANY) {
        syscall::debug_dump_scheduler(abi::init_cap::DEBUG);
        let i0 = st(stat::ENTRIES_INTERRUPT);
        let t0 = time::now();
        wait_until(hz(env) / 2, || false);
        print!(
            "(interrupts: {} in {} ticks; armed {}) ",
            st(stat::ENTRIES_INTERRUPT) - i0,
            time::now() - t0,
            M_ARMED.load(SeqCst)
        );
        syscall::debug_dump_scheduler(abi::init_cap::DEBUG);
        ensure!(false, "{} of {} threads armed by {}", M_ARMED.load(SeqCst), MANY, time::now());
    }
    ensure_eq!(M_FAILED.load(SeqCst), 0, "SetDeadline failures");
    if time::now() < at {
        crate::env::check_invariants()?;
    }
    ensure!(
        wait_until(at - time::now().min(at) + late(env), || st(stat::DEADLINES_FIRED) >= fired + MANY),
        "{} of {} deadlines fired ({} still armed)",
        st(stat::DEADLINES_FIRED) - fired,
        MANY,
        st(stat::DEADLINES_ARMED) - base
    );
    ensure_eq!(st(stat::DEADLINES_ARMED), base, "left armed");
    for &t in &threads {
        ok!(tcb::suspend(t));
    }
    env.clean_to(mark)?;
    crate::env::check_invariants()
}
