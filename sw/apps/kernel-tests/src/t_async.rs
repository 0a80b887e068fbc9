//! Async IPC over rings and U-notifications (`userlib::chan`, issue #16): many concurrent calls
//! between a client and a server thread on one hart and across harts, a server in another
//! address space that sleeps between calls and is woken by U-notifications, the polling regime
//! (no notification under load across harts), the blocking facade and its cost, peer death in
//! both directions through a supervisor on a fault endpoint, and hostile ring contents written
//! into the real shared frames.
//!
//! The root task is the client (or the server) itself, running an executor whose park hook is a
//! `chan::ThreadPark` on a U-notification bound to it; the other side is a helper thread set up
//! the same way. The channel's frames and U-notifications are made here and handed to both.
use crate::env::{rdcycle, Env, Fail, TResult, ThreadCfg, PAGE, ROOT_TCB, VSPACE};
use abi::{fault, object as o};
use core::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use userlib::chan::{self, chan_bytes, ChanError, ChanMem, Client, Msg, Server, Side, ThreadPark};
use userlib::invoke::rights;
use userlib::task::{yield_now, Executor, Handle, JoinHandle};
use userlib::{print, syscall, tcb, uintr};

/// Ring capacity of every channel here (two 4 KiB frames per channel) and the clients' table.
const CAP: usize = 32;
const PAGES: usize = chan_bytes(CAP).div_ceil(PAGE);

/// Executors: one per thread role over the whole suite (an executor is claimed for good).
const SLOTS: usize = 56;
const SLOT_BYTES: usize = 384;
type Rt = Handle<SLOTS, SLOT_BYTES>;
const NEX: usize = 16;
static EXECS: [Executor<SLOTS, SLOT_BYTES>; NEX] = [const { Executor::new() }; NEX];
static PARKS: [ThreadPark; NEX] = [const { ThreadPark::new() }; NEX];
static NEXT_EX: AtomicUsize = AtomicUsize::new(0);

/// Endpoints, also used once each.
static CLIENTS: [Client<CAP>; 16] = [const { Client::new() }; 16];
static SERVERS: [Server; 16] = [const { Server::new() }; 16];
static NEXT_CLIENT: AtomicUsize = AtomicUsize::new(0);
static NEXT_SERVER: AtomicUsize = AtomicUsize::new(0);

/// Request labels the test handler understands.
const ADD: u32 = 1;
/// Never answered (the handler awaits forever): keeps calls outstanding.
const HOLD: u32 = 2;
/// The handler faults (the server thread dies).
const DIE: u32 = 3;

/// Where a thread writes to die: page 0 is never mapped.
const DEAD_ADDR: usize = 8;

/// Spin budget (cycles) of a side whose peer runs on another hart: long enough to ride out a
/// host that deschedules a vCPU for a while (QEMU's counter runs near the host clock).
const SPIN: usize = 1 << 25;

/// How long to wait for a helper thread's result (cycles; only a failing test waits it out).
const BUDGET: usize = 1 << 34;

fn claim(ntfn: usize, spin: usize) -> (Rt, &'static ThreadPark) {
    let (rt, park, _) = claim_at(ntfn, spin);
    (rt, park)
}

/// As `claim`, with the index of the executor and park hook.
fn claim_at(ntfn: usize, spin: usize) -> (Rt, &'static ThreadPark, usize) {
    let i = NEXT_EX.fetch_add(1, SeqCst);
    let park = &PARKS[i];
    park.setup(ntfn, spin);
    (EXECS[i].claim(park).expect("each executor is claimed once"), park, i)
}

fn new_client() -> &'static Client<CAP> {
    &CLIENTS[NEXT_CLIENT.fetch_add(1, SeqCst)]
}

fn new_server() -> usize {
    NEXT_SERVER.fetch_add(1, SeqCst)
}

fn code(e: ChanError) -> usize {
    match e {
        ChanError::PeerGone => 1,
        ChanError::Corrupt => 2,
        ChanError::BadSetup => 3,
    }
}

/// The test server's handler: ADD answers `2a + b` after a yield (so handlers interleave),
/// HOLD never answers, DIE faults.
async fn handle(m: Msg) -> Msg {
    match m.label {
        ADD => {
            yield_now().await;
            Msg::new(ADD + 1, &[2 * m.word(0) + m.word(1), m.word(2)]).unwrap_or_default()
        }
        HOLD => core::future::pending().await,
        DIE => {
            // SAFETY: deliberately faults: page 0 is never mapped.
            unsafe { core::ptr::write_volatile(DEAD_ADDR as *mut u64, 1) };
            Msg::default()
        }
        l => Msg::new(l, &[]).unwrap_or_default(),
    }
}

fn add(a: u64, b: u64) -> Msg {
    Msg::new(ADD, &[a, b]).unwrap()
}

fn add_ok(r: Result<Msg, ChanError>, a: u64, b: u64) -> bool {
    matches!(r, Ok(m) if m.label == ADD + 1 && m.words() == [2 * a + b, 0])
}

// ---------------------------------------------------------------------------------------------
// Set-up: frames, U-notifications, helper threads.

/// A channel's frames: mapped in the root VSpace at `va`, caps kept to map them elsewhere.
struct Frames {
    va: usize,
    caps: [usize; PAGES],
}

fn frames(env: &mut Env) -> Result<Frames, Fail> {
    let va = env.va(PAGES);
    let mut caps = [0; PAGES];
    for (i, c) in caps.iter_mut().enumerate() {
        *c = env.new_page_at(VSPACE, va + i * PAGE)?.cptr;
    }
    let m = mem(va);
    ok!(m.init());
    Ok(Frames { va, caps })
}

fn mem(va: usize) -> ChanMem {
    // SAFETY: `va` maps PAGES frames, enough for chan_bytes(CAP), for the rest of the suite.
    unsafe { ChanMem::new(va as *mut u8, CAP).expect("page-aligned channel") }
}

/// The root task as a receiver of a fresh U-notification; undone by `Undo`.
fn root_receiver(env: &mut Env, undo: &mut Undo) -> Result<usize, Fail> {
    let n = env.alloc_cap(o::NOTIFICATION)?;
    ok!(tcb::bind_notification(ROOT_TCB, n));
    undo.root = true;
    ok!(uintr::register_receiver(n));
    Ok(n)
}

/// What each test undoes whatever its outcome: the root's binding and its threads' (which
/// frees their UINTC slots).
#[derive(Default)]
struct Undo {
    root: bool,
    threads: [usize; 6],
    n: usize,
}

impl Undo {
    fn run(&mut self) {
        for &t in &self.threads[..self.n] {
            let _ = tcb::suspend(t);
            let _ = tcb::unbind_notification(t);
        }
        if self.root {
            let _ = tcb::unbind_notification(ROOT_TCB);
        }
    }
}

fn with_undo(env: &mut Env, test: fn(&mut Env, &mut Undo) -> TResult) -> TResult {
    let mut u = Undo::default();
    let r = test(env, &mut u);
    u.run();
    r
}

/// What a helper thread is told (by index `k`, its a0).
struct Cfg {
    /// Channel address in the thread's address space.
    va: AtomicUsize,
    ntfn: AtomicUsize,
    /// Sender entry for the peer's U-notification.
    to_peer: AtomicUsize,
    spin: AtomicUsize,
    /// Index into SERVERS.
    server: AtomicUsize,
    /// Results: ChanError code + 1 when the dispatcher ended; progress counters.
    result: AtomicUsize,
    done: AtomicUsize,
    /// The thread's park hook (to read its counters).
    park: AtomicUsize,
}

impl Cfg {
    const fn new() -> Cfg {
        Cfg {
            va: AtomicUsize::new(0),
            ntfn: AtomicUsize::new(0),
            to_peer: AtomicUsize::new(0),
            spin: AtomicUsize::new(0),
            server: AtomicUsize::new(0),
            result: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            park: AtomicUsize::new(0),
        }
    }
}

static CFG: [Cfg; 4] = [const { Cfg::new() }; 4];

fn park_of(k: usize) -> &'static ThreadPark {
    &PARKS[CFG[k].park.load(SeqCst)]
}

/// A helper thread (not started) bound to a fresh U-notification as its receiver.
fn helper(
    env: &mut Env,
    undo: &mut Undo,
    entry: extern "C" fn(usize) -> !,
    k: usize,
    hart: usize,
    cfg: ThreadCfg,
) -> Result<(usize, usize), Fail> {
    let cfg = ThreadCfg { start: false, affinity: Some(hart), ..cfg };
    let t = env.spawn_cfg(entry as *const () as usize, k, cfg)?.tcb;
    undo.threads[undo.n] = t;
    undo.n += 1;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    ok!(tcb::bind_notification(t, n));
    ok!(uintr::register_receiver(n));
    Ok((t, n))
}

/// A sender entry in `tcb`'s table for `ntfn`.
fn sender(env: &mut Env, ntfn: usize, tcb: usize) -> Result<usize, Fail> {
    let m = env.mint(ntfn, rights::ALL, 1)?;
    Ok(ok!(uintr::register_sender(m, tcb)))
}

/// Reset CFG[k] and fill in a channel end.
fn cfg(k: usize, va: usize, ntfn: usize, to_peer: usize, spin: usize) {
    let c = &CFG[k];
    for a in [&c.result, &c.done, &c.park, &c.server] {
        a.store(0, SeqCst);
    }
    c.va.store(va, SeqCst);
    c.ntfn.store(ntfn, SeqCst);
    c.to_peer.store(to_peer, SeqCst);
    c.spin.store(spin, SeqCst);
    c.server.store(new_server(), SeqCst);
}

/// Server thread k: attach, serve until the channel ends, record why.
extern "C" fn server_main(k: usize) -> ! {
    let c = &CFG[k];
    let (rt, park, i) = claim_at(c.ntfn.load(SeqCst), c.spin.load(SeqCst));
    c.park.store(i, SeqCst);
    let srv = &SERVERS[c.server.load(SeqCst)];
    let r = match srv.attach(mem(c.va.load(SeqCst)), c.to_peer.load(SeqCst), park) {
        Ok(()) => rt.block_on(srv.serve(rt, 10, handle)),
        Err(e) => e,
    };
    c.result.store(code(r) + 1, SeqCst);
    crate::env::park()
}

/// Client thread k (peer-death test): one call the server holds, three ADDs, then it dies.
extern "C" fn dying_client_main(k: usize) -> ! {
    let c = &CFG[k];
    let (rt, park, i) = claim_at(c.ntfn.load(SeqCst), c.spin.load(SeqCst));
    c.park.store(i, SeqCst);
    let cl = new_client();
    if cl.attach(mem(c.va.load(SeqCst)), c.to_peer.load(SeqCst), park).is_ok() {
        let held = rt.spawn(1, cl.call(Msg::new(HOLD, &[]).unwrap()));
        let ok = rt.block_on(async {
            let mut ok = 0;
            for i in 0..3 {
                ok += add_ok(cl.call(add(i, 1)).await, i, 1) as usize;
            }
            ok
        });
        c.done.store(ok, SeqCst);
        core::mem::forget(held);
    }
    // SAFETY: deliberately faults (the client dies with a call outstanding).
    unsafe { core::ptr::write_volatile(DEAD_ADDR as *mut u64, 1) };
    crate::env::park()
}

/// The supervisor: waits for a fault message on its endpoint (the death of one side), marks
/// that side closed in the channel header and signals the survivor's U-notification.
static SUP_EP: AtomicUsize = AtomicUsize::new(0);
static SUP_VA: AtomicUsize = AtomicUsize::new(0);
static SUP_SIDE: AtomicUsize = AtomicUsize::new(0);
static SUP_SURVIVOR: AtomicUsize = AtomicUsize::new(0);
static SUP_FAULT: AtomicUsize = AtomicUsize::new(0);

extern "C" fn supervisor(_: usize) -> ! {
    let (_, info, _) = syscall::recv(SUP_EP.load(SeqCst));
    // Recorded first: the survivor may check it as soon as it is signalled.
    SUP_FAULT.store(info.label + 1, SeqCst);
    let side = if SUP_SIDE.load(SeqCst) == 0 { Side::Client } else { Side::Server };
    mem(SUP_VA.load(SeqCst)).close(side);
    syscall::signal(SUP_SURVIVOR.load(SeqCst));
    crate::env::park()
}

fn start_supervisor(env: &mut Env, va: usize, dead: Side, survivor_ntfn: usize) -> Result<usize, Fail> {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    SUP_EP.store(ep, SeqCst);
    SUP_VA.store(va, SeqCst);
    SUP_SIDE.store((dead == Side::Server) as usize, SeqCst);
    SUP_SURVIVOR.store(survivor_ntfn, SeqCst);
    SUP_FAULT.store(0, SeqCst);
    let hart = env.other_hart().unwrap_or(env.bi.node_id);
    env.spawn_on(supervisor, 0, 255, hart)?;
    Ok(ep)
}

fn wait_until(cond: impl Fn() -> bool) -> bool {
    let t0 = rdcycle();
    while !cond() {
        if rdcycle().wrapping_sub(t0) > BUDGET {
            return cond();
        }
        syscall::yield_now();
    }
    true
}

/// Run `n` workers, worker i doing `calls` ADD calls (i, j) through `cl`, to completion; the
/// number of wrong replies. `progress` runs after every completed call with the total so far.
fn run_workers(rt: Rt, cl: &'static Client<CAP>, n: usize, calls: u64, progress: fn(usize)) -> Result<usize, Fail> {
    static BAD: AtomicUsize = AtomicUsize::new(0);
    static DONE: AtomicUsize = AtomicUsize::new(0);
    BAD.store(0, SeqCst);
    DONE.store(0, SeqCst);
    let mut hs: [Option<JoinHandle<()>>; 64] = [const { None }; 64];
    for (i, h) in hs.iter_mut().enumerate().take(n) {
        let fut = async move {
            for j in 0..calls {
                if !add_ok(cl.call(add(i as u64, j)).await, i as u64, j) {
                    BAD.fetch_add(1, SeqCst);
                }
                progress(DONE.fetch_add(1, SeqCst) + 1);
            }
        };
        *h = Some(
            rt.spawn(5, fut).map_err(|e| Fail::new(file!(), line!(), format_args!("spawn worker {}: {:?}", i, e)))?,
        );
    }
    rt.block_on(async {
        for h in hs.iter_mut() {
            if let Some(h) = h.take() {
                h.await;
            }
        }
    });
    ensure_eq!(DONE.load(SeqCst), n * calls as usize, "calls completed");
    Ok(BAD.load(SeqCst))
}

fn no_progress(_: usize) {}

// ---------------------------------------------------------------------------------------------
// The tests.

/// 48 client coroutines (more than the 32-call table, so some wait for a slot) x 8 calls to a
/// server thread on the same hart: every reply matches its request, handlers ran concurrently,
/// both sides slept in the kernel and were woken by U-notifications; closing the client ends
/// the server's dispatcher with PeerGone.
pub fn same_hart_many_coroutines(env: &mut Env) -> TResult {
    with_undo(env, same_hart_inner)
}

fn same_hart_inner(env: &mut Env, u: &mut Undo) -> TResult {
    let f = frames(env)?;
    let rn = root_receiver(env, u)?;
    let (st, sn) = helper(env, u, server_main, 0, env.bi.node_id, ThreadCfg::default())?;
    let to_server = sender(env, sn, ROOT_TCB)?;
    let to_client = sender(env, rn, st)?;
    cfg(0, f.va, sn, to_client, 0);
    let (rt, park) = claim(rn, 0);
    let cl = new_client();
    ok!(cl.attach(mem(f.va), to_server, park));
    ok!(tcb::resume(st));
    let bad = run_workers(rt, cl, 48, 8, no_progress)?;
    ensure_eq!(bad, 0, "wrong replies");
    ensure_eq!(cl.replies.load(SeqCst), 48 * 8, "replies counted by the client");
    let srv = &SERVERS[CFG[0].server.load(SeqCst)];
    ensure!(
        srv.max_in_flight.load(SeqCst) >= 2,
        "handlers never overlapped (max in flight {})",
        srv.max_in_flight.load(SeqCst)
    );
    ensure!(park.waits.load(SeqCst) >= 1, "the client never slept in the kernel");
    ensure!(park_of(0).waits.load(SeqCst) >= 1, "the server never slept in the kernel");
    ensure!(
        cl.signals.load(SeqCst) >= 1 && srv.signals.load(SeqCst) >= 1,
        "no U-notification either way: {} / {}",
        cl.signals.load(SeqCst),
        srv.signals.load(SeqCst)
    );
    print!(
        "({} calls: client {} signals {} waits, server {} signals {} waits, {} handlers at most) ",
        48 * 8,
        cl.signals.load(SeqCst),
        park.waits.load(SeqCst),
        srv.signals.load(SeqCst),
        park_of(0).waits.load(SeqCst),
        srv.max_in_flight.load(SeqCst)
    );
    cl.close();
    ensure!(
        wait_until(|| CFG[0].result.load(SeqCst) != 0),
        "the server's dispatcher did not end after the client closed"
    );
    ensure_eq!(CFG[0].result.load(SeqCst), code(ChanError::PeerGone) + 1, "why the dispatcher ended (1 + code)");
    Ok(())
}

/// Client (root) and server on different harts, both polling before they sleep, 32 coroutines
/// x 60 calls: in the middle of the run (calls 320..1600) almost no U-notification is sent and
/// the server thread makes almost no kernel entry (exact figures printed; a host that stalls
/// a vCPU for longer than the spin budget may cost a few).
pub fn cross_hart_busy_polling(env: &mut Env) -> TResult {
    with_undo(env, cross_hart_inner)
}

/// 0..5 and 6..11: cycles, notifications, server entries, server waits, client waits at the
/// window's start and end; 12 the client's park index, 13 the server TCB, 14 the client index.
static SNAP: [AtomicUsize; 15] = [const { AtomicUsize::new(0) }; 15];
const WIN_START: usize = 320;
const WIN_END: usize = 1600;

fn snapshot(done: usize) {
    let base = match done {
        WIN_START => 0,
        WIN_END => 6,
        _ => return,
    };
    let cl = &CLIENTS[SNAP[14].load(SeqCst)];
    let srv = &SERVERS[CFG[1].server.load(SeqCst)];
    SNAP[base].store(rdcycle(), SeqCst);
    SNAP[base + 1].store(cl.signals.load(SeqCst) + srv.signals.load(SeqCst), SeqCst);
    SNAP[base + 2]
        .store(syscall::debug_thread_entries(abi::init_cap::DEBUG, SNAP[13].load(SeqCst)).unwrap_or(0), SeqCst);
    SNAP[base + 3].store(PARKS[CFG[1].park.load(SeqCst)].waits.load(SeqCst), SeqCst);
    SNAP[base + 4].store(PARKS[SNAP[12].load(SeqCst)].waits.load(SeqCst), SeqCst);
}

fn cross_hart_inner(env: &mut Env, u: &mut Undo) -> TResult {
    let far = env.need_other_hart()?;
    let f = frames(env)?;
    let rn = root_receiver(env, u)?;
    let (st, sn) = helper(env, u, server_main, 1, far, ThreadCfg::default())?;
    let to_server = sender(env, sn, ROOT_TCB)?;
    let to_client = sender(env, rn, st)?;
    cfg(1, f.va, sn, to_client, SPIN);
    let (rt, _park, pi) = claim_at(rn, SPIN);
    SNAP[12].store(pi, SeqCst);
    SNAP[13].store(st, SeqCst);
    let ci = NEXT_CLIENT.load(SeqCst);
    let cl = new_client();
    SNAP[14].store(ci, SeqCst);
    ok!(cl.attach(mem(f.va), to_server, _park));
    ok!(tcb::resume(st));
    let bad = run_workers(rt, cl, 32, 60, snapshot)?;
    ensure_eq!(bad, 0, "wrong replies");
    let d = |i: usize| SNAP[6 + i].load(SeqCst).wrapping_sub(SNAP[i].load(SeqCst));
    let calls = WIN_END - WIN_START;
    let (cycles, notes, entries, swaits, cwaits) = (d(0), d(1), d(2), d(3), d(4));
    print!(
        "({} calls in the window: {} cycles per call, {} notifications, {} server kernel entries, waits: server {} client {}) ",
        calls,
        cycles / calls,
        notes,
        entries,
        swaits,
        cwaits
    );
    ensure!(notes * 10 <= calls, "{} notifications for {} calls under load across harts", notes, calls);
    ensure!(entries * 10 <= calls, "{} server kernel entries for {} calls under load", entries, calls);
    Ok(())
}

/// The blocking facade: `call_blocking` from plain code keeps the thread's other coroutines
/// running (four background workers finish their calls meanwhile); its cost over the raw
/// async call is printed (server on another hart, polling).
pub fn blocking_call(env: &mut Env) -> TResult {
    with_undo(env, blocking_inner)
}

static BG_DONE: AtomicUsize = AtomicUsize::new(0);

fn blocking_inner(env: &mut Env, u: &mut Undo) -> TResult {
    let f = frames(env)?;
    let rn = root_receiver(env, u)?;
    let (far, spin) = match env.other_hart() {
        Some(h) => (h, SPIN),
        None => (env.bi.node_id, 0),
    };
    let (st, sn) = helper(env, u, server_main, 2, far, ThreadCfg::default())?;
    let to_server = sender(env, sn, ROOT_TCB)?;
    let to_client = sender(env, rn, st)?;
    cfg(2, f.va, sn, to_client, spin);
    let (rt, park) = claim(rn, spin);
    let cl = new_client();
    ok!(cl.attach(mem(f.va), to_server, park));
    ok!(tcb::resume(st));
    // Background coroutines: they only run while someone drives the executor.
    BG_DONE.store(0, SeqCst);
    let mut bg: [Option<JoinHandle<()>>; 4] = [const { None }; 4];
    for (i, h) in bg.iter_mut().enumerate() {
        let fut = async move {
            for j in 0..25 {
                if add_ok(cl.call(add(100 + i as u64, j)).await, 100 + i as u64, j) {
                    BG_DONE.fetch_add(1, SeqCst);
                }
            }
        };
        *h = Some(rt.spawn(5, fut).map_err(|e| Fail::new(file!(), line!(), format_args!("spawn: {:?}", e)))?);
    }
    let mut i = 0u64;
    while BG_DONE.load(SeqCst) < 100 && i < 10_000 {
        let r = chan::call_blocking(&rt, cl, add(7, i));
        ensure!(add_ok(r, 7, i), "blocking call {}: {:?}", i, r);
        i += 1;
    }
    ensure_eq!(BG_DONE.load(SeqCst), 100, "background calls completed during blocking calls");
    for h in bg.iter_mut() {
        ensure!(h.take().is_some_and(|h| h.is_finished()), "a background worker did not finish");
    }
    // Cost, without the noise of another hart (and of a host that time-slices QEMU's vCPUs):
    // a loopback channel whose server runs as a task of this very executor, so a call is the
    // runtime and ring path alone. The same sequential calls, raw async inside one block_on,
    // then one call_blocking each.
    let lf = frames(env)?;
    let self_entry = sender(env, rn, ROOT_TCB)?;
    let lsrv = &SERVERS[new_server()];
    ok!(lsrv.attach(mem(lf.va), self_entry, park));
    let lcl = new_client();
    ok!(lcl.attach(mem(lf.va), self_entry, park));
    let server = rt
        .spawn(10, lsrv.serve(rt, 10, handle))
        .map_err(|e| Fail::new(file!(), line!(), format_args!("spawn: {:?}", e)))?;
    const N: u64 = 1000;
    let raw_calls = |base: u64| {
        rt.block_on(async move {
            let mut good = 0;
            for j in 0..N {
                good += add_ok(lcl.call(add(base, j)).await, base, j) as u64;
            }
            good
        })
    };
    raw_calls(2);
    let t0 = rdcycle();
    let good = raw_calls(3);
    let t1 = rdcycle();
    let mut good_b = 0;
    for j in 0..N {
        good_b += add_ok(chan::call_blocking(&rt, lcl, add(4, j)), 4, j) as u64;
    }
    let t2 = rdcycle();
    ensure!(good == N && good_b == N, "wrong loopback replies: {} async, {} blocking of {}", good, good_b, N);
    ensure_eq!(lcl.signals.load(SeqCst) + lsrv.signals.load(SeqCst), 0, "notifications on the loopback channel");
    drop(server);
    let (raw, blk) = ((t1 - t0) / N as usize, (t2 - t1) / N as usize);
    print!(
        "({} blocking calls beside 100 background ones; loopback per call: raw async {} cycles, blocking {} cycles, facade {:+} cycles, ratio {}.{:02}) ",
        i,
        raw,
        blk,
        blk as isize - raw as isize,
        blk / raw.max(1),
        blk * 100 / raw.max(1) % 100
    );
    Ok(())
}

/// The server in its own address space (image frames shared, the channel frames mapped at
/// another address, its own stack), sleeping between calls: each call finds it blocked in its
/// U-notification Wait and wakes it; the client sleeps in its own between the request and
/// the reply.
pub fn other_space_wake_after_sleep(env: &mut Env) -> TResult {
    with_undo(env, other_space_inner)
}

fn other_space_inner(env: &mut Env, u: &mut Undo) -> TResult {
    // A new VSpace with the image mapped again (as vm_new_address_space does).
    let vs = env.image_vspace()?;
    let f = frames(env)?;
    // The server sees the channel elsewhere: nothing in it may depend on addresses.
    let there = env.va(PAGES + 3) + 2 * PAGE;
    for (i, &c) in f.caps.iter().enumerate() {
        let c2 = env.copy(c)?;
        env.map_frame(c2, vs, there + i * PAGE, rights::READ_WRITE)?;
    }
    let rn = root_receiver(env, u)?;
    let hart = env.other_hart().unwrap_or(env.bi.node_id);
    let (st, sn) = helper(env, u, server_main, 3, hart, ThreadCfg { vspace: vs, ..ThreadCfg::default() })?;
    let to_server = sender(env, sn, ROOT_TCB)?;
    let to_client = sender(env, rn, st)?;
    cfg(3, there, sn, to_client, 0);
    let (rt, park) = claim(rn, 0);
    let cl = new_client();
    ok!(cl.attach(mem(f.va), to_server, park));
    ok!(tcb::resume(st));
    const ROUNDS: usize = 12;
    let wake0 = syscall::debug_stat(abi::stat::UINTR_WAIT_WAKEUPS);
    let mut to_sleep = 0;
    for i in 0..ROUNDS as u64 {
        let r = chan::call_blocking(&rt, cl, add(i, 5));
        ensure!(add_ok(r, i, 5), "call {} from the other address space: {:?}", i, r);
        // Let the server go back to sleep before the next call: until it announces that it
        // sleeps (a host that stalls its vCPU makes that take any time: up to ~2 s here), then
        // long enough for it to get from the announcement into the kernel's Wait.
        let w = park_of(3).waits.load(SeqCst);
        let t0 = rdcycle();
        while !cl.server_asleep() && rdcycle().wrapping_sub(t0) < 1 << 31 {
            syscall::yield_now();
        }
        ensure!(cl.server_asleep(), "the server never announced that it sleeps after call {}", i);
        to_sleep = to_sleep.max(rdcycle().wrapping_sub(t0));
        let t0 = rdcycle();
        while rdcycle().wrapping_sub(t0) < 1 << 20 {
            syscall::yield_now();
        }
        ensure!(park_of(3).waits.load(SeqCst) == w, "the server woke with nothing to do");
    }
    let srv = &SERVERS[CFG[3].server.load(SeqCst)];
    let (cs, ss) = (cl.signals.load(SeqCst), srv.signals.load(SeqCst));
    let (cw, sw) = (park.waits.load(SeqCst), park_of(3).waits.load(SeqCst));
    let wakes = syscall::debug_stat(abi::stat::UINTR_WAIT_WAKEUPS) - wake0;
    print!(
        "({} calls: client {} signals {} waits, server {} signals {} waits, {} kernel wake-ups; \
         the server announced sleep at most {} cycles after a reply) ",
        ROUNDS, cs, cw, ss, sw, wakes, to_sleep
    );
    // The first request may reach the server before it ever slept.
    ensure!(cs >= ROUNDS - 1, "the client signalled {} times in {} calls to a sleeping server", cs, ROUNDS);
    ensure!(sw >= ROUNDS - 1, "the server returned from Wait {} times in {} calls", sw, ROUNDS);
    ensure!(wakes >= ROUNDS - 1, "the kernel counted {} wake-ups from Wait", wakes);
    Ok(())
}

/// The server dies (a fault in a handler) with calls outstanding: the supervisor gets the
/// fault, closes the server's side and signals the client, and every outstanding call, and
/// every later one, ends with PeerGone instead of hanging.
pub fn server_death(env: &mut Env) -> TResult {
    with_undo(env, server_death_inner)
}

fn server_death_inner(env: &mut Env, u: &mut Undo) -> TResult {
    let f = frames(env)?;
    let rn = root_receiver(env, u)?;
    let ep = start_supervisor(env, f.va, Side::Server, rn)?;
    let hart = env.other_hart().unwrap_or(env.bi.node_id);
    let (st, sn) = helper(env, u, server_main, 0, hart, ThreadCfg { fault_ep: ep, ..ThreadCfg::default() })?;
    let to_server = sender(env, sn, ROOT_TCB)?;
    let to_client = sender(env, rn, st)?;
    cfg(0, f.va, sn, to_client, 0);
    let (rt, park) = claim(rn, 0);
    let cl = new_client();
    ok!(cl.attach(mem(f.va), to_server, park));
    ok!(tcb::resume(st));
    ensure!(add_ok(chan::call_blocking(&rt, cl, add(1, 2)), 1, 2), "a call before the death");
    let mut held: [Option<JoinHandle<Result<Msg, ChanError>>>; 6] = [const { None }; 6];
    for h in held.iter_mut() {
        *h = Some(
            rt.spawn(5, cl.call(Msg::new(HOLD, &[]).unwrap()))
                .map_err(|e| Fail::new(file!(), line!(), format_args!("spawn: {:?}", e)))?,
        );
    }
    let r = chan::call_blocking(&rt, cl, Msg::new(DIE, &[]).unwrap());
    ensure!(r == Err(ChanError::PeerGone), "the call that killed the server: {:?}", r);
    for (i, h) in held.iter_mut().enumerate() {
        let r = rt.block_on(h.take().unwrap());
        ensure!(r == Err(ChanError::PeerGone), "held call {}: {:?}", i, r);
    }
    let r = chan::call_blocking(&rt, cl, add(1, 2));
    ensure!(r == Err(ChanError::PeerGone), "a call after the death: {:?}", r);
    ensure_eq!(SUP_FAULT.load(SeqCst), fault::VM_FAULT + 1, "fault the supervisor got (label + 1)");
    Ok(())
}

/// The client dies (a fault) with a call outstanding: the supervisor closes the client's side
/// and signals the server (the root task here), whose dispatcher ends with PeerGone.
pub fn client_death(env: &mut Env) -> TResult {
    with_undo(env, client_death_inner)
}

fn client_death_inner(env: &mut Env, u: &mut Undo) -> TResult {
    let f = frames(env)?;
    let rn = root_receiver(env, u)?;
    let ep = start_supervisor(env, f.va, Side::Client, rn)?;
    let hart = env.other_hart().unwrap_or(env.bi.node_id);
    let (ct, cn) = helper(env, u, dying_client_main, 1, hart, ThreadCfg { fault_ep: ep, ..ThreadCfg::default() })?;
    let to_client = sender(env, cn, ROOT_TCB)?;
    let to_server = sender(env, rn, ct)?;
    cfg(1, f.va, cn, to_server, 0);
    let (rt, park) = claim(rn, 0);
    let srv = &SERVERS[new_server()];
    ok!(srv.attach(mem(f.va), to_client, park));
    ok!(tcb::resume(ct));
    let r = rt.block_on(srv.serve(rt, 10, handle));
    ensure!(r == ChanError::PeerGone, "the dispatcher ended with {:?}", r);
    ensure_eq!(CFG[1].done.load(SeqCst), 3, "the client's calls answered before it died");
    ensure_eq!(srv.replies.load(SeqCst), 3, "replies pushed");
    ensure_eq!(SUP_FAULT.load(SeqCst), fault::VM_FAULT + 1, "fault the supervisor got (label + 1)");
    Ok(())
}

/// Hostile ring contents written into the real shared frames. Against a client (the root,
/// with no server: the test writes the replies): a reply-ring tail beyond a full ring, a reply
/// for no outstanding call, a reply with length 9: each call ends with Corrupt, for good; a
/// well-formed forged reply is accepted (so the forgeries are otherwise right). Against a server
/// thread: a request with length 9 gets a BAD_REQUEST reply, a request-ring tail beyond a full
/// ring ends its dispatcher with Corrupt.
pub fn hostile_ring_indices(env: &mut Env) -> TResult {
    with_undo(env, hostile_inner)
}

/// Shared words of ring `which` (0 requests, 1 replies) of the channel at `va`.
fn ring_word(va: usize, which: usize, off: usize) -> *mut u64 {
    (va + chan::CHAN_HEADER_BYTES + which * chan::ring_bytes(CAP) + off) as *mut u64
}
const HEAD: usize = 0;
const TAIL: usize = 64;
fn slot_word(va: usize, which: usize, slot: usize, w: usize) -> *mut u64 {
    ring_word(va, which, chan::RING_HEADER_BYTES + slot * 64 + w * 8)
}

/// Write an item into slot `slot` of a ring, raw: id, label | len << 32, payload.
fn forge(va: usize, which: usize, slot: usize, id: u64, label: u32, len: u32, words: &[u64]) {
    // SAFETY: inside the channel's frames (mapped for the suite's lifetime).
    unsafe {
        slot_word(va, which, slot, 0).write_volatile(id);
        slot_word(va, which, slot, 1).write_volatile(label as u64 | (len as u64) << 32);
        for (i, &w) in words.iter().enumerate() {
            slot_word(va, which, slot, 2 + i).write_volatile(w);
        }
    }
}

fn set(p: *mut u64, v: u64) {
    core::sync::atomic::fence(SeqCst);
    // SAFETY: inside the channel's frames.
    unsafe { p.write_volatile(v) };
}

fn get(p: *mut u64) -> u64 {
    // SAFETY: inside the channel's frames.
    unsafe { p.read_volatile() }
}

fn hostile_inner(env: &mut Env, u: &mut Undo) -> TResult {
    let rn = root_receiver(env, u)?;
    let (rt, park) = claim(rn, 0);
    // Against the client. Case (tail, id, len) and what the call must return.
    let cases: [(u64, u64, u32, bool); 4] = [
        (1, 0, 2, true),            // well-formed: slot 0, generation 0, two words
        (1000, 0, 2, false),        // tail beyond head + capacity
        (1, 7 | 5 << 32, 2, false), // a reply for no outstanding call
        (1, 0, 9, false),           // a length past the payload
    ];
    for (n, &(tail, id, len, good)) in cases.iter().enumerate() {
        let f = frames(env)?;
        let cl = new_client();
        ok!(cl.attach(mem(f.va), 0, park));
        forge(f.va, 1, 0, id, ADD + 1, len, &[2 * 5 + 6, 0]);
        set(ring_word(f.va, 1, TAIL), tail);
        let r = chan::call_blocking(&rt, cl, add(5, 6));
        if good {
            ensure!(add_ok(r, 5, 6), "case {}: the well-formed forged reply gave {:?}", n, r);
        } else {
            ensure!(r == Err(ChanError::Corrupt), "case {}: {:?}", n, r);
            let r = chan::call_blocking(&rt, cl, add(5, 6));
            ensure!(r == Err(ChanError::Corrupt), "case {}: second call on a broken channel: {:?}", n, r);
        }
    }
    // Against a server thread: the root writes requests straight into the request ring.
    let f = frames(env)?;
    let hart = env.other_hart().unwrap_or(env.bi.node_id);
    let (st, sn) = helper(env, u, server_main, 2, hart, ThreadCfg::default())?;
    let to_server = sender(env, sn, ROOT_TCB)?;
    let to_client = sender(env, rn, st)?;
    cfg(2, f.va, sn, to_client, 0);
    ok!(tcb::resume(st));
    forge(f.va, 0, 0, 77, ADD, 9, &[]);
    set(ring_word(f.va, 0, TAIL), 1);
    uintr::send(to_server);
    ensure!(wait_until(|| get(ring_word(f.va, 1, TAIL)) == 1), "no reply to a request with length 9");
    ensure_eq!(get(slot_word(f.va, 1, 0, 0)), 77, "id of the reply");
    ensure_eq!(get(slot_word(f.va, 1, 0, 1)) as u32, chan::BAD_REQUEST, "label of the reply");
    ensure_eq!(get(ring_word(f.va, 0, HEAD)), 1, "request ring head after one request");
    set(ring_word(f.va, 0, TAIL), 1 + 5000);
    uintr::send(to_server);
    ensure!(wait_until(|| CFG[2].result.load(SeqCst) != 0), "the server's dispatcher did not stop on a bad tail");
    ensure_eq!(CFG[2].result.load(SeqCst), code(ChanError::Corrupt) + 1, "why the dispatcher ended (1 + code)");
    Ok(())
}
