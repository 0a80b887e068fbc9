//! The NIC the stack and the poller use: the device the root task found in the device tree
//! (`NetConfig::nic_kind`): virtio-net on QEMU (`virtio`), the AXI DMA + AXI Ethernet on our
//! SoC, in the RTL simulation and on the board (`axi_nic`). Each is a smoltcp `Device` of its
//! own; this enum forwards to whichever is there, so smoltcp and the poller see one.
use crate::axi_nic::{self, AxiNic};
use crate::virtio::{self, VirtioNic};
use smoltcp::phy::{self, Device, DeviceCapabilities};
use smoltcp::time::Instant;

/// Counters the STATS request and the exit report give.
#[derive(Clone, Copy, Default)]
pub struct NicStats {
    pub rx_frames: u64,
    pub rx_dropped: u64,
    pub tx_frames: u64,
    /// Descriptors the device completed with an error or a length we refused (AXI DMA).
    pub desc_errors: u64,
    /// DMA resets after a channel halted on an error (AXI DMA).
    pub dma_resets: u64,
}

// One NIC per process, in a static: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Nic {
    Virtio(VirtioNic),
    Axi(AxiNic),
}

impl Nic {
    pub fn mac(&self) -> [u8; 6] {
        match self {
            Nic::Virtio(v) => v.mac(),
            Nic::Axi(a) => a.mac(),
        }
    }

    pub fn stats(&self) -> NicStats {
        match self {
            Nic::Virtio(v) => v.stats.with(|s| *s),
            Nic::Axi(a) => a.stats.with(|s| *s),
        }
    }

    /// Frames received and not collected, or a finished transmit smoltcp waits for; reads
    /// descriptor memory only (no register access, no kernel entry).
    pub fn has_work(&self) -> bool {
        match self {
            Nic::Virtio(v) => v.has_work(),
            Nic::Axi(a) => a.has_work(),
        }
    }

    pub fn tx_starved(&self) -> bool {
        match self {
            Nic::Virtio(v) => v.tx_starved(),
            Nic::Axi(a) => a.tx_starved(),
        }
    }

    /// Let the device interrupt us (about to sleep) or not (running). The caller looks at the
    /// rings again after turning them on (park hook: fence, then `has_work`).
    pub fn interrupts(&self, on: bool) {
        match self {
            Nic::Virtio(v) => v.interrupts(on),
            Nic::Axi(a) => a.interrupts(on),
        }
    }

    /// Quiet the device after its interrupt came, so it can raise the next.
    pub fn ack_interrupt(&self) {
        match self {
            Nic::Virtio(v) => v.ack_interrupt(),
            Nic::Axi(a) => a.ack_interrupt(),
        }
    }
}

pub enum Rx<'a> {
    Virtio(virtio::Rx<'a>),
    Axi(axi_nic::Rx<'a>),
}

pub enum Tx<'a> {
    Virtio(virtio::Tx<'a>),
    Axi(axi_nic::Tx<'a>),
}

impl<'a> Device for &'a Nic {
    type RxToken<'b>
        = Rx<'a>
    where
        Self: 'b;
    type TxToken<'b>
        = Tx<'a>
    where
        Self: 'b;

    fn receive(&mut self, now: Instant) -> Option<(Rx<'a>, Tx<'a>)> {
        let nic: &'a Nic = self;
        match nic {
            Nic::Virtio(v) => {
                let mut d: &'a VirtioNic = v;
                d.receive(now).map(|(r, t)| (Rx::Virtio(r), Tx::Virtio(t)))
            }
            Nic::Axi(a) => {
                let mut d: &'a AxiNic = a;
                d.receive(now).map(|(r, t)| (Rx::Axi(r), Tx::Axi(t)))
            }
        }
    }

    fn transmit(&mut self, now: Instant) -> Option<Tx<'a>> {
        let nic: &'a Nic = self;
        match nic {
            Nic::Virtio(v) => {
                let mut d: &'a VirtioNic = v;
                d.transmit(now).map(Tx::Virtio)
            }
            Nic::Axi(a) => {
                let mut d: &'a AxiNic = a;
                d.transmit(now).map(Tx::Axi)
            }
        }
    }

    fn capabilities(&self) -> DeviceCapabilities {
        match self {
            Nic::Virtio(v) => Device::capabilities(&v),
            Nic::Axi(a) => Device::capabilities(&a),
        }
    }
}

impl phy::RxToken for Rx<'_> {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        match self {
            Rx::Virtio(r) => r.consume(f),
            Rx::Axi(r) => r.consume(f),
        }
    }
}

impl phy::TxToken for Tx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        match self {
            Tx::Virtio(t) => t.consume(len, f),
            Tx::Axi(t) => t.consume(len, f),
        }
    }
}
