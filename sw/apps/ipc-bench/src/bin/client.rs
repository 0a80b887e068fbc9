//! The benchmark's client process: runs the sweep (README.md) against the near server (same
//! hart) and the far one (another hart), checks every reply, and prints one `result` line per
//! point. Sync points are a plain Call loop; async points run `concurrency` coroutines that
//! call through the channel until the point's calls are used up. A point is measured between
//! two snapshots taken after `warm` and after `warm + calls` completed calls (steady state:
//! the pipeline is full before the first and stays full past the second).
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    use abi::bootinfo::process::ProcessInfo;
    use abi::{stat, MessageInfo};
    use core::cell::UnsafeCell;
    use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    use ipc_bench::points::{self, ONLY};
    use ipc_bench::proto::{self, caps, control, label, CAP, CHAN_VA, SLOW_WORDS, WINDOW};
    use ipc_bench::work::{Work, SEEDS};
    use userlib::chan::{ChanMem, Client, Msg, ThreadPark};
    use userlib::task::{Executor, Handle, JoinHandle};
    use userlib::{ipc, print, println, syscall};

    userlib::entry!(main);

    const WORKS: &[Work] =
        if cfg!(feature = "quick") { &[Work::Matmul4] } else { &[Work::None, Work::Matmul4, Work::Heavy] };
    const CONCURRENCY: &[usize] = if cfg!(feature = "quick") { &[1, 8, 64] } else { &[1, 2, 4, 8, 16, 32, 64] };
    const MAX_CONC: usize = CAP;

    /// Measured calls of a point, and calls before the first snapshot.
    /// (The RTL is deterministic enough that 64 calls give stable figures; a point costs
    /// (warm + calls + concurrency) x its cycles per IPC of simulation.)
    /// At least four rounds of `conc` outstanding calls: on one hart the sides take turns in
    /// batches of up to `conc`, and a window inside one batch would time only its burst.
    fn calls(work: Work, conc: usize) -> usize {
        let base = match (cfg!(feature = "quick"), work) {
            (true, _) => 16,
            (false, Work::Heavy) => 32,
            (false, _) => 64,
        };
        base.max(4 * conc)
    }
    /// The pipeline is full once `conc` calls completed; a few more to settle.
    fn warm(conc: usize) -> usize {
        conc + 4
    }

    type Rt = Handle<{ MAX_CONC + 8 }, 256>;
    /// Near (same hart, no polling) and far (other hart, polling before sleep): one executor
    /// and park hook each, both on our one U-notification.
    static EXEC: [Executor<{ MAX_CONC + 8 }, 256>; 2] = [const { Executor::new() }; 2];
    static PARK: [ThreadPark; 2] = [const { ThreadPark::new() }; 2];
    static CLIENT: [Client<CAP>; 2] = [const { Client::new() }; 2];

    /// Expected result words by work and seed, filled before the first call.
    struct Table(UnsafeCell<[[[u64; 2]; SEEDS]; 4]>);
    // SAFETY: written once in main before any reader runs; one thread.
    unsafe impl Sync for Table {}
    static EXPECT: Table = Table(UnsafeCell::new([[[0; 2]; SEEDS]; 4]));
    fn expect(w: Work, seed: u64) -> [u64; 2] {
        // SAFETY: see Table.
        unsafe { (*EXPECT.0.get())[w as usize][seed as usize % SEEDS] }
    }

    /// Core cycles of wall time: mtime (which the RTL's RTC ticks at exactly the bus clock / 10)
    /// scaled to the core clock. Not `rdcycle`: Rocket's cycle counter stops while its hart
    /// waits in `wfi`, as ours does whenever the client blocks and the far server works. (On
    /// the RTL `rdtime` traps to the firmware, which reads mtime: two per window, no kernel
    /// entry.)
    fn now_cycles() -> usize {
        let v: usize;
        // SAFETY: reads a counter CSR user mode may read.
        unsafe { core::arch::asm!("rdtime {0}", out(reg) v, options(nomem, nostack)) };
        v * (platform::clock::CORE_HZ / platform::clock::TIMEBASE_HZ)
    }

    /// What a point reads at its start and end.
    #[derive(Clone, Copy, Default)]
    struct Snap {
        cycles: usize,
        signals: usize,
        entries: usize,
        fastpath: usize,
    }

    /// The end snapshot: cycles first, then one DebugStat that counts itself (the start
    /// snapshot reads entries last), then the fastpath counter, after the window.
    fn snap_end(signals: usize) -> Snap {
        let cycles = now_cycles();
        if MARK.load(Relaxed) {
            userlib::marker::end::<WINDOW>();
        }
        let entries = syscall::debug_stat(stat::KERNEL_ENTRIES);
        Snap { cycles, signals, entries, fastpath: syscall::debug_stat(stat::FASTPATH_CALL) }
    }
    fn snap_start(signals: usize) -> Snap {
        let fastpath = syscall::debug_stat(stat::FASTPATH_CALL);
        let entries = syscall::debug_stat(stat::KERNEL_ENTRIES);
        let cycles = now_cycles();
        if MARK.load(Relaxed) {
            userlib::marker::begin::<WINDOW>();
        }
        Snap { cycles, signals, entries, fastpath }
    }
    /// Whether the running point's window is marked as region WINDOW (the point
    /// `IPC_BENCH_PROFILE` names, or every point: see points.rs).
    static MARK: AtomicBool = AtomicBool::new(false);
    fn mark_point(variant: &str, work: Work, conc: usize) {
        MARK.store(points::selected(points::PROFILED, variant, work.name(), conc), Relaxed);
    }

    /// Kernel entries the snapshots themselves add to a window.
    const SNAP_ENTRIES: usize = 1;

    struct Ctx {
        target: &'static str,
        failures: usize,
        points: usize,
        total_calls: usize,
    }

    fn fixed2(n: usize, d: usize) -> (usize, usize) {
        let x = n * 100 / d.max(1);
        (x / 100, x % 100)
    }

    fn report(cx: &mut Ctx, variant: &str, conc: usize, work: Work, calls: usize, a: Snap, b: Snap) {
        let (n0, n1) = fixed2(b.signals - a.signals, calls);
        let (k0, k1) = fixed2((b.entries - a.entries).saturating_sub(SNAP_ENTRIES), calls);
        let (f0, f1) = fixed2(b.fastpath - a.fastpath, calls);
        println!(
            "result target={} variant={} concurrency={} work={} cycles_per_ipc={} notifications_per_ipc={}.{:02} kernel_entries_per_ipc={}.{:02} fastpath_per_ipc={}.{:02} calls={}",
            cx.target,
            variant,
            conc,
            work.name(),
            (b.cycles - a.cycles) / calls,
            n0,
            n1,
            k0,
            k1,
            f0,
            f1,
            calls
        );
        cx.points += 1;
    }

    fn check(cx: &mut Ctx, ok: bool, what: core::fmt::Arguments) {
        if !ok {
            cx.failures += 1;
            println!("[ipc-bench] check FAILED: {}", what);
        }
    }

    // ---- sync

    /// One Call of `work` on `seed` to `ep`, `slow` with a message too long for the fastpath;
    /// true if the reply is right.
    fn sync_call(ep: usize, work: Work, seed: u64, slow: bool) -> bool {
        let len = if slow {
            ipc::set_mr(4, 0);
            SLOW_WORDS
        } else {
            1
        };
        let (_, info, m) = syscall::call(ep, MessageInfo::new(work as usize, 0, 0, len), [seed as usize, 0, 0, 0]);
        let e = expect(work, seed);
        info.label == work as usize
            && info.length == if slow { SLOW_WORDS } else { 3 }
            && [m[0] as u64, m[1] as u64] == e
            && m[2] as u64 == seed
    }

    fn sync_point(cx: &mut Ctx, variant: &str, ep: usize, work: Work, slow: bool) {
        if !points::selected(ONLY, variant, work.name(), 1) {
            return;
        }
        mark_point(variant, work, 1);
        let (warm, calls) = (warm(1), calls(work, 1));
        let mut bad = 0;
        for t in 0..warm {
            bad += !sync_call(ep, work, (t % SEEDS) as u64, slow) as usize;
        }
        let a = snap_start(0);
        for t in warm..warm + calls {
            bad += !sync_call(ep, work, (t % SEEDS) as u64, slow) as usize;
        }
        let b = snap_end(0);
        report(cx, variant, 1, work, calls, a, b);
        cx.total_calls += warm + calls;
        check(cx, bad == 0, format_args!("{} {}: {} wrong replies", variant, work.name(), bad));
        let fast = b.fastpath - a.fastpath;
        match variant {
            "sync-fast" => {
                check(cx, fast * 10 >= calls * 9, format_args!("sync-fast: {} fastpath calls in {}", fast, calls))
            }
            _ => check(cx, fast == 0, format_args!("{}: {} fastpath calls", variant, fast)),
        }
    }

    // ---- async

    /// The running point: calls handed out, completed, wrong; snapshots; the largest counts
    /// the server reported (notifications sent, replies pushed).
    static TICKET: AtomicUsize = AtomicUsize::new(0);
    static TOTAL: AtomicUsize = AtomicUsize::new(0);
    static DONE: AtomicUsize = AtomicUsize::new(0);
    static BAD: AtomicUsize = AtomicUsize::new(0);
    static WARM: AtomicUsize = AtomicUsize::new(0);
    static END: AtomicUsize = AtomicUsize::new(0);
    static SRV_SIGNALS: AtomicUsize = AtomicUsize::new(0);
    static SRV_REPLIES: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];
    struct Snaps(UnsafeCell<[Snap; 2]>);
    // SAFETY: one thread (its coroutines take turns).
    unsafe impl Sync for Snaps {}
    static SNAPS: Snaps = Snaps(UnsafeCell::new([Snap { cycles: 0, signals: 0, entries: 0, fastpath: 0 }; 2]));

    fn signals_now(k: usize) -> usize {
        CLIENT[k].signals.load(Relaxed) + SRV_SIGNALS.load(Relaxed)
    }

    /// One more in a counter only this thread's coroutines write (they take turns): a load and
    /// a store, not an atomic read-modify-write per call.
    fn bump(a: &AtomicUsize) -> usize {
        let v = a.load(Relaxed);
        a.store(v + 1, Relaxed);
        v
    }
    /// `a` := max(a, v), as `bump`.
    fn raise(a: &AtomicUsize, v: usize) {
        if v > a.load(Relaxed) {
            a.store(v, Relaxed);
        }
    }

    async fn worker(k: usize, work: Work) {
        loop {
            let t = bump(&TICKET);
            if t >= TOTAL.load(Relaxed) {
                return;
            }
            let seed = (t % SEEDS) as u64;
            let reply = CLIENT[k].call(Msg::new(work as u32, &[seed]).unwrap_or_default()).await;
            match reply.as_ref().map(|m| (m.label, m.words())) {
                Ok((l, &[r0, r1, s, sig, n])) if l == work as u32 && [r0, r1] == expect(work, seed) && s == seed => {
                    raise(&SRV_SIGNALS, sig as usize);
                    raise(&SRV_REPLIES[k], n as usize);
                }
                _ => {
                    bump(&BAD);
                }
            }
            let done = bump(&DONE) + 1;
            // SAFETY: see Snaps.
            let snaps = unsafe { &mut *SNAPS.0.get() };
            if done == WARM.load(Relaxed) {
                snaps[0] = snap_start(signals_now(k));
            } else if done == END.load(Relaxed) {
                snaps[1] = snap_end(signals_now(k));
            }
        }
    }

    fn async_point(cx: &mut Ctx, rt: Rt, k: usize, conc: usize, work: Work) {
        let variant = if k == 0 { "async-same" } else { "async-cross" };
        if !points::selected(ONLY, variant, work.name(), conc) {
            return;
        }
        mark_point(variant, work, conc);
        let (warm, calls) = (warm(conc), calls(work, conc));
        // The pipeline stays full until the end snapshot.
        let total = warm + calls + conc;
        for (a, v) in [(&TICKET, 0), (&DONE, 0), (&BAD, 0), (&TOTAL, total), (&WARM, warm), (&END, warm + calls)] {
            a.store(v, Relaxed);
        }
        SRV_SIGNALS.store(0, Relaxed);
        let replies0 = CLIENT[k].replies.load(Relaxed);
        let mut hs: [Option<JoinHandle<()>>; MAX_CONC] = [const { None }; MAX_CONC];
        for h in hs.iter_mut().take(conc) {
            match rt.spawn(5, worker(k, work)) {
                Ok(j) => *h = Some(j),
                Err(e) => {
                    check(cx, false, format_args!("{} spawn: {:?}", variant, e));
                    return;
                }
            }
        }
        rt.block_on(async {
            for h in hs.iter_mut() {
                if let Some(h) = h.take() {
                    h.await;
                }
            }
        });
        // SAFETY: see Snaps; the workers are done.
        let [a, b] = unsafe { *SNAPS.0.get() };
        report(cx, variant, conc, work, calls, a, b);
        cx.total_calls += total;
        let (bad, done) = (BAD.load(Relaxed), DONE.load(Relaxed));
        let (v, c, w) = (variant, conc, work.name());
        check(cx, bad == 0, format_args!("{} conc {} {}: {} wrong replies", v, c, w, bad));
        check(cx, done == total, format_args!("{} conc {} {}: {} of {} calls completed", v, c, w, done, total));
        let replies = CLIENT[k].replies.load(Relaxed) - replies0;
        check(
            cx,
            replies == total,
            format_args!("{} conc {} {}: client counted {} replies for {} calls", v, c, w, replies, total),
        );
        // Every call so far on this channel got exactly one reply from the server.
        let ours = CALLS[k].fetch_add(total, Relaxed) + total;
        let theirs = SRV_REPLIES[k].load(Relaxed);
        check(
            cx,
            theirs == ours,
            format_args!("{} conc {} {}: server pushed {} replies for {} calls", v, c, w, theirs, ours),
        );
    }
    /// Calls made on each channel so far.
    static CALLS: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];

    extern "C" fn main(info: usize) -> ! {
        // SAFETY: the loader maps the ProcessInfo page read-only here and passes it in a0.
        let info = unsafe { &*(info as *const ProcessInfo) };
        ipc::set_ipc_buffer(info.ipc_buffer);
        let (_, _, m) = syscall::call(caps::CONTROL, MessageInfo::new(control::HELLO, 0, 0, 0), [0; 4]);
        let to_server = [m[0], m[1]];
        let (me, near, far) = (m[2], m[3], ipc::get_mr(4));
        let target = if ipc::get_mr(5) == proto::TARGET_RTL { "rtl" } else { "qemu" };
        let mut cx = Ctx { target, failures: 0, points: 0, total_calls: 0 };
        println!(
            "[ipc-bench] client on hart {}: near server on hart {}, far server on hart {} ({})",
            me, near, far, target
        );
        check(
            &mut cx,
            near == me && far != me,
            format_args!("placement: the near server must share our hart, the far one not"),
        );
        // SAFETY: before any reader (see Table).
        let table = unsafe { &mut *EXPECT.0.get() };
        for w in WORKS {
            for (s, e) in table[*w as usize].iter_mut().enumerate() {
                *e = w.run(s as u64);
            }
        }

        for &w in WORKS {
            sync_point(&mut cx, "sync-slow", caps::CLIENT_EP[0], w, true);
            sync_point(&mut cx, "sync-fast", caps::CLIENT_EP[0], w, false);
            sync_point(&mut cx, "sync-cross", caps::CLIENT_EP[1], w, false);
        }

        let spin = [0, proto::SPIN];
        let mut rts: [Option<Rt>; 2] = [None, None];
        for k in 0..2 {
            PARK[k].setup(caps::CLIENT_WAKE, spin[k]);
            rts[k] = EXEC[k].claim(&PARK[k]);
            // SAFETY: the root task maps the channel's frames here before we run, for good.
            let mem = unsafe { ChanMem::new(CHAN_VA[k] as *mut u8, CAP) }.expect("channel address");
            let r = CLIENT[k].attach(mem, to_server[k], &PARK[k]);
            check(&mut cx, r.is_ok(), format_args!("attach channel {}: {:?}", k, r));
            let (_, info, _) = syscall::call(caps::CLIENT_EP[k], MessageInfo::new(label::GO_ASYNC, 0, 0, 0), [0; 4]);
            check(&mut cx, info.label == 0, format_args!("server {} did not switch to async", k));
        }
        for &w in WORKS {
            for (k, rt) in rts.iter().enumerate() {
                let Some(rt) = *rt else { continue };
                for &c in CONCURRENCY {
                    async_point(&mut cx, rt, k, c, w);
                }
            }
        }
        print!("[ipc-bench] done: {} points, {} calls, ", cx.points, cx.total_calls);
        if cx.failures == 0 {
            println!("every reply right and every count adds up");
        } else {
            println!("{} checks FAILED", cx.failures);
        }
        syscall::call(caps::CONTROL, MessageInfo::new(control::DONE, 0, 0, 1), [cx.failures, 0, 0, 0]);
        loop {
            syscall::yield_now();
        }
    }

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo) -> ! {
        println!("[ipc-bench] client panic: {}", info);
        // Fault on purpose: the root task hears of it on our fault endpoint and ends the run.
        // SAFETY: page 0 is never mapped; the write only faults.
        unsafe { core::ptr::write_volatile(8 as *mut u8, 0) };
        loop {
            syscall::yield_now();
        }
    }
}
