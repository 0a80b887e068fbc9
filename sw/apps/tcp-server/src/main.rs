//! The TCP server (README.md): each connection reads fixed-size requests and answers them
//! through the network stack server's sockets. Async variant: a coroutine per connection on one
//! thread, socket calls over an async IPC channel. Sync variant: a thread per connection (made
//! by the root task), socket calls by seL4 Call on an endpoint. Both run the same connection
//! code (`connection`, generic over the transport). Payloads stay in the shared data area: a
//! request is received into the socket's receive buffer there, the response is built in its
//! send buffer.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    use abi::bootinfo::process::ProcessInfo;
    use abi::MessageInfo;
    use core::future::Future;
    use core::pin::pin;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use core::task::{Context, Poll, Waker};
    use netproto::{
        error, label, respond, rx_offset, tx_offset, variant, TcpConfig, BUF_BYTES, CHAN_CAPACITY, CHAN_VADDR,
        CONFIG_VADDR, DATA_VADDR, OK, SOCKETS, TCP_MAGIC, TIMER_VADDR,
    };
    use userlib::chan::{ChanMem, Client, Msg, ThreadPark};
    use userlib::task::{Executor, Handle};
    use userlib::{println, syscall};

    userlib::entry!(main);

    const TASKS: usize = SOCKETS + 8;
    /// Bytes of a task's future: a connection's with its two calls in flight fits.
    const TASK_BYTES: usize = 1024;
    type Rt = Handle<TASKS, TASK_BYTES>;
    static EXEC: Executor<TASKS, TASK_BYTES> = Executor::new();
    static PARK: ThreadPark = ThreadPark::new();
    /// Two calls outstanding per connection task (a SEND and the next RECV) and the
    /// acceptor's; at most the channel's capacity.
    const CALLS: usize = 2 * SOCKETS + 8;
    const _: () = assert!(CALLS <= CHAN_CAPACITY);
    /// Accept loops (tasks, each with one ACCEPT outstanding): within the 8 spare tasks and calls.
    const ACCEPTORS: usize = 4;
    static NET: Client<CALLS> = Client::new();

    static REQUEST: AtomicUsize = AtomicUsize::new(64);
    static WORK: AtomicUsize = AtomicUsize::new(0);
    /// Connections accepted and ended, requests answered.
    static ACCEPTED: AtomicUsize = AtomicUsize::new(0);
    static ENDED: AtomicUsize = AtomicUsize::new(0);
    static ANSWERED: AtomicUsize = AtomicUsize::new(0);

    /// A load run's figures (`session`): from the first request received while no connection
    /// was open to the last response sent before none is open again. Cycles come from rdcycle:
    /// on the RTL this hart's cycles not asleep in WFI (Rocket's cycle counter stops there), on
    /// QEMU host time. With the timer mapped (`TcpConfig::mtime_vaddr`) the elapsed time is
    /// reported too, in timer ticks times the core cycles per tick: the RTL's cycles between
    /// the same two points, asleep or not. The run is
    /// simulator region [`WINDOW`] too (this hart), so `+profile-region=70 +profile-region-any`
    /// profiles every hart during it; the kernel's entry counters (all harts) are read around it.
    mod session {
        use abi::stat;
        use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
        use userlib::{marker, syscall};
        pub const WINDOW: u16 = 70;
        /// From listening (then from the end of the last run) to the end of a run: its
        /// connections' set-up before the first request too (`+profile-region=71`).
        pub const SETUP: u16 = 71;
        static ENTRIES: AtomicUsize = AtomicUsize::new(0);
        static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);
        static OPEN: AtomicUsize = AtomicUsize::new(0);
        static MAX_OPEN: AtomicUsize = AtomicUsize::new(0);
        static REQUESTS: AtomicU64 = AtomicU64::new(0);
        static FIRST: AtomicU64 = AtomicU64::new(0);
        static LAST: AtomicU64 = AtomicU64::new(0);
        /// The same two points on the timer (ticks; 0: not started), and core cycles per tick
        /// (0: no timer mapped, no elapsed time).
        static FIRST_T: AtomicU64 = AtomicU64::new(0);
        static LAST_T: AtomicU64 = AtomicU64::new(0);
        pub static TICK_CYCLES: AtomicU64 = AtomicU64::new(0);

        fn ticks() -> u64 {
            if TICK_CYCLES.load(Relaxed) == 0 {
                return 0;
            }
            userlib::time::now()
        }

        fn rdcycle() -> u64 {
            let c: u64;
            // SAFETY: reads the cycle counter, which the kernel lets user mode read.
            unsafe { core::arch::asm!("rdcycle {0}", out(reg) c, options(nomem, nostack)) };
            c
        }

        pub fn opened() {
            let n = OPEN.fetch_add(1, Relaxed) + 1;
            MAX_OPEN.fetch_max(n, Relaxed);
        }

        /// A whole request is in: the first one of a run starts its clock.
        pub fn request_in() {
            if FIRST.load(Relaxed) == 0 {
                ENTRIES.store(syscall::debug_stat(stat::KERNEL_ENTRIES), Relaxed);
                INTERRUPTS.store(syscall::debug_stat(stat::ENTRIES_INTERRUPT), Relaxed);
                if FIRST.compare_exchange(0, rdcycle(), Relaxed, Relaxed).is_ok() {
                    FIRST_T.store(ticks(), Relaxed);
                    marker::begin::<WINDOW>();
                }
            }
        }

        /// Its response is out.
        pub fn response_out() {
            LAST.store(rdcycle(), Relaxed);
            LAST_T.store(ticks(), Relaxed);
            REQUESTS.fetch_add(1, Relaxed);
        }

        /// A connection ended; the last one of a run reports it (one line, after the run:
        /// the printing is not in the figures) and starts the next.
        pub fn closed() {
            if OPEN.fetch_sub(1, Relaxed) != 1 {
                return;
            }
            let (n, first, last) = (REQUESTS.swap(0, Relaxed), FIRST.swap(0, Relaxed), LAST.swap(0, Relaxed));
            let elapsed = LAST_T.swap(0, Relaxed).wrapping_sub(FIRST_T.swap(0, Relaxed)) * TICK_CYCLES.load(Relaxed);
            let conns = MAX_OPEN.swap(0, Relaxed);
            if first != 0 {
                marker::end::<WINDOW>();
            }
            marker::end::<SETUP>();
            marker::begin::<SETUP>();
            // Entries since the first request (all harts: the closes after the last response,
            // the two DebugStat calls and every hart's timer ticks included).
            let entries = syscall::debug_stat(stat::KERNEL_ENTRIES).wrapping_sub(ENTRIES.load(Relaxed));
            let interrupts = syscall::debug_stat(stat::ENTRIES_INTERRUPT).wrapping_sub(INTERRUPTS.load(Relaxed));
            if n > 0 && last > first {
                userlib::println!(
                    "[tcp-server] run: {} requests on {} connections in {} cycles, {} cycles per request; kernel entries {} ({} interrupts) on all harts; elapsed {} cycles, {} cycles per request (timer)",
                    n,
                    conns,
                    last - first,
                    (last - first) / n,
                    entries,
                    interrupts,
                    elapsed,
                    elapsed / n
                );
            }
        }
    }

    /// Sync variant: the endpoint every thread Calls, and the listener they ACCEPT on
    /// (published by the first thread once it listens).
    static EP: AtomicUsize = AtomicUsize::new(0);
    static LISTENER: AtomicUsize = AtomicUsize::new(usize::MAX);

    fn config() -> Option<&'static TcpConfig> {
        // SAFETY: the root task maps the configuration page read-only here before we run.
        let c = unsafe { &*(CONFIG_VADDR as *const TcpConfig) };
        let ok = c.magic == TCP_MAGIC
            && (1..=65535).contains(&c.port)
            && (1..=BUF_BYTES as u64).contains(&c.request_bytes)
            && (c.variant == variant::ASYNC || (c.variant == variant::SYNC && c.threads as usize <= SOCKETS))
            && (c.mtime_vaddr == 0
                || (c.mtime_vaddr as usize & !0xfff == TIMER_VADDR
                    && c.mtime_vaddr.is_multiple_of(8)
                    && (1..=1000).contains(&c.cycles_per_tick)));
        ok.then_some(c)
    }

    fn fail(what: &str) -> ! {
        println!("[tcp-server] {what}: stopped");
        loop {
            syscall::yield_now();
        }
    }

    /// How a connection reaches the net server: a request in, its reply out (`None` when the
    /// transport or the request failed).
    trait Net {
        async fn call(&self, l: u32, words: &[u64]) -> Option<Msg>;
    }

    /// Async IPC: the channel, awaited by the connection's coroutine.
    struct AsyncNet;
    impl Net for AsyncNet {
        async fn call(&self, l: u32, words: &[u64]) -> Option<Msg> {
            let m = Msg::new(l, words)?;
            match NET.call(m).await {
                Ok(r) if r.label == OK => Some(r),
                _ => None,
            }
        }
    }

    /// Sync IPC: seL4 Call on the endpoint, the thread blocked until the reply.
    struct SyncNet;
    impl Net for SyncNet {
        async fn call(&self, l: u32, words: &[u64]) -> Option<Msg> {
            sync_call(l, words).ok()
        }
    }

    /// A Call to the net server: the reply, or its label when it is not OK.
    fn sync_call(l: u32, words: &[u64]) -> Result<Msg, u32> {
        for (i, &w) in words.iter().enumerate() {
            userlib::ipc::set_mr(i, w as usize);
        }
        let (_, info) = userlib::ipc::call(EP.load(Ordering::Relaxed), MessageInfo::new(l as usize, 0, 0, words.len()));
        let mut w = [0u64; 6];
        let n = info.length.min(w.len());
        for (i, x) in w.iter_mut().enumerate().take(n) {
            *x = userlib::ipc::get_mr(i) as u64;
        }
        match Msg::new(info.label as u32, &w[..n]) {
            Some(m) if m.label == OK => Ok(m),
            _ => Err(info.label as u32),
        }
    }

    /// Run a future that never waits (a connection over `SyncNet`: every call blocks the thread
    /// in the kernel instead) to its end.
    fn run_now<F: Future>(f: F) -> F::Output {
        let mut f = pin!(f);
        match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(v) => v,
            Poll::Pending => unreachable!("a sync connection never waits in user space"),
        }
    }

    /// The configured work: `rounds` passes of FNV-1a over the request.
    fn work(req: &[u8], rounds: usize) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for _ in 0..rounds {
            for &b in req {
                h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
        h
    }

    /// One connection: request in, response out, until the peer closes or the socket fails.
    async fn connection<N: Net>(net: N, sock: usize) {
        session::opened();
        let size = REQUEST.load(Ordering::Relaxed);
        let rx = DATA_VADDR + rx_offset(sock);
        let tx = DATA_VADDR + tx_offset(sock);
        // Bytes of the next request that came with the last response's SENDRECV.
        let mut have = 0;
        'conn: loop {
            while have < size {
                match net.call(label::RECV, &[sock as u64, have as u64, (size - have) as u64]).await {
                    Some(r) if r.word(0) > 0 && r.word(0) as usize <= size - have => have += r.word(0) as usize,
                    // End of stream (a request cut short is dropped with it), reset, or a
                    // length we did not ask for.
                    _ => break 'conn,
                }
            }
            session::request_in();
            // SAFETY: the socket's two buffers in the data area, mapped read-write; the net
            // server does not touch them between our calls for this socket.
            let (req, resp) = unsafe {
                (
                    core::slice::from_raw_parts(rx as *const u8, size),
                    core::slice::from_raw_parts_mut(tx as *mut u8, size),
                )
            };
            core::hint::black_box(work(req, WORK.load(Ordering::Relaxed)));
            respond(req, resp);
            // The response goes out and the next request is waited for in one call (SENDRECV:
            // the net server takes the whole response, then receives): the RECV writes the
            // receive buffer, which this request no longer needs.
            let s = size as u64;
            let Some(r) = net.call(label::SENDRECV, &[sock as u64, 0, s, 0, s]).await else { break 'conn };
            ANSWERED.fetch_add(1, Ordering::Relaxed);
            session::response_out();
            match r.word(0) as usize {
                n if (1..=size).contains(&n) => have = n,
                // End of stream (or a length we did not ask for).
                _ => break 'conn,
            }
        }
        let _ = net.call(label::CLOSE, &[sock as u64]).await;
        ENDED.fetch_add(1, Ordering::Relaxed);
        session::closed();
    }

    async fn acceptor(rt: Rt, port: u16) {
        // A small backlog: the net server tops it up after each SYN, so a burst is taken anyway.
        let Some(l) = AsyncNet.call(label::LISTEN, &[port as u64, netproto::TCP_BACKLOG as u64]).await else {
            println!("[tcp-server] cannot listen on port {port}");
            return;
        };
        let l = l.word(0);
        println!(
            "[tcp-server] async, {} B requests, work {}: listening on 10.0.2.15:{port}; connect to 127.0.0.1:{port}",
            REQUEST.load(Ordering::Relaxed),
            WORK.load(Ordering::Relaxed)
        );
        userlib::marker::begin::<{ session::SETUP }>();
        // Several ACCEPTs outstanding: connections that come up in the same pass of the net
        // server are all answered in it, not one per round trip (a connection accepted a
        // round late starts its first request a round late).
        for _ in 1..ACCEPTORS {
            if let Err(e) = rt.spawn(10, accept_loop(rt, l)).map(|h| h.detach()) {
                println!("[tcp-server] acceptor task: {e:?}");
            }
        }
        accept_loop(rt, l).await
    }

    /// ACCEPT on listener `l` and start a task per connection, until the listener is gone.
    async fn accept_loop(rt: Rt, l: u64) {
        loop {
            let r = match NET.call(Msg::new(label::ACCEPT, &[l]).unwrap_or_default()).await {
                Ok(r) => r,
                Err(e) => {
                    println!("[tcp-server] channel to the net server: {e}");
                    return;
                }
            };
            if r.label != OK {
                if r.label == error::BAD_SOCKET {
                    return;
                }
                continue;
            }
            let sock = r.word(0) as usize;
            if sock >= SOCKETS {
                continue;
            }
            ACCEPTED.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = rt.spawn(10, connection(AsyncNet, sock)).map(|h| h.detach()) {
                println!("[tcp-server] connection task: {e:?}");
                let _ = AsyncNet.call(label::CLOSE, &[sock as u64]).await;
            }
        }
    }

    /// Sync variant, thread `n` (1..=threads; its IPC buffer already in tp): a connection at a
    /// time, ACCEPTed and served with blocking calls, over and over.
    fn worker(n: usize) -> ! {
        let l = loop {
            match LISTENER.load(Ordering::Acquire) {
                usize::MAX => syscall::yield_now(),
                l => break l,
            }
        };
        loop {
            match sync_call(label::ACCEPT, &[l as u64]) {
                Ok(r) if (r.word(0) as usize) < SOCKETS => {
                    ACCEPTED.fetch_add(1, Ordering::Relaxed);
                    run_now(connection(SyncNet, r.word(0) as usize));
                }
                Ok(_) => {}
                Err(e) if e == error::BAD_SOCKET => break,
                // Refused for now (the net server is short of room): try again later.
                Err(_) => syscall::yield_now(),
            }
        }
        println!("[tcp-server] thread {n}: the listener is gone: stopped");
        loop {
            syscall::yield_now();
        }
    }

    /// Sync variant, the first thread: listen, let the others accept, then sleep for good.
    fn listen_sync(cfg: &TcpConfig) -> ! {
        EP.store(cfg.endpoint_slot as usize, Ordering::Relaxed);
        let port = cfg.port;
        let l = match sync_call(label::LISTEN, &[port, netproto::TCP_BACKLOG as u64]) {
            Ok(r) => r.word(0) as usize,
            Err(e) => {
                println!("[tcp-server] cannot listen on port {port}: error {e}");
                fail("listen")
            }
        };
        LISTENER.store(l, Ordering::Release);
        println!(
            "[tcp-server] sync, {} threads, {} B requests, work {}: listening on 10.0.2.15:{port}; connect to 127.0.0.1:{port}",
            cfg.threads,
            REQUEST.load(Ordering::Relaxed),
            WORK.load(Ordering::Relaxed)
        );
        loop {
            // Nothing signals it: the thread sleeps (a Wait per spurious wake-up at most).
            userlib::uintr::wait(cfg.ntfn_slot as usize);
        }
    }

    extern "C" fn main(info: usize) -> ! {
        if info != abi::layout::ROOT_BOOTINFO {
            // One of the sync variant's connection threads (the root task passes its number).
            worker(info);
        }
        // SAFETY: the loader maps the ProcessInfo page read-only here and passes it in a0.
        let info = unsafe { &*(info as *const ProcessInfo) };
        userlib::ipc::set_ipc_buffer(info.ipc_buffer);
        let Some(cfg) = config() else { fail("no valid configuration page") };
        REQUEST.store(cfg.request_bytes as usize, Ordering::Relaxed);
        WORK.store(cfg.work as usize, Ordering::Relaxed);
        if cfg.mtime_vaddr != 0 {
            // SAFETY: checked by `config`: inside the page the root task mapped read-only at
            // TIMER_VADDR for good, aligned; the kernel's cap names the CLINT's mtime page.
            unsafe { userlib::time::use_mtime(cfg.mtime_vaddr as usize) };
            session::TICK_CYCLES.store(cfg.cycles_per_tick, Ordering::Relaxed);
        }
        if cfg.variant == variant::SYNC {
            listen_sync(cfg);
        }
        PARK.setup(cfg.ntfn_slot as usize, cfg.spin_cycles as usize);
        let Some(rt) = EXEC.claim(&PARK) else { fail("executor claimed twice") };
        // SAFETY: the root task maps the channel (initialised by it) here, in both processes.
        let mem = match unsafe { ChanMem::new(CHAN_VADDR as *mut u8, CHAN_CAPACITY) } {
            Ok(m) => m,
            Err(_) => fail("bad channel"),
        };
        if NET.attach(mem, cfg.to_server as usize, &PARK).is_err() {
            fail("channel attach");
        }
        rt.block_on(acceptor(rt, cfg.port as u16));
        println!(
            "[tcp-server] stopped: {} connections accepted, {} ended, {} requests answered",
            ACCEPTED.load(Ordering::Relaxed),
            ENDED.load(Ordering::Relaxed),
            ANSWERED.load(Ordering::Relaxed)
        );
        loop {
            rt.block_on(core::future::pending::<()>())
        }
    }

    #[panic_handler]
    fn panic(p: &core::panic::PanicInfo) -> ! {
        println!("[tcp-server] panic: {}", p);
        loop {
            syscall::yield_now();
        }
    }
}
