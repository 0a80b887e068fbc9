//! smoltcp's view of the NIC during one run of the stack: the one `Device` over any
//! [`Driver`], frames read and built in the drivers' DMA buffers (no copy here). It also notes
//! whether a TCP SYN came in: smoltcp takes a socket out of Listen only for one, so without
//! one the server need not look at its listening sockets after the run (`Stack::maintain`).
//!
//! Checksums: smoltcp is told the device does IPv4's and TCP's (its capabilities), and this
//! adapter does them (`netproto::inet`, over 64-bit words): a received frame whose IPv4 header
//! or TCP segment does not sum right is dropped before smoltcp sees it, and every frame smoltcp
//! builds gets both filled in before it goes out. ICMP's stay smoltcp's.
use crate::nic::{Driver, RxFrame, MTU};
use core::cell::Cell;
use smoltcp::phy::{self, Checksum, Device, DeviceCapabilities, Medium};
use smoltcp::time::Instant;

/// Frames each way smoltcp may handle in one burst (half a ring: 128 descriptors each way).
const BURST: usize = 64;

pub struct Frames<'a> {
    driver: &'a dyn Driver,
    syn: Cell<bool>,
}

impl<'a> Frames<'a> {
    pub fn new(driver: &'a dyn Driver) -> Frames<'a> {
        Frames { driver, syn: Cell::new(false) }
    }

    /// A frame that may have been a SYN came in since the last call.
    pub fn take_syn(&self) -> bool {
        self.syn.replace(false)
    }
}

/// Could `frame` carry a TCP SYN? False only for what surely does not: a frame that is not
/// IPv4, an IPv4 packet that is not TCP, an unfragmented TCP segment without SYN. Everything
/// else (fragments, frames too short to tell) counts as one.
fn may_be_syn(frame: &[u8]) -> bool {
    const IP: usize = 14;
    if frame.len() < IP + 20 || frame[12..14] != [0x08, 0x00] || frame[IP + 9] != 6 {
        return false;
    }
    let fragmented = u16::from_be_bytes([frame[IP + 6], frame[IP + 7]]) & 0x3fff != 0;
    let flags = IP + (frame[IP] & 0xf) as usize * 4 + 13;
    fragmented || frame.get(flags).is_none_or(|f| f & 0x02 != 0)
}

pub struct Rx<'a, 'b> {
    driver: &'a dyn Driver,
    /// The frame `receive` peeked: still the driver's oldest when the token is consumed
    /// (smoltcp consumes it at once, and nothing else takes frames meanwhile).
    frame: RxFrame,
    syn: &'b Cell<bool>,
}

pub struct Tx<'a> {
    driver: &'a dyn Driver,
}

impl<'a> Device for Frames<'a> {
    type RxToken<'b>
        = Rx<'a, 'b>
    where
        Self: 'b;
    type TxToken<'b>
        = Tx<'a>
    where
        Self: 'b;

    fn receive(&mut self, _now: Instant) -> Option<(Rx<'a, '_>, Tx<'a>)> {
        // Peeked only: the frame is taken in `consume` (a token dropped unused leaves it).
        let frame = self.driver.rx_frame()?;
        Some((Rx { driver: self.driver, frame, syn: &self.syn }, Tx { driver: self.driver }))
    }

    fn transmit(&mut self, _now: Instant) -> Option<Tx<'a>> {
        self.driver.tx_ready().then_some(Tx { driver: self.driver })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ethernet;
        caps.max_transmission_unit = MTU;
        caps.max_burst_size = Some(BURST);
        // Ours (above), not smoltcp's.
        caps.checksum.ipv4 = Checksum::None;
        caps.checksum.tcp = Checksum::None;
        caps
    }
}

impl phy::RxToken for Rx<'_, '_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        let frame = self.frame;
        // SAFETY: the driver's buffer of a received frame, not given back to the device until
        // `rx_done`; its length checked by the driver. No borrow of the driver is held while
        // smoltcp runs `f` (it may transmit meanwhile).
        let bytes = unsafe { core::slice::from_raw_parts(frame.buf, frame.len) };
        if may_be_syn(bytes) {
            self.syn.set(true);
        }
        // A bad checksum: smoltcp is shown nothing (an empty frame, which it drops).
        let r = if netproto::inet::frame_ok(bytes) { f(bytes) } else { f(&[]) };
        self.driver.rx_done(frame.id);
        r
    }
}

impl phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let Some((id, buf)) = (len <= MTU).then(|| self.driver.tx_buffer(len)).flatten() else {
            // No buffer (smoltcp checked `transmit` first, so only a frame over the MTU gets
            // here): build it in a scratch buffer and drop it.
            let mut scratch = [0u8; 2048];
            return f(&mut scratch[..len.min(2048)]);
        };
        // SAFETY: a transmit buffer the driver lent us (not posted), at least `len` bytes.
        let frame = unsafe { core::slice::from_raw_parts_mut(buf, len) };
        let r = f(frame);
        netproto::inet::fill(frame);
        self.driver.tx_send(id, len);
        r
    }
}
