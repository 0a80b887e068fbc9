//! The NIC the stack and the poller use: the device the root task found in the device tree
//! (`NetConfig::nic_kind`): virtio-net on QEMU (`virtio`), the AXI DMA + AXI Ethernet on our
//! SoC, in the RTL simulation and on the board (`axi_nic`). Both drive their rings behind
//! [`Driver`]; smoltcp sees them through the one adapter in `frames`.
use crate::axi_nic::AxiNic;
use crate::virtio::VirtioNic;

/// Largest Ethernet frame either driver sends or passes on (no VLAN tag, no FCS).
pub const MTU: usize = 1514;

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

/// A received frame, in the driver's buffer until [`Driver::rx_done`].
#[derive(Clone, Copy)]
pub struct RxFrame {
    pub id: usize,
    pub buf: *const u8,
    pub len: usize,
}

/// What a NIC driver gives the stack: received frames read in place and handed back, transmit
/// buffers filled in place and sent, and its rings' state read in memory (no register access,
/// no kernel entry) so the poller can tell whether there is work.
pub trait Driver {
    fn mac(&self) -> [u8; 6];
    fn stats(&self) -> NicStats;
    /// The oldest received frame (checked: the driver drops and counts bad ones), the same one
    /// until `rx_done`.
    fn rx_frame(&self) -> Option<RxFrame>;
    /// Frame `id` is read: its buffer goes back to the device.
    fn rx_done(&self, id: usize);
    /// Room to send a frame (finished transmits are taken back first)? A no is remembered
    /// (`tx_starved`) until a transmit finishes.
    fn tx_ready(&self) -> bool;
    /// A buffer for a frame of `len` bytes (at most MTU): (id, buffer).
    fn tx_buffer(&self, len: usize) -> Option<(usize, *mut u8)>;
    /// Send the frame of `len` bytes built in buffer `id`.
    fn tx_send(&self, id: usize, len: usize);
    /// Frames received and not collected, or a finished transmit smoltcp waits for.
    fn has_work(&self) -> bool;
    fn tx_starved(&self) -> bool;
    /// Let the device interrupt us (about to sleep) or not (running). The caller looks at the
    /// rings again after turning them on (park hook: fence, then `has_work`).
    fn interrupts(&self, on: bool);
    /// Quiet the device after its interrupt came, so it can raise the next.
    fn ack_interrupt(&self);
}

// One NIC per process, in a static: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Nic {
    Virtio(VirtioNic),
    Axi(AxiNic),
}

impl Nic {
    pub fn driver(&self) -> &dyn Driver {
        match self {
            Nic::Virtio(v) => v,
            Nic::Axi(a) => a,
        }
    }
}
