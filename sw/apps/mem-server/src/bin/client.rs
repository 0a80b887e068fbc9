//! The memory benchmark's client: checks the server's answers to bad requests, then runs the
//! sweep (README.md): for each phase (mode sync/async and placement, `proto::placement`) and
//! concurrency, that many coroutines each map a page of the pool, touch it (write a pattern at
//! both ends, read it back) and unmap it, in a loop; one `result` line per point. Last, it maps,
//! unmaps and reads a page once more: the root task checks that this read faults.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    use abi::bootinfo::process::ProcessInfo;
    use abi::{stat, MessageInfo};
    use core::cell::UnsafeCell;
    use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use mem_server::proto::{
        self, caps, control, placement, req, status, CAP, CHAN_VA, FRAMES, PAGE, POOL_PAGES, POOL_VA,
    };
    use userlib::chan::{call_blocking, ChanMem, Client, Msg, ThreadPark};
    use userlib::task::{Executor, Handle, JoinHandle};
    use userlib::{ipc, print, println, syscall};

    userlib::entry!(main);

    /// Phases (`MODE-PLACEMENT`, `proto::placement::NAMES`) and concurrencies of the sweep;
    /// the build may choose others (MEM_PHASES, MEM_CONC).
    const PHASES: &str = match option_env!("MEM_PHASES") {
        Some(p) => p,
        None => "sync-one-hart,sync-two-harts,async-one-hart,async-two-harts,async-dedicated-handler-hart",
    };
    const CONC: &str = match option_env!("MEM_CONC") {
        Some(c) => c,
        None if cfg!(feature = "quick") => "2,16,128",
        None => "2,4,8,16,32,64,128,256,512",
    };

    /// Measured pairs of a point: at least two rounds of its coroutines (on one hart the sides
    /// take turns in batches of up to `conc` requests: a shorter window times one burst).
    fn pairs(conc: usize) -> usize {
        // MEM_PAIRS=n at build time: max(n, 2 x conc) (a shorter window at low concurrency;
        // never below two rounds, see above).
        if let Some(n) = option_env!("MEM_PAIRS").and_then(|n| n.parse::<usize>().ok()) {
            return n.max(2 * conc).max(1);
        }
        if cfg!(feature = "quick") {
            conc.max(8)
        } else {
            (2 * conc).max(48)
        }
    }
    /// The pipeline is full once every coroutine finished a pair; a few more to settle.
    fn warm(conc: usize) -> usize {
        conc + 4
    }

    type Rt = Handle<{ CAP + 8 }, 256>;
    static EXEC: Executor<{ CAP + 8 }, 256> = Executor::new();
    static PARK: ThreadPark = ThreadPark::new();
    static CLIENT: Client<CAP> = Client::new();

    /// Core cycles of wall time: mtime scaled to the core clock (Rocket's cycle counter stops
    /// in `wfi`, where this hart waits whenever the server works on another).
    fn now_cycles() -> usize {
        userlib::time::now() as usize * (platform::clock::CORE_HZ / platform::clock::TIMEBASE_HZ)
    }

    /// The kernel's other counters of a window, for the `counts` line (where the cycles of a
    /// pair go): read outside the timed part, before the start's KERNEL_ENTRIES and after the
    /// end's, so they add no kernel entry to the figure.
    const COUNTED: [(&str, usize); 12] = [
        ("irq_entries", stat::ENTRIES_INTERRUPT),
        ("switches", stat::SWITCHES),
        ("satp_writes", stat::SATP_WRITES),
        ("wait_wakeups", stat::UINTR_WAIT_WAKEUPS),
        ("kernel_sends", stat::UINTR_KERNEL_SENDS),
        ("idle_sleeps", stat::IDLE_SLEEPS),
        ("resched_ipis", stat::RESCHED_IPIS),
        ("shootdowns", stat::SHOOTDOWNS),
        ("asys_requests", stat::ASYS_REQUESTS),
        ("asys_wakes", stat::ASYS_WAKES),
        ("asys_inline", stat::ASYS_WAKE_INLINE),
        ("asys_notifies", stat::ASYS_NOTIFIES),
    ];

    /// Ours: the client thread's blocking Waits, parks that ended by polling, doorbells sent.
    const OWN: [&str; 3] = ["client_waits", "client_spin_hits", "client_signals"];

    /// Harts whose busy time a point reports (the machine's, from HELLO; at most this many).
    const MAX_HARTS: usize = 8;
    static HARTS: AtomicUsize = AtomicUsize::new(0);

    #[derive(Clone, Copy)]
    struct Snap {
        cycles: usize,
        entries: usize,
        counts: [usize; COUNTED.len() + OWN.len()],
        /// Each hart's idle time so far (`stat::IDLE_TIME`, timebase ticks).
        idle: [usize; MAX_HARTS],
    }
    const NO_SNAP: Snap = Snap { cycles: 0, entries: 0, counts: [0; COUNTED.len() + OWN.len()], idle: [0; MAX_HARTS] };
    fn counts() -> [usize; COUNTED.len() + OWN.len()] {
        let mut c = [0; COUNTED.len() + OWN.len()];
        for (d, (_, s)) in c.iter_mut().zip(COUNTED) {
            *d = syscall::debug_stat(s);
        }
        let own = [PARK.waits.load(Relaxed), PARK.spin_hits.load(Relaxed), CLIENT.signals.load(Relaxed)];
        c[COUNTED.len()..].copy_from_slice(&own);
        c
    }
    fn idle() -> [usize; MAX_HARTS] {
        core::array::from_fn(|h| if h < HARTS.load(Relaxed) { syscall::debug_stat_hart(stat::IDLE_TIME, h) } else { 0 })
    }
    /// One DebugStat inside the window (the start reads entries last, the end first); the
    /// harts' idle times right beside the clock (a few system calls of skew in a window of
    /// thousands of cycles per pair).
    fn snap_start() -> Snap {
        let counts = counts();
        let entries = syscall::debug_stat(stat::KERNEL_ENTRIES);
        let idle = idle();
        Snap { cycles: now_cycles(), entries, counts, idle }
    }
    fn snap_end() -> Snap {
        let cycles = now_cycles();
        let idle = idle();
        let entries = syscall::debug_stat(stat::KERNEL_ENTRIES);
        Snap { cycles, entries, counts: counts(), idle }
    }
    /// Core cycles per timebase tick (`now_cycles`' scale).
    const TICK_CYCLES: usize = platform::clock::CORE_HZ / platform::clock::TIMEBASE_HZ;
    const SNAP_ENTRIES: usize = 1;
    /// The measured window as a simulator region: 60 in mode sync, 61 in mode async
    /// (`+profile-region=ID` profiles only it on the client's hart, with the 1-hart placement
    /// the server's and the kernel's cycles there too; `+profile-region-any` every hart's).
    const WINDOW_SYNC: u16 = 60;
    const WINDOW_ASYNC: u16 = 61;
    static ASYNC: AtomicUsize = AtomicUsize::new(0);
    fn window(begin: bool) {
        match (ASYNC.load(Relaxed) != 0, begin) {
            (false, true) => userlib::marker::begin::<WINDOW_SYNC>(),
            (false, false) => userlib::marker::end::<WINDOW_SYNC>(),
            (true, true) => userlib::marker::begin::<WINDOW_ASYNC>(),
            (true, false) => userlib::marker::end::<WINDOW_ASYNC>(),
        }
    }

    struct Ctx {
        rt: Rt,
        target: &'static str,
        failures: usize,
        points: usize,
        pairs: usize,
    }

    fn check(cx: &mut Ctx, ok: bool, what: core::fmt::Arguments) {
        if !ok {
            cx.failures += 1;
            println!("[mem-bench] check FAILED: {}", what);
        }
    }

    fn call(cx: &Ctx, label: u32, words: &[u64]) -> Msg {
        match call_blocking(&cx.rt, &CLIENT, Msg::new(label, words).unwrap_or_default()) {
            Ok(m) => m,
            Err(e) => panic!("the channel failed: {:?}", e),
        }
    }

    /// Write a pattern at both ends of the page at `va` and read it back.
    fn touch(va: usize, pattern: u64) -> bool {
        let (a, b) = (va as *mut u64, (va + PAGE - 8) as *mut u64);
        // SAFETY: the server mapped this page of our pool read-write for us; nothing else uses
        // it until we unmap it.
        unsafe {
            core::ptr::write_volatile(a, pattern);
            core::ptr::write_volatile(b, !pattern);
            core::ptr::read_volatile(a) == pattern && core::ptr::read_volatile(b) == !pattern
        }
    }

    /// The server refuses what it must refuse, and says why.
    fn check_errors(cx: &mut Ctx) {
        let page = |i: usize| (POOL_VA + i * PAGE) as u64;
        let cases: [(&str, u32, &[u64], u32); 8] = [
            ("map below the pool", req::MAP, &[page(0) - PAGE as u64], status::RANGE),
            ("map past the pool", req::MAP, &[page(POOL_PAGES)], status::RANGE),
            ("map of our program's page", req::MAP, &[0x10000], status::RANGE),
            ("map misaligned", req::MAP, &[page(3) + 8], status::ALIGN),
            ("unmap of an unmapped page", req::UNMAP, &[page(3)], status::NOT_MAPPED),
            ("unknown request", 77, &[page(3)], status::BAD_REQUEST),
            ("map without an address", req::MAP, &[], status::BAD_REQUEST),
            ("an unknown mode", req::MODE, &[7], status::BAD_REQUEST),
        ];
        for (what, label, words, want) in cases {
            let r = call(cx, label, words);
            check(cx, r.label == want, format_args!("{}: status {} instead of {}", what, r.label, want));
        }
        // A page mapped twice, then unmapped: the second map is refused, the page works.
        let va = page(3);
        let r = call(cx, req::MAP, &[va]);
        check(cx, r.label == status::OK && r.word(0) == va, format_args!("map: status {}", r.label));
        let r = call(cx, req::MAP, &[va]);
        check(
            cx,
            r.label == status::MAPPED,
            format_args!("double map: status {} instead of {}", r.label, status::MAPPED),
        );
        check(cx, touch(va as usize, 0x5a5a_0000_1234), format_args!("the mapped page does not keep what we wrote"));
        let r = call(cx, req::UNMAP, &[va]);
        check(cx, r.label == status::OK, format_args!("unmap: status {}", r.label));
        let r = call(cx, req::UNMAP, &[va]);
        check(
            cx,
            r.label == status::NOT_MAPPED,
            format_args!("double unmap: status {} instead of {}", r.label, status::NOT_MAPPED),
        );
        cx.pairs += 1;
        println!("[mem-bench] the server refused every bad request with the right status");
    }

    // ---- the sweep

    static TICKET: AtomicUsize = AtomicUsize::new(0);
    static TOTAL: AtomicUsize = AtomicUsize::new(0);
    static DONE: AtomicUsize = AtomicUsize::new(0);
    static BAD: AtomicUsize = AtomicUsize::new(0);
    static WARM: AtomicUsize = AtomicUsize::new(0);
    static END: AtomicUsize = AtomicUsize::new(0);
    struct Snaps(UnsafeCell<[Snap; 2]>);
    // SAFETY: one thread (its coroutines take turns).
    unsafe impl Sync for Snaps {}
    static SNAPS: Snaps = Snaps(UnsafeCell::new([NO_SNAP; 2]));

    /// A MAP or UNMAP of `va` (the worker awaits the channel's call itself: an async fn
    /// around it was one more future to build and move whole per call).
    fn request(label: u32, va: u64) -> Msg {
        Msg::new(label, &[va]).unwrap_or_default()
    }

    /// Its reply names `va` and a frame of the server's.
    fn granted(r: Result<Msg, userlib::chan::ChanError>, va: u64) -> bool {
        r.is_ok_and(|m| m.label == status::OK && m.word(0) == va && (m.word(1) as usize) < FRAMES)
    }

    async fn worker(i: usize) {
        let va = POOL_VA + i * PAGE;
        loop {
            let t = TICKET.fetch_add(1, Relaxed);
            if t >= TOTAL.load(Relaxed) {
                return;
            }
            let ok = granted(CLIENT.call(request(req::MAP, va as u64)).await, va as u64)
                && touch(va, (t as u64) << 16 | i as u64)
                && granted(CLIENT.call(request(req::UNMAP, va as u64)).await, va as u64);
            if !ok {
                BAD.fetch_add(1, Relaxed);
            }
            let done = DONE.fetch_add(1, Relaxed) + 1;
            // SAFETY: see Snaps.
            let snaps = unsafe { &mut *SNAPS.0.get() };
            if done == WARM.load(Relaxed) {
                snaps[0] = snap_start();
                window(true);
            } else if done == END.load(Relaxed) {
                window(false);
                snaps[1] = snap_end();
            }
        }
    }

    fn point(cx: &mut Ctx, mode: &str, place: &str, conc: usize) {
        let (warm, pairs) = (warm(conc), pairs(conc));
        let total = warm + pairs + conc;
        for (a, v) in [(&TICKET, 0), (&DONE, 0), (&BAD, 0), (&TOTAL, total), (&WARM, warm), (&END, warm + pairs)] {
            a.store(v, Relaxed);
        }
        let mut hs: [Option<JoinHandle<()>>; CAP] = [const { None }; CAP];
        for (i, h) in hs.iter_mut().take(conc).enumerate() {
            match cx.rt.spawn(5, worker(i)) {
                Ok(j) => *h = Some(j),
                Err(e) => {
                    check(cx, false, format_args!("spawn: {:?}", e));
                    return;
                }
            }
        }
        cx.rt.block_on(async {
            for h in hs.iter_mut() {
                if let Some(h) = h.take() {
                    h.await;
                }
            }
        });
        // SAFETY: see Snaps; the workers are done.
        let [a, b] = unsafe { *SNAPS.0.get() };
        // Each pair is two system calls of the server's (its STATS confirm the count).
        let syscalls = 2 * pairs;
        let e = (b.entries - a.entries).saturating_sub(SNAP_ENTRIES) * 10_000 / syscalls;
        print!(
            "result target={} mode={} placement={} concurrency={} cycles_per_pair={} kernel_entries_per_syscall={}.{:04} pairs={} busy_cycles_per_pair=",
            cx.target,
            mode,
            place,
            conc,
            (b.cycles - a.cycles) / pairs,
            e / 10_000,
            e % 10_000,
            pairs
        );
        // Each hart's busy time over the window (elapsed less its idle loop's idle time), per
        // pair, by hart index: a hart that polls for a handler counts as busy.
        let elapsed = (b.cycles - a.cycles) / TICK_CYCLES;
        for h in 0..HARTS.load(Relaxed) {
            let idle = b.idle[h].wrapping_sub(a.idle[h]).min(elapsed);
            print!("{}{}", if h == 0 { "" } else { "/" }, (elapsed - idle) * TICK_CYCLES / pairs);
        }
        println!("");
        // Per 100 pairs (the counts a window's DebugStat calls add are left in: 2 x 12 + 1).
        print!("counts mode={} placement={} concurrency={} per_100_pairs:", mode, place, conc);
        for (i, name) in COUNTED.iter().map(|c| c.0).chain(OWN).enumerate() {
            print!(" {}={}", name, (b.counts[i] - a.counts[i]) * 100 / pairs);
        }
        println!(" entries={}", (b.entries - a.entries) * 100 / pairs);
        cx.points += 1;
        cx.pairs += total;
        let (bad, done) = (BAD.load(Relaxed), DONE.load(Relaxed));
        check(cx, bad == 0, format_args!("{} {} conc {}: {} pairs went wrong", mode, place, conc, bad));
        check(cx, done == total, format_args!("{} {} conc {}: {} of {} pairs done", mode, place, conc, done, total));
    }

    /// Run one phase: have the root task place us and the server's handler, tell the server
    /// how to wait and which mode.
    fn phase(cx: &mut Ctx, mode: &str, place: usize) -> bool {
        let name = placement::NAMES[place];
        let (_, _, m) = syscall::call(caps::CONTROL, MessageInfo::new(control::PLACE, 0, 0, 1), [place, 0, 0, 0]);
        if m[0] != 0 {
            check(cx, false, format_args!("the root task could not make placement {}", name));
            return false;
        }
        // Beside the server we only wait; across harts we poll a while first (as the server).
        let spin = if place == placement::ONE_HART { 0 } else { proto::SPIN };
        PARK.setup(caps::WAKE, spin);
        call(cx, req::SPIN, &[spin as u64]);
        let want = if mode == "async" { proto::MODE_ASYNC } else { proto::MODE_SYNC };
        ASYNC.store((mode == "async") as usize, Relaxed);
        let r = call(cx, req::MODE, &[want]);
        if r.label != status::OK {
            println!("[mem-bench] mode {}: not available (status {}), phase left out", mode, r.label);
            return false;
        }
        let mut it = CONC.split(',');
        while let Some(c) = it.next().and_then(|c| c.trim().parse::<usize>().ok()) {
            if c == 0 || c > CAP {
                check(cx, false, format_args!("concurrency {} outside 1..={}", c, CAP));
                continue;
            }
            point(cx, mode, name, c);
        }
        true
    }

    extern "C" fn main(info: usize) -> ! {
        // SAFETY: the loader maps the ProcessInfo page read-only here and passes it in a0.
        let info = unsafe { &*(info as *const ProcessInfo) };
        ipc::set_ipc_buffer(info.ipc_buffer);
        let (_, _, m) = syscall::call(caps::CONTROL, MessageInfo::new(control::HELLO, 0, 0, 0), [0; 4]);
        let (to_server, server_hart, harts) = (m[0], m[2], m[3]);
        HARTS.store(harts.min(MAX_HARTS), Relaxed);
        let target = if ipc::get_mr(4) == proto::TARGET_RTL { "rtl" } else { "qemu" };
        PARK.setup(caps::WAKE, 0);
        let rt = EXEC.claim(&PARK).expect("one executor");
        // SAFETY: the root task maps the channel's frames here before we run, for good.
        let mem = unsafe { ChanMem::new(CHAN_VA as *mut u8, CAP) }.expect("channel address");
        CLIENT.attach(mem, to_server, &PARK).expect("attach the channel");
        let mut cx = Ctx { rt, target, failures: 0, points: 0, pairs: 0 };
        println!("[mem-bench] client: server on hart {} of {} ({}); phases {}", server_hart, harts, target, PHASES);
        check_errors(&mut cx);

        for p in PHASES.split(',') {
            let phase_of = |p: &str| {
                let (mode, place) = p.split_once('-')?;
                Some((["sync", "async"].into_iter().find(|&m| m == mode)?, placement::of_name(place)?))
            };
            match phase_of(p.trim()) {
                Some((mode, place)) => {
                    phase(&mut cx, mode, place);
                }
                None => check(&mut cx, false, format_args!("unknown phase {}", p)),
            }
        }
        // Back to sync for the last checks (a no-op when the sweep ended in sync mode).
        call(&cx, req::MODE, &[proto::MODE_SYNC]);

        // Every pair was one map and one unmap, each one system call; every frame is back.
        let s = call(&cx, req::STATS, &[]);
        let (maps, unmaps, syscalls, free) =
            (s.word(0) as usize, s.word(1) as usize, s.word(2) as usize, s.word(4) as usize);
        let n = cx.pairs;
        check(
            &mut cx,
            maps == n && unmaps == n,
            format_args!("server counted {} maps, {} unmaps for {} pairs", maps, unmaps, n),
        );
        check(&mut cx, syscalls == 2 * n, format_args!("server made {} system calls for {} pairs", syscalls, n));
        check(&mut cx, free == FRAMES, format_args!("{} of {} frames free at the end", free, FRAMES));
        print!("[mem-bench] done: {} points, {} pairs, ", cx.points, cx.pairs);
        if cx.failures == 0 {
            println!("every reply right and every page kept its pattern");
        } else {
            println!("{} checks FAILED", cx.failures);
        }

        // A page we mapped, wrote and unmapped must fault on the next access: the root task
        // hears the fault, checks its address and ends the run with the verdict.
        let va = POOL_VA + 5 * PAGE;
        let ok = call(&cx, req::MAP, &[va as u64]).label == status::OK
            && touch(va, 77)
            && call(&cx, req::UNMAP, &[va as u64]).label == status::OK;
        check(&mut cx, ok, format_args!("the last map, touch and unmap"));
        syscall::call(caps::CONTROL, MessageInfo::new(control::EXPECT_FAULT, 0, 0, 2), [va, cx.failures, 0, 0]);
        // SAFETY: deliberately reads the page just unmapped: it faults, and the root task
        // ends the run (a read that returns is a failure of the server or the kernel).
        let v = unsafe { core::ptr::read_volatile(va as *const u64) };
        println!("[mem-bench] FAILED: read {:#x} from the unmapped page", v);
        syscall::call(caps::CONTROL, MessageInfo::new(control::DONE, 0, 0, 1), [1, 0, 0, 0]);
        loop {
            syscall::yield_now();
        }
    }

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo) -> ! {
        println!("[mem-bench] client panic: {}", info);
        syscall::call(caps::CONTROL, MessageInfo::new(control::DONE, 0, 0, 1), [2, 0, 0, 0]);
        loop {
            syscall::yield_now();
        }
    }
}
