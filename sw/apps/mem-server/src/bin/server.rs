//! The memory-allocator server: retypes its frames from the Untyped the root task gave it,
//! then serves its client's channel. MAP and UNMAP are checked against its bookkeeping
//! (`mem_server::pool`) and then done with Page_Map / Page_Unmap on its frame caps and the
//! client's VSpace cap: in mode `sync` as system calls, right where the request is taken; in
//! mode `async` through the syscall buffer the thread registered (`asys::Direct`): the
//! request's call is queued under a tag (`mem_server::flights` keeps what to answer and
//! undo), many in the kernel at once, and the client is answered from the completion. No
//! task and no future per request: one loop takes requests, queues their calls in a batch
//! and answers the completions in a batch (see README.md).
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    use abi::bootinfo::process::{ProcessInfo, CNODE};
    use abi::{object, MessageInfo};
    use core::cell::UnsafeCell;
    use core::future::poll_fn;
    use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    use core::task::{Context, Poll};
    use mem_server::flights::Flights;
    use mem_server::pool::{Op, Pool};
    use mem_server::proto::{
        self, caps, control, req, slots, status, CAP, CHAN_VA, FRAMES, POOL_PAGES, POOL_VA, SYSBUF_CAP, SYSBUF_VA,
        SYSBUF_VECTOR,
    };
    use userlib::asys::{self, Direct};
    use userlib::chan::{ChanError, ChanMem, Msg, Owed, Server, ThreadPark};
    use userlib::invoke::{self, rights, vm_attr};
    use userlib::task::Executor;
    use userlib::{ipc, println, syscall, untyped, vspace};

    userlib::entry!(main);

    /// The serving loop is the executor's root future (`block_on`), and it spawns nothing.
    static EXEC: Executor<1, 64> = Executor::new();
    static PARK: ThreadPark = ThreadPark::new();
    static SERVER: Server = Server::new();

    /// The bookkeeping and the requests in the kernel: one thread, one loop (no reference is
    /// kept across a call that could reach them again).
    struct State<T>(UnsafeCell<T>);
    // SAFETY: see State.
    unsafe impl<T> Sync for State<T> {}
    static POOL: State<Pool<POOL_PAGES, FRAMES>> = State(UnsafeCell::new(Pool::new(POOL_VA)));
    fn pool() -> &'static mut Pool<POOL_PAGES, FRAMES> {
        // SAFETY: see State; callers keep the reference within one synchronous stretch.
        unsafe { &mut *POOL.0.get() }
    }

    /// A MAP or UNMAP whose system call is in the syscall buffer: whom to answer, and the
    /// pool's operation to finish, when its completion comes.
    struct Flight {
        owed: Owed,
        op: Op,
        va: u64,
    }
    static FLIGHTS: State<Flights<Flight, SYSBUF_CAP>> = State(UnsafeCell::new(Flights::new()));
    fn flights() -> &'static mut Flights<Flight, SYSBUF_CAP> {
        // SAFETY: as `pool`.
        unsafe { &mut *FLIGHTS.0.get() }
    }

    static MAPS: AtomicUsize = AtomicUsize::new(0);
    static UNMAPS: AtomicUsize = AtomicUsize::new(0);
    static SYSCALLS: AtomicUsize = AtomicUsize::new(0);
    static REFUSED: AtomicUsize = AtomicUsize::new(0);
    static MODE: AtomicUsize = AtomicUsize::new(proto::MODE_SYNC as usize);

    extern "C" fn main(info: usize) -> ! {
        // SAFETY: the loader maps the ProcessInfo page read-only here and passes it in a0.
        let info = unsafe { &*(info as *const ProcessInfo) };
        ipc::set_ipc_buffer(info.ipc_buffer);
        if info.cnode_size_bits < slots::CNODE_BITS {
            panic!("CNode of 2^{} slots: the frames need 2^{}", info.cnode_size_bits, slots::CNODE_BITS);
        }
        let (_, _, m) = syscall::call(caps::CONTROL, MessageInfo::new(control::HELLO, 0, 0, 0), [0; 4]);
        let to_client = m[0];
        // Our frames, from the Untyped the root task gave us (at most 256 per Retype).
        let mut made = 0;
        while made < FRAMES {
            let n = (FRAMES - made).min(256);
            if let Err(e) = untyped::retype(slots::UNTYPED, object::PAGE_4K, 0, CNODE, 0, 0, slots::FRAMES + made, n) {
                panic!("retyping frames {}..{}: {:?}", made, made + n, e);
            }
            made += n;
        }
        PARK.setup(caps::WAKE, 0);
        let rt = EXEC.claim(&PARK).expect("one executor");
        // SAFETY: the root task maps the channel's frames here before we run, for good.
        let mem = unsafe { ChanMem::new(CHAN_VA as *mut u8, CAP) }.expect("channel address");
        SERVER.attach(mem, to_client, &PARK).expect("attach the channel");
        println!(
            "[mem-server] {} frames retyped at cycle {}, serving on hart {}",
            FRAMES,
            userlib::time::now() * (platform::clock::CORE_HZ / platform::clock::TIMEBASE_HZ) as u64,
            m[1]
        );
        let why = rt.block_on(poll_fn(serve));
        // The client never closes its side: any end is a failure the run must report.
        panic!("channel ended: {:?}", why);
    }

    fn reply(label: u32, words: &[u64]) -> Msg {
        if label != status::OK {
            REFUSED.fetch_add(1, Relaxed);
        }
        Msg::new(label, words).unwrap_or_default()
    }

    /// The serving loop: answer the completions that came (they free tags and reply slots),
    /// take requests while a tag is free, queue their system calls, then publish the batch;
    /// again until neither side had anything. Pending with the waker kept by the channel
    /// (requests, reply slots) and by the buffer (completions), which the park hook wakes.
    fn serve(cx: &mut Context<'_>) -> Poll<ChanError> {
        loop {
            let mut progress = false;
            match ASYS.drain(complete) {
                Ok(n) => progress |= n > 0,
                // The kernel broke our buffer: its calls in flight will never complete.
                Err(_) => ASYS.abandon(stranded),
            }
            while !flights().is_full() {
                match SERVER.take(cx) {
                    Poll::Ready(Ok((owed, m))) => {
                        progress = true;
                        handle(owed, m);
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(e),
                    Poll::Pending => break,
                }
            }
            // One index store and at most one WakeSyscallHandler for the batch.
            ASYS.flush();
            if !progress {
                ASYS.register(cx);
                return Poll::Pending;
            }
        }
    }

    /// A request: MAP and UNMAP checked by the pool, then their system call (now in mode
    /// sync, queued in mode async); the others answered at once.
    fn handle(owed: Owed, m: Msg) {
        let w = m.words();
        let map = match (m.label, w.len()) {
            (req::MAP, 1) => true,
            (req::UNMAP, 1) => false,
            _ => return SERVER.answer(owed, answer_now(&m)),
        };
        let va = w[0];
        let op = match if map { pool().begin_map(va) } else { pool().begin_unmap(va) } {
            Ok(op) => op,
            Err(s) => return SERVER.answer(owed, reply(s, &[va])),
        };
        SYSCALLS.fetch_add(1, Relaxed);
        // The invocation as the API's table writes it; only its request is used.
        let frame = slots::FRAMES + op.frame;
        let call = if map {
            let at = POOL_VA + op.page * proto::PAGE;
            vspace::page_map_async(frame, slots::CLIENT_VSPACE, at, rights::READ_WRITE, vm_attr::EXECUTE_NEVER)
        } else {
            vspace::page_unmap_async(frame)
        };
        let r = call.request();
        let mut owed = owed;
        if MODE.load(Relaxed) == proto::MODE_ASYNC as usize {
            // `serve` takes requests only while a tag is free; if none were, or the ring has
            // no room, or the buffer broke: the sync way.
            owed = match flights().insert(Flight { owed, op, va }) {
                Ok(tag) => match ASYS.submit(tag, r) {
                    Ok(()) => return,
                    Err(_) => match flights().take(tag) {
                        Some(f) => f.owed,
                        None => return,
                    },
                },
                Err(f) => f.owed,
            };
        }
        finish(owed, op, va, r.sync().map(|_| ()));
    }

    /// A completion from the kernel: its request's answer.
    fn complete(tag: usize, c: asys::Completion) {
        // `Direct` hands back only tags it was given, each once: the record is there.
        if let Some(f) = flights().take(tag) {
            finish(f.owed, f.op, f.va, c.into_result().map(|_| ()));
        }
    }

    /// A call whose completion will never come (the buffer broke): whether the kernel did it
    /// is unknown, so its page stays busy; the client hears KERNEL.
    fn stranded(tag: usize) {
        if let Some(f) = flights().take(tag) {
            SERVER.answer(f.owed, reply(status::KERNEL, &[f.va, 0]));
        }
    }

    /// The system call of `op` (for the request at `va`) returned `r`: the pool follows it,
    /// the client is answered.
    fn finish(owed: Owed, op: Op, va: u64, r: invoke::Result<()>) {
        pool().finish(op, r.is_ok());
        let msg = match r {
            Ok(()) => {
                (if op.map { &MAPS } else { &UNMAPS }).fetch_add(1, Relaxed);
                reply(status::OK, &[va, op.frame as u64])
            }
            Err(e) => reply(status::KERNEL, &[va, e.code as u64]),
        };
        SERVER.answer(owed, msg);
    }

    /// The reply of every request but a well-formed MAP or UNMAP.
    fn answer_now(m: &Msg) -> Msg {
        let w = m.words();
        match (m.label, w.len()) {
            (req::MODE, 1) => set_mode(w[0]),
            (req::SPIN, 1) => {
                PARK.setup(caps::WAKE, w[0] as usize);
                reply(status::OK, &[])
            }
            (req::STATS, 0) => {
                let s = [&MAPS, &UNMAPS, &SYSCALLS, &REFUSED].map(|a| a.load(Relaxed) as u64);
                reply(status::OK, &[s[0], s[1], s[2], s[3], pool().free_frames() as u64])
            }
            _ => reply(status::BAD_REQUEST, &[]),
        }
    }

    /// Our syscall buffer: registered and attached to the park hook at the first switch to
    /// async; from then on the mode says whether MAP and UNMAP go through it.
    static ASYS: Direct<SYSBUF_CAP> = Direct::new();
    static ASYS_READY: AtomicBool = AtomicBool::new(false);

    fn set_mode(mode: u64) -> Msg {
        match mode {
            proto::MODE_SYNC => {}
            proto::MODE_ASYNC => {
                if !ASYS_READY.load(Relaxed) {
                    let buf = asys::SysBuf {
                        req_frame: slots::SYSBUF_REQ,
                        req_vaddr: SYSBUF_VA,
                        rep_frame: slots::SYSBUF_REP,
                        rep_vaddr: SYSBUF_VA + proto::PAGE,
                        capacity: SYSBUF_CAP,
                    };
                    if buf.init().is_none() {
                        return reply(status::UNSUPPORTED, &[mode]);
                    }
                    if let Err(e) = buf.register(slots::OWN_TCB, SYSBUF_VECTOR) {
                        println!("[mem-server] TCB_RegisterSyscallBuffer: {:?}", e);
                        return reply(status::UNSUPPORTED, &[mode]);
                    }
                    if ASYS.attach(&buf, &PARK).is_none() {
                        return reply(status::UNSUPPORTED, &[mode]);
                    }
                    ASYS_READY.store(true, Relaxed);
                }
            }
            _ => return reply(status::BAD_REQUEST, &[mode]),
        }
        MODE.store(mode as usize, Relaxed);
        reply(status::OK, &[mode])
    }

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo) -> ! {
        println!("[mem-server] panic: {}", info);
        // Fault on purpose: the root task hears of it on our fault endpoint and ends the run.
        // SAFETY: page 0 is never mapped; the write only faults.
        unsafe { core::ptr::write_volatile(8 as *mut u8, 0) };
        loop {
            syscall::yield_now();
        }
    }
}
