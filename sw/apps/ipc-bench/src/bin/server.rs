//! The benchmark's server process (one near the client, on its hart; one far, on another).
//! First a sync server on its endpoint (Recv/ReplyRecv, the reply as long as the request, so
//! a slow-path request gets a slow-path reply), until the client sends GO_ASYNC; then the
//! async server of its channel (`chan::Server::serve_inline`: the work never waits, so the
//! dispatcher handles each request itself, as the published design's does). Each request is
//! `work::Work` (the label) on a seed (word 0); the reply carries the two result words and the
//! seed, and over the channel also our notification and reply counts so far (the client
//! checks the counts and reports notifications per IPC from them).
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    use abi::bootinfo::process::ProcessInfo;
    use abi::MessageInfo;
    use core::sync::atomic::Ordering::Relaxed;
    use ipc_bench::proto::{self, caps, control, label, CAP, CHAN_VA, SLOW_WORDS};
    use ipc_bench::work::Work;
    use userlib::chan::{ChanMem, Msg, Server, ThreadPark, BAD_REQUEST};
    use userlib::task::Executor;
    use userlib::{ipc, println, syscall};

    userlib::entry!(main);

    /// The dispatcher runs under block_on: no task slot is needed.
    static EXEC: Executor<2, 64> = Executor::new();
    static PARK: ThreadPark = ThreadPark::new();
    static SERVER: Server = Server::new();

    extern "C" fn main(info: usize) -> ! {
        // SAFETY: the loader maps the ProcessInfo page read-only here and passes it in a0.
        let info = unsafe { &*(info as *const ProcessInfo) };
        ipc::set_ipc_buffer(info.ipc_buffer);
        let (_, _, m) = syscall::call(caps::CONTROL, MessageInfo::new(control::HELLO, 0, 0, 0), [0; 4]);
        let (to_client, k, my_hart, client_hart) = (m[0], m[1].min(1), m[2], m[3]);
        // Poll before sleeping only when the client runs elsewhere.
        PARK.setup(caps::SERVER_WAKE, if my_hart == client_hart { 0 } else { proto::SPIN });
        let rt = EXEC.claim(&PARK).expect("one executor");
        // SAFETY: the root task maps the channel's frames here before we run, for good.
        let mem = unsafe { ChanMem::new(CHAN_VA[k] as *mut u8, CAP) }.expect("channel address");
        if let Err(e) = SERVER.attach(mem, to_client, &PARK) {
            println!("[ipc-bench] server {}: attach: {:?}", k, e);
        }
        serve_sync();
        let why = rt.block_on(SERVER.serve_inline(handle));
        println!("[ipc-bench] server {}: channel ended: {:?}", k, why);
        loop {
            syscall::yield_now();
        }
    }

    /// Sync requests until GO_ASYNC.
    fn serve_sync() {
        let (_, mut info, mut m) = syscall::recv(caps::SERVER_EP);
        loop {
            if info.label == label::GO_ASYNC {
                syscall::reply(MessageInfo::new(0, 0, 0, 0), [0; 4]);
                return;
            }
            let seed = m[0] as u64;
            let (l, out) = match Work::from_label(info.label) {
                Some(w) => {
                    let r = w.run(seed);
                    (info.label, [r[0] as usize, r[1] as usize, seed as usize, 0])
                }
                None => (BAD_REQUEST as usize, [0; 4]),
            };
            let len = if info.length == SLOW_WORDS {
                ipc::set_mr(4, 0);
                SLOW_WORDS
            } else {
                3
            };
            (_, info, m) = syscall::reply_recv(caps::SERVER_EP, MessageInfo::new(l, 0, 0, len), out);
        }
    }

    fn handle(m: Msg) -> Msg {
        let Some(w) = Work::from_label(m.label as usize) else { return Msg::new(BAD_REQUEST, &[]).unwrap_or_default() };
        let r = w.run(m.word(0));
        let (sig, n) = (SERVER.signals.load(Relaxed) as u64, SERVER.replies.load(Relaxed) as u64 + 1);
        Msg::new(m.label, &[r[0], r[1], m.word(0), sig, n]).unwrap_or_default()
    }

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo) -> ! {
        println!("[ipc-bench] server panic: {}", info);
        // Fault on purpose: the root task hears of it on our fault endpoint and ends the run.
        // SAFETY: page 0 is never mapped; the write only faults.
        unsafe { core::ptr::write_volatile(8 as *mut u8, 0) };
        loop {
            syscall::yield_now();
        }
    }
}
