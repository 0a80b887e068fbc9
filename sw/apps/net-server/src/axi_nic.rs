//! The board's NIC (our SoC, on the RTL and the board): AXI DMA + AXI Ethernet, driven by
//! `sw/lib/axi-eth`, as a `nic::Driver`. A receive ring of `QUEUE` descriptors and a
//! transmit ring of `TX_QUEUE`, descriptors and 2 KiB buffers in the DMA pool (bus address =
//! physical: the DMA masters into the SoC's front bus). Every receive buffer is posted at start
//! and re-posted as soon as smoltcp has read its frame (the DMA's tail pointer moved every
//! `RX_BATCH` of them); transmits go out at the transmit ring's tail and are taken back in
//! batches once their descriptors complete.
//!
//! Memory ordering with the device: the front bus is coherent with the L1 caches on the board
//! and in the simulation (docs/board-axu15eg.md, "DMA path"), so no cache maintenance; register
//! writes are preceded by `fence w,o` (descriptors written before the tail pointer moves) and
//! register reads followed by `fence i,r`, as Linux's writel/readl do.
//!
//! Everything read back from a descriptor is checked (`axi_eth::desc`): a bad one is counted
//! and its frame dropped, a DMA error (the channel halts) resets the DMA and rebuilds the
//! rings; nothing the device says can make the driver panic or index out of bounds.
use crate::hal;
use crate::local::Local;
use crate::nic::{Driver, NicStats, RxFrame, MTU};
use axi_eth::desc::{self, CTRL_EOF, CTRL_SOF};
use axi_eth::dma::{Channel, Dma, DmaError};
use axi_eth::mac::{Link, Mac, MacError};
use axi_eth::regs::Regs;
use axi_eth::ring::Ring;

/// Receive descriptors (and buffers), as the virtio queues: room for a burst of frames.
pub const QUEUE: usize = 128;
/// Transmit descriptors (and buffers). Few: the wire takes a frame in ~1-12 us (64-1514 bytes at
/// 1 Gb/s), and the next frames reuse the same few buffers, whose lines and pages are still in
/// the data cache and the TLB (a ring of 128 writes each frame into a buffer last touched 127
/// frames before: cache misses on every line and a TLB miss). A full ring makes smoltcp wait for
/// a completion (`tx_starved`), as before.
pub const TX_QUEUE: usize = 16;
/// One buffer: a whole Ethernet frame (1518 with a VLAN tag) fits, so a frame never spans
/// descriptors. The stride is a line more than 2 KiB: at 2 KiB every frame's first lines fell
/// in the same few sets of the 4-way L1 data cache (64 sets of 64 bytes repeat every 4 KiB), so
/// received frames, the frames being sent and whatever else maps there evicted one another;
/// one line more a buffer spreads the starts of consecutive buffers over all the sets.
const BUF: usize = 2048 + 64;
/// Each frame starts this far into its buffer (receive and transmit): the 14-byte Ethernet
/// header then ends on a word boundary, so the IPv4 and TCP headers are 4-byte aligned and a
/// 20-byte-option-less segment's payload 8-byte aligned (offset 56), and smoltcp's copies of
/// it into and out of the socket buffers take memcpy's aligned path instead of the
/// shift-and-merge one (Linux's NET_IP_ALIGN). The DMA's realignment engine takes any address.
const PAD: usize = 2;
/// What a buffer holds after its padding.
const ROOM: usize = BUF - PAD;
/// Our unicast address: locally administered (bit 1 of the first byte), Xilinx's OUI after
/// it. The device tree has no `local-mac-address` (rocket-chip's DTS writer cannot emit byte
/// strings), and the board has no EEPROM for one.
pub const MAC_ADDR: [u8; 6] = [0x02, 0x0a, 0x35, 0x00, 0x00, 0x01];
/// Bound on the DMA reset (microseconds).
const RESET_US: u64 = 100_000;
/// Descriptor errors printed (then only counted).
const REPORT: u64 = 8;
/// Finished transmits are taken back once this many are posted (or when the ring is full):
/// each look at the oldest descriptor reads memory the DMA wrote (a cache miss), and a look that
/// finds it not done yet is wasted, so they are taken back in batches rather than per frame.
const RECLAIM_AT: usize = TX_QUEUE / 2;
/// Receive buffers given back are handed to the DMA (its tail pointer moved, a register write)
/// once this many are waiting: the DMA keeps at least QUEUE - RX_BATCH buffers meanwhile.
const RX_BATCH: usize = 8;

/// A device's register page, mapped uncached by the kernel.
#[derive(Clone, Copy)]
pub struct Mmio(usize);

impl Regs for Mmio {
    fn read(&self, off: usize) -> u32 {
        // SAFETY: a 32-bit register of the page the root task mapped for this driver alone.
        let v = unsafe { ((self.0 + off) as *const u32).read_volatile() };
        // SAFETY: an ordering instruction only.
        unsafe { core::arch::asm!("fence i,r", options(nostack)) };
        v
    }

    fn write(&self, off: usize, v: u32) {
        // SAFETY: as above; the fence puts our memory writes (descriptors, buffers) first.
        unsafe {
            core::arch::asm!("fence w,o", options(nostack));
            ((self.0 + off) as *mut u32).write_volatile(v)
        }
    }
}

#[derive(Debug)]
pub enum AxiError {
    Mac(MacError),
    Dma(DmaError),
    /// The DMA pool is too small for the rings.
    Pool,
}

impl core::fmt::Display for AxiError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            AxiError::Mac(e) => write!(f, "{e}"),
            AxiError::Dma(e) => write!(f, "{e}"),
            AxiError::Pool => write!(f, "DMA pool too small for the rings"),
        }
    }
}

struct Inner {
    dma: Dma<Mmio>,
    rx: Ring<QUEUE>,
    tx: Ring<TX_QUEUE>,
    /// The length each transmit descriptor was posted with, to check its completion.
    tx_len: [u16; TX_QUEUE],
    /// smoltcp asked for a transmit buffer and found none: finished transmits are work.
    tx_starved: bool,
    /// Receive descriptors posted again whose tail move is still to come (`repost`).
    rx_unmoved: usize,
    now_us: fn() -> u64,
}

pub struct AxiNic {
    inner: Local<Inner>,
    stats: Local<NicStats>,
    pub link: Link,
}

fn ring<const N: usize>() -> Result<Ring<N>, AxiError> {
    let bufs = (N * BUF).div_ceil(4096);
    let (dpa, dva) = hal::alloc(Ring::<N>::DESC_BYTES.div_ceil(4096)).ok_or(AxiError::Pool)?;
    let (bpa, bva) = hal::alloc(bufs).ok_or(AxiError::Pool)?;
    // SAFETY: fresh pool pages for this ring alone, for the life of the process; the pool's
    // physical addresses are the DMA's bus addresses.
    unsafe { Ring::new_padded(dva as usize, dpa as u64, bva as usize, bpa as u64, BUF, PAD) }
        .map_err(|_| AxiError::Pool)
}

impl AxiNic {
    /// Bring up the MAC and PHY (Ethernet registers at `eth_va`), then the DMA (registers at
    /// `dma_va`) on fresh rings. `axi_hz` is the register port's clock (MDIO divisor).
    ///
    /// # Safety
    /// `dma_va` and `eth_va` must map the AXI DMA's and the AXI Ethernet's first register page,
    /// for this driver alone, and `hal::init` must have set up the DMA pool.
    pub unsafe fn new(dma_va: usize, eth_va: usize, axi_hz: u64, now_us: fn() -> u64) -> Result<AxiNic, AxiError> {
        let eth = Mmio(eth_va);
        let link = Mac::new(&eth, now_us).bring_up(axi_hz, MAC_ADDR).map_err(AxiError::Mac)?;
        let mut inner = Inner {
            dma: Dma::new(Mmio(dma_va)),
            rx: ring()?,
            tx: ring()?,
            tx_len: [0; TX_QUEUE],
            tx_starved: false,
            rx_unmoved: 0,
            now_us,
        };
        start(&mut inner).map_err(AxiError::Dma)?;
        Ok(AxiNic { inner: Local::new(inner), stats: Local::new(NicStats::default()), link })
    }

    fn check(&self, n: &mut Inner) {
        if let Err(e) = n.dma.ack() {
            let resets = self.stats.with(|s| {
                s.dma_resets += 1;
                s.dma_resets
            });
            userlib::println!("[net-server] AXI DMA: {} (reset {}): frames in flight are lost", e, resets);
            let ioc = [Channel::Tx, Channel::Rx].map(|c| n.dma.completion_irqs_on(c));
            if let Err(e) = start(n) {
                userlib::println!("[net-server] AXI DMA restart failed: {}", e);
            }
            n.dma.completion_irqs(Channel::Tx, ioc[0]);
            n.dma.completion_irqs(Channel::Rx, ioc[1]);
        }
    }

    fn reclaim(&self, n: &mut Inner) {
        while let Some((i, status, _)) = n.tx.peek() {
            if let Err(e) = desc::check_tx(status, n.tx_len[i] as usize) {
                self.bad_desc("transmit", i, e);
            }
            n.tx.pop();
        }
    }

    fn bad_desc(&self, what: &str, i: usize, e: desc::DescError) {
        let k = self.stats.with(|s| {
            s.desc_errors += 1;
            s.desc_errors
        });
        if k <= REPORT {
            userlib::println!(
                "[net-server] AXI DMA {} descriptor {}: {}{}",
                what,
                i,
                e,
                if k == REPORT { " (no more reports)" } else { "" }
            );
        }
    }
}

/// Reset the DMA, post every receive buffer and start both channels (from the rings' current
/// positions, so a restart after an error reuses the same memory).
fn start(n: &mut Inner) -> Result<(), DmaError> {
    let now = n.now_us;
    let t0 = now();
    n.dma.reset(|| now().wrapping_sub(t0) > RESET_US)?;
    n.rx.clear();
    n.tx.clear();
    n.tx_starved = false;
    n.rx_unmoved = 0;
    let first = n.rx.next();
    while n.rx.post(ROOM, 0).is_some() {}
    n.dma.start(Channel::Rx, n.rx.desc_pa(first))?;
    n.dma.tail(Channel::Rx, n.rx.desc_pa(first + QUEUE - 1));
    n.dma.start(Channel::Tx, n.tx.desc_pa(n.tx.next()))
}

/// Give the receive descriptor just popped back to the DMA (it is the ring's tail again); the
/// tail pointer moves once RX_BATCH of them wait.
fn repost(n: &mut Inner) {
    if let Some(i) = n.rx.post(ROOM, 0) {
        n.rx_unmoved += 1;
        if n.rx_unmoved >= RX_BATCH {
            n.rx_unmoved = 0;
            n.dma.tail(Channel::Rx, n.rx.desc_pa(i));
        }
    }
}

impl Driver for AxiNic {
    fn mac(&self) -> [u8; 6] {
        MAC_ADDR
    }

    fn stats(&self) -> NicStats {
        self.stats.with(|s| *s)
    }

    fn rx_frame(&self) -> Option<RxFrame> {
        self.inner.with(|n| loop {
            let (i, status, app4) = n.rx.peek()?;
            match desc::check_rx_app4(status, app4, ROOM) {
                Ok(len) if len <= MTU => return Some(RxFrame { id: i, buf: n.rx.buf_ptr(i) as *const u8, len }),
                Ok(len) => self.bad_desc("receive", i, desc::DescError::RxLength { len, buf: MTU }),
                Err(e) => self.bad_desc("receive", i, e),
            }
            self.stats.with(|s| s.rx_dropped += 1);
            n.rx.pop();
            repost(n);
        })
    }

    fn rx_done(&self, id: usize) {
        self.stats.with(|s| s.rx_frames += 1);
        self.inner.with(|n| {
            // `rx_frame` peeked the oldest descriptor and nothing reaped since.
            if n.rx.pop() == Some(id) {
                repost(n);
            }
        });
    }

    fn tx_ready(&self) -> bool {
        self.inner.with(|n| {
            if n.tx.posted() >= RECLAIM_AT {
                self.reclaim(n);
            }
            n.tx_starved = n.tx.is_full();
            !n.tx_starved
        })
    }

    fn tx_buffer(&self, len: usize) -> Option<(usize, *mut u8)> {
        self.inner.with(|n| {
            if n.tx.is_full() {
                self.reclaim(n);
            }
            (!n.tx.is_full() && len <= MTU).then(|| (n.tx.next(), n.tx.buf_ptr(n.tx.next())))
        })
    }

    fn tx_send(&self, id: usize, len: usize) {
        self.inner.with(|n| {
            if n.tx.post(len, CTRL_SOF | CTRL_EOF) == Some(id) {
                n.tx_len[id] = len as u16;
                n.dma.tail(Channel::Tx, n.tx.desc_pa(id));
            }
        });
        self.stats.with(|s| s.tx_frames += 1);
    }

    /// Descriptor memory only: no register access, no kernel entry.
    fn has_work(&self) -> bool {
        self.inner.with(|n| n.rx.peek().is_some() || (n.tx_starved && n.tx.peek().is_some()))
    }

    fn tx_starved(&self) -> bool {
        self.inner.with(|n| n.tx_starved)
    }

    /// Completion interrupts on (about to sleep: errors found meanwhile are dealt with first,
    /// stale completions cleared) or off (running: the rings are read directly). Receive
    /// completions always wake us; transmit ones only when smoltcp waits for a free transmit
    /// buffer (otherwise every response sent just before a sleep would end it again).
    fn interrupts(&self, on: bool) {
        self.inner.with(|n| {
            if on {
                self.check(n);
            }
            n.dma.completion_irqs(Channel::Rx, on);
            n.dma.completion_irqs(Channel::Tx, on && n.tx_starved);
        });
    }

    /// Clear both channels' interrupt bits (and reset the DMA if it halted on an error).
    fn ack_interrupt(&self) {
        self.inner.with(|n| self.check(n));
    }
}
