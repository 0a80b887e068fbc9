//! The network stack server (README.md): started by the root task from its boot module with a
//! configuration page, it drives the NIC the device tree describes (virtio-net on QEMU, the AXI
//! DMA + Ethernet on our SoC; its interrupts delivered as user interrupts), runs smoltcp in the async runtime, and serves
//! TCP sockets to a client process over an async IPC channel (or, in the sync variant, over
//! sync IPC on an endpoint: `sync_ipc`), payloads through the shared data area.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod axi_nic;
#[cfg(target_arch = "riscv64")]
mod frames;
#[cfg(target_arch = "riscv64")]
mod hal;
#[cfg(target_arch = "riscv64")]
mod local;
#[cfg(target_arch = "riscv64")]
mod nic;
#[cfg(target_arch = "riscv64")]
mod poller;
#[cfg(target_arch = "riscv64")]
mod service;
#[cfg(target_arch = "riscv64")]
mod stack;

#[cfg(target_arch = "riscv64")]
mod sync_ipc;
#[cfg(target_arch = "riscv64")]
mod virtio;

#[cfg(target_arch = "riscv64")]
pub use rt::{clock, nic, nic_stats, DATA, SERVER};

#[cfg(target_arch = "riscv64")]
mod rt {
    use crate::axi_nic::AxiNic;
    use crate::nic::{Driver, Nic, NicStats};
    use crate::virtio::VirtioNic;
    use crate::{hal, poller, service, stack, sync_ipc};
    use abi::bootinfo::process::ProcessInfo;
    use core::cell::UnsafeCell;
    use core::sync::atomic::{AtomicUsize, Ordering};
    use netproto::{
        nic_kind, variant, NetConfig, CHAN_CAPACITY, CHAN_VADDR, CONFIG_VADDR, DATA_VADDR, DMA_VADDR, MMIO2_VADDR,
        MMIO_VADDR, NET_MAGIC, PLIC_CTX_VADDR, SYNC_PENDING, TIMER_VADDR,
    };
    use userlib::chan::{ChanMem, Server, ThreadPark};
    use userlib::task::timer::{KernelClock, Timers};
    use userlib::task::Executor;
    use userlib::{println, syscall};

    userlib::entry!(main);

    /// Task slots: a handler per request the ring can hold, the dispatcher and the poller.
    static EXEC: Executor<{ CHAN_CAPACITY + 8 }, 512> = Executor::new();
    static PARK: ThreadPark = ThreadPark::new();
    static SYNC_PARK: sync_ipc::SyncPark = sync_ipc::SyncPark::new();
    /// The poller's timer (smoltcp's next deadline): the thread's kernel deadline raises this
    /// vector on its U-notification (1 is the TCP server's doorbell, 2 the NIC).
    const TIMER_VECTOR: usize = 3;
    static TIMERS: Timers = Timers::new();
    static CLOCK: poller::LazyClock = poller::LazyClock::new(KernelClock::new(TIMER_VECTOR));
    /// The client's channel (async variant); the poller answers kept requests on it.
    pub static SERVER: Server = Server::new();
    static NIC_EVENTS: poller::NicEvents = poller::NicEvents { park: &PARK };

    /// Where the data area is mapped (handlers read it as bytes only).
    pub static DATA: AtomicUsize = AtomicUsize::new(0);
    static TICKS_PER_US: AtomicUsize = AtomicUsize::new(1);

    /// The NIC, set once before the executor runs; shared (its state has its own cells).
    struct NicCell(UnsafeCell<Option<Nic>>);
    // SAFETY: written once by `main` before any task exists, only read afterwards.
    unsafe impl Sync for NicCell {}
    static NIC: NicCell = NicCell(UnsafeCell::new(None));

    pub fn nic() -> &'static dyn Driver {
        // SAFETY: see NicCell.
        unsafe { (*NIC.0.get()).as_ref().expect("NIC up before any task runs") }.driver()
    }

    pub fn nic_stats() -> NicStats {
        nic().stats()
    }

    pub mod clock {
        use super::TICKS_PER_US;
        use core::sync::atomic::Ordering;

        /// The timebase (`userlib::time`: a load of the CLINT's mtime when mapped).
        pub fn ticks() -> u64 {
            userlib::time::now()
        }

        /// smoltcp's clock: microseconds of the timer.
        pub fn now() -> smoltcp::time::Instant {
            smoltcp::time::Instant::from_micros((ticks() / TICKS_PER_US.load(Ordering::Relaxed) as u64) as i64)
        }

        /// Microseconds of the timer (the AXI NIC's bounded waits).
        pub fn now_us() -> u64 {
            ticks() / TICKS_PER_US.load(Ordering::Relaxed) as u64
        }

        /// The timer tick at which smoltcp's clock reads `t` (or just after).
        pub fn ticks_at(t: smoltcp::time::Instant) -> u64 {
            (t.total_micros().max(0) as u64)
                .saturating_add(1)
                .saturating_mul(TICKS_PER_US.load(Ordering::Relaxed) as u64)
        }
    }

    fn config(info: &ProcessInfo) -> Option<&'static NetConfig> {
        // SAFETY: the root task maps the configuration page read-only here before we run.
        let c = unsafe { &*(CONFIG_VADDR as *const NetConfig) };
        let sync_ok = c.variant == variant::ASYNC
            || (c.variant == variant::SYNC
                && (info.given.start..info.given.end).contains(&(c.endpoint_slot as usize))
                && c.reply_slots as usize >= info.empty.start
                && c.reply_slots as usize + SYNC_PENDING <= info.empty.end);
        let axi = c.nic_kind == nic_kind::AXI;
        let nic_ok = (c.nic_kind == nic_kind::VIRTIO && c.irq2_slot == 0)
            || (axi && c.mmio2_paddr != 0 && c.irq2_slot != 0 && c.nic_axi_hz >= 2 * axi_eth::mac::MDC_MAX_HZ);
        let ctx_ok = c.plic_ctx_vaddr == 0 || c.plic_ctx_vaddr == PLIC_CTX_VADDR as u64;
        let mtime = c.mtime_vaddr as usize;
        let timer_ok = mtime == 0 || (mtime & !0xfff == TIMER_VADDR && mtime.is_multiple_of(8));
        let ok = c.magic == NET_MAGIC
            && sync_ok
            && nic_ok
            && ctx_ok
            && timer_ok
            && c.timebase_hz >= 1_000_000
            && (1..=32).contains(&c.prefix)
            && c.dma_bytes >= 64 * 4096
            && c.irq_vector <= abi::uintr::MAX_VECTOR as u64;
        ok.then_some(c)
    }

    /// Format into a fixed buffer (NUL-padded), for a line built in parts.
    fn write_str(buf: &mut [u8], args: core::fmt::Arguments) -> core::fmt::Result {
        struct W<'a>(&'a mut [u8], usize);
        impl core::fmt::Write for W<'_> {
            fn write_str(&mut self, s: &str) -> core::fmt::Result {
                let b = s.as_bytes();
                let n = b.len().min(self.0.len() - self.1);
                self.0[self.1..self.1 + n].copy_from_slice(&b[..n]);
                self.1 += n;
                Ok(())
            }
        }
        core::fmt::write(&mut W(buf, 0), args)
    }

    fn fail(what: &str) -> ! {
        println!("[net-server] {what}: stopped");
        loop {
            syscall::yield_now();
        }
    }

    extern "C" fn main(info: usize) -> ! {
        // SAFETY: the loader maps the ProcessInfo page read-only here and passes it in a0.
        let info = unsafe { &*(info as *const ProcessInfo) };
        userlib::ipc::set_ipc_buffer(info.ipc_buffer);
        let Some(cfg) = config(info) else { fail("no valid configuration page") };
        TICKS_PER_US.store((cfg.timebase_hz / 1_000_000) as usize, Ordering::Relaxed);
        if cfg.mtime_vaddr != 0 {
            // SAFETY: checked by `config`: inside the page the root task mapped read-only at
            // TIMER_VADDR for good, aligned; the kernel's cap names the CLINT's mtime page.
            unsafe { userlib::time::use_mtime(cfg.mtime_vaddr as usize) };
        }
        DATA.store(DATA_VADDR, Ordering::Relaxed);
        hal::init(DMA_VADDR, cfg.dma_paddr as usize, cfg.dma_bytes as usize, MMIO_VADDR, cfg.mmio_paddr as usize);
        let mut link = [0u8; 64];
        let dev = if cfg.nic_kind == nic_kind::AXI {
            // SAFETY: the root task mapped the DMA's page at MMIO_VADDR and the Ethernet's at
            // MMIO2_VADDR for us alone.
            match unsafe { AxiNic::new(MMIO_VADDR, MMIO2_VADDR, cfg.nic_axi_hz, clock::now_us) } {
                Ok(n) => {
                    let l = n.link;
                    let _ = write_str(
                        &mut link,
                        format_args!("AXI Ethernet (PHY {:#010x} at MDIO {}, {} Mb/s)", l.phy_id, l.phy_addr, l.mbps),
                    );
                    Nic::Axi(n)
                }
                Err(e) => {
                    println!(
                        "[net-server] AXI DMA at {:#x}, Ethernet at {:#x}: {}",
                        cfg.mmio_paddr, cfg.mmio2_paddr, e
                    );
                    fail("no NIC")
                }
            }
        } else {
            // SAFETY: the root task mapped our device's page at MMIO_VADDR for us alone.
            match unsafe { VirtioNic::new(MMIO_VADDR) } {
                Ok(n) => {
                    let _ = write_str(&mut link, format_args!("virtio-net"));
                    Nic::Virtio(n)
                }
                Err(e) => {
                    println!("[net-server] virtio-net at {:#x}: {}", cfg.mmio_paddr, e);
                    fail("no NIC")
                }
            }
        };
        // SAFETY: no task exists yet (see NicCell).
        unsafe { *NIC.0.get() = Some(dev) };
        let mac = nic().mac();
        let seed = clock::ticks();
        let ack_delay = (cfg.variant == variant::ASYNC).then_some(stack::ACK_DELAY);
        if stack::init(nic(), cfg.ip, cfg.prefix as u8, cfg.gateway, clock::now(), seed, ack_delay).is_err() {
            fail("DMA pool too small for the socket buffers");
        }
        println!(
            "[net-server] {} {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x} irq vector {}{}, {}.{}.{}.{}/{} via {}.{}.{}.{}, {} sockets",
            core::str::from_utf8(&link).unwrap_or("?").trim_end_matches('\0'),
            mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], cfg.irq_vector,
            if cfg.plic_ctx_vaddr != 0 { " (direct: PLIC U context)" } else { "" },
            cfg.ip[0], cfg.ip[1], cfg.ip[2], cfg.ip[3], cfg.prefix,
            cfg.gateway[0], cfg.gateway[1], cfg.gateway[2], cfg.gateway[3], netproto::SOCKETS
        );

        poller::setup(
            userlib::uintr::vector_bit(cfg.irq_vector as usize),
            [cfg.irq_slot as usize, cfg.irq2_slot as usize],
            cfg.plic_ctx_vaddr as usize,
        );
        if cfg.variant == variant::SYNC {
            serve_sync(cfg);
        }
        PARK.setup(cfg.ntfn_slot as usize, cfg.spin_cycles as usize);
        if !PARK.register(&NIC_EVENTS) || !PARK.register(&CLOCK) {
            fail("park hook full");
        }
        let Some(timers) = TIMERS.claim(&PARK, &CLOCK) else { fail("timers claimed twice") };
        let Some(rt) = EXEC.claim(&TIMERS) else { fail("executor claimed twice") };
        // SAFETY: the root task maps the channel (initialised by it) here, in both processes.
        let mem = match unsafe { ChanMem::new(CHAN_VADDR as *mut u8, CHAN_CAPACITY) } {
            Ok(m) => m,
            Err(_) => fail("bad channel"),
        };
        if SERVER.attach(mem, cfg.to_client as usize, &PARK).is_err() {
            fail("channel attach");
        }
        if rt.spawn(1, poller::run(Some(timers))).map(|h| h.detach()).is_err() {
            fail("poller task");
        }
        let why = rt.block_on(SERVER.serve_keeping(rt, 10, service::now_keeping, service::handle));
        println!(
            "[net-server] client channel ended: {:?} ({} replies, {} polls, {} on smoltcp's deadline, {} interrupts)",
            why,
            SERVER.replies.load(Ordering::Relaxed),
            poller::POLLS.load(Ordering::Relaxed),
            poller::TIMED.load(Ordering::Relaxed),
            poller::IRQS.load(Ordering::Relaxed)
        );
        // Keep the NIC going for nobody: nothing else to do.
        loop {
            rt.block_on(core::future::pending::<()>())
        }
    }

    /// The sync variant: the same poller and handlers, calls taken from the endpoint by the
    /// park hook (`sync_ipc`).
    fn serve_sync(cfg: &NetConfig) -> ! {
        sync_ipc::setup(cfg.endpoint_slot as usize, cfg.reply_slots as usize);
        let Some(rt) = EXEC.claim(&SYNC_PARK) else { fail("executor claimed twice") };
        if rt.spawn(1, poller::run(None)).map(|h| h.detach()).is_err() {
            fail("poller task");
        }
        println!("[net-server] sync variant: socket calls on endpoint slot {}", cfg.endpoint_slot);
        rt.block_on(sync_ipc::serve(rt, 10))
    }

    #[panic_handler]
    fn panic(p: &core::panic::PanicInfo) -> ! {
        println!("[net-server] panic: {}", p);
        loop {
            syscall::yield_now();
        }
    }
}
