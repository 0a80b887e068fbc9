//! The blocking primitives (`userlib::sync`, issue #42) on every hart at once: one runtime per
//! hart, several tasks on each, all contending for one mutex, passing a semaphore token around
//! the harts, and taking turns through a condition variable. A lost wake-up shows as a helper
//! that never finishes; broken exclusion as a counter pair that disagrees.
use crate::env::{Env, Fail, TResult, ThreadCfg};
use abi::object as o;
use core::future::Future;
use core::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use core::task::{Context, Poll, Waker};
use userlib::chan::ThreadPark;
use userlib::sync::{Condvar, Mutex, MutexGuard, Semaphore};
use userlib::task::{yield_now, Executor, Handle, JoinHandle};
use userlib::{syscall, tcb, time, uintr};

const SLOTS: usize = 8;
const SLOT_BYTES: usize = 256;
/// Runtimes, each claimed once by one helper thread (three tests of up to four harts).
const NRT: usize = 12;
static EXECS: [Executor<SLOTS, SLOT_BYTES>; NRT] = [const { Executor::new() }; NRT];
static PARKS: [ThreadPark; NRT] = [const { ThreadPark::new() }; NRT];
static NEXT_RT: AtomicUsize = AtomicUsize::new(0);

const MAX_HARTS: usize = 4;
/// Tasks per hart in the mutex test, and rounds each.
const TASKS: usize = 4;
const ROUNDS: u64 = 200;
/// Trips of the token around the harts, and turns per hart through the condition variable.
const TRIPS: usize = 100;
const TURNS: u64 = 50;

/// Per helper: its notification (before it starts), its runtime index, its hart index; the
/// result (0 running, 1 passed, else the failing line + 2).
struct Cfg {
    ntfn: AtomicUsize,
    index: AtomicUsize,
    harts: AtomicUsize,
    result: AtomicUsize,
}

static CFG: [Cfg; MAX_HARTS] = [const {
    Cfg {
        ntfn: AtomicUsize::new(0),
        index: AtomicUsize::new(0),
        harts: AtomicUsize::new(0),
        result: AtomicUsize::new(0),
    }
}; MAX_HARTS];

type Rt = Handle<SLOTS, SLOT_BYTES>;

/// The calling helper's runtime: an executor parked in Wait on its notification, which a waker
/// on another hart Signals.
fn runtime(ntfn: usize) -> Option<Rt> {
    let i = NEXT_RT.fetch_add(1, SeqCst);
    if i >= NRT {
        return None;
    }
    PARKS[i].setup(ntfn, 0);
    EXECS[i].claim(&PARKS[i])
}

fn finish(k: usize, line: u32) -> ! {
    CFG[k].result.store(if line == 0 { 1 } else { line as usize + 2 }, SeqCst);
    crate::env::park()
}

/// Start `entry` on each hart (helper k on hart k) and wait for every one to report.
fn on_every_hart(env: &mut Env, entry: extern "C" fn(usize) -> !) -> Result<usize, Fail> {
    let harts = userlib::bootinfo::harts(env.bi).min(MAX_HARTS);
    if harts < 2 {
        return Err(Fail::skip(format_args!("needs a second hart")));
    }
    let mut threads = [0usize; MAX_HARTS];
    for (k, t) in threads.iter_mut().enumerate().take(harts) {
        let cfg = ThreadCfg { start: false, affinity: Some(k), ..ThreadCfg::default() };
        *t = env.spawn_cfg(entry as *const () as usize, k, cfg)?.tcb;
        let n = env.alloc_cap(o::NOTIFICATION)?;
        ok!(tcb::bind_notification(*t, n));
        ok!(uintr::register_receiver(n));
        CFG[k].ntfn.store(n, SeqCst);
        CFG[k].index.store(k, SeqCst);
        CFG[k].harts.store(harts, SeqCst);
        CFG[k].result.store(0, SeqCst);
    }
    for &t in &threads[..harts] {
        ok!(tcb::resume(t));
    }
    // Generous: QEMU's vCPUs may stall for long on a loaded host.
    let give_up = time::now() + 60 * env.bi.timebase_hz as u64;
    while (0..harts).any(|k| CFG[k].result.load(SeqCst) == 0) && time::now() < give_up {
        syscall::yield_now();
    }
    for &t in &threads[..harts] {
        ok!(tcb::suspend(t));
    }
    for (k, c) in CFG.iter().enumerate().take(harts) {
        let r = c.result.load(SeqCst);
        ensure!(r != 0, "helper on hart index {} did not finish (lost wake-up?)", k);
        ensure!(r == 1, "helper on hart index {} failed at line {}", k, r - 2);
    }
    Ok(harts)
}

/// Spawn `n` copies of a task and run until all are done; the line of a failure, or 0.
fn run_tasks<F: core::future::Future<Output = ()> + 'static>(rt: Rt, n: usize, make: impl Fn(usize) -> F) -> u32 {
    let mut hs: [Option<JoinHandle<()>>; SLOTS] = [const { None }; SLOTS];
    for (i, h) in hs.iter_mut().enumerate().take(n) {
        match rt.spawn(5, make(i)) {
            Ok(j) => *h = Some(j),
            Err(_) => return line!(),
        }
    }
    rt.block_on(async {
        for h in hs.iter_mut() {
            if let Some(h) = h.take() {
                h.await;
            }
        }
    });
    0
}

/// Lock `m` from the root thread while no helper runs (one poll; no executor needed).
fn lock_now<T>(m: &'static Mutex<T>) -> Result<MutexGuard<'static, T>, Fail> {
    let mut lock = core::pin::pin!(m.lock());
    match lock.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(g) => Ok(g),
        Poll::Pending => Err(Fail::new(file!(), line!(), format_args!("mutex still held after the helpers stopped"))),
    }
}

// ---------------------------------------------------------------------------------------------

/// The two halves of every update, apart by an await: a second holder would see them differ.
static COUNTER: Mutex<(u64, u64)> = Mutex::new((0, 0));
static TORN: AtomicUsize = AtomicUsize::new(0);

extern "C" fn mutex_helper(k: usize) -> ! {
    let Some(rt) = runtime(CFG[k].ntfn.load(SeqCst)) else { finish(k, line!()) };
    let line = run_tasks(rt, TASKS, |_| async {
        for _ in 0..ROUNDS {
            let mut g = COUNTER.lock().await;
            if g.0 != g.1 {
                TORN.fetch_add(1, SeqCst);
            }
            g.0 += 1;
            yield_now().await; // hold it across an await: other tasks and harts must wait
            g.1 += 1;
        }
    });
    finish(k, line)
}

/// Tasks on every hart increment one counter pair under the mutex, holding it across an await:
/// no update is torn or lost.
pub fn mutex_every_hart(env: &mut Env) -> TResult {
    *lock_now(&COUNTER)? = (0, 0);
    TORN.store(0, SeqCst);
    let harts = on_every_hart(env, mutex_helper)?;
    ensure_eq!(TORN.load(SeqCst), 0, "torn updates");
    let total = lock_now(&COUNTER)?.1;
    ensure_eq!(total, harts as u64 * TASKS as u64 * ROUNDS, "increments");
    Ok(())
}

// ---------------------------------------------------------------------------------------------

/// One semaphore per hart: the token goes 0 -> 1 -> .. -> 0, `TRIPS` times.
static TOKEN: [Semaphore; MAX_HARTS] = [const { Semaphore::new(0) }; MAX_HARTS];
static PASSES: AtomicUsize = AtomicUsize::new(0);

extern "C" fn token_helper(k: usize) -> ! {
    let Some(rt) = runtime(CFG[k].ntfn.load(SeqCst)) else { finish(k, line!()) };
    let harts = CFG[k].harts.load(SeqCst);
    let line = run_tasks(rt, 1, |_| async move {
        for _ in 0..TRIPS {
            TOKEN[k].acquire().await;
            PASSES.fetch_add(1, SeqCst);
            TOKEN[(k + 1) % harts].release(); // wakes a task on the next hart
        }
    });
    finish(k, line)
}

/// A token passed around the harts through semaphores, each wait blocking its hart's executor
/// in the kernel until the previous hart releases: every pass arrives.
pub fn semaphore_token_ring(env: &mut Env) -> TResult {
    PASSES.store(0, SeqCst);
    TOKEN[0].release(); // the token starts at hart 0
    let harts = on_every_hart(env, token_helper)?;
    ensure_eq!(PASSES.load(SeqCst), harts * TRIPS, "passes");
    ensure_eq!(TOKEN[0].available(), 1, "the token back at hart 0");
    ensure!(TOKEN[0].try_acquire(), "take the token back");
    Ok(())
}

// ---------------------------------------------------------------------------------------------

/// Whose turn it is (`turn % harts`), and the condition variable the turn changes on.
static TURN: Mutex<u64> = Mutex::new(0);
static TURN_CHANGED: Condvar = Condvar::new();

extern "C" fn turn_helper(k: usize) -> ! {
    let Some(rt) = runtime(CFG[k].ntfn.load(SeqCst)) else { finish(k, line!()) };
    let harts = CFG[k].harts.load(SeqCst) as u64;
    let line = run_tasks(rt, 1, |_| async move {
        for _ in 0..TURNS {
            let mut t = TURN.lock().await;
            while *t % harts != k as u64 {
                t = TURN_CHANGED.wait(t).await;
            }
            *t += 1;
            drop(t);
            TURN_CHANGED.notify_all();
        }
    });
    finish(k, line)
}

/// The harts take turns in order, each waiting on a condition variable for the others: every
/// turn is taken.
pub fn condvar_turns(env: &mut Env) -> TResult {
    *lock_now(&TURN)? = 0;
    let harts = on_every_hart(env, turn_helper)?;
    ensure_eq!(*lock_now(&TURN)?, harts as u64 * TURNS, "turns");
    Ok(())
}
