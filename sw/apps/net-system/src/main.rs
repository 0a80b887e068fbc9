//! The network system's root task (README.md): loads the processes of `app.toml`, finds the
//! NIC the device tree describes (the boot info's device untypeds say what each is: the AXI
//! DMA + AXI Ethernet of our SoC, else a virtio-net among the virtio-mmio pages), and wires
//! everything the manifest cannot say before it lets them run:
//! - the net server's NIC: its register page(s), a DMA pool in one mega page
//!   (base address from Page_GetAddress), its IRQs routed to the net server's U-notification
//!   (IRQSetUIntr; directly to its hart's PLIC U context where the SoC has one, whose page is
//!   then mapped into the net server too) and the IRQHandler caps for the Ack;
//! - the socket channel (rings) and the data area (payloads), mapped into both processes;
//! - U-notifications each way (receiver slots, sender entries);
//! - a read-only configuration page for each (`netproto::NetConfig`, `TcpConfig`).
//!
//! Build-time settings (environment of the build): NET_VARIANT (`async`, the default, or
//! `sync`), NET_PORT (default 5555), NET_REQUEST (request bytes, default 64), NET_WORK (rounds
//! of work per request, default 0), NET_SPIN (cycles each server polls its rings before
//! sleeping; default `auto`: see `spin_cycles`).
//!
//! The sync variant wires the same processes differently: the TCP server's threads Call the
//! net server on the `sockets` endpoint (one thread per connection, made here, `threads`), and
//! the NIC's interrupt signals a plain notification bound to the net server's thread (seL4's
//! IRQ path through the kernel) instead of arriving as a user interrupt.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod threads;

#[cfg(target_arch = "riscv64")]
mod rt {
    use crate::threads;
    use abi::bootinfo::device_kind;
    use abi::bootinfo::process::FIRST_GIVEN;
    use abi::{init_cap as ic, object, uintr as au};
    use netproto::*;
    use userlib::chan::{chan_bytes, ChanMem};
    use userlib::invoke::rights;
    use userlib::process::system::{Member, RootAlloc, System};
    use userlib::process::Shared;
    use userlib::uintr::IrqRoute;
    use userlib::{bootinfo, cnode, irq, println, syscall, tcb, uintr, untyped, vspace};

    userlib::entry!(main);

    const PAGE: usize = 4096;
    const DEPTH: usize = 64;
    const CHAN_PAGES: usize = chan_bytes(CHAN_CAPACITY).div_ceil(PAGE);
    const DATA_PAGES: usize = DATA_BYTES / PAGE;
    /// The DMA pool: the NIC's two queues and packet buffers (~80 pages for the AXI DMA's
    /// rings, ~134 for virtio's) and after them the net server's socket buffers (2 x 4.2 KiB a
    /// socket: 50 pages at 24 sockets, 285 at QEMU's 136), in one 2 MiB mega page, so
    /// physically contiguous and one TLB entry: as 4 KiB pages the receive buffers alone span
    /// 64 pages, and each frame came in on a page the net server's hart (a 32-entry TLB in 8
    /// sectors of 4 pages, 4 superpage entries, no L2 TLB) had long evicted: a page walk per
    /// frame, ~4 % of its cycles under load. The price is boot time: Retype zeroes every byte
    /// (~2.6 cycles a byte on the RTL: 5.4 M cycles for 2 MiB, against ~1.5 M for 144 frames;
    /// their ~300 mapping invocations and the socket buffers' 50 image pages go).
    const DMA_BITS: usize = abi::object::MEGA_PAGE_BITS;
    const DMA_BYTES: usize = 1 << DMA_BITS;
    /// Given caps (app.toml order): the process's U-notification first, the sockets endpoint
    /// third.
    const WAKE: usize = 0;
    const SOCKETS_EP: usize = 2;
    /// Where the net server finds its IRQHandler caps: the first slots after its given caps
    /// (the second for a NIC with two interrupts); the sync variant's saved reply caps follow.
    const NET_IRQ_SLOT: usize = FIRST_GIVEN + 3;
    const NET_IRQ2_SLOT: usize = NET_IRQ_SLOT + 1;
    const NET_REPLY_SLOTS: usize = NET_IRQ_SLOT + 2;
    /// The notification word bit the NIC's interrupt sets (sync variant).
    const NIC_BADGE: usize = 1;
    /// Vectors on the net server's U-notification: the TCP server's doorbell, the NIC.
    const VEC_CLIENT: usize = 1;
    const VEC_NIC: usize = 2;
    const VEC_SERVER: usize = 1;
    /// virtio-mmio: "virt" at offset 0, the device id at 8 (1: network).
    const VIRTIO_MAGIC: u32 = 0x7472_6976;
    const VIRTIO_NET: u32 = 1;

    fn setting(v: Option<&str>, default: u64) -> u64 {
        v.and_then(|s| s.parse().ok()).unwrap_or(default)
    }

    /// How long each server polls its rings (requests, replies, the NIC's receive ring) before
    /// it sleeps, (net server, TCP server): NET_SPIN for both when it is a number. `auto` (the
    /// default): AUTO_SPIN for the net server and AUTO_TCP_SPIN for the TCP server when the two
    /// run on harts of their own, else 0 (a server polling on the other's hart would keep it
    /// from running).
    fn spin_cycles(setting: Option<&str>, net_hart: usize, tcp_hart: usize) -> (u64, u64) {
        match setting.and_then(|s| s.parse().ok()) {
            Some(n) => (n, n),
            None if net_hart != tcp_hart => (AUTO_SPIN, AUTO_TCP_SPIN),
            None => (0, 0),
        }
    }

    /// `auto`'s polling for the net server on a hart of its own: 20,000 cycles (0.2 ms at 100 MHz).
    /// Under load its next request, reply or frame comes within a few thousand cycles, and a
    /// look at its rings in memory costs far less than a sleep: for the net server the NIC's
    /// interrupts armed and disarmed (register writes), the PLIC's claim, the U-notification
    /// Wait; for the TCP server the Wait and the kernel's wake-up, whose latency is in every
    /// request's time (RTL, 4 connections, elapsed per request 15,490 cycles with the TCP
    /// server sleeping, 13,715 with it polling too). Idle, each sleeps after that.
    const AUTO_SPIN: u64 = 20_000;
    /// The TCP server's (1 ms at 100 MHz): under load the net server hands it a round of
    /// requests every ~45 k cycles (RTL, 4 connections), so it polls through the gap rather
    /// than put the kernel's wake-up on the next round's path.
    const AUTO_TCP_SPIN: u64 = 100_000;

    fn fail(what: &str, e: impl core::fmt::Debug) -> ! {
        println!("[net-root] FAILED: {}: {:?}", what, e);
        syscall::debug_halt(1)
    }

    /// A sender entry in `tcb`'s table for `ntfn`, raising vector `badge`.
    fn sender(alloc: &mut RootAlloc, ntfn: usize, badge: usize, tcb: usize) -> usize {
        let m = alloc.slots(1).unwrap_or_else(|e| fail("slot", e)).start;
        cnode::mint(ic::CNODE, m, DEPTH, ic::CNODE, ntfn, DEPTH, rights::ALL, badge)
            .unwrap_or_else(|e| fail("mint notification", e));
        uintr::register_sender(m, tcb).unwrap_or_else(|e| fail("NotificationRegisterSender", e))
    }

    /// Make `m`'s thread the receiver of the U-notification it is given first (`uintr`), or
    /// only bind it, a plain notification, to the thread.
    fn receiver(sys: &System, m: &Member, uintr: bool) -> usize {
        let t = m.process.tcb;
        let n = sys.object_of(m, WAKE).unwrap_or_else(|| fail("no notification given", m.name));
        if uintr {
            uintr::grant(ic::UINTR_CONTROL, t, au::GRANT_RECEIVE).unwrap_or_else(|e| fail("UintrControl_Grant", e));
        }
        tcb::bind_notification(t, n).unwrap_or_else(|e| fail("TCB_BindNotification", e));
        if uintr {
            uintr::register_receiver(n).unwrap_or_else(|e| fail("NotificationRegisterReceiver", e));
        }
        n
    }

    /// The NIC: register pages (frame cap, physical address), IRQs (the AXI DMA's transmit
    /// and receive, or virtio's one and 0).
    struct NicDev {
        kind: u64,
        page: (usize, usize),
        page2: Option<(usize, usize)>,
        irqs: [usize; 2],
    }

    /// "4+5", or "8" for one.
    struct Irqs([usize; 2]);
    impl core::fmt::Display for Irqs {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            match self.0 {
                [a, 0] => write!(f, "{a}"),
                [a, b] => write!(f, "{a}+{b}"),
            }
        }
    }

    /// A frame of the one-page device untyped `ut`, or None.
    fn device_frame(alloc: &mut RootAlloc, ut: usize) -> Option<usize> {
        let f = alloc.slots(1).ok()?.start;
        untyped::retype(ut, object::PAGE_4K, 0, ic::CNODE, 0, 0, f, 1).ok()?;
        Some(f)
    }

    /// The AXI DMA + AXI Ethernet if the device tree has them (our SoC), else the first
    /// virtio-mmio page that holds a network device (each is mapped here and asked for its
    /// device id).
    fn find_nic(bi: &abi::bootinfo::BootInfo, alloc: &mut RootAlloc) -> Option<NicDev> {
        let of = |kind: u8| bootinfo::untypeds(bi).find(|(_, d)| d.is_device != 0 && d.kind == kind);
        if let (Some((dut, dd)), Some((eut, ed))) = (of(device_kind::AXI_DMA), of(device_kind::AXI_ETHERNET)) {
            if dd.irq == 0 || dd.irq2 == 0 {
                fail("the AXI DMA's device untyped names no transmit or receive interrupt", (dd.irq, dd.irq2));
            }
            let (df, ef) = (device_frame(alloc, dut)?, device_frame(alloc, eut)?);
            return Some(NicDev {
                kind: nic_kind::AXI,
                page: (df, dd.paddr),
                page2: Some((ef, ed.paddr)),
                irqs: [dd.irq as usize, dd.irq2 as usize],
            });
        }
        for (ut, d) in bootinfo::untypeds(bi) {
            if d.is_device == 0 || d.kind != device_kind::VIRTIO_MMIO || d.irq == 0 {
                continue;
            }
            let Some(f) = device_frame(alloc, ut) else { continue };
            let va = alloc.region();
            alloc.map(f, va, true).ok()?;
            // SAFETY: the device page just mapped; magic and id are 32-bit registers.
            let (magic, id) = unsafe { ((va as *const u32).read_volatile(), ((va + 8) as *const u32).read_volatile()) };
            let _ = vspace::page_unmap(f);
            if magic == VIRTIO_MAGIC && id == VIRTIO_NET {
                return Some(NicDev {
                    kind: nic_kind::VIRTIO,
                    page: (f, d.paddr),
                    page2: None,
                    irqs: [d.irq as usize, 0],
                });
            }
        }
        None
    }

    /// The hart index `userlib::process::system` places the net server on (its manifest's,
    /// if the machine has that many harts), to map that hart's PLIC U-context page.
    fn net_server_hart(bi: &abi::bootinfo::BootInfo) -> Option<usize> {
        let m = userlib::process::modules(bi).find(|m| m.name == "net-server")?;
        let harts = bootinfo::harts(bi);
        Some(if (m.record.hart as usize) < harts { m.record.hart as usize } else { bi.node_id })
    }

    /// The DMA pool's mega page: (its cap, physical base).
    fn dma_pool(alloc: &mut RootAlloc) -> (usize, usize) {
        let f = alloc.object(object::MEGA_PAGE, 0).unwrap_or_else(|e| fail("DMA mega page", e));
        let pa = vspace::page_get_address(f).unwrap_or_else(|e| fail("Page_GetAddress", e));
        if !pa.is_multiple_of(DMA_BYTES) {
            fail("DMA mega page not aligned", pa);
        }
        (f, pa)
    }

    /// `pages` shared frames: mapped here at a fresh address, and as `va` in a process.
    fn shared(alloc: &mut RootAlloc, pages: usize, va: usize, out: &mut [Shared]) -> usize {
        let (here, first) = alloc.shared_pages(pages).unwrap_or_else(|e| fail("shared frames", e));
        for (i, s) in out.iter_mut().enumerate().take(pages) {
            *s = Shared { frame: first + i, va: va + i * PAGE, write: true };
        }
        here
    }

    extern "C" fn main(bootinfo: usize) -> ! {
        userlib::ipc::set_ipc_buffer(abi::layout::ROOT_IPC_BUFFER);
        // SAFETY: the kernel passes the boot-info page, mapped for good.
        let bi = unsafe { userlib::bootinfo::from_addr(bootinfo) };
        let port = setting(option_env!("NET_PORT"), 5555);
        let request = setting(option_env!("NET_REQUEST"), 64);
        let work = setting(option_env!("NET_WORK"), 0);
        let sync = match option_env!("NET_VARIANT").unwrap_or("async") {
            "async" | "" => false,
            "sync" => true,
            v => fail("NET_VARIANT is neither async nor sync", v),
        };
        let var = if sync { variant::SYNC } else { variant::ASYNC };
        if !(1..=65535).contains(&port) || !(1..=BUF_BYTES as u64).contains(&request) {
            fail("NET_PORT or NET_REQUEST out of range", (port, request));
        }
        let mut alloc = RootAlloc::new(bi);
        let Some(nic) = find_nic(bi, &mut alloc) else {
            fail("no NIC: neither AXI DMA + Ethernet nor virtio-net (QEMU: -device virtio-net-device,netdev=...)", ())
        };
        // Async on a SoC with PLIC U contexts: the NIC's interrupts go to the net server's
        // hart's U context (IRQSetUIntr says Direct below), whose page it then needs.
        let ctx_page = match net_server_hart(bi) {
            Some(h) if !sync && h < bi.plic_user_context.len() && bi.plic_user_context[h] != 0 => {
                let page = bi.plic_user_context[h];
                let ut = bootinfo::untypeds(bi).find(|(_, d)| d.is_device != 0 && d.paddr == page).map(|(u, _)| u);
                ut.and_then(|u| device_frame(&mut alloc, u))
            }
            _ => None,
        };

        // Everything shared, laid out before the processes are loaded: config, up to three
        // device pages and the timer's, DMA pool, channel, data area.
        const NET_SHARED: usize = 1 + 4 + 1 + CHAN_PAGES + DATA_PAGES;
        const TCP_SHARED: usize = 2 + CHAN_PAGES + DATA_PAGES;
        let mut net = [Shared { frame: 0, va: 0, write: false }; NET_SHARED];
        let mut tcp = [Shared { frame: 0, va: 0, write: false }; TCP_SHARED];
        let (net_cfg_va, net_cfg) = alloc.shared_pages(1).unwrap_or_else(|e| fail("config page", e));
        let (tcp_cfg_va, tcp_cfg) = alloc.shared_pages(1).unwrap_or_else(|e| fail("config page", e));
        net[0] = Shared { frame: net_cfg, va: CONFIG_VADDR, write: false };
        tcp[0] = Shared { frame: tcp_cfg, va: CONFIG_VADDR, write: false };
        let mut at = 1;
        for (frame, va) in
            [(Some(nic.page.0), MMIO_VADDR), (nic.page2.map(|p| p.0), MMIO2_VADDR), (ctx_page, PLIC_CTX_VADDR)]
        {
            if let Some(frame) = frame {
                net[at] = Shared { frame, va, write: true };
                at += 1;
            }
        }
        // The net server's clock: the CLINT's mtime page, read-only (the kernel's cap is).
        // The TCP server's too: its run report's elapsed time.
        let timer = bi.timer_frame;
        let mut tcp_at = 1;
        if timer.slot != 0 {
            net[at] = Shared { frame: timer.slot, va: TIMER_VADDR, write: false };
            at += 1;
            tcp[tcp_at] = net[at - 1];
            tcp_at += 1;
        }
        let (dma, dma_pa) = dma_pool(&mut alloc);
        net[at] = Shared { frame: dma, va: DMA_VADDR, write: true };
        at += 1;
        let net_used = at + CHAN_PAGES + DATA_PAGES;
        let chan_here = shared(&mut alloc, CHAN_PAGES, CHAN_VADDR, &mut net[at..]);
        tcp[tcp_at..tcp_at + CHAN_PAGES].copy_from_slice(&net[at..at + CHAN_PAGES]);
        shared(&mut alloc, DATA_PAGES, DATA_VADDR, &mut net[at + CHAN_PAGES..]);
        let tcp_used = tcp_at + CHAN_PAGES + DATA_PAGES;
        tcp[tcp_at + CHAN_PAGES..tcp_used].copy_from_slice(&net[at + CHAN_PAGES..net_used]);
        // SAFETY: CHAN_PAGES fresh frames mapped here, for good.
        let mem = unsafe { ChanMem::new(chan_here as *mut u8, CHAN_CAPACITY) }.unwrap_or_else(|e| fail("channel", e));
        mem.init().unwrap_or_else(|e| fail("channel init", e));

        let sys = System::load(bi, &mut alloc, |name| match name {
            "net-server" => &net[..net_used],
            "tcp-server" => &tcp[..tcp_used],
            _ => &[],
        })
        .unwrap_or_else(|(name, e)| fail(name, e));
        let netp = *sys.member("net-server").unwrap_or_else(|| fail("no process", "net-server"));
        let tcpp = *sys.member("tcp-server").unwrap_or_else(|| fail("no process", "tcp-server"));

        let net_n = receiver(&sys, &netp, !sync);
        let tcp_n = receiver(&sys, &tcpp, true);
        let (to_client, to_server) = if sync {
            (0, 0)
        } else {
            for t in [netp.process.tcb, tcpp.process.tcb] {
                alloc.sender_table(t).unwrap_or_else(|e| fail("sender table", e));
            }
            (
                sender(&mut alloc, tcp_n, VEC_SERVER, netp.process.tcb),
                sender(&mut alloc, net_n, VEC_CLIENT, tcpp.process.tcb),
            )
        };

        // The NIC's interrupts: async, vector VEC_NIC on the net server's U-notification; sync,
        // bit NIC_BADGE of its plain notification (the kernel signals it).
        let badged = alloc.slots(1).unwrap_or_else(|e| fail("slot", e)).start;
        let badge = if sync { NIC_BADGE } else { VEC_NIC };
        cnode::mint(ic::CNODE, badged, DEPTH, ic::CNODE, net_n, DEPTH, rights::ALL, badge)
            .unwrap_or_else(|e| fail("mint", e));
        let mut handlers = [0usize; 2];
        let mut route = None;
        for (h, &irq_n) in handlers.iter_mut().zip(nic.irqs.iter()).filter(|(_, &i)| i != 0) {
            *h = alloc.slots(1).unwrap_or_else(|e| fail("slot", e)).start;
            irq::control_get(ic::IRQ_CONTROL, irq_n, ic::CNODE, *h, DEPTH)
                .unwrap_or_else(|e| fail("IRQControl_Get", e));
            if sync {
                irq::handler_set_notification(*h, badged).unwrap_or_else(|e| fail("IRQHandler_SetNotification", e));
            } else {
                let r = uintr::irq_set_uintr(*h, badged).unwrap_or_else(|e| fail("IRQSetUIntr", e));
                if route.is_some_and(|p| p != r) {
                    fail("the NIC's interrupts were routed differently", (route, r));
                }
                route = Some(r);
            }
        }
        let direct = match route {
            Some(IrqRoute::Direct { hart }) if ctx_page.is_some() && Some(hart) == net_server_hart(bi) => true,
            Some(IrqRoute::Direct { hart }) => {
                fail("direct NIC interrupts without the net server's U-context page", hart)
            }
            _ => false,
        };
        // Sync: a thread per connection in the TCP server, made now, run after the rest.
        let mut workers = [0usize; SYNC_THREADS];
        let nworkers = if sync { SYNC_THREADS } else { 0 };
        let layout = threads::Layout {
            stacks: THREAD_STACKS_VADDR,
            stride: THREAD_STRIDE,
            stack_pages: THREAD_STACK_PAGES,
            ipc: THREAD_IPC_VADDR,
        };
        threads::make(&mut alloc, &tcpp, &mut workers[..nworkers], &layout)
            .unwrap_or_else(|e| fail("TCP server threads", e));
        let (net_spin, tcp_spin) = spin_cycles(option_env!("NET_SPIN"), netp.hart, tcpp.hart);
        let bits = netp.record.cnode_bits as usize;
        for (slot, &h) in [NET_IRQ_SLOT, NET_IRQ2_SLOT].iter().zip(handlers.iter()).filter(|(_, &h)| h != 0) {
            cnode::copy(netp.process.cnode, *slot, bits, ic::CNODE, h, DEPTH, rights::ALL)
                .unwrap_or_else(|e| fail("give the IRQHandler", e));
        }

        let cfg = NetConfig {
            magic: NET_MAGIC,
            timebase_hz: bi.timebase_hz as u64,
            ip: [10, 0, 2, 15],
            prefix: 24,
            gateway: [10, 0, 2, 2],
            mmio_paddr: nic.page.1 as u64,
            dma_paddr: dma_pa as u64,
            dma_bytes: DMA_BYTES as u64,
            ntfn_slot: (FIRST_GIVEN + WAKE) as u64,
            irq_slot: NET_IRQ_SLOT as u64,
            irq_vector: VEC_NIC as u64,
            to_client: to_client as u64,
            spin_cycles: net_spin,
            variant: var,
            endpoint_slot: (FIRST_GIVEN + SOCKETS_EP) as u64,
            reply_slots: NET_REPLY_SLOTS as u64,
            nic_kind: nic.kind,
            mmio2_paddr: nic.page2.map_or(0, |p| p.1) as u64,
            irq2_slot: if handlers[1] != 0 { NET_IRQ2_SLOT as u64 } else { 0 },
            plic_ctx_vaddr: if direct { PLIC_CTX_VADDR as u64 } else { 0 },
            nic_axi_hz: platform::clock::CORE_HZ as u64,
            mtime_vaddr: if timer.slot != 0 { (TIMER_VADDR + timer.offset) as u64 } else { 0 },
        };
        let tcfg = TcpConfig {
            magic: TCP_MAGIC,
            port,
            request_bytes: request,
            work,
            ntfn_slot: (FIRST_GIVEN + WAKE) as u64,
            to_server: to_server as u64,
            spin_cycles: tcp_spin,
            hart: tcpp.hart as u64,
            variant: var,
            endpoint_slot: (FIRST_GIVEN + SOCKETS_EP) as u64,
            threads: nworkers as u64,
            mtime_vaddr: if timer.slot != 0 { (TIMER_VADDR + timer.offset) as u64 } else { 0 },
            cycles_per_tick: (platform::clock::CORE_HZ as u64 / (bi.timebase_hz as u64).max(1)).max(1),
        };
        // SAFETY: the two configuration frames, mapped writable here; the processes map them
        // read-only and do not run yet.
        unsafe {
            (net_cfg_va as *mut NetConfig).write_volatile(cfg);
            (tcp_cfg_va as *mut TcpConfig).write_volatile(tcfg);
        }
        let faults = sys.object_of(&netp, 1).unwrap_or_else(|| fail("no fault endpoint", "net-server"));
        println!(
            "[net-root] {} variant: net-server on hart {} ({} at {:#x}, IRQ {} {}), tcp-server on hart {} ({} threads); port {}, {} B requests, work {}, spin {}/{}",
            if sync { "sync" } else { "async" },
            netp.hart,
            if nic.kind == nic_kind::AXI { "AXI DMA + Ethernet" } else { "virtio-net" },
            nic.page.1,
            Irqs(nic.irqs),
            match route {
                Some(IrqRoute::Forwarded) => "forwarded as a user interrupt",
                Some(_) => "direct to the user context",
                None => "signalling a notification (kernel path)",
            },
            tcpp.hart,
            1 + nworkers,
            port,
            request,
            work,
            net_spin,
            tcp_spin
        );
        // Printed before they run: their own lines follow, not interleaved with this one.
        sys.resume_all().unwrap_or_else(|(name, e)| fail(name, e));
        threads::resume(&workers[..nworkers]).unwrap_or_else(|e| fail("TCP server threads", e));

        // Report any fault of the two; the system keeps running until it is stopped.
        loop {
            let (badge, info, mrs) = syscall::recv(faults);
            let who = match badge {
                1 => "net-server",
                2 => "tcp-server",
                _ => "?",
            };
            println!("[net-root] {} faulted: fault {} ({:#x} {:#x} {:#x})", who, info.label, mrs[0], mrs[1], mrs[2]);
        }
    }

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo) -> ! {
        println!("[net-root] panic: {}", info);
        syscall::debug_halt(1)
    }
}
