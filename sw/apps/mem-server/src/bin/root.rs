//! The memory benchmark system's root task: starts the server and the client from their boot
//! modules (app.toml), wires their channel (shared ring frames, a U-notification each way),
//! gives the server what it serves with (an Untyped for its frames, the client's VSpace cap,
//! its own TCB cap and the frames of its syscall buffer)
//! and installs the page tables of the client's pool; then answers HELLO, places the client
//! and the server's kernel handler when the client asks (`proto::placement`: the client's
//! affinity, the harts that may serve the server's handler), and ends the run
//! with the client's verdict and the check that its last access, to a page it had unmapped,
//! faulted.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    use abi::{fault, init_cap as ic, object, uintr as au, MessageInfo};
    use mem_server::proto::{
        self, caps, control, placement, slots, CAP, CHAN_VA, FRAMES_BITS, PAGE, POOL_VA, SYSBUF_VA,
    };
    use userlib::chan::{chan_bytes, ChanMem};
    use userlib::invoke::{rights, vm_attr};
    use userlib::process::system::{Member, RootAlloc, System};
    use userlib::process::{self, Shared};
    use userlib::{bootinfo, cnode, println, syscall, tcb, uintr, vspace};

    userlib::entry!(main);

    const PAGES: usize = chan_bytes(CAP).div_ceil(PAGE);
    const CLIENT: &str = "client";
    const SERVER: &str = "server";

    fn fail(what: &str, e: impl core::fmt::Debug) -> ! {
        println!("[mem-bench] FAILED: {}: {:?}", what, e);
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
    fn receiver(sys: &System, m: &Member) -> usize {
        let t = m.process.tcb;
        let n = sys.object_of(m, caps::WAKE - caps::CONTROL).unwrap_or_else(|| fail("no notification given", m.name));
        uintr::grant(ic::UINTR_CONTROL, t, au::GRANT_RECEIVE).unwrap_or_else(|e| fail("UintrControl_Grant", e));
        tcb::bind_notification(t, n).unwrap_or_else(|e| fail("TCB_BindNotification", e));
        uintr::register_receiver(n).unwrap_or_else(|e| fail("NotificationRegisterReceiver", e));
        n
    }

    /// What the server serves with: an Untyped for its frames and the client's VSpace cap in
    /// its CNode, and the pool's page tables (two levels below the client's root table) in
    /// the client's VSpace.
    fn equip(alloc: &mut RootAlloc, server: &Member, client: &Member, sysbuf: usize) {
        let bits = server.record.cnode_bits as usize;
        if bits < slots::CNODE_BITS {
            fail("server cnode-bits below what its frames need", bits);
        }
        let ut = alloc.object(object::UNTYPED, FRAMES_BITS).unwrap_or_else(|e| fail("frames' Untyped", e));
        let cn = server.process.cnode;
        cnode::move_(cn, slots::UNTYPED, bits, ic::CNODE, ut, 64).unwrap_or_else(|e| fail("CNode_Move (Untyped)", e));
        cnode::copy(cn, slots::CLIENT_VSPACE, bits, ic::CNODE, client.process.vspace, 64, rights::ALL)
            .unwrap_or_else(|e| fail("CNode_Copy (client VSpace)", e));
        for (slot, cap) in
            [(slots::OWN_TCB, server.process.tcb), (slots::SYSBUF_REQ, sysbuf), (slots::SYSBUF_REP, sysbuf + 1)]
        {
            cnode::copy(cn, slot, bits, ic::CNODE, cap, 64, rights::ALL)
                .unwrap_or_else(|e| fail("CNode_Copy (server's TCB, syscall buffer)", e));
        }
        for _ in 0..2 {
            let pt = alloc.object(object::PAGE_TABLE, 0).unwrap_or_else(|e| fail("pool page table", e));
            vspace::page_table_map(pt, client.process.vspace, POOL_VA, vm_attr::DEFAULT)
                .unwrap_or_else(|e| fail("PageTable_Map (pool)", e));
        }
    }

    extern "C" fn main(bootinfo: usize) -> ! {
        userlib::ipc::set_ipc_buffer(abi::layout::ROOT_IPC_BUFFER);
        // SAFETY: the kernel passes the boot-info page, mapped for good.
        let bi = unsafe { userlib::bootinfo::from_addr(bootinfo) };
        println!(
            "[mem-bench] root task: starting the system of {} modules at cycle {}",
            process::modules(bi).count(),
            cycles()
        );
        // Each hart's idle time, which the client's busy figures come from, is measured only
        // once asked for (it costs every idle pass two firmware traps).
        syscall::debug_stat_reset(abi::init_cap::DEBUG, abi::stat::IDLE_TIME);
        let mut alloc = RootAlloc::new(bi);

        // The channel's frames, laid out here and shared with both ends.
        let (va, first) = alloc.shared_pages(PAGES).unwrap_or_else(|e| fail("channel frames", e));
        // SAFETY: PAGES fresh frames mapped at va, for good.
        let mem = unsafe { ChanMem::new(va as *mut u8, CAP) }.unwrap_or_else(|e| fail("channel", e));
        mem.init().unwrap_or_else(|e| fail("channel init", e));
        let shared: [Shared; PAGES] =
            core::array::from_fn(|i| Shared { frame: first + i, va: CHAN_VA + i * PAGE, write: true });
        // The server's syscall buffer: two frames mapped in its VSpace (their caps go to its
        // CNode in `equip`).
        let (_, sysbuf) = alloc.shared_pages(2).unwrap_or_else(|e| fail("syscall buffer frames", e));
        let server_shared: [Shared; PAGES + 2] = core::array::from_fn(|i| match i.checked_sub(PAGES) {
            None => shared[i],
            Some(k) => Shared { frame: sysbuf + k, va: SYSBUF_VA + k * PAGE, write: true },
        });
        let sys = System::load(bi, &mut alloc, |name| match name {
            CLIENT => &shared[..],
            SERVER => &server_shared[..],
            _ => &[],
        })
        .unwrap_or_else(|(name, e)| fail(name, e));
        println!("[mem-bench] modules loaded at cycle {}", cycles());
        let client = *sys.member(CLIENT).unwrap_or_else(|| fail("no process", CLIENT));
        let server = *sys.member(SERVER).unwrap_or_else(|| fail("no process", SERVER));

        let client_n = receiver(&sys, &client);
        let server_n = receiver(&sys, &server);
        for t in [client.process.tcb, server.process.tcb] {
            alloc.sender_table(t).unwrap_or_else(|e| fail("sender table", e));
        }
        let to_server = sender(&mut alloc, server_n, 1, client.process.tcb);
        let to_client = sender(&mut alloc, client_n, 1, server.process.tcb);
        equip(&mut alloc, &server, &client, sysbuf);
        let control = sys.object_of(&client, 0).unwrap_or_else(|| fail("no control endpoint", CLIENT));
        sys.resume_all().unwrap_or_else(|(name, e)| fail(name, e));
        let harts = bootinfo::harts(bi);
        // The client's hart when it is not beside the server: another than the server's.
        let other = (1..harts).map(|d| (server.hart + d) % harts).find(|&h| h != bi.node_id).unwrap_or(server.hart);
        println!(
            "[mem-bench] started at cycle {}: server on hart {}, client on hart {} (on another hart: {})",
            cycles(),
            server.hart,
            client.hart,
            other
        );
        let target = if bi.uintr_mode == au::MODE_HARDWARE { proto::TARGET_RTL } else { proto::TARGET_QEMU };

        let mut expect_fault: Option<(usize, usize)> = None;
        loop {
            let (badge, info, mrs) = syscall::recv(control);
            match (badge, info.label) {
                (proto::BADGE_CLIENT, control::HELLO) => reply(&[to_server, client.hart, server.hart, harts], target),
                (proto::BADGE_SERVER, control::HELLO) => reply(&[to_client, server.hart, 0, 0], 0),
                (proto::BADGE_CLIENT, control::PLACE) => match where_(mrs[0], server.hart, other, harts) {
                    Some((hart, handler_harts))
                        if tcb::set_affinity(client.process.tcb, hart).is_ok()
                            && tcb::set_syscall_handler_harts(server.process.tcb, handler_harts).is_ok() =>
                    {
                        reply(&[0, hart, 0, 0], 0)
                    }
                    _ => reply(&[1, 0, 0, 0], 0),
                },
                (proto::BADGE_CLIENT, control::EXPECT_FAULT) => {
                    expect_fault = Some((mrs[0], mrs[1]));
                    reply(&[0; 4], 0)
                }
                (proto::BADGE_CLIENT, control::DONE) => {
                    println!("[mem-bench] verdict: FAILED (the client ended early with status {})", mrs[0]);
                    syscall::debug_halt(1)
                }
                (b, l) if b == proto::FAULT_BASE + proto::BADGE_CLIENT && expect_fault.is_some() => {
                    let (va, failures) = expect_fault.unwrap_or_default();
                    let as_expected = l == fault::VM_FAULT && mrs[1] == va;
                    if as_expected {
                        println!("[mem-bench] the client's access to its unmapped page {:#x} faulted: ok", va);
                    } else {
                        println!(
                            "[mem-bench] FAILED: the client's fault {} at {:#x} {:#x} is not the one expected at {:#x}",
                            l, mrs[0], mrs[1], va
                        );
                    }
                    let ok = as_expected && failures == 0;
                    println!("[mem-bench] verdict: {}", if ok { "ok" } else { "FAILED" });
                    syscall::debug_halt(!ok as usize)
                }
                (b, l) if b > proto::FAULT_BASE => {
                    println!(
                        "[mem-bench] FAILED: process with badge {} faulted (fault {}, {:#x} {:#x})",
                        b - proto::FAULT_BASE,
                        l,
                        mrs[0],
                        mrs[1]
                    );
                    syscall::debug_halt(1)
                }
                (b, l) => println!("[mem-bench] unexpected message: badge {} label {}", b, l),
            }
        }
    }

    /// Placement `p` (`proto::placement`) with the server on hart index `server`: the client's
    /// hart index and the mask of hart indices that may serve the server's kernel handler.
    /// `other` is the client's hart when it is not beside the server; None if the machine has
    /// too few harts for `p` (or `p` is unknown).
    fn where_(p: usize, server: usize, other: usize, harts: usize) -> Option<(usize, usize)> {
        let (one, two) = (1 << server, 1 << server | 1 << other);
        match p {
            placement::ONE_HART => Some((server, one)),
            placement::TWO_HARTS if other != server => Some((other, two)),
            placement::DEDICATED_HANDLER_HART if other != server => {
                let rest = ((1 << harts) - 1) & !two;
                (rest != 0).then_some((other, rest))
            }
            _ => None,
        }
    }

    /// Core cycles since reset (mtime scaled: where the start-up's time goes).
    fn cycles() -> u64 {
        userlib::time::now() * (platform::clock::CORE_HZ / platform::clock::TIMEBASE_HZ) as u64
    }

    /// Reply with four words, and a fifth in MR4 when `fifth` is not 0.
    fn reply(words: &[usize; 4], fifth: usize) {
        let len = if fifth != 0 {
            userlib::ipc::set_mr(4, fifth);
            5
        } else {
            4
        };
        syscall::reply(MessageInfo::new(0, 0, 0, len), *words);
    }

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo) -> ! {
        println!("[mem-bench] root panic: {}", info);
        syscall::debug_halt(1)
    }
}
