//! What the network processes agree on: the socket protocol the network stack server
//! (`sw/apps/net-server`) serves over an async IPC channel (`userlib::chan`), the shared data
//! area its payloads travel through, and the configuration pages the root task writes for each
//! process before it runs.
//!
//! Payload bytes never go through a ring item or the kernel: each socket has a receive and a
//! send buffer of [`BUF_BYTES`] in the data area, a region of frames mapped into both
//! processes. A RECV reply says how many bytes the server put in the socket's receive buffer; a
//! SEND request says how many bytes of the socket's send buffer to take. The server checks
//! every socket number, length and owner it is sent; it only ever reads the area as bytes.
#![cfg_attr(not(test), no_std)]

pub mod inet;

/// Sockets the server has (connections plus the listening ones); also the number of buffer
/// pairs in the data area and of the sync variant's threads. Build setting NET_SOCKETS (4..=240,
/// the sync variant's reply caps must fit the net server's CNode (app.toml);
/// default 136: the QEMU bench's 128 connections and room). The images for the RTL are built
/// with fewer (the Makefile's NET_RTL_SOCKETS): every socket costs memory the root task loads
/// and maps page by page, and a thread in the sync variant, which at the RTL's tens of kHz is
/// minutes of boot; the RTL bench needs 16 connections.
pub const SOCKETS: usize = match option_env!("NET_SOCKETS") {
    Some(s) => sockets_setting(s),
    None => 136,
};

/// NET_SOCKETS as a number; a bad value fails the build.
const fn sockets_setting(s: &str) -> usize {
    let b = s.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        assert!(b[i].is_ascii_digit(), "NET_SOCKETS is not a number");
        n = n * 10 + (b[i] - b'0') as usize;
        i += 1;
    }
    assert!(n >= 4 && n <= 240, "NET_SOCKETS out of 4..=240");
    n
}
/// Each socket's receive and send buffer in the data area.
pub const BUF_BYTES: usize = 1024;
/// Bytes of the data area.
pub const DATA_BYTES: usize = SOCKETS * 2 * BUF_BYTES;
/// Listening sockets of one port at most. smoltcp has no SYN queue: a socket in Listen takes
/// one connection, and a SYN that finds none is reset; the net server tops a listener's
/// backlog up from the free sockets after every frame that may be a SYN, so a burst of
/// connections is taken whatever the backlog, as long as sockets are free.
pub const MAX_BACKLOG: usize = SOCKETS;
/// The backlog the TCP server listens with: one, since every socket in Listen is one more for
/// smoltcp to pass over in each of its runs, and a burst needs no more (above).
pub const TCP_BACKLOG: usize = 1;

/// Requests (client -> server); the reply's label is [`OK`] or an error code.
pub mod label {
    /// [port, backlog] -> [listener]: listen on `port` with `backlog` sockets (1..=MAX_BACKLOG)
    /// waiting for connections.
    pub const LISTEN: u32 = 1;
    /// [listener] -> [socket, remote IPv4 (big-endian in the low 32 bits), remote port]: the
    /// next established connection (waits for one).
    pub const ACCEPT: u32 = 2;
    /// [socket, offset, max] -> [n]: waits until the socket has data, puts 1..=max bytes at
    /// `offset` of its receive buffer (offset + max <= BUF_BYTES); n = 0 means the peer closed
    /// its side (end of stream).
    pub const RECV: u32 = 3;
    /// [socket, offset, n] -> [taken]: takes 1..=n bytes from `offset` of the socket's send
    /// buffer (offset + n <= BUF_BYTES), waiting for room in the connection's window.
    pub const SEND: u32 = 4;
    /// [socket] -> []: close our side (the peer sees end of stream); the socket is freed once
    /// the connection is over.
    pub const CLOSE: u32 = 5;
    /// [] -> [connections accepted, frames received, frames dropped as malformed, frames sent,
    /// sockets in use]: counters for tests and benchmarks.
    pub const STATS: u32 = 6;
    /// [socket, send offset, n, receive offset, max] -> [received]: a SEND of all `n` bytes
    /// (waiting for room as often as needed), then a RECV, in one request: a request/response
    /// server's response and its wait for the next request (received = 0: end of stream).
    /// Both ranges are checked as SEND's and RECV's are.
    pub const SENDRECV: u32 = 7;
}

/// Reply labels.
pub const OK: u32 = 0;
pub mod error {
    /// Not a socket (or listener) of this client, or not in a state for the request.
    pub const BAD_SOCKET: u32 = 1;
    /// A length, port or backlog out of range.
    pub const BAD_ARGUMENT: u32 = 2;
    /// No free socket (LISTEN), or the port is already listened on.
    pub const NO_SOCKET: u32 = 3;
    /// The connection was reset or ended before the request could be done.
    pub const RESET: u32 = 4;
    /// Unknown request label.
    pub const BAD_LABEL: u32 = 5;
}

/// Offset of socket `sock`'s receive buffer in the data area.
pub const fn rx_offset(sock: usize) -> usize {
    sock * 2 * BUF_BYTES
}

/// Offset of socket `sock`'s send buffer in the data area.
pub const fn tx_offset(sock: usize) -> usize {
    sock * 2 * BUF_BYTES + BUF_BYTES
}

/// A page of words the root task fills in and maps read-only at [`CONFIG_VADDR`] of a process
/// before it lets it run. Every field is checked by its reader.
pub const CONFIG_VADDR: usize = 0x20_0000_0000;
/// Where the root task maps the channel and the data area in both processes, and the
/// net server's DMA pool and device page.
pub const CHAN_VADDR: usize = 0x20_0020_0000;
pub const DATA_VADDR: usize = 0x20_0040_0000;
pub const DMA_VADDR: usize = 0x20_0100_0000;
pub const MMIO_VADDR: usize = 0x20_0200_0000;
/// The AXI NIC's second register page (the Ethernet's; the DMA's is at MMIO_VADDR), and the
/// PLIC U-context page of the net server's hart when its NIC interrupts come directly.
pub const MMIO2_VADDR: usize = MMIO_VADDR + 0x1000;
pub const PLIC_CTX_VADDR: usize = MMIO_VADDR + 0x2000;
/// The CLINT's mtime page (read-only, `BootInfo::timer_frame`): the net server's clock.
pub const TIMER_VADDR: usize = MMIO_VADDR + 0x3000;

/// `NetConfig::nic_kind`: which NIC the root task found in the device tree.
pub mod nic_kind {
    /// virtio-net over virtio-mmio (QEMU): its page at MMIO_VADDR, one IRQ.
    pub const VIRTIO: u64 = 0;
    /// AXI DMA (page at MMIO_VADDR, IRQs: transmit in `irq_slot`, receive in `irq2_slot`) and
    /// AXI Ethernet (page at MMIO2_VADDR): our SoC, in the RTL simulation and on the board.
    pub const AXI: u64 = 1;
}

/// `NetConfig::magic`: "NETCONF1".
pub const NET_MAGIC: u64 = 0x3146_4e4f_4354_454e;
/// `TcpConfig::magic`: "TCPCONF1".
pub const TCP_MAGIC: u64 = 0x3146_4e4f_4350_4354;

/// Ring capacity of the socket channel: room for two calls per connection task (a SEND and
/// the next RECV in flight together) and the acceptor's, a power of two (512 at 136 sockets).
/// It also sizes the net server's executor (a task per call in flight).
pub const CHAN_CAPACITY: usize = (2 * SOCKETS + 8).next_power_of_two();

/// How the TCP server reaches the net server (`NetConfig::variant`, `TcpConfig::variant`).
pub mod variant {
    /// Async IPC: the channel's rings, one thread of coroutines on each side.
    pub const ASYNC: u64 = 0;
    /// Sync IPC (seL4 Call/ReplyRecv on an endpoint): a TCP server thread per connection, each
    /// blocked in its Call; the NIC's interrupt reaches the net server through a kernel
    /// notification bound to its thread.
    pub const SYNC: u64 = 1;
}

/// Sync variant: calls the net server can hold at once (each parks the caller's reply cap in
/// a slot of its CNode until the answer is ready): one per TCP server thread, with room.
pub const SYNC_PENDING: usize = SOCKETS + 8;
/// Sync variant: TCP server threads, one per connection the net server can have.
pub const SYNC_THREADS: usize = SOCKETS;
/// Sync variant: the badge of the TCP server's endpoint cap, which tells its calls from the
/// notification word (the NIC's interrupt, bit 0) when the net server's Recv returns.
pub const SYNC_CALL_BADGE: u64 = 1 << 16;
/// Sync variant: where the root task puts each TCP server thread's stack and IPC buffer.
pub const THREAD_STACKS_VADDR: usize = 0x20_1000_0000;
pub const THREAD_STACK_PAGES: usize = 2;
/// One thread's stack pages plus an unmapped guard page.
pub const THREAD_STRIDE: usize = (THREAD_STACK_PAGES + 1) * 4096;
pub const THREAD_IPC_VADDR: usize = 0x20_1800_0000;

/// What the root task tells the network stack server.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct NetConfig {
    pub magic: u64,
    /// Timer ticks per second (`rdtime`).
    pub timebase_hz: u64,
    /// IPv4 address, prefix length and default gateway (QEMU user networking: 10.0.2.15/24 via
    /// 10.0.2.2).
    pub ip: [u8; 4],
    pub prefix: u64,
    pub gateway: [u8; 4],
    /// The virtio-mmio device page (physical, and mapped at MMIO_VADDR).
    pub mmio_paddr: u64,
    /// DMA pool: `dma_bytes` of physically contiguous frames, mapped at DMA_VADDR.
    pub dma_paddr: u64,
    pub dma_bytes: u64,
    /// Slots of this process's CNode: its U-notification (bound to it, a receiver) and the
    /// NIC's IRQHandler, routed to that notification with vector `irq_vector`.
    pub ntfn_slot: u64,
    pub irq_slot: u64,
    pub irq_vector: u64,
    /// Our sender-table entry for the client's U-notification.
    pub to_client: u64,
    /// Cycles to poll the rings before sleeping (0: the peer shares our hart).
    pub spin_cycles: u64,
    /// [`variant`]: ASYNC (the channel) or SYNC (the endpoint below; the thread's notification
    /// is then a plain one bound to it, which the NIC's IRQHandler signals).
    pub variant: u64,
    /// Sync: the endpoint the TCP server's threads Call, and the first of SYNC_PENDING empty
    /// slots for saved reply caps.
    pub endpoint_slot: u64,
    pub reply_slots: u64,
    /// [`nic_kind`]. AXI: `mmio_paddr` is the DMA's page, `mmio2_paddr` the Ethernet's.
    pub nic_kind: u64,
    pub mmio2_paddr: u64,
    /// A second IRQHandler routed like `irq_slot` (AXI: the DMA's receive interrupt); 0: none.
    pub irq2_slot: u64,
    /// Non-zero when the kernel routed the NIC's interrupts directly to our hart's PLIC U
    /// context (IRQSetUIntr said Direct): that page is mapped here, and we claim and complete
    /// them ourselves (no IRQHandler Ack, no kernel entry).
    pub plic_ctx_vaddr: u64,
    /// Clock of the NIC's register port in Hz (the AXI Ethernet's MDIO divisor).
    pub nic_axi_hz: u64,
    /// Where the timebase counter (`mtime`) can be read with a load (TIMER_VADDR plus its
    /// offset in the page); 0: `rdtime`.
    pub mtime_vaddr: u64,
}

/// What the root task tells a TCP server.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpConfig {
    pub magic: u64,
    pub port: u64,
    /// Fixed request (and response) size, 1..=BUF_BYTES.
    pub request_bytes: u64,
    /// Rounds of work per request (a checksum over the request, repeated).
    pub work: u64,
    /// Its U-notification (bound, a receiver) and its sender entry for the net server's.
    pub ntfn_slot: u64,
    pub to_server: u64,
    pub spin_cycles: u64,
    /// The TCP server's hart index, for its banner.
    pub hart: u64,
    /// [`variant`]: ASYNC or SYNC (then `threads` more threads, started with a0 = their
    /// number 1..=threads, each its own stack and IPC buffer, Call `endpoint_slot`).
    pub variant: u64,
    pub endpoint_slot: u64,
    pub threads: u64,
    /// Where the CLINT's mtime is mapped read-only (within the page at `TIMER_VADDR`), 0 if
    /// not: the run report's elapsed time (its cycle counter does not count a hart's cycles
    /// asleep in WFI).
    pub mtime_vaddr: u64,
    /// Core clock cycles per timer tick (the report's elapsed time in cycles).
    pub cycles_per_tick: u64,
}

/// The response to a request: every byte plus one (wrapping), so a client can check each reply
/// belongs to its request.
pub fn respond(req: &[u8], out: &mut [u8]) {
    let n = req.len().min(out.len());
    let (req, out) = (&req[..n], &mut out[..n]);
    // Eight bytes at a time where both sides are aligned alike (the TCP server's buffers are),
    // a byte at a time around that: the TCP server answers every request with this.
    // SAFETY: every bit pattern is a valid u64 and a valid u8, so viewing either as the other
    // is sound; align_to only splits the slices.
    let ((rh, rw, rt), (oh, ow, ot)) = unsafe { (req.align_to::<u64>(), out.align_to_mut::<u64>()) };
    if rh.len() != oh.len() {
        return respond_bytes(req, out);
    }
    respond_bytes(rh, oh);
    for (o, &w) in ow.iter_mut().zip(rw) {
        *o = plus_one_each(w);
    }
    respond_bytes(rt, ot);
}

fn respond_bytes(req: &[u8], out: &mut [u8]) {
    for (o, b) in out.iter_mut().zip(req) {
        *o = b.wrapping_add(1);
    }
}

/// Each byte of `w` plus one (wrapping), no carry from one byte into the next: the low seven
/// bits of each byte plus one fit in the byte, and the top bit is put back with xor.
fn plus_one_each(w: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const ONES: u64 = 0x0101_0101_0101_0101;
    ((w & LOW7) + ONES) ^ (w & !LOW7)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_tile_the_area() {
        assert_eq!(rx_offset(0), 0);
        assert_eq!(tx_offset(0), BUF_BYTES);
        assert_eq!(rx_offset(1), 2 * BUF_BYTES);
        assert_eq!(tx_offset(SOCKETS - 1) + BUF_BYTES, DATA_BYTES);
        // The areas do not overlap: checked when this compiles.
        const {
            assert!(DATA_VADDR + DATA_BYTES <= DMA_VADDR);
            assert!(TIMER_VADDR + 4096 <= THREAD_STACKS_VADDR);
            assert!(THREAD_STACKS_VADDR + (SYNC_THREADS + 1) * THREAD_STRIDE <= THREAD_IPC_VADDR);
        }
    }

    #[test]
    fn response_is_request_plus_one() {
        let mut out = [0u8; 3];
        respond(&[0, 7, 255], &mut out);
        assert_eq!(out, [1, 8, 0]);
    }

    #[test]
    fn response_word_wise_matches_byte_rule() {
        // Every byte value, at every alignment of either side and lengths around a word.
        let req: Vec<u8> = (0..=255u8).chain(0..=255u8).collect();
        for ra in 0..8 {
            for oa in 0..8 {
                for len in [0, 1, 7, 8, 9, 63, 64, 65, 300] {
                    let mut out = vec![0xaau8; len + 16];
                    respond(&req[ra..ra + len], &mut out[oa..oa + len]);
                    let want: Vec<u8> = req[ra..ra + len].iter().map(|b| b.wrapping_add(1)).collect();
                    assert_eq!(&out[oa..oa + len], &want[..], "req at {ra}, out at {oa}, {len} bytes");
                    assert!(out[..oa].iter().chain(&out[oa + len..]).all(|&b| b == 0xaa), "wrote outside");
                }
            }
        }
    }
}
