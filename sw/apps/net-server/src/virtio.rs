//! virtio-net (QEMU) over the MMIO transport (`virtio-drivers`' raw driver), with our own
//! packet buffers in the DMA pool, as a `nic::Driver`. Every receive
//! buffer is posted to the device at start and re-posted as soon as smoltcp has read its
//! frame; transmit buffers are taken from a free list and come back when the device reports
//! them used.
use crate::hal::{self, PoolHal};
use crate::local::Local;
use crate::nic::{Driver, NicStats, RxFrame, MTU};
use core::ptr::NonNull;
use virtio_drivers::device::net::VirtIONetRaw;
use virtio_drivers::transport::mmio::{MmioTransport, VirtIOHeader};
use virtio_drivers::transport::{DeviceType, Transport};

/// Descriptors per virtqueue (QEMU's virtio-net takes up to 256), and so buffers each way:
/// more receive buffers than connections, or a burst of requests (one per connection) waits in
/// QEMU for buffers (64 of them: 22 k requests/s at 32 connections fell to 10 k at 64 on QEMU).
pub const QUEUE: usize = 128;
/// One buffer: the virtio-net header and a whole Ethernet frame fit.
const BUF: usize = 2048;

type Raw = VirtIONetRaw<PoolHal, MmioTransport<'static>, QUEUE>;

#[derive(Debug)]
pub enum NicError {
    /// The page holds no virtio device, or not a network one.
    NotNet,
    /// The driver refused the device (feature negotiation, queue set-up).
    Driver(virtio_drivers::Error),
    /// The DMA pool is too small for the packet buffers.
    Pool,
}

impl core::fmt::Display for NicError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            NicError::NotNet => write!(f, "no virtio network device"),
            NicError::Driver(e) => write!(f, "the driver refused the device: {e}"),
            NicError::Pool => write!(f, "DMA pool too small for the packet buffers"),
        }
    }
}

struct Inner {
    raw: Raw,
    rx_va: usize,
    tx_va: usize,
    /// The receive buffer each in-flight token (descriptor head) stands for.
    rx_of_token: [u8; QUEUE],
    tx_of_token: [u8; QUEUE],
    tx_free: [u8; QUEUE],
    tx_free_n: usize,
    /// smoltcp asked for a transmit buffer and found none: finished transmits are work.
    tx_starved: bool,
    /// The received frame `rx_frame` took from the device and `rx_done` gives back:
    /// (token, buffer, header length, frame length).
    held: Option<(u16, usize, usize, usize)>,
    /// The virtio-net header's length in front of each transmit frame.
    tx_hdr: usize,
}

pub struct VirtioNic {
    inner: Local<Inner>,
    stats: Local<NicStats>,
    mac: [u8; 6],
}

fn buf(base: usize, i: usize) -> &'static mut [u8] {
    // SAFETY: buffer i of a region of QUEUE buffers taken from the DMA pool for this NIC only;
    // the caller holds it alone (posted buffers are not touched until the device returns them).
    unsafe { core::slice::from_raw_parts_mut((base + i * BUF) as *mut u8, BUF) }
}

impl VirtioNic {
    /// Bring up the virtio-net device whose register page is mapped at `mmio_va`.
    ///
    /// # Safety
    /// `mmio_va` must map a virtio-mmio device page this process alone drives, and `hal::init`
    /// must have set up the DMA pool.
    pub unsafe fn new(mmio_va: usize) -> Result<VirtioNic, NicError> {
        let header = NonNull::new(mmio_va as *mut VirtIOHeader).ok_or(NicError::NotNet)?;
        // SAFETY: the caller's promise.
        let transport = unsafe { MmioTransport::new(header, 4096) }.map_err(|_| NicError::NotNet)?;
        if transport.device_type() != DeviceType::Network {
            return Err(NicError::NotNet);
        }
        let mut raw = Raw::new(transport).map_err(NicError::Driver)?;
        let pages = QUEUE * BUF / virtio_drivers::PAGE_SIZE;
        let (_, rx) = hal::alloc(pages).ok_or(NicError::Pool)?;
        let (_, tx) = hal::alloc(pages).ok_or(NicError::Pool)?;
        let mut rx_of_token = [0u8; QUEUE];
        for i in 0..QUEUE {
            // SAFETY: buffer i is in the pool and posted once; we touch it again only after the
            // device hands it back (receive_complete).
            let t = unsafe { raw.receive_begin(buf(rx as usize, i)) }.map_err(NicError::Driver)?;
            rx_of_token[t as usize % QUEUE] = i as u8;
        }
        let mac = raw.mac_address();
        raw.enable_interrupts();
        let mut tx_free = [0u8; QUEUE];
        for (i, f) in tx_free.iter_mut().enumerate() {
            *f = i as u8;
        }
        let inner = Inner {
            raw,
            rx_va: rx as usize,
            tx_va: tx as usize,
            rx_of_token,
            tx_of_token: [0; QUEUE],
            tx_free,
            tx_free_n: QUEUE,
            tx_starved: false,
            held: None,
            tx_hdr: 0,
        };
        Ok(VirtioNic { inner: Local::new(inner), stats: Local::new(NicStats::default()), mac })
    }

    /// Post receive buffer `i` to the device again (untouched until the device returns it).
    fn repost(n: &mut Inner, i: usize) {
        // SAFETY: as at start-up: posted again, untouched until the device returns it.
        if let Ok(t) = unsafe { n.raw.receive_begin(buf(n.rx_va, i)) } {
            n.rx_of_token[t as usize % QUEUE] = i as u8;
        }
    }

    /// Take back the transmit buffers the device is done with.
    fn reclaim(n: &mut Inner) {
        while let Some(t) = n.raw.poll_transmit() {
            let i = n.tx_of_token[t as usize % QUEUE] as usize;
            // SAFETY: the token's buffer is the one we passed to transmit_begin for it (its
            // length does not matter to the driver, only its address).
            let _ = unsafe { n.raw.transmit_complete(t, buf(n.tx_va, i)) };
            n.tx_free[n.tx_free_n] = i as u8;
            n.tx_free_n += 1;
        }
    }
}

impl Driver for VirtioNic {
    fn mac(&self) -> [u8; 6] {
        self.mac
    }

    fn stats(&self) -> NicStats {
        self.stats.with(|s| *s)
    }

    fn rx_frame(&self) -> Option<RxFrame> {
        self.inner.with(|n| loop {
            if let Some((_, i, hdr, len)) = n.held {
                return Some(RxFrame { id: i, buf: (n.rx_va + i * BUF + hdr) as *const u8, len });
            }
            let t = n.raw.poll_receive()?;
            let i = n.rx_of_token[t as usize % QUEUE] as usize;
            // SAFETY: the buffer the device filled for this token.
            match unsafe { n.raw.receive_complete(t, buf(n.rx_va, i)) } {
                Ok((hdr, len)) if len <= MTU && hdr + len <= BUF => n.held = Some((t, i, hdr, len)),
                // A length the device should never report: dropped, the buffer posted again.
                _ => {
                    self.stats.with(|s| s.rx_dropped += 1);
                    Self::repost(n, i);
                }
            }
        })
    }

    fn rx_done(&self, id: usize) {
        self.inner.with(|n| {
            if n.held.is_some_and(|(_, i, _, _)| i == id) {
                n.held = None;
                self.stats.with(|s| s.rx_frames += 1);
                Self::repost(n, id);
            }
        });
    }

    fn tx_ready(&self) -> bool {
        self.inner.with(|n| {
            Self::reclaim(n);
            n.tx_starved = !(n.tx_free_n > 0 && n.raw.can_send());
            !n.tx_starved
        })
    }

    fn tx_buffer(&self, len: usize) -> Option<(usize, *mut u8)> {
        self.inner.with(|n| {
            Self::reclaim(n);
            if n.tx_free_n == 0 || len > MTU {
                return None;
            }
            let i = n.tx_free[n.tx_free_n - 1] as usize;
            let hdr = n.raw.fill_buffer_header(buf(n.tx_va, i)).ok()?;
            n.tx_free_n -= 1;
            n.tx_hdr = hdr;
            Some((i, (n.tx_va + i * BUF + hdr) as *mut u8))
        })
    }

    fn tx_send(&self, id: usize, len: usize) {
        self.inner.with(|n| {
            // SAFETY: buffer `id` is ours until the device reports this token used (reclaim).
            match unsafe { n.raw.transmit_begin(&buf(n.tx_va, id)[..n.tx_hdr + len]) } {
                Ok(t) => n.tx_of_token[t as usize % QUEUE] = id as u8,
                Err(_) => {
                    n.tx_free[n.tx_free_n] = id as u8;
                    n.tx_free_n += 1;
                }
            }
        });
        self.stats.with(|s| s.tx_frames += 1);
    }

    /// Reads the used rings in memory only: no register access, no kernel entry.
    fn has_work(&self) -> bool {
        self.inner.with(|n| {
            n.held.is_some() || n.raw.poll_receive().is_some() || (n.tx_starved && n.raw.poll_transmit().is_some())
        })
    }

    fn tx_starved(&self) -> bool {
        self.inner.with(|n| n.tx_starved)
    }

    /// A flag in the queues' memory (no register access, no kernel entry); whoever turns them
    /// on must look at the rings again after a SeqCst fence, for the frames that came before
    /// the device saw the flag.
    fn interrupts(&self, on: bool) {
        self.inner.with(|n| if on { n.raw.enable_interrupts() } else { n.raw.disable_interrupts() });
    }

    fn ack_interrupt(&self) {
        self.inner.with(|n| {
            n.raw.ack_interrupt();
        });
    }
}
