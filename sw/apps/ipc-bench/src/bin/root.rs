//! The benchmark system's root task: starts every process of the manifest (app.toml) from its
//! boot module, wires the two channels (client <-> near server, client <-> far server: shared
//! ring frames and U-notifications each way), tells each process its set-up when it says
//! HELLO, and ends the run with the client's verdict or with a process's fault.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    use abi::{init_cap as ic, uintr as au, MessageInfo};
    use ipc_bench::proto::{self, caps, control, CAP, CHAN_VA};
    use userlib::chan::{chan_bytes, ChanMem};
    use userlib::invoke::rights;
    use userlib::process::system::{Member, RootAlloc, System};
    use userlib::process::{self, Shared};
    use userlib::{cnode, println, syscall, tcb, uintr};

    userlib::entry!(main);

    const PAGE: usize = 4096;
    const PAGES: usize = chan_bytes(CAP).div_ceil(PAGE);
    const CLIENT: &str = "client";
    const SERVERS: [&str; 2] = ["server-near", "server-far"];

    fn fail(what: &str, e: impl core::fmt::Debug) -> ! {
        println!("[ipc-bench] FAILED: {}: {:?}", what, e);
        syscall::debug_halt(1)
    }

    /// A sender entry in `tcb`'s table for `ntfn`, whose vector is `badge`.
    fn sender(alloc: &mut RootAlloc, ntfn: usize, badge: usize, tcb: usize) -> usize {
        let m = alloc.slots(1).unwrap_or_else(|e| fail("slot", e)).start;
        cnode::mint(ic::CNODE, m, 64, ic::CNODE, ntfn, 64, rights::ALL, badge)
            .unwrap_or_else(|e| fail("mint notification", e));
        uintr::register_sender(m, tcb).unwrap_or_else(|e| fail("NotificationRegisterSender", e))
    }

    /// Make `m` the receiver of the U-notification given at `wake` (bound to its thread).
    fn receiver(sys: &System, m: &Member, wake: usize) -> usize {
        let t = m.process.tcb;
        let n = sys.object_of(m, wake - caps::CONTROL).unwrap_or_else(|| fail("no notification given", m.name));
        uintr::grant(ic::UINTR_CONTROL, t, au::GRANT_RECEIVE).unwrap_or_else(|e| fail("UintrControl_Grant", e));
        tcb::bind_notification(t, n).unwrap_or_else(|e| fail("TCB_BindNotification", e));
        uintr::register_receiver(n).unwrap_or_else(|e| fail("NotificationRegisterReceiver", e));
        n
    }

    extern "C" fn main(bootinfo: usize) -> ! {
        userlib::ipc::set_ipc_buffer(abi::layout::ROOT_IPC_BUFFER);
        // SAFETY: the kernel passes the boot-info page, mapped for good.
        let bi = unsafe { userlib::bootinfo::from_addr(bootinfo) };
        println!("[ipc-bench] root task: starting the system of {} modules", process::modules(bi).count());
        let mut alloc = RootAlloc::new(bi);

        // The channels' frames, laid out here and shared with both ends.
        let mut shared = [[Shared { frame: 0, va: 0, write: true }; PAGES]; 2];
        for (k, sh) in shared.iter_mut().enumerate() {
            let (va, first) = alloc.shared_pages(PAGES).unwrap_or_else(|e| fail("channel frames", e));
            // SAFETY: PAGES fresh frames mapped at va, for good.
            let mem = unsafe { ChanMem::new(va as *mut u8, CAP) }.unwrap_or_else(|e| fail("channel", e));
            mem.init().unwrap_or_else(|e| fail("channel init", e));
            for (i, s) in sh.iter_mut().enumerate() {
                *s = Shared { frame: first + i, va: CHAN_VA[k] + i * PAGE, write: true };
            }
        }
        let both: [Shared; 2 * PAGES] = core::array::from_fn(|i| shared[i / PAGES][i % PAGES]);
        let sys = System::load(bi, &mut alloc, |name| match name {
            CLIENT => &both[..],
            n if n == SERVERS[0] => &shared[0][..],
            n if n == SERVERS[1] => &shared[1][..],
            _ => &[],
        })
        .unwrap_or_else(|(name, e)| fail(name, e));
        let client = *sys.member(CLIENT).unwrap_or_else(|| fail("no process", CLIENT));
        let servers = SERVERS.map(|s| *sys.member(s).unwrap_or_else(|| fail("no process", s)));

        // U-notifications: each process receives on its own; the client holds a sender entry
        // for each server's, each server one for the client's.
        let client_n = receiver(&sys, &client, caps::CLIENT_WAKE);
        // Each sender's table comes from the root task's memory.
        for t in core::iter::once(client.process.tcb).chain(servers.iter().map(|s| s.process.tcb)) {
            alloc.sender_table(t).unwrap_or_else(|e| fail("sender table", e));
        }
        let mut to_server = [0; 2];
        let mut to_client = [0; 2];
        for (k, s) in servers.iter().enumerate() {
            let n = receiver(&sys, s, caps::SERVER_WAKE);
            to_server[k] = sender(&mut alloc, n, k + 1, client.process.tcb);
            to_client[k] = sender(&mut alloc, client_n, k + 1, s.process.tcb);
        }
        let control = sys.object_of(&client, 0).unwrap_or_else(|| fail("no control endpoint", CLIENT));
        sys.resume_all().unwrap_or_else(|(name, e)| fail(name, e));
        println!(
            "[ipc-bench] started: client on hart {}, {} on hart {}, {} on hart {}",
            client.hart, servers[0].name, servers[0].hart, servers[1].name, servers[1].hart
        );
        let target = if bi.uintr_mode == au::MODE_HARDWARE { proto::TARGET_RTL } else { proto::TARGET_QEMU };

        loop {
            let (badge, info, mrs) = syscall::recv(control);
            match (badge, info.label) {
                (proto::BADGE_CLIENT, control::HELLO) => {
                    let w = [to_server[0], to_server[1], client.hart, servers[0].hart, servers[1].hart, target];
                    reply(&w);
                }
                (b, control::HELLO) if proto::BADGE_SERVER.contains(&b) => {
                    let k = b - proto::BADGE_SERVER[0];
                    reply(&[to_client[k], k, servers[k].hart, client.hart]);
                }
                (proto::BADGE_CLIENT, control::DONE) => {
                    println!("[ipc-bench] verdict: {}", if mrs[0] == 0 { "ok" } else { "FAILED" });
                    syscall::debug_halt(mrs[0].min(1))
                }
                (b, l) if b > proto::FAULT_BASE => {
                    println!(
                        "[ipc-bench] FAILED: process with badge {} faulted (fault {}, {:#x} {:#x})",
                        b - proto::FAULT_BASE,
                        l,
                        mrs[0],
                        mrs[1]
                    );
                    syscall::debug_halt(1)
                }
                (b, l) => println!("[ipc-bench] unexpected message: badge {} label {}", b, l),
            }
        }
    }

    fn reply(words: &[usize]) {
        let mut mrs = [0; 4];
        for (i, &w) in words.iter().enumerate() {
            if i < 4 {
                mrs[i] = w;
            } else {
                userlib::ipc::set_mr(i, w);
            }
        }
        syscall::reply(MessageInfo::new(0, 0, 0, words.len()), mrs);
    }

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo) -> ! {
        println!("[ipc-bench] root panic: {}", info);
        syscall::debug_halt(1)
    }
}
