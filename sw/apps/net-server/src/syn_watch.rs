//! The NIC as smoltcp sees it during one run of the stack, noting whether a TCP SYN came in:
//! smoltcp takes a socket out of Listen only for a SYN, so without one the server need not
//! look at its listening sockets after the run (`Stack::maintain`).
use crate::nic::{Nic, Rx, Tx};
use core::cell::Cell;
use smoltcp::phy::{self, Device, DeviceCapabilities};
use smoltcp::time::Instant;

pub struct SynWatch<'a> {
    nic: &'a Nic,
    syn: Cell<bool>,
}

impl<'a> SynWatch<'a> {
    pub fn new(nic: &'a Nic) -> SynWatch<'a> {
        SynWatch { nic, syn: Cell::new(false) }
    }

    /// A frame that may have been a SYN came in.
    pub fn syn_seen(&self) -> bool {
        self.syn.get()
    }
}

/// Could `frame` carry a TCP SYN? False only for what surely does not: a frame that is not
/// IPv4, an IPv4 packet that is not TCP, an unfragmented TCP segment without SYN. Everything
/// else (fragments, frames too short to tell) counts as one.
fn may_be_syn(frame: &[u8]) -> bool {
    const IP: usize = 14;
    if frame.len() < IP + 20 || frame[12..14] != [0x08, 0x00] {
        return false;
    }
    if frame[IP + 9] != 6 {
        return false;
    }
    let fragmented = u16::from_be_bytes([frame[IP + 6], frame[IP + 7]]) & 0x3fff != 0;
    let flags = IP + (frame[IP] & 0xf) as usize * 4 + 13;
    fragmented || frame.get(flags).is_none_or(|f| f & 0x02 != 0)
}

pub struct WatchRx<'a, 'b> {
    rx: Rx<'a>,
    syn: &'b Cell<bool>,
}

impl<'a> Device for SynWatch<'a> {
    type RxToken<'b>
        = WatchRx<'a, 'b>
    where
        Self: 'b;
    type TxToken<'b>
        = Tx<'a>
    where
        Self: 'b;

    fn receive(&mut self, now: Instant) -> Option<(WatchRx<'a, '_>, Tx<'a>)> {
        let mut nic = self.nic;
        let (rx, tx) = nic.receive(now)?;
        Some((WatchRx { rx, syn: &self.syn }, tx))
    }

    fn transmit(&mut self, now: Instant) -> Option<Tx<'a>> {
        let mut nic = self.nic;
        nic.transmit(now)
    }

    fn capabilities(&self) -> DeviceCapabilities {
        Device::capabilities(&self.nic)
    }
}

impl phy::RxToken for WatchRx<'_, '_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        let syn = self.syn;
        self.rx.consume(|frame| {
            if may_be_syn(frame) {
                syn.set(true);
            }
            f(frame)
        })
    }
}
