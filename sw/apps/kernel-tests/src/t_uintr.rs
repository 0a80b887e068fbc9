//! User interrupts and U-notifications (docs/uintr-spec.md, `abi::uintr`): the per-thread U-CSR
//! state, delivery across harts with no kernel entry on the hardware path, delivery after a
//! receiver was descheduled, many senders, poll and blocking wait, the sender's rights, slot
//! and sender-entry lifetimes over thousands of create/destroy cycles, two receivers sharing a
//! hart; and the benchmark against kernel-forwarded seL4 notifications.
//!
//! Every test runs in both kernel modes (`MODE_EMULATED` on stock QEMU, `MODE_HARDWARE` on our
//! SoC) and fails at once, before any user-interrupt instruction, if the kernel offers neither.
//! The root task executes `uipi`/CSR instructions only after a registration succeeded, so a
//! kernel without the feature fails these tests instead of faulting the root task.
use crate::env::{
    rdcycle, wall_cycles, Entry, Env, Fail, TResult, Thread, ThreadCfg, BENCH, CNODE, ROOT_DEPTH, ROOT_TCB,
};
use abi::{error as e, object as o, stat, uintr as u, MessageInfo};
use core::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use userlib::invoke::rights;
use userlib::uintr::{self, vector_bit, Handler};
use userlib::{cnode, syscall, tcb, untyped};

/// Cycles of create/register/send/destroy in `create_destroy` (the RTL subset runs fewer).
#[cfg(not(feature = "rtl-subset"))]
const CREATE_DESTROY_CYCLES: usize = 10_000;
#[cfg(feature = "rtl-subset")]
const CREATE_DESTROY_CYCLES: usize = 40;

/// Yield rounds per thread in `csr_state_per_thread` (on one hart: cheap).
#[cfg(not(feature = "rtl-subset"))]
const CSR_ROUNDS: usize = 200;
#[cfg(feature = "rtl-subset")]
const CSR_ROUNDS: usize = 20;

/// Sends per receiver in `two_receivers_one_hart`, rounds of `many_senders_distinct_vectors`.
/// Each is a few cross-hart wake-ups, which a loaded host running QEMU can make slow.
#[cfg(not(feature = "rtl-subset"))]
const ALT_ROUNDS: usize = 50;
#[cfg(feature = "rtl-subset")]
const ALT_ROUNDS: usize = 10;
#[cfg(not(feature = "rtl-subset"))]
const MANY_ROUNDS: usize = 20;
#[cfg(feature = "rtl-subset")]
const MANY_ROUNDS: usize = 5;

/// Measured rounds of each benchmark, after `BENCH_WARMUP` unmeasured ones.
const BENCH_ROUNDS: usize = 100;
const BENCH_WARMUP: usize = 10;

/// Where `uintr_bench` leaves its results in `BENCH` (cycles per operation).
pub const B_UINTR_ONE_WAY: usize = 4;
pub const B_UINTR_ROUND_TRIP: usize = 5;
pub const B_UINTR_RT_ENTRIES: usize = 6;
pub const B_NTFN_ONE_WAY: usize = 7;
pub const B_NTFN_ROUND_TRIP: usize = 8;
pub const B_MODE: usize = 9;
pub const B_ROUNDS: usize = 10;
/// Kernel entries (all harts) per Signal/Wait ping-pong round trip, x100.
pub const B_NTFN_ENTRIES: usize = 18;
/// Threads handed straight to their idle hart per kernel-forwarded notification round trip,
/// x100.
pub const B_NTFN_HANDOFFS: usize = 22;
/// Waits that spun for their signal without the kernel lock per round trip, x100, and of
/// them those the signaller completed (x100).
pub const B_NTFN_SPINS: usize = 23;
pub const B_NTFN_DELIVERED: usize = 24;
/// Profiler region of each measured Signal/Wait round trip (hw/sim/README.md).
pub const REGION_NTFN: u16 = 14;

/// How long to wait for something that should happen, in cycles: on QEMU the counter runs at
/// the host's clock and a loaded host can stall a hart for a long time (2^34: ~6 s); on our
/// SoC (100 MHz) 2^25 is a third of a second, ages for any delivery, and keeps a failure in
/// the RTL simulation short. Only a failing test waits that long. Set by `need_mode`.
static BUDGET: AtomicUsize = AtomicUsize::new(1 << 34);

pub(crate) fn budget() -> usize {
    BUDGET.load(SeqCst)
}

/// How long to watch for something that must not happen (cycles, and at least 8 polls): a
/// send that was going to arrive has long arrived by then (the ones watched for are complete
/// before the watching starts).
const QUIET_CYCLES: usize = 4096;

// ---------------------------------------------------------------------------------------------
// Receivers: per-receiver records filled by the handler, and the threads that use them.

/// What the handler of receiver K saw.
struct Rx {
    /// OR of every pending word delivered.
    bits: AtomicUsize,
    /// Handler calls with a non-empty word.
    calls: AtomicUsize,
    /// Handler calls with an empty word.
    empty: AtomicUsize,
    /// Vector bits delivered, summed over calls.
    hits: AtomicUsize,
    /// rdcycle at the entry of the last call.
    time: AtomicUsize,
    /// ucause and ustatus inside the last call.
    cause: AtomicUsize,
    ustatus: AtomicUsize,
    /// The receiver's tp (IPC buffer address), 0 = not checked; calls on another thread.
    tp: AtomicUsize,
    wrong_thread: AtomicUsize,
    /// Set by the receiver thread once its handler is installed.
    ready: AtomicUsize,
    /// For the blocking receivers: what they saw right after the kernel returned, and how
    /// often they returned.
    seen: AtomicUsize,
    wakes: AtomicUsize,
    /// A plain notification the handler signals after each non-empty call (0: none), for
    /// threads that block until a delivery instead of spinning.
    ack: AtomicUsize,
}

impl Rx {
    const fn new() -> Rx {
        Rx {
            bits: AtomicUsize::new(0),
            calls: AtomicUsize::new(0),
            empty: AtomicUsize::new(0),
            hits: AtomicUsize::new(0),
            time: AtomicUsize::new(0),
            cause: AtomicUsize::new(0),
            ustatus: AtomicUsize::new(0),
            tp: AtomicUsize::new(0),
            wrong_thread: AtomicUsize::new(0),
            ready: AtomicUsize::new(0),
            seen: AtomicUsize::new(0),
            wakes: AtomicUsize::new(0),
            ack: AtomicUsize::new(0),
        }
    }

    fn reset(&self) {
        for a in [
            &self.bits,
            &self.calls,
            &self.empty,
            &self.hits,
            &self.time,
            &self.cause,
            &self.ustatus,
            &self.tp,
            &self.wrong_thread,
            &self.ready,
            &self.seen,
            &self.wakes,
            &self.ack,
        ] {
            a.store(0, SeqCst);
        }
    }
}

static RX: [Rx; 4] = [const { Rx::new() }; 4];
static EXTERNAL: AtomicUsize = AtomicUsize::new(0);

/// The handler of receiver K: timestamp first, then the checks, then the bits (what the
/// waiting side spins on) and the call count last.
fn on_signal<const K: usize>(bits: u64) {
    let t = rdcycle();
    let r = &RX[K];
    r.time.store(t, SeqCst);
    if bits == 0 {
        r.empty.fetch_add(1, SeqCst);
        return;
    }
    let c = uintr::csrs();
    r.ustatus.store(c.ustatus, SeqCst);
    r.cause.store(c.ucause, SeqCst);
    let want_tp = r.tp.load(SeqCst);
    if want_tp != 0 && crate::env::tp() != want_tp {
        r.wrong_thread.fetch_add(1, SeqCst);
    }
    r.hits.fetch_add(bits.count_ones() as usize, SeqCst);
    r.bits.fetch_or(bits as usize, SeqCst);
    r.calls.fetch_add(1, SeqCst);
    let ack = r.ack.load(SeqCst);
    if ack != 0 {
        syscall::signal(ack);
    }
}

fn on_external() {
    EXTERNAL.fetch_add(1, SeqCst);
}

const fn handler<const K: usize>() -> Handler {
    Handler { on_signal: on_signal::<K>, on_external }
}

static HANDLERS: [Handler; 4] = [handler::<0>(), handler::<1>(), handler::<2>(), handler::<3>()];

/// The watchdog the busy receivers keep, so that the root task can block while it waits for
/// deliveries (leaving the hart, and on QEMU the host CPU, to the threads doing the work) and
/// still give up: once the cycle counter passes `WATCH_DEADLINE` (0: off) the first receiver
/// to notice sets `WATCH_FIRED` and signals `WATCH_NTFN`.
static WATCH_DEADLINE: AtomicUsize = AtomicUsize::new(0);
static WATCH_FIRED: AtomicUsize = AtomicUsize::new(0);
static WATCH_NTFN: AtomicUsize = AtomicUsize::new(0);

fn arm_watchdog(ntfn: usize, cycles: usize) {
    WATCH_DEADLINE.store(0, SeqCst);
    WATCH_FIRED.store(0, SeqCst);
    WATCH_NTFN.store(ntfn, SeqCst);
    WATCH_DEADLINE.store(rdcycle() + cycles, SeqCst);
}

/// Progress: the deadline moves to a budget from now.
fn kick_watchdog() {
    if WATCH_DEADLINE.load(SeqCst) != 0 {
        WATCH_DEADLINE.store(rdcycle() + budget(), SeqCst);
    }
}

fn watchdog_fired() -> bool {
    WATCH_FIRED.load(SeqCst) != 0
}

fn watchdog_check() {
    let d = WATCH_DEADLINE.load(SeqCst);
    if d != 0 && rdcycle() > d && WATCH_FIRED.swap(1, SeqCst) == 0 {
        syscall::signal(WATCH_NTFN.load(SeqCst));
    }
}

/// `rx_spin` argument flag: yield in the loop (a receiver sharing the root task's hart).
const RX_YIELD: usize = 1 << 8;

/// A receiver: installs handler `arg & 0xff`, says so, then stays in user mode (spinning
/// without system calls, or yielding with `RX_YIELD`), minding the watchdog.
extern "C" fn rx_spin(arg: usize) -> ! {
    let k = arg & 0xff;
    uintr::install(&HANDLERS[k]);
    RX[k].ready.store(1, SeqCst);
    loop {
        watchdog_check();
        if arg & RX_YIELD != 0 {
            syscall::yield_now();
        } else {
            core::hint::spin_loop();
        }
    }
}

/// The endpoint `rx_recv` receives on.
static RECV_EP: AtomicUsize = AtomicUsize::new(0);

/// A receiver that spends its time blocked in an endpoint Recv: after each return it records
/// what its handler had received by then (its first instructions back in user mode).
extern "C" fn rx_recv(k: usize) -> ! {
    uintr::install(&HANDLERS[k]);
    RX[k].ready.store(1, SeqCst);
    loop {
        syscall::recv(RECV_EP.load(SeqCst));
        RX[k].seen.store(RX[k].bits.load(SeqCst), SeqCst);
        RX[k].wakes.fetch_add(1, SeqCst);
    }
}

/// A receiver without a handler that blocks in `uintr::wait` on `ntfn` (records in RX[2]:
/// `ready` counts the waits begun, `seen` the last word, `wakes` the waits returned).
extern "C" fn rx_wait(ntfn: usize) -> ! {
    let r = &RX[2];
    loop {
        r.ready.fetch_add(1, SeqCst);
        let w = uintr::wait(ntfn);
        r.seen.store(w as usize, SeqCst);
        r.wakes.fetch_add(1, SeqCst);
    }
}

// ---------------------------------------------------------------------------------------------
// Senders driven by the root task.

struct Tx {
    /// A plain notification the sender waits on before each burst.
    go: AtomicUsize,
    /// Its sender-table entries, sent in order in each burst.
    n: AtomicUsize,
    idx: [AtomicUsize; 8],
    /// Bursts done (for `alt_sender`: 1 = finished).
    done: AtomicUsize,
    /// A plain notification signalled after each burst (0: none).
    report: AtomicUsize,
}

impl Tx {
    const fn new() -> Tx {
        Tx {
            go: AtomicUsize::new(0),
            n: AtomicUsize::new(0),
            idx: [const { AtomicUsize::new(0) }; 8],
            done: AtomicUsize::new(0),
            report: AtomicUsize::new(0),
        }
    }
    fn reset(&self) {
        self.go.store(0, SeqCst);
        self.n.store(0, SeqCst);
        self.done.store(0, SeqCst);
        self.report.store(0, SeqCst);
    }
    fn add(&self, idx: usize) {
        let n = self.n.load(SeqCst);
        self.idx[n].store(idx, SeqCst);
        self.n.store(n + 1, SeqCst);
    }
}

static TX: [Tx; 2] = [const { Tx::new() }; 2];

/// Sender k: each time its `go` notification is signalled, sends all its entries, then
/// reports.
extern "C" fn tx_on_go(k: usize) -> ! {
    let t = &TX[k];
    loop {
        syscall::wait(t.go.load(SeqCst));
        for i in 0..t.n.load(SeqCst) {
            uintr::send(t.idx[i].load(SeqCst));
        }
        t.done.fetch_add(1, SeqCst);
        let report = t.report.load(SeqCst);
        if report != 0 {
            syscall::signal(report);
        }
    }
}

/// Sends with its own sender table what the caller asks (MR0 = entry index), then replies.
extern "C" fn send_server(ep: usize) -> ! {
    let (_, _, mut mrs) = syscall::recv(ep);
    loop {
        uintr::send(mrs[0]);
        (_, _, mrs) = syscall::reply_recv(ep, MessageInfo::new(0, 0, 0, 0), [0; 4]);
    }
}

fn remote_send(ep: usize, idx: usize) {
    syscall::call(ep, MessageInfo::new(0, 0, 0, 1), [idx, 0, 0, 0]);
}

// ---------------------------------------------------------------------------------------------
// Helpers.

pub(crate) fn need_mode(env: &Env) -> Result<usize, Fail> {
    let m = env.bi.uintr_mode;
    if m == u::MODE_EMULATED || m == u::MODE_HARDWARE {
        BUDGET.store(if m == u::MODE_HARDWARE { 1 << 25 } else { 1 << 34 }, SeqCst);
        Ok(m)
    } else {
        Err(Fail::new(
            file!(),
            line!(),
            format_args!("the kernel offers no user interrupts (BootInfo.uintr_mode {})", m),
        ))
    }
}

fn mode_name(m: usize) -> &'static str {
    match m {
        u::MODE_EMULATED => "emulated",
        u::MODE_HARDWARE => "hardware",
        _ => "none",
    }
}

/// Spin without system calls until `cond` holds; false after the budget.
fn spin_until(cond: impl Fn() -> bool) -> bool {
    let t0 = rdcycle();
    loop {
        if cond() {
            return true;
        }
        if rdcycle().wrapping_sub(t0) > budget() {
            return cond();
        }
        core::hint::spin_loop();
    }
}

/// Yield until `cond` holds (threads on the root task's hart get to run); false after
/// the budget.
fn yield_until(cond: impl Fn() -> bool) -> bool {
    let t0 = rdcycle();
    loop {
        if cond() {
            return true;
        }
        if rdcycle().wrapping_sub(t0) > budget() {
            return cond();
        }
        syscall::yield_now();
    }
}

/// Wait for something done by a thread on this hart (yield) or only by threads elsewhere
/// (spin: no kernel entry, so no contention for the kernel with the harts doing the work).
fn await_on(same_hart: bool, cond: impl Fn() -> bool) -> bool {
    if same_hart {
        yield_until(cond)
    } else {
        spin_until(cond)
    }
}

fn yields(n: usize) {
    for _ in 0..n {
        syscall::yield_now();
    }
}

/// Poll (this thread is the receiver) until the bits collected are `want`, something else
/// arrives, or the budget runs out; returns what was collected.
fn poll_collect(want: u64) -> u64 {
    let t0 = rdcycle();
    let mut got = 0;
    while got != want && got & !want == 0 && rdcycle().wrapping_sub(t0) < budget() {
        got |= uintr::poll();
    }
    got
}

/// Poll for `QUIET_CYCLES` (at least 8 times); returns whatever arrived.
fn poll_quiet() -> u64 {
    let t0 = rdcycle();
    let mut got = 0;
    let mut n = 0;
    while n < 8 || rdcycle().wrapping_sub(t0) < QUIET_CYCLES {
        got |= uintr::poll();
        n += 1;
    }
    got
}

fn gauge(which: usize) -> usize {
    syscall::debug_stat(which)
}

pub(crate) fn entries(tcb: usize) -> Result<usize, Fail> {
    match syscall::debug_thread_entries(abi::init_cap::DEBUG, tcb) {
        Some(n) => Ok(n),
        None => Err(Fail::new(file!(), line!(), format_args!("DebugThreadEntries({}) says it is not a TCB", tcb))),
    }
}

/// What a test undoes whatever its outcome: the root task's binding, and the receiver threads
/// it made (suspended and unbound, which frees their slots).
#[derive(Default)]
pub(crate) struct Cleanup {
    root_bound: bool,
    receivers: [usize; 8],
    n: usize,
}

impl Cleanup {
    fn receiver(&mut self, tcb: usize) {
        if self.n < self.receivers.len() {
            self.receivers[self.n] = tcb;
            self.n += 1;
        }
    }
    fn run(&mut self) {
        WATCH_DEADLINE.store(0, SeqCst);
        if self.root_bound {
            let _ = tcb::unbind_notification(ROOT_TCB);
            // The runner goes on as it came: the tests after this one (the IPC benchmarks
            // among them) run with the U-CSRs of a thread that never used user interrupts.
            uintr::uninstall();
            self.root_bound = false;
        }
        for &t in &self.receivers[..self.n] {
            let _ = tcb::suspend(t);
            let _ = tcb::unbind_notification(t);
        }
        self.n = 0;
    }
}

pub(crate) fn with_cleanup(env: &mut Env, test: fn(&mut Env, &mut Cleanup) -> TResult) -> TResult {
    let mut c = Cleanup::default();
    let r = test(env, &mut c);
    c.run();
    r
}

/// A thread (not started) on hart index `hart`, bound to `ntfn` and registered as its
/// receiver; returns it and its slot.
pub(crate) fn spawn_receiver(
    env: &mut Env,
    c: &mut Cleanup,
    entry: Entry,
    arg: usize,
    hart: usize,
    ntfn: usize,
) -> Result<(Thread, usize), Fail> {
    let cfg = ThreadCfg { start: false, affinity: Some(hart), ..ThreadCfg::default() };
    let t = env.spawn_cfg(entry as *const () as usize, arg, cfg)?;
    c.receiver(t.tcb);
    ok!(tcb::bind_notification(t.tcb, ntfn));
    let slot = ok!(uintr::register_receiver(ntfn));
    Ok((t, slot))
}

/// Bind `ntfn` to the root task and register it as the receiver; returns the slot.
pub(crate) fn root_receiver(c: &mut Cleanup, ntfn: usize) -> Result<usize, Fail> {
    ok!(tcb::bind_notification(ROOT_TCB, ntfn));
    c.root_bound = true;
    Ok(ok!(uintr::register_receiver(ntfn)))
}

/// A fresh copy of `ntfn` with `badge`, registered as a sender in `tcb`'s table; returns the
/// entry index.
fn add_sender(env: &mut Env, ntfn: usize, badge: usize, tcb: usize) -> Result<usize, Fail> {
    let m = env.mint(ntfn, rights::ALL, badge)?;
    Ok(ok!(uintr::register_sender(m, tcb)))
}

/// Where a receiver goes: another hart (spinning) if there is one, else the root task's hart
/// (yielding, so that the root task runs too).
fn receiver_hart(env: &Env) -> (usize, usize) {
    match env.other_hart() {
        Some(h) => (h, 0),
        None => (env.bi.node_id, RX_YIELD),
    }
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// The boot info announces user interrupts and a plausible number of receiver slots.
pub fn bootinfo(env: &mut Env) -> TResult {
    let m = need_mode(env)?;
    let slots = env.bi.uintr_slots;
    ensure!((4..=512).contains(&slots), "BootInfo.uintr_slots {} (expected 4..=512)", slots);
    let used = gauge(stat::UINTR_SLOTS_USED);
    ensure!(used <= slots, "UINTR_SLOTS_USED {} > uintr_slots {}", used, slots);
    userlib::print!("({}, {} slots) ", mode_name(m), slots);
    Ok(())
}

static CSR_DONE: AtomicUsize = AtomicUsize::new(0);
static CSR_STEPS: AtomicUsize = AtomicUsize::new(0);
static CSR_LAST: AtomicUsize = AtomicUsize::new(0);
static CSR_SWITCHES: AtomicUsize = AtomicUsize::new(0);
/// First problem seen: (thread << 32 | round) + 1, with the values in CSR_GOT/CSR_WANT.
static CSR_BAD: AtomicUsize = AtomicUsize::new(0);
static CSR_GOT: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];
static CSR_WANT: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];
static CSR_FRESH: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];

fn csr_values(k: usize, i: usize) -> (usize, usize) {
    // uscratch: all 64 bits used. utvec: a user address, vectored mode for thread 2 (its base
    // 256-byte aligned: Rocket's tvec keeps only that much of a vectored base, and so does the
    // emulation).
    let scratch = 0xa5c3_0000_0000_0000 | (k << 40) | (i << 4) | k;
    let vec = 0x10_0000 + (k << 16) + (i << 8) + usize::from(k == 2);
    (scratch, vec)
}

fn csr_bad(k: usize, i: usize, got: (usize, usize), want: (usize, usize)) {
    if CSR_BAD.compare_exchange(0, ((k << 32) | i) + 1, SeqCst, SeqCst).is_ok() {
        CSR_GOT[0].store(got.0, SeqCst);
        CSR_GOT[1].store(got.1, SeqCst);
        CSR_WANT[0].store(want.0, SeqCst);
        CSR_WANT[1].store(want.1, SeqCst);
    }
}

/// Thread k (1 or 2): checks it starts with utvec = uscratch = 0, then sets its own values,
/// yields, and reads them back, CSR_ROUNDS times.
extern "C" fn csr_thread(k: usize) -> ! {
    let c = uintr::csrs();
    CSR_FRESH[k - 1].store(c.utvec | c.uscratch, SeqCst);
    for i in 0..CSR_ROUNDS {
        let (scratch, vec) = csr_values(k, i);
        uintr::set_uscratch(scratch);
        uintr::set_utvec(vec);
        CSR_STEPS.fetch_add(1, SeqCst);
        if CSR_LAST.swap(k, SeqCst) != k {
            CSR_SWITCHES.fetch_add(1, SeqCst);
        }
        syscall::yield_now();
        let c = uintr::csrs();
        if c.uscratch != scratch || c.utvec != vec {
            csr_bad(k, i, (c.uscratch, c.utvec), (scratch, vec));
        }
    }
    // Leave no handler address behind (this thread is no receiver, but be tidy).
    uintr::set_utvec(0);
    CSR_DONE.fetch_add(1, SeqCst);
    crate::env::park()
}

fn csr_state_per_thread_inner(env: &mut Env, _c: &mut Cleanup) -> TResult {
    need_mode(env)?;
    for a in [&CSR_DONE, &CSR_STEPS, &CSR_LAST, &CSR_SWITCHES, &CSR_BAD] {
        a.store(0, SeqCst);
    }
    // Thread 1 first; thread 2 starts on the same hart once thread 1 has set its values, so
    // state leaking from one thread to a new one shows up in thread 2's first read.
    env.spawn(csr_thread, 1, 255)?;
    ensure!(yield_until(|| CSR_STEPS.load(SeqCst) >= 1), "thread 1 never set its U-CSRs (did csrw fault?)");
    env.spawn(csr_thread, 2, 255)?;
    ensure!(
        yield_until(|| CSR_DONE.load(SeqCst) >= 2 || CSR_BAD.load(SeqCst) != 0),
        "threads did not finish: {} of 2",
        CSR_DONE.load(SeqCst)
    );
    let bad = CSR_BAD.load(SeqCst);
    ensure!(
        bad == 0,
        "thread {} round {}: (uscratch, utvec) read back {:#x}, {:#x}; wrote {:#x}, {:#x}",
        (bad - 1) >> 32,
        (bad - 1) & 0xffff_ffff,
        CSR_GOT[0].load(SeqCst),
        CSR_GOT[1].load(SeqCst),
        CSR_WANT[0].load(SeqCst),
        CSR_WANT[1].load(SeqCst)
    );
    ensure_eq!(CSR_FRESH[0].load(SeqCst), 0, "utvec|uscratch of a new thread (thread 1)");
    ensure_eq!(
        CSR_FRESH[1].load(SeqCst),
        0,
        "utvec|uscratch of a new thread started after another set them (thread 2)"
    );
    let sw = CSR_SWITCHES.load(SeqCst);
    ensure!(sw >= CSR_ROUNDS, "only {} switches between the two threads in {} rounds each", sw, CSR_ROUNDS);
    Ok(())
}

pub fn csr_state_per_thread(env: &mut Env) -> TResult {
    with_cleanup(env, csr_state_per_thread_inner)
}

fn cross_core_inner(env: &mut Env, c: &mut Cleanup) -> TResult {
    let mode = need_mode(env)?;
    let (hart, flag) = receiver_hart(env);
    let cross = flag == 0;
    let r = &RX[0];
    r.reset();
    EXTERNAL.store(0, SeqCst);
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let (t, slot) = spawn_receiver(env, c, rx_spin, flag, hart, n)?;
    ensure!(slot < env.bi.uintr_slots, "receiver slot {} >= uintr_slots {}", slot, env.bi.uintr_slots);
    ensure_eq!(ok!(uintr::register_receiver(n)), slot, "registering the receiver again");
    r.tp.store(t.ipc_va, SeqCst);
    ok!(tcb::resume(t.tcb));
    ensure!(await_on(!cross, || r.ready.load(SeqCst) != 0), "receiver did not install its handler");
    // How many entries reading our own counter costs (0 or 1 depending on when it counts).
    let a = entries(ROOT_TCB)?;
    let overhead = entries(ROOT_TCB)? - a;
    // Vectors at both ends and in between, one send each, from the root task's hart.
    let badges = [5, 0, 63];
    let mut idxs = [0; 3];
    for (i, &badge) in badges.iter().enumerate() {
        idxs[i] = add_sender(env, n, badge, ROOT_TCB)?;
        r.bits.store(0, SeqCst);
        let before = r.calls.load(SeqCst);
        let er0 = entries(t.tcb)?;
        let es0 = entries(ROOT_TCB)?;
        uintr::send(idxs[i]);
        let arrived = await_on(!cross, || r.calls.load(SeqCst) > before);
        let es1 = entries(ROOT_TCB)?;
        let er1 = entries(t.tcb)?;
        ensure!(arrived, "vector {}: the handler never ran", badge);
        ensure_eq!(r.bits.load(SeqCst), vector_bit(badge), "bits delivered for vector");
        ensure_eq!(r.cause.load(SeqCst), u::CAUSE_INTERRUPT | u::CAUSE_SOFTWARE, "ucause in the handler");
        let us = r.ustatus.load(SeqCst);
        ensure!(us & 1 == 0 && us & 0x10 != 0, "ustatus in the handler {:#x}: expected UIE 0, UPIE 1", us);
        ensure_eq!(r.wrong_thread.load(SeqCst), 0, "handler calls on a thread other than the receiver");
        if cross {
            let sender = (es1 - es0).saturating_sub(overhead);
            let receiver = er1 - er0;
            if mode == u::MODE_HARDWARE {
                ensure!(
                    sender == 0 && receiver == 0,
                    "hardware mode: send + delivery cost {} sender and {} receiver kernel entries",
                    sender,
                    receiver
                );
            } else {
                ensure!(
                    sender > 0 && receiver > 0,
                    "emulated mode: send + delivery cost {} sender and {} receiver kernel entries (expected > 0)",
                    sender,
                    receiver
                );
            }
        }
    }
    // A burst: the three vectors back to back, none lost (they may arrive in one call).
    r.bits.store(0, SeqCst);
    for &i in &idxs {
        uintr::send(i);
    }
    let want = (vector_bit(5) | vector_bit(0) | vector_bit(63)) as usize;
    ensure!(
        await_on(!cross, || r.bits.load(SeqCst) == want),
        "burst of three vectors: handler saw {:#x}, want {:#x}",
        r.bits.load(SeqCst),
        want
    );
    ensure_eq!(r.hits.load(SeqCst), 6, "vector bits delivered in all (each exactly once)");
    ensure_eq!(EXTERNAL.load(SeqCst), 0, "external user interrupts taken");
    Ok(())
}

pub fn cross_core_signal_zero_entries(env: &mut Env) -> TResult {
    with_cleanup(env, cross_core_inner)
}

fn deschedule_inner(env: &mut Env, c: &mut Cleanup) -> TResult {
    need_mode(env)?;
    let (hart, flag) = receiver_hart(env);
    // (a) Suspended: nothing runs while it is stopped, everything at its resumption.
    let r = &RX[0];
    r.reset();
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let here = flag != 0;
    let (t, _) = spawn_receiver(env, c, rx_spin, flag, hart, n)?;
    r.tp.store(t.ipc_va, SeqCst);
    ok!(tcb::resume(t.tcb));
    ensure!(await_on(here, || r.ready.load(SeqCst) != 0), "receiver did not install its handler");
    let idx = add_sender(env, n, 12, ROOT_TCB)?;
    uintr::send(idx);
    ensure!(await_on(here, || r.calls.load(SeqCst) >= 1), "no delivery to the running receiver");
    ok!(tcb::suspend(t.tcb));
    r.bits.store(0, SeqCst);
    let calls = r.calls.load(SeqCst);
    uintr::send(idx);
    let k13 = env.mint(n, rights::ALL, 13)?;
    syscall::signal(k13); // the kernel as sender, too
    yields(5);
    let t0 = rdcycle();
    while rdcycle().wrapping_sub(t0) < QUIET_CYCLES {
        core::hint::spin_loop();
    }
    ensure_eq!(r.calls.load(SeqCst), calls, "handler calls while the receiver was suspended");
    ok!(tcb::resume(t.tcb));
    let want = (vector_bit(12) | vector_bit(13)) as usize;
    ensure!(
        await_on(here, || r.bits.load(SeqCst) == want),
        "after Resume the handler saw {:#x}, want {:#x}",
        r.bits.load(SeqCst),
        want
    );
    ensure_eq!(r.wrong_thread.load(SeqCst), 0, "handler calls on another thread");

    // (b) Blocked in an endpoint Recv on the root task's hart: the interrupt waits until the
    // thread is back in user mode, and is taken before its first instruction there.
    let r1 = &RX[1];
    r1.reset();
    let ep = env.alloc_cap(o::ENDPOINT)?;
    RECV_EP.store(ep, SeqCst);
    let n1 = env.alloc_cap(o::NOTIFICATION)?;
    let (t1, _) = spawn_receiver(env, c, rx_recv, 1, env.bi.node_id, n1)?;
    r1.tp.store(t1.ipc_va, SeqCst);
    ok!(tcb::resume(t1.tcb));
    ensure!(yield_until(|| r1.ready.load(SeqCst) != 0), "blocking receiver did not install its handler");
    yields(3); // it runs into its Recv and blocks
    let idx1 = add_sender(env, n1, 20, ROOT_TCB)?;
    uintr::send(idx1);
    yields(5);
    ensure_eq!(r1.calls.load(SeqCst), 0, "handler calls while the receiver was blocked in Recv");
    ensure_eq!(r1.wakes.load(SeqCst), 0, "a user interrupt ended an endpoint Recv");
    syscall::send(ep, MessageInfo::new(1, 0, 0, 0), [0; 4]);
    ensure!(yield_until(|| r1.wakes.load(SeqCst) >= 1), "the receiver did not return from Recv");
    ensure_eq!(r1.bits.load(SeqCst), vector_bit(20), "bits the handler got after the Recv");
    ensure_eq!(
        r1.seen.load(SeqCst),
        vector_bit(20),
        "bits already delivered at the first user instructions after the Recv"
    );
    ensure_eq!(r1.wrong_thread.load(SeqCst), 0, "handler calls on another thread");
    Ok(())
}

pub fn delivery_after_deschedule(env: &mut Env) -> TResult {
    with_cleanup(env, deschedule_inner)
}

fn many_senders_inner(env: &mut Env, c: &mut Cleanup) -> TResult {
    need_mode(env)?;
    let (hart, flag) = receiver_hart(env);
    let here = flag != 0;
    let r = &RX[0];
    r.reset();
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let (t, _) = spawn_receiver(env, c, rx_spin, flag, hart, n)?;
    r.tp.store(t.ipc_va, SeqCst);
    ok!(tcb::resume(t.tcb));
    ensure!(await_on(here, || r.ready.load(SeqCst) != 0), "receiver did not install its handler");
    // Vectors 1..3 from the root task, 4..6 from a thread on the root task's hart, 7..8 from a
    // thread on a third hart if there is one (a sender sharing the spinning receiver's hart
    // would wait for the end of its time slice each round).
    let harts = userlib::bootinfo::harts(env.bi);
    let far = if harts > 2 { (env.bi.node_id + 2) % harts } else { env.bi.node_id };
    let mut mine = [0; 3];
    for (i, m) in mine.iter_mut().enumerate() {
        *m = add_sender(env, n, 1 + i, ROOT_TCB)?;
    }
    // The root task blocks on `wake` until the senders have reported and the handler has seen
    // everything (each signals it), or the receiver's watchdog gives up.
    let wake = env.alloc_cap(o::NOTIFICATION)?;
    r.ack.store(wake, SeqCst);
    for (k, (h, badges)) in [(env.bi.node_id, 4..7), (far, 7..9)].into_iter().enumerate() {
        TX[k].reset();
        TX[k].go.store(env.alloc_cap(o::NOTIFICATION)?, SeqCst);
        TX[k].report.store(wake, SeqCst);
        let s = env.spawn_on(tx_on_go, k, 255, h)?;
        for b in badges {
            TX[k].add(add_sender(env, n, b, s.tcb)?);
        }
    }
    let want = 0x1fe;
    for round in 1..=MANY_ROUNDS {
        r.bits.store(0, SeqCst);
        arm_watchdog(wake, budget());
        syscall::signal(TX[0].go.load(SeqCst));
        syscall::signal(TX[1].go.load(SeqCst));
        for &i in &mine {
            uintr::send(i);
        }
        let done =
            || r.bits.load(SeqCst) == want && TX[0].done.load(SeqCst) >= round && TX[1].done.load(SeqCst) >= round;
        while !done() && !watchdog_fired() {
            syscall::wait(wake);
        }
        ensure!(
            done(),
            "round {}: handler saw {:#x}, want {:#x} (senders finished {} and {} bursts)",
            round,
            r.bits.load(SeqCst),
            want,
            TX[0].done.load(SeqCst),
            TX[1].done.load(SeqCst)
        );
        ensure_eq!(r.hits.load(SeqCst), 8 * round, "vector bits delivered so far (each exactly once per round)");
    }
    ensure_eq!(r.wrong_thread.load(SeqCst), 0, "handler calls on another thread");
    Ok(())
}

pub fn many_senders_distinct_vectors(env: &mut Env) -> TResult {
    with_cleanup(env, many_senders_inner)
}

fn poll_and_wait_inner(env: &mut Env, c: &mut Cleanup) -> TResult {
    need_mode(env)?;
    // The root task as receiver, without a handler: poll.
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let slot = root_receiver(c, n)?;
    ensure_eq!(ok!(uintr::register_receiver(n)), slot, "registering the receiver again");
    ensure_eq!(uintr::poll(), 0, "poll of a fresh receiver");
    let i3 = add_sender(env, n, 3, ROOT_TCB)?;
    let i9 = add_sender(env, n, 9, ROOT_TCB)?;
    uintr::send(i3);
    uintr::send(i9);
    let want = vector_bit(3) | vector_bit(9);
    ensure_eq!(poll_collect(want), want, "poll after sends of vectors 3 and 9");
    ensure_eq!(uintr::poll(), 0, "second poll (the first one clears)");
    uintr::write(1 << 40);
    ensure_eq!(poll_collect(1 << 40), 1u64 << 40, "poll after uipi.write");
    let k7 = env.mint(n, rights::ALL, 7)?;
    let ks0 = gauge(stat::UINTR_KERNEL_SENDS);
    syscall::signal(k7);
    ensure_eq!(poll_collect(vector_bit(7)), vector_bit(7), "poll after a kernel Signal with badge 7");
    ensure!(gauge(stat::UINTR_KERNEL_SENDS) > ks0, "UINTR_KERNEL_SENDS did not count the Signal");
    // A badge that names no vector is an error (it used to fold onto vector badge % 64).
    let k64 = env.mint(n, rights::ALL, 64)?;
    let (_, info, _) = syscall::call(k64, abi::MessageInfo::new(0, 0, 0, 0), [0; 4]);
    ensure_eq!(info.label, abi::error::RANGE_ERROR, "Call-Signal with badge 64 on a U-notification");
    syscall::signal(k64);
    ensure_eq!(poll_quiet(), 0, "polls after everything was collected");

    // A thread blocked in wait, woken by a sender on another hart, then by the kernel.
    let r = &RX[2];
    r.reset();
    let n2 = env.alloc_cap(o::NOTIFICATION)?;
    let (w, _) = spawn_receiver(env, c, rx_wait, n2, env.bi.node_id, n2)?;
    ok!(tcb::resume(w.tcb));
    ensure!(yield_until(|| r.ready.load(SeqCst) >= 1), "the waiter did not start");
    yields(5);
    ensure_eq!(r.wakes.load(SeqCst), 0, "wait returned with nothing sent");
    let far = env.other_hart().unwrap_or(env.bi.node_id);
    TX[0].reset();
    TX[0].go.store(env.alloc_cap(o::NOTIFICATION)?, SeqCst);
    let s = env.spawn_on(tx_on_go, 0, 255, far)?;
    TX[0].add(add_sender(env, n2, 11, s.tcb)?);
    let wk0 = gauge(stat::UINTR_WAIT_WAKEUPS);
    syscall::signal(TX[0].go.load(SeqCst));
    ensure!(yield_until(|| r.wakes.load(SeqCst) >= 1), "a send from hart index {} did not end the wait", far);
    ensure_eq!(r.seen.load(SeqCst), vector_bit(11), "word returned by wait");
    ensure!(
        gauge(stat::UINTR_WAIT_WAKEUPS) > wk0,
        "UINTR_WAIT_WAKEUPS did not count the wake-up: the waiter never blocked"
    );
    ensure!(yield_until(|| r.ready.load(SeqCst) >= 2), "the waiter did not wait again");
    yields(3);
    let wk1 = gauge(stat::UINTR_WAIT_WAKEUPS);
    let ks1 = gauge(stat::UINTR_KERNEL_SENDS);
    let k20 = env.mint(n2, rights::ALL, 20)?;
    syscall::signal(k20);
    ensure!(yield_until(|| r.wakes.load(SeqCst) >= 2), "a kernel Signal did not end the wait");
    ensure_eq!(r.seen.load(SeqCst), vector_bit(20), "word returned by wait after a Signal");
    ensure!(gauge(stat::UINTR_WAIT_WAKEUPS) > wk1, "UINTR_WAIT_WAKEUPS did not count the Signal's wake-up");
    ensure!(gauge(stat::UINTR_KERNEL_SENDS) > ks1, "UINTR_KERNEL_SENDS did not count the Signal");
    // Bits already pending when the wait starts: it returns at once with all of them.
    ensure!(yield_until(|| r.ready.load(SeqCst) >= 3), "the waiter did not wait a third time");
    yields(3);
    ok!(tcb::suspend(w.tcb));
    let i30 = add_sender(env, n2, 30, ROOT_TCB)?;
    uintr::send(i30);
    syscall::signal(k20);
    ok!(tcb::resume(w.tcb));
    let want = (vector_bit(30) | vector_bit(20)) as usize;
    ensure!(yield_until(|| r.wakes.load(SeqCst) >= 3), "wait with bits pending did not return");
    ensure_eq!(r.seen.load(SeqCst), want, "word returned by wait with two vectors pending");
    Ok(())
}

pub fn poll_and_wait(env: &mut Env) -> TResult {
    with_cleanup(env, poll_and_wait_inner)
}

fn sender_rights_inner(env: &mut Env, c: &mut Cleanup) -> TResult {
    need_mode(env)?;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    // Receiver registration: the notification must be bound, the cap must have Read, the
    // object must be a notification.
    expect_err!(uintr::register_receiver(n), e::ILLEGAL_OPERATION);
    ok!(tcb::bind_notification(ROOT_TCB, n));
    c.root_bound = true;
    let wo = env.mint(n, rights::WRITE, 0)?;
    expect_any_err!(uintr::register_receiver(wo), e::INVALID_CAPABILITY, e::ILLEGAL_OPERATION);
    let other_tcb = env.alloc_cap(o::TCB)?;
    let frame = env.alloc_cap(o::PAGE_4K)?;
    expect_any_err!(uintr::register_receiver(other_tcb), e::ILLEGAL_OPERATION, e::INVALID_CAPABILITY);
    expect_any_err!(uintr::register_receiver(CNODE), e::ILLEGAL_OPERATION, e::INVALID_CAPABILITY);
    let slot = ok!(uintr::register_receiver(n));
    ensure!(slot < env.bi.uintr_slots, "slot {} >= uintr_slots {}", slot, env.bi.uintr_slots);
    // Sender registration: Write right, a vector < 64, a TCB as the table's owner, a
    // notification as the object, each cap once.
    let ro = env.mint(n, rights::READ, 4)?;
    expect_any_err!(uintr::register_sender(ro, ROOT_TCB), e::INVALID_CAPABILITY, e::ILLEGAL_OPERATION);
    for badge in [64, 1 << 40] {
        let big = env.mint(n, rights::ALL, badge)?;
        expect_any_err!(
            uintr::register_sender(big, ROOT_TCB),
            e::INVALID_ARGUMENT,
            e::RANGE_ERROR,
            e::ILLEGAL_OPERATION,
            e::INVALID_CAPABILITY
        );
    }
    let m = env.mint(n, rights::ALL, 5)?;
    let ep = env.alloc_cap(o::ENDPOINT)?;
    expect_any_err!(uintr::register_sender(m, ep), e::INVALID_CAPABILITY, e::ILLEGAL_OPERATION);
    expect_any_err!(uintr::register_sender(m, frame), e::INVALID_CAPABILITY, e::ILLEGAL_OPERATION);
    expect_any_err!(uintr::register_sender(frame, ROOT_TCB), e::ILLEGAL_OPERATION, e::INVALID_CAPABILITY);
    expect_any_err!(uintr::register_sender(other_tcb, ROOT_TCB), e::ILLEGAL_OPERATION, e::INVALID_CAPABILITY);
    let used0 = gauge(stat::UINTR_ENTRIES_USED);
    let idx = ok!(uintr::register_sender(m, ROOT_TCB));
    ensure!(idx < u::SENDER_ENTRIES, "entry index {} beyond a one-page table", idx);
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), used0 + 1, "UINTR_ENTRIES_USED after a registration");
    expect_err!(uintr::register_sender(m, ROOT_TCB), e::ILLEGAL_OPERATION);
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), used0 + 1, "UINTR_ENTRIES_USED after a refused registration");
    // A working entry, then entries that deliver nothing: unused, out of the table, deleted.
    ensure_eq!(poll_quiet(), 0, "pending bits before any send");
    uintr::send(idx);
    ensure_eq!(poll_collect(vector_bit(5)), vector_bit(5), "poll after a send through the registered entry");
    uintr::send(u::SENDER_ENTRIES - 1);
    uintr::send(u::SENDER_ENTRIES);
    uintr::send(1 << 20);
    uintr::send(usize::MAX);
    ensure_eq!(poll_quiet(), 0, "bits after sends through unregistered or out-of-range entries");
    ok!(cnode::delete(CNODE, m, ROOT_DEPTH));
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), used0, "UINTR_ENTRIES_USED after deleting the sender's cap");
    uintr::send(idx);
    ensure_eq!(poll_quiet(), 0, "bits after a send through the entry of a deleted cap");
    // Revoking the notification takes every derived cap's entry with it.
    let m2 = env.mint(n, rights::ALL, 6)?;
    let idx2 = ok!(uintr::register_sender(m2, ROOT_TCB));
    uintr::send(idx2);
    ensure_eq!(poll_collect(vector_bit(6)), vector_bit(6), "poll after a send through a second entry");
    ok!(cnode::revoke(CNODE, n, ROOT_DEPTH));
    ensure!(crate::env::identify(m2).is_none(), "the minted cap survived the revoke");
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), used0, "UINTR_ENTRIES_USED after revoking the notification");
    uintr::send(idx2);
    ensure_eq!(poll_quiet(), 0, "bits after a send through the entry of a revoked cap");
    Ok(())
}

pub fn sender_rights(env: &mut Env) -> TResult {
    with_cleanup(env, sender_rights_inner)
}

fn create_destroy_inner(env: &mut Env, c: &mut Cleanup) -> TResult {
    need_mode(env)?;
    // Everything comes from one small Untyped, which starts over each cycle (no children left).
    let ut = env.alloc(o::UNTYPED, 16)?.cptr;
    let s = env.slots(7)?;
    let (s_tcb, s_nb, s_mb, s_m2b, s_na, s_ma, s_tb) = (s, s + 1, s + 2, s + 3, s + 4, s + 5, s + 6);
    let slots0 = gauge(stat::UINTR_SLOTS_USED);
    let entries0 = gauge(stat::UINTR_ENTRIES_USED);
    // A sender with a table of its own (the suite's), on the root task's hart: sends the
    // entry index it is called with.
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let helper = env.spawn(send_server, ep, 255)?;
    let tables0 = gauge(stat::UINTR_TABLES_USED);
    let nslots = env.bi.uintr_slots;
    let retype = |t: usize, slot: usize| untyped::retype(ut, t, 0, CNODE, 0, 0, slot, 1);
    let del = |slot: usize| cnode::delete(CNODE, slot, ROOT_DEPTH);
    for i in 0..CREATE_DESTROY_CYCLES {
        let (vb, vb2, va) = (i % 64, (i + 21) % 64, (i * 7 + 3) % 64);
        // B: a receiver thread of its own, deleted first, with bits left pending in its slot
        // by the kernel and by another thread's entry that outlives the slot.
        ok!(retype(o::TCB, s_tcb));
        ok!(uintr::grant(abi::init_cap::UINTR_CONTROL, s_tcb, u::GRANT_RECEIVE));
        ok!(retype(o::UINTR_SENDER_TABLE, s_tb));
        ok!(uintr::sender_table_bind(s_tb, s_tcb));
        ok!(retype(o::NOTIFICATION, s_nb));
        ok!(tcb::bind_notification(s_tcb, s_nb));
        let slot_b = ok!(uintr::register_receiver(s_nb));
        ensure!(slot_b < nslots, "cycle {}: slot {} >= uintr_slots {}", i, slot_b, nslots);
        ok!(cnode::mint(CNODE, s_mb, ROOT_DEPTH, CNODE, s_nb, ROOT_DEPTH, rights::ALL, vb));
        ok!(cnode::mint(CNODE, s_m2b, ROOT_DEPTH, CNODE, s_nb, ROOT_DEPTH, rights::ALL, vb2));
        ok!(uintr::register_sender(s_mb, s_tcb));
        let stale = ok!(uintr::register_sender(s_m2b, helper.tcb));
        syscall::signal(s_mb);
        remote_send(ep, stale);
        ok!(del(s_tcb));
        ensure_eq!(gauge(stat::UINTR_SLOTS_USED), slots0, "UINTR_SLOTS_USED after deleting the receiver's TCB");
        // Its table outlives it (unbound, the entry gone with the thread) until its cap goes.
        ensure_eq!(gauge(stat::UINTR_TABLES_USED), tables0 + 1, "UINTR_TABLES_USED after deleting the receiver's TCB");
        ok!(del(s_tb));
        // A: the root task as receiver, probably in the slot just freed.
        ok!(retype(o::NOTIFICATION, s_na));
        ok!(tcb::bind_notification(ROOT_TCB, s_na));
        c.root_bound = true;
        let slot_a = ok!(uintr::register_receiver(s_na));
        ensure!(slot_a < nslots, "cycle {}: slot {} >= uintr_slots {}", i, slot_a, nslots);
        let stale_bits = uintr::poll();
        ensure!(
            stale_bits == 0,
            "cycle {}: a new receiver in slot {} (last one {}) found bits {:#x}",
            i,
            slot_a,
            slot_b,
            stale_bits
        );
        remote_send(ep, stale);
        let stray = poll_quiet();
        ensure!(
            stray == 0,
            "cycle {}: an entry for the freed slot {} reached slot {}: {:#x}",
            i,
            slot_b,
            slot_a,
            stray
        );
        ok!(cnode::mint(CNODE, s_ma, ROOT_DEPTH, CNODE, s_na, ROOT_DEPTH, rights::ALL, va));
        let idx = ok!(uintr::register_sender(s_ma, helper.tcb));
        remote_send(ep, idx);
        let got = poll_collect(vector_bit(va));
        ensure!(got == vector_bit(va), "cycle {}: received {:#x}, sent vector {}", i, got, va);
        ensure_eq!(uintr::poll(), 0, "second poll");
        remote_send(ep, idx); // left pending, with a kernel Signal, for the next owner of the slot
        syscall::signal(s_ma);
        ok!(del(s_ma));
        ok!(tcb::unbind_notification(ROOT_TCB));
        c.root_bound = false;
        ok!(del(s_na));
        ok!(del(s_m2b));
        ok!(del(s_mb));
        ok!(del(s_nb));
        let (sl, en, ta) =
            (gauge(stat::UINTR_SLOTS_USED), gauge(stat::UINTR_ENTRIES_USED), gauge(stat::UINTR_TABLES_USED));
        ensure!(
            sl == slots0 && en == entries0 && ta == tables0,
            "cycle {}: slots/entries/tables in use {}/{}/{}, at the start {}/{}/{}",
            i,
            sl,
            en,
            ta,
            slots0,
            entries0,
            tables0
        );
    }
    // The helper's entries go with its TCB; its table is an object of the suite's and stays.
    ok!(del(helper.tcb));
    ensure_eq!(gauge(stat::UINTR_TABLES_USED), tables0, "UINTR_TABLES_USED after deleting the sender thread");
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), entries0, "UINTR_ENTRIES_USED at the end");
    ensure_eq!(gauge(stat::UINTR_SLOTS_USED), slots0, "UINTR_SLOTS_USED at the end");
    Ok(())
}

pub fn create_destroy(env: &mut Env) -> TResult {
    with_cleanup(env, create_destroy_inner)
}

static TURN: AtomicUsize = AtomicUsize::new(0);
/// Plain notifications: each sender's turn, and "a sender finished or gave up".
static ALT_TURN: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];
static ALT_DONE: AtomicUsize = AtomicUsize::new(0);

/// Sender k (0 or 1) of `two_receivers_one_hart`: on each of its turns sends to receiver k,
/// blocks until its handler has seen that round, and passes the turn on.
extern "C" fn alt_sender(k: usize) -> ! {
    let idx = TX[k].idx[0].load(SeqCst);
    for round in 0..ALT_ROUNDS {
        syscall::wait(ALT_TURN[k].load(SeqCst));
        TURN.store(2 * round + k, SeqCst);
        kick_watchdog();
        uintr::send(idx);
        while RX[k].calls.load(SeqCst) <= round {
            syscall::wait(RX[k].ack.load(SeqCst));
        }
        syscall::signal(ALT_TURN[1 - k].load(SeqCst));
    }
    TX[k].done.store(1, SeqCst);
    syscall::signal(ALT_DONE.load(SeqCst));
    crate::env::park()
}

fn two_receivers_inner(env: &mut Env, c: &mut Cleanup) -> TResult {
    need_mode(env)?;
    let rx_hart = env.other_hart().unwrap_or(env.bi.node_id);
    let vectors = [7, 9];
    TURN.store(0, SeqCst);
    for t in ALT_TURN.iter() {
        t.store(env.alloc_cap(o::NOTIFICATION)?, SeqCst);
    }
    let done = env.alloc_cap(o::NOTIFICATION)?;
    ALT_DONE.store(done, SeqCst);
    arm_watchdog(done, budget());
    for k in 0..2 {
        RX[k].reset();
        RX[k].ack.store(env.alloc_cap(o::NOTIFICATION)?, SeqCst);
        let n = env.alloc_cap(o::NOTIFICATION)?;
        let (t, _) = spawn_receiver(env, c, rx_spin, k | RX_YIELD, rx_hart, n)?;
        RX[k].tp.store(t.ipc_va, SeqCst);
        TX[k].reset();
        let cfg = ThreadCfg { start: false, affinity: Some(env.bi.node_id), ..ThreadCfg::default() };
        let s = env.spawn_cfg(alt_sender as *const () as usize, k, cfg)?;
        TX[k].add(add_sender(env, n, vectors[k], s.tcb)?);
        ok!(tcb::resume(t.tcb));
        ok!(tcb::resume(s.tcb));
    }
    // Sender 0 starts. The senders block (on their turn, on their receiver's handler), and
    // so does the root task until both have finished or the receivers' watchdog fires (a
    // budget without a new turn).
    syscall::signal(ALT_TURN[0].load(SeqCst));
    while (TX[0].done.load(SeqCst) == 0 || TX[1].done.load(SeqCst) == 0) && !watchdog_fired() {
        syscall::wait(done);
    }
    for k in 0..2 {
        ensure!(
            TX[k].done.load(SeqCst) == 1,
            "timed out at turn {} of {}: sender {} not finished, receiver {} had {} handler calls",
            TURN.load(SeqCst),
            2 * ALT_ROUNDS,
            k,
            k,
            RX[k].calls.load(SeqCst)
        );
        let r = &RX[k];
        ensure!(r.ready.load(SeqCst) != 0, "receiver {} never ran", k);
        ensure_eq!(r.bits.load(SeqCst), vector_bit(vectors[k]), "bits seen by one receiver (only its own vector)");
        ensure_eq!(r.hits.load(SeqCst), ALT_ROUNDS, "vector bits delivered to one receiver (one per send)");
        ensure_eq!(r.calls.load(SeqCst), ALT_ROUNDS, "handler calls of one receiver");
        ensure_eq!(r.wrong_thread.load(SeqCst), 0, "handler calls on the other receiver's thread");
    }
    Ok(())
}

pub fn two_receivers_one_hart(env: &mut Env) -> TResult {
    with_cleanup(env, two_receivers_inner)
}

// ---------------------------------------------------------------------------------------------
// The benchmark.

static PONG_IDX: AtomicUsize = AtomicUsize::new(0);
static KPING: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];

/// The far side of the user-interrupt ping-pong: waits (polling) for a bit, answers.
extern "C" fn uintr_pong(_: usize) -> ! {
    loop {
        while uintr::poll() == 0 {
            core::hint::spin_loop();
        }
        uintr::send(PONG_IDX.load(SeqCst));
    }
}

/// The far side of the seL4 notification ping-pong.
extern "C" fn ntfn_pong(_: usize) -> ! {
    loop {
        syscall::wait(KPING[1].load(SeqCst));
        syscall::signal(KPING[0].load(SeqCst));
    }
}

/// The far side of the handler round trip: its user-interrupt handler answers at once.
fn pong_from_handler(_bits: u64) {
    uintr::send(PONG_IDX.load(SeqCst));
}

static PONG_HANDLER: Handler = Handler { on_signal: pong_from_handler, on_external };

extern "C" fn handler_pong(_: usize) -> ! {
    uintr::install(&PONG_HANDLER);
    RX[3].ready.store(1, SeqCst);
    loop {
        core::hint::spin_loop();
    }
}

/// Average cycles of `BENCH_ROUNDS` round trips: send to the far side, poll for its answer.
/// Measured on one hart's counter: Rocket's cycle counters stop in `wfi`, so counters of
/// different harts cannot be compared, and one way is reported as half a round trip.
fn poll_round_trips(to_far: usize, answer: u64) -> Result<usize, Fail> {
    let _ = uintr::poll();
    let mut t0 = 0;
    for i in 0..BENCH_WARMUP + BENCH_ROUNDS {
        if i == BENCH_WARMUP {
            t0 = rdcycle();
        }
        uintr::send(to_far);
        let t = rdcycle();
        let mut got = 0;
        while got == 0 && rdcycle().wrapping_sub(t) < budget() {
            got = uintr::poll();
        }
        ensure!(got == answer, "round trip {}: answer {:#x}, expected {:#x}", i, got, answer);
    }
    Ok((rdcycle() - t0) / BENCH_ROUNDS)
}

fn bench_inner(env: &mut Env, c: &mut Cleanup) -> TResult {
    let mode = need_mode(env)?;
    let other = env.need_other_hart()?;
    BENCH[B_MODE].store(mode, SeqCst);
    BENCH[B_ROUNDS].store(BENCH_ROUNDS, SeqCst);
    let r = &RX[3];

    // The root task receives the answers (polling); the far side is a receiver on another
    // hart that answers (a) from its handler, (b) by polling.
    let n_root = env.alloc_cap(o::NOTIFICATION)?;
    root_receiver(c, n_root)?;

    // (a) signal -> handler: the far side's handler sends the answer.
    r.reset();
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let (t, _) = spawn_receiver(env, c, handler_pong, 0, other, n)?;
    let to_handler = add_sender(env, n, 1, ROOT_TCB)?;
    PONG_IDX.store(add_sender(env, n_root, 3, t.tcb)?, SeqCst);
    ok!(tcb::resume(t.tcb));
    ensure!(spin_until(|| r.ready.load(SeqCst) != 0), "receiver did not install its handler");
    let handler_rt = poll_round_trips(to_handler, vector_bit(3))?;
    BENCH[B_UINTR_ONE_WAY].store(handler_rt / 2, SeqCst);
    ok!(tcb::suspend(t.tcb));

    // (b) Ping-pong, both sides polling.
    let n_far = env.alloc_cap(o::NOTIFICATION)?;
    let (p, _) = spawn_receiver(env, c, uintr_pong, 0, other, n_far)?;
    let to_far = add_sender(env, n_far, 1, ROOT_TCB)?;
    PONG_IDX.store(add_sender(env, n_root, 2, p.tcb)?, SeqCst);
    ok!(tcb::resume(p.tcb));
    let e0 = entries(p.tcb)? + entries(ROOT_TCB)?;
    let cycles = poll_round_trips(to_far, vector_bit(2))?;
    // e0 already counted both of the root task's DebugThreadEntries calls before it; e1 counts
    // the first of the next two: one entry is the measurement's own.
    let e1 = (entries(ROOT_TCB)? + entries(p.tcb)?).saturating_sub(1);
    BENCH[B_UINTR_ROUND_TRIP].store(cycles, SeqCst);
    BENCH[B_UINTR_RT_ENTRIES].store(e1.saturating_sub(e0) / BENCH_ROUNDS, SeqCst);
    ok!(tcb::suspend(p.tcb));
    ok!(tcb::unbind_notification(ROOT_TCB));
    c.root_bound = false;

    // (c) The baseline: seL4 notifications across the same harts, forwarded by the kernel.
    for k in KPING.iter() {
        let n = env.alloc_cap(o::NOTIFICATION)?;
        k.store(env.mint(n, rights::ALL, 1)?, SeqCst);
    }
    let ping_back = KPING[0].load(SeqCst);
    env.spawn_on(ntfn_pong, 0, 255, other)?;
    // Wall clock, not rdcycle: this hart sleeps in wfi (its counter stops) while it waits.
    let (mut t0, mut e0, mut h0, mut s0, mut d0) = (0, 0, 0, 0, 0);
    let signal = KPING[1].load(SeqCst);
    for i in 0..BENCH_WARMUP + BENCH_ROUNDS {
        if i == BENCH_WARMUP {
            h0 = syscall::debug_stat(stat::HANDOFFS);
            s0 = syscall::debug_stat(stat::WAIT_SPINS);
            d0 = syscall::debug_stat(stat::SPIN_DELIVERIES);
            e0 = syscall::debug_stat(stat::KERNEL_ENTRIES);
            t0 = wall_cycles();
        }
        userlib::marker::begin::<REGION_NTFN>();
        syscall::signal(signal);
        syscall::wait(ping_back);
        userlib::marker::end::<REGION_NTFN>();
    }
    let ntfn_rt = (wall_cycles() - t0) / BENCH_ROUNDS;
    // The DebugStat call that reads e1 is an entry too.
    let e1 = syscall::debug_stat(stat::KERNEL_ENTRIES).saturating_sub(1);
    let h1 = syscall::debug_stat(stat::HANDOFFS);
    let s1 = syscall::debug_stat(stat::WAIT_SPINS);
    BENCH[B_NTFN_SPINS].store((s1 - s0) * 100 / BENCH_ROUNDS, SeqCst);
    let d1 = syscall::debug_stat(stat::SPIN_DELIVERIES);
    BENCH[B_NTFN_DELIVERED].store((d1 - d0) * 100 / BENCH_ROUNDS, SeqCst);
    BENCH[B_NTFN_HANDOFFS].store((h1 - h0) * 100 / BENCH_ROUNDS, SeqCst);
    BENCH[B_NTFN_ROUND_TRIP].store(ntfn_rt, SeqCst);
    BENCH[B_NTFN_ONE_WAY].store(ntfn_rt / 2, SeqCst);
    BENCH[B_NTFN_ENTRIES].store((e1 - e0) * 100 / BENCH_ROUNDS, SeqCst);
    Ok(())
}

pub fn bench(env: &mut Env) -> TResult {
    with_cleanup(env, bench_inner)
}

/// IRQSetUIntr: refused for a plain notification (no receiver) and for a non-notification,
/// accepted for a U-notification with Write; the handler can then be acked, cleared and
/// freed like any other. (No device raises an interrupt on demand in the suite's machines.)
fn irq_set_uintr_inner(env: &mut Env, c: &mut Cleanup) -> TResult {
    need_mode(env)?;
    let s = env.slot()?;
    let err = expect_err!(
        userlib::irq::control_get(abi::init_cap::IRQ_CONTROL, 1 << 20, CNODE, s, ROOT_DEPTH),
        e::RANGE_ERROR
    );
    // The highest line: unused by the kernel on QEMU virt and on our SoC (spare).
    let line = err.mrs[1];
    ok!(userlib::irq::control_get(abi::init_cap::IRQ_CONTROL, line, CNODE, s, ROOT_DEPTH));
    let plain = env.alloc_cap(o::NOTIFICATION)?;
    expect_err!(uintr::irq_set_uintr(s, plain), e::ILLEGAL_OPERATION);
    let ep = env.alloc_cap(o::ENDPOINT)?;
    expect_err!(uintr::irq_set_uintr(s, ep), e::INVALID_CAPABILITY);
    let n = env.alloc_cap(o::NOTIFICATION)?;
    root_receiver(c, n)?;
    let read_only = env.mint(n, rights::READ, 4)?;
    expect_err!(uintr::irq_set_uintr(s, read_only), e::INVALID_CAPABILITY);
    let badged = env.mint(n, rights::ALL, 4)?;
    ok!(uintr::irq_set_uintr(s, badged));
    ok!(userlib::irq::handler_ack(s));
    ok!(userlib::irq::handler_clear(s));
    ok!(cnode::delete(CNODE, s, ROOT_DEPTH));
    ensure_eq!(uintr::poll(), 0, "no interrupt was raised");
    Ok(())
}

pub fn irq_set_uintr(env: &mut Env) -> TResult {
    with_cleanup(env, irq_set_uintr_inner)
}
