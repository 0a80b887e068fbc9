//! The memory-allocator server: retypes its frames from the Untyped the root task gave it,
//! then serves its client's channel. MAP and UNMAP are checked against its bookkeeping
//! (`mem_server::pool`) and then done with Page_Map / Page_Unmap on its frame caps and the
//! client's VSpace cap, through the invocation API's futures (`vspace::page_map_async`,
//! `page_unmap_async`): in mode `sync` these are system calls; in mode `async` the thread has
//! registered a syscall buffer and installed its client, and the same calls go through the
//! buffer (see README.md). One task per request (`chan::Server::serve`), so in async mode many
//! calls can be in the kernel's ring at once.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    use abi::bootinfo::process::{ProcessInfo, CNODE};
    use abi::{object, MessageInfo};
    use core::cell::UnsafeCell;
    use core::future::Future;
    use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    use mem_server::gate::Gate;
    use mem_server::pool::Pool;
    use mem_server::proto::{
        self, caps, control, req, slots, status, CAP, CHAN_VA, FRAMES, POOL_PAGES, POOL_VA, SYSBUF_CAP, SYSBUF_VA,
        SYSBUF_VECTOR,
    };
    use userlib::asys;
    use userlib::chan::{ChanMem, Msg, Server, ThreadPark};
    use userlib::invoke::{rights, vm_attr};
    use userlib::task::Executor;
    use userlib::{ipc, println, syscall, untyped, vspace};

    userlib::entry!(main);

    /// A task per MAP or UNMAP: its future (`map_or_unmap`, ~230 bytes with the async system
    /// call inside) fits 256 bytes. As many tasks as the syscall buffer takes calls in flight:
    /// a request beyond them waits in the channel's ring (the dispatcher holds one while no
    /// slot is free), not in a task parked at the gate, so the tasks in flight stay few and
    /// within the data cache (136 slots, most of them waiting at the gate at 64 in flight,
    /// cost a wake, a poll and a cold slot each). The executor is initialised data, so its
    /// size is the ELF's and the root task copies it.
    static EXEC: Executor<SYSBUF_CAP, 256> = Executor::new();
    static PARK: ThreadPark = ThreadPark::new();
    static SERVER: Server = Server::new();

    /// The bookkeeping: one thread (its tasks take turns and hold no reference across an
    /// await).
    struct State(UnsafeCell<Pool<POOL_PAGES, FRAMES>>);
    // SAFETY: see State.
    unsafe impl Sync for State {}
    static POOL: State = State(UnsafeCell::new(Pool::new(POOL_VA)));
    fn pool() -> &'static mut Pool<POOL_PAGES, FRAMES> {
        // SAFETY: see State; callers keep the reference within one synchronous stretch.
        unsafe { &mut *POOL.0.get() }
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
        let why = rt.block_on(SERVER.serve_first(rt, 10, answer_now, handle));
        // The client never closes its side: any end is a failure the run must report.
        panic!("channel ended: {:?}", why);
    }

    fn reply(label: u32, words: &[u64]) -> Msg {
        if label != status::OK {
            REFUSED.fetch_add(1, Relaxed);
        }
        Msg::new(label, words).unwrap_or_default()
    }

    /// The reply of a request answered at once (all but MAP and UNMAP), or None: a task runs
    /// `map_or_unmap` for it (`chan::Server::serve_first`, so the task's future is that async
    /// fn alone, built in place, with no variant for the other requests to copy around).
    fn answer_now(m: &Msg) -> Option<Msg> {
        let w = m.words();
        Some(match (m.label, w.len()) {
            (req::MAP, 1) | (req::UNMAP, 1) => return None,
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
        })
    }

    /// A MAP or UNMAP (the only requests `answer_now` declines).
    fn handle(m: Msg) -> impl Future<Output = Msg> {
        map_or_unmap(m.label == req::MAP, m.word(0))
    }

    /// MAP or UNMAP of the page at `va`: checked by the pool, then the system call through the
    /// ordinary API's async form: a system call while no async client is installed (mode
    /// sync), a request in the syscall buffer otherwise, many of them in flight at once (one
    /// per task). One async fn, so a task's future stays small (it is copied into its slot).
    async fn map_or_unmap(map: bool, va: u64) -> Msg {
        let op = if map { pool().begin_map(va) } else { pool().begin_unmap(va) };
        let op = match op {
            Ok(op) => op,
            Err(s) => return reply(s, &[va]),
        };
        SYSCALLS.fetch_add(1, Relaxed);
        // No more calls in flight than the buffer's table holds (sync calls never wait here).
        GATE.acquire().await;
        let frame = slots::FRAMES + op.frame;
        let r = if op.map {
            let va = POOL_VA + op.page * proto::PAGE;
            vspace::page_map_async(frame, slots::CLIENT_VSPACE, va, rights::READ_WRITE, vm_attr::EXECUTE_NEVER).await
        } else {
            vspace::page_unmap_async(frame).await
        };
        GATE.release();
        pool().finish(op, r.is_ok());
        match r {
            Ok(()) => {
                (if map { &MAPS } else { &UNMAPS }).fetch_add(1, Relaxed);
                reply(status::OK, &[va, op.frame as u64])
            }
            Err(e) => reply(status::KERNEL, &[va, e.code as u64]),
        }
    }
    static GATE: Gate<{ CAP + 8 }> = Gate::new(SYSBUF_CAP as u64);

    /// Our syscall buffer: registered and attached at the first switch to async, then the
    /// mode is whether the client is installed (the hook routes the calls through it).
    static ASYS: asys::Client<SYSBUF_CAP> = asys::Client::new();
    static ASYS_READY: AtomicBool = AtomicBool::new(false);

    fn set_mode(mode: u64) -> Msg {
        match mode {
            proto::MODE_SYNC => asys::uninstall(),
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
                    if ASYS.attach(&buf, Some(&PARK)).is_none() {
                        return reply(status::UNSUPPORTED, &[mode]);
                    }
                    ASYS_READY.store(true, Relaxed);
                }
                if !asys::install(&ASYS) {
                    return reply(status::UNSUPPORTED, &[mode]);
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
