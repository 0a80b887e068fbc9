//! virtio-net (QEMU) over the MMIO transport (`virtio-drivers`' raw driver), with our own
//! packet buffers in the DMA pool, as a smoltcp `Device` (through `nic::Nic`). Every receive
//! buffer is posted to the device at start and re-posted as soon as smoltcp has read its
//! frame; transmit buffers are taken from a free list and come back when the device reports
//! them used.
use crate::hal::{self, PoolHal};
use crate::local::Local;
use crate::nic::NicStats;
use core::ptr::NonNull;
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::time::Instant;
use virtio_drivers::device::net::VirtIONetRaw;
use virtio_drivers::transport::mmio::{MmioTransport, VirtIOHeader};
use virtio_drivers::transport::{DeviceType, Transport};

/// Descriptors per virtqueue (QEMU's virtio-net takes up to 256), and so buffers each way:
/// more receive buffers than connections, or a burst of requests (one per connection) waits in
/// QEMU for buffers (64 of them: 22 k requests/s at 32 connections fell to 10 k at 64 on QEMU).
pub const QUEUE: usize = 128;
/// One buffer: the virtio-net header and a whole Ethernet frame fit.
const BUF: usize = 2048;
/// Largest Ethernet frame we send or accept (no VLAN tag), header included.
pub const MTU: usize = 1514;

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
}

pub struct VirtioNic {
    inner: Local<Inner>,
    pub stats: Local<NicStats>,
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
        };
        Ok(VirtioNic { inner: Local::new(inner), stats: Local::new(NicStats::default()), mac })
    }

    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }

    /// Has the device received a frame we have not collected, or finished a transmit while
    /// smoltcp waits for a buffer? Reads the used rings in memory only: no register access, no
    /// kernel entry.
    pub fn has_work(&self) -> bool {
        self.inner.with(|n| n.raw.poll_receive().is_some() || (n.tx_starved && n.raw.poll_transmit().is_some()))
    }

    /// smoltcp found no transmit buffer at its last try (until the device returns one).
    pub fn tx_starved(&self) -> bool {
        self.inner.with(|n| n.tx_starved)
    }

    /// Let the device interrupt us (we are about to sleep) or not (we are running and read its
    /// rings anyway: `has_work`). A flag in the queues' memory (no register access, no kernel
    /// entry); whoever turns them on must look at the rings again after a SeqCst fence, for
    /// the frames that came before the device saw the flag.
    pub fn interrupts(&self, on: bool) {
        self.inner.with(|n| if on { n.raw.enable_interrupts() } else { n.raw.disable_interrupts() });
    }

    /// Acknowledge the device's interrupt (after its vector arrived), so it can raise the next.
    pub fn ack_interrupt(&self) {
        self.inner.with(|n| {
            n.raw.ack_interrupt();
        });
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

pub struct Rx<'a> {
    nic: &'a VirtioNic,
    token: u16,
    index: usize,
}

pub struct Tx<'a> {
    nic: &'a VirtioNic,
}

impl<'a> Device for &'a VirtioNic {
    type RxToken<'b>
        = Rx<'a>
    where
        Self: 'b;
    type TxToken<'b>
        = Tx<'a>
    where
        Self: 'b;

    fn receive(&mut self, _now: Instant) -> Option<(Rx<'a>, Tx<'a>)> {
        let nic: &'a VirtioNic = self;
        let (token, index) = nic.inner.with(|n| {
            let t = n.raw.poll_receive()?;
            Some((t, n.rx_of_token[t as usize % QUEUE] as usize))
        })?;
        Some((Rx { nic, token, index }, Tx { nic }))
    }

    fn transmit(&mut self, _now: Instant) -> Option<Tx<'a>> {
        let nic: &'a VirtioNic = self;
        let ok = nic.inner.with(|n| {
            VirtioNic::reclaim(n);
            n.tx_starved = !(n.tx_free_n > 0 && n.raw.can_send());
            !n.tx_starved
        });
        ok.then_some(Tx { nic })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = MTU;
        caps.max_burst_size = Some(QUEUE / 2);
        caps
    }
}

impl phy::RxToken for Rx<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        let (va, frame) = self.nic.inner.with(|n| {
            let b = buf(n.rx_va, self.index);
            // SAFETY: the buffer the device filled for this token.
            let r = unsafe { n.raw.receive_complete(self.token, b) };
            (n.rx_va, r.ok())
        });
        let b = buf(va, self.index);
        let r = match frame {
            Some((hdr, len)) if len <= MTU && hdr + len <= BUF => {
                self.nic.stats.with(|s| s.rx_frames += 1);
                f(&b[hdr..hdr + len])
            }
            // A length the device should never report: pass smoltcp an empty frame (dropped).
            _ => {
                self.nic.stats.with(|s| s.rx_dropped += 1);
                f(&[])
            }
        };
        // No borrow of the NIC is held while smoltcp runs `f` (it may transmit through the Tx
        // token meanwhile); now the buffer goes back to the device.
        self.nic.inner.with(|n| {
            // SAFETY: as at start-up: posted again, untouched until the device returns it.
            if let Ok(t) = unsafe { n.raw.receive_begin(buf(n.rx_va, self.index)) } {
                n.rx_of_token[t as usize % QUEUE] = self.index as u8;
            }
        });
        r
    }
}

impl phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let got = self.nic.inner.with(|n| {
            VirtioNic::reclaim(n);
            if n.tx_free_n == 0 || len > MTU {
                return None;
            }
            n.tx_free_n -= 1;
            let i = n.tx_free[n.tx_free_n] as usize;
            let hdr = n.raw.fill_buffer_header(buf(n.tx_va, i)).ok()?;
            Some((i, hdr, n.tx_va))
        });
        let Some((i, hdr, va)) = got else {
            // No buffer (smoltcp checked `transmit` first, so only a frame over the MTU gets
            // here): build it in a scratch buffer and drop it.
            let mut scratch = [0u8; BUF];
            return f(&mut scratch[..len.min(BUF)]);
        };
        let b = buf(va, i);
        let r = f(&mut b[hdr..hdr + len]);
        self.nic.inner.with(|n| {
            // SAFETY: buffer i is ours until the device reports this token used (reclaim).
            match unsafe { n.raw.transmit_begin(&buf(n.tx_va, i)[..hdr + len]) } {
                Ok(t) => n.tx_of_token[t as usize % QUEUE] = i as u8,
                Err(_) => {
                    n.tx_free[n.tx_free_n] = i as u8;
                    n.tx_free_n += 1;
                }
            }
        });
        self.nic.stats.with(|s| s.tx_frames += 1);
        r
    }
}
