//! Host tests: descriptor memory written the way PG021 says the DMA writes it, and a register
//! file that follows PG138's MDIO handshake (ready low while a transaction runs) with a PHY
//! behind it. What each test could catch is said at the top of it.
extern crate std;
use crate::desc::*;
use crate::dma::{Channel, Dma, DmaError};
use crate::mac::{Link, Mac, MacError};
use crate::regs::{dma as d, mac as m, phy as p, Regs};
use crate::ring::Ring;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::vec::Vec;

const N: usize = 8;
const BUF: usize = 2048;

/// Descriptor and buffer memory for a ring, with made-up bus addresses far from the virtual
/// ones (so a mix-up of the two shows).
struct Mem {
    descs: Vec<Desc>,
    bufs: Vec<u8>,
}
const DESC_PA: u64 = 0x1_8000_0000;
const BUF_PA: u64 = 0x1_9000_0000;

fn ring(mem: &mut Mem) -> Ring<N> {
    // SAFETY: both vectors live as long as the ring in every test and are used by it alone.
    unsafe { Ring::new(mem.descs.as_mut_ptr() as usize, DESC_PA, mem.bufs.as_mut_ptr() as usize, BUF_PA, BUF) }.unwrap()
}

fn mem() -> Mem {
    Mem { descs: std::vec![Desc::default(); N], bufs: std::vec![0; N * BUF] }
}

/// What the DMA does on completing descriptor i: write STATUS (and APP4).
fn complete(mem: &mut Mem, i: usize, status: u32) {
    mem.descs[i].status = status;
    mem.descs[i].app[4] = status & 0xFFFF;
}

#[test]
fn descriptors_chain_in_a_circle_with_their_buffers() {
    // Catches: wrong next pointers (the DMA would walk off the ring), buffers overlapping.
    let mut mem = mem();
    let r = ring(&mut mem);
    for i in 0..N {
        let dsc = mem.descs[i];
        let next = (dsc.next_msb as u64) << 32 | dsc.next as u64;
        assert_eq!(next, DESC_PA + (((i + 1) % N) * 64) as u64, "next of {i}");
        assert_eq!((dsc.buf_msb as u64) << 32 | dsc.buf as u64, BUF_PA + (i * BUF) as u64, "buffer of {i}");
        assert_eq!(r.desc_pa(i), DESC_PA + (i * 64) as u64);
    }
    assert_eq!(core::mem::align_of::<Desc>(), 64);
}

#[test]
fn misaligned_or_oversized_rings_are_refused() {
    let mut mem = mem();
    let va = mem.descs.as_mut_ptr() as usize;
    let b = mem.bufs.as_mut_ptr() as usize;
    // SAFETY: refused before any write.
    assert!(unsafe { Ring::<N>::new(va + 8, DESC_PA, b, BUF_PA, BUF) }.is_err());
    assert!(unsafe { Ring::<N>::new(va, DESC_PA + 32, b, BUF_PA, BUF) }.is_err());
    assert!(unsafe { Ring::<N>::new(va, DESC_PA, b, BUF_PA, MAX_BUF + 1) }.is_err());
}

#[test]
fn padded_buffers_start_past_their_pad_and_hold_the_rest() {
    // Catches: the DMA told a buffer address without the pad (a frame's headers back on the
    // unaligned offsets), a pointer that disagrees with the address the DMA writes, a post or a
    // slice that runs past the stride into the next buffer, a pad that leaves no room.
    const PAD: usize = 2;
    let mut mem = mem();
    let (va, b) = (mem.descs.as_mut_ptr() as usize, mem.bufs.as_mut_ptr() as usize);
    // SAFETY: as `ring`.
    let mut r = unsafe { Ring::<N>::new_padded(va, DESC_PA, b, BUF_PA, BUF, PAD) }.unwrap();
    assert_eq!(r.buf_len(), BUF - PAD);
    for i in 0..N {
        let dsc = mem.descs[i];
        assert_eq!((dsc.buf_msb as u64) << 32 | dsc.buf as u64, BUF_PA + (i * BUF + PAD) as u64, "buffer of {i}");
        assert_eq!(r.buf_ptr(i) as usize, b + i * BUF + PAD, "pointer of {i}");
        let s = r.buf(i);
        assert_eq!((s.as_ptr() as usize, s.len()), (b + i * BUF + PAD, BUF - PAD));
    }
    assert!(r.post(BUF - PAD + 1, 0).is_none(), "a length past the padded buffer");
    assert_eq!(r.post(BUF - PAD, 0), Some(0));
    // SAFETY: refused before any write.
    assert!(unsafe { Ring::<N>::new_padded(va, DESC_PA, b, BUF_PA, BUF, BUF) }.is_err());
}

#[test]
fn receive_ring_posts_all_reaps_in_order_and_reposts_at_the_tail() {
    // Catches: reaping out of order, re-posting somewhere other than the slot just freed
    // (TAILDESC would point at a descriptor the DMA already owns), stale complete bits.
    let mut mem = mem();
    let mut r = ring(&mut mem);
    for i in 0..N {
        assert_eq!(r.post(BUF, 0), Some(i));
    }
    assert!(r.is_full() && r.post(BUF, 0).is_none());
    assert_eq!(mem.descs[3].control, BUF as u32);
    assert!(r.peek().is_none(), "nothing complete yet");
    complete(&mut mem, 1, ST_COMPLETE | ST_RXSOF | ST_RXEOF | 60);
    assert!(r.peek().is_none(), "descriptor 0 is older and not complete");
    complete(&mut mem, 0, ST_COMPLETE | ST_RXSOF | ST_RXEOF | 1514);
    let (i, st, app4) = r.peek().unwrap();
    assert_eq!((i, check_rx(st, r.buf_len()), app4), (0, Ok(1514), 1514 & 0xFFFF));
    assert_eq!(r.pop(), Some(0));
    assert_eq!(r.post(BUF, 0), Some(0), "the freed slot is the new tail");
    assert_eq!(mem.descs[0].status, 0, "re-posted with its complete bit cleared");
    let (i, st, _) = r.peek().unwrap();
    assert_eq!((i, check_rx(st, BUF)), (1, Ok(60)));
}

#[test]
fn transmit_ring_fills_up_and_drains() {
    let mut mem = mem();
    let mut r = ring(&mut mem);
    for i in 0..N {
        r.buf(i)[0] = i as u8;
        assert_eq!(r.post(100 + i, CTRL_SOF | CTRL_EOF), Some(i));
    }
    assert!(r.post(60, CTRL_SOF | CTRL_EOF).is_none(), "full");
    assert_eq!(mem.descs[5].control, 105 | CTRL_SOF | CTRL_EOF);
    assert_eq!(mem.bufs[5 * BUF], 5);
    complete(&mut mem, 0, ST_COMPLETE | 100);
    let (i, st, _) = r.peek().unwrap();
    assert_eq!(check_tx(st, 100 + i), Ok(()));
    r.pop();
    assert_eq!(r.post(BUF + 1, CTRL_SOF | CTRL_EOF), None, "longer than the buffer");
    assert_eq!(r.post(64, CTRL_SOF | CTRL_EOF), Some(0));
}

#[test]
fn bad_descriptors_are_errors_not_panics() {
    // Catches: trusting the DMA's length or flags.
    assert_eq!(check_rx(ST_RXSOF | ST_RXEOF | 60, BUF), Err(DescError::NotComplete));
    assert_eq!(
        check_rx(ST_COMPLETE | ST_RXSOF | ST_RXEOF | ST_SLV_ERR | 60, BUF),
        Err(DescError::Dma { status: ST_COMPLETE | ST_RXSOF | ST_RXEOF | ST_SLV_ERR | 60 })
    );
    assert_eq!(
        check_rx(ST_COMPLETE | ST_RXSOF | ST_RXEOF | (BUF as u32 + 1), BUF),
        Err(DescError::RxLength { len: BUF + 1, buf: BUF })
    );
    assert_eq!(
        check_rx(ST_COMPLETE | ST_RXSOF | ST_RXEOF | ST_LEN_MASK, BUF),
        Err(DescError::RxLength { len: ST_LEN_MASK as usize, buf: BUF })
    );
    assert_eq!(check_rx(ST_COMPLETE | ST_RXSOF | ST_RXEOF | 13, BUF), Err(DescError::RxLength { len: 13, buf: BUF }));
    assert_eq!(check_rx(ST_COMPLETE | ST_RXSOF | 1000, BUF), Err(DescError::RxNotWhole { sof: true, eof: false }));
    assert_eq!(check_rx(ST_COMPLETE | ST_RXEOF | 1000, BUF), Err(DescError::RxNotWhole { sof: false, eof: true }));
    assert_eq!(check_rx_app4(ST_COMPLETE | ST_RXSOF | ST_RXEOF | 60, 60, BUF), Ok(60));
    assert_eq!(
        check_rx_app4(ST_COMPLETE | ST_RXSOF | ST_RXEOF | 60, 0xABCD_0000 | 60, BUF),
        Ok(60),
        "APP4's high half is not the length"
    );
    assert_eq!(
        check_rx_app4(ST_COMPLETE | ST_RXSOF | ST_RXEOF | 60, 64, BUF),
        Err(DescError::RxLengthMismatch { status: 60, app4: 64 })
    );
    assert_eq!(check_tx(ST_COMPLETE | 99, 100), Err(DescError::TxLength { sent: 99, len: 100 }));
    assert_eq!(
        check_tx(ST_COMPLETE | ST_DEC_ERR | 100, 100),
        Err(DescError::Dma { status: ST_COMPLETE | ST_DEC_ERR | 100 })
    );
    assert_eq!(check_tx(100, 100), Err(DescError::NotComplete));
}

/// A register file: plain words, plus PG138's MDIO handshake (MCR.ready drops for `busy`
/// reads after an initiate; read data appears when it rises again) with a clause-22 PHY, and
/// PG021's self-clearing reset bit.
struct Dev {
    words: RefCell<HashMap<usize, u32>>,
    phy_addr: u8,
    phy: RefCell<HashMap<u8, u16>>,
    busy: Cell<u32>,
    pending_read: Cell<Option<u16>>,
    mdio_ops: Cell<u32>,
    /// Reads of the reset bit before it clears (u32::MAX: never).
    reset_reads: Cell<u32>,
}

impl Dev {
    fn new(phy_addr: u8, link: bool) -> Dev {
        let phy = HashMap::from([
            (p::BMCR, p::BMCR_AN_ENABLE),
            (p::BMSR, if link { p::BMSR_LINK | p::BMSR_AN_DONE } else { 0 }),
            (p::PHYID1, 0x0022),
            (p::PHYID2, 0x1622),
            (p::ANAR, 0x01E1),
            (p::ANLPAR, 0x01E1),
            (p::CTRL1000, p::CTRL1000_FULL),
            (p::STAT1000, p::STAT1000_PARTNER_FULL),
        ]);
        let words = HashMap::from([
            (m::IS, m::INT_MGT_RDY),
            (m::MCR, m::MCR_READY),
            (d::MM2S + d::SR, d::SR_HALTED | d::SR_SG_INCLUDED),
        ]);
        Dev {
            words: RefCell::new(words),
            phy_addr,
            phy: RefCell::new(phy),
            busy: Cell::new(0),
            pending_read: Cell::new(None),
            mdio_ops: Cell::new(0),
            reset_reads: Cell::new(2),
        }
    }
    fn get(&self, off: usize) -> u32 {
        *self.words.borrow().get(&off).unwrap_or(&0)
    }
}

impl Regs for Dev {
    fn read(&self, off: usize) -> u32 {
        if off == m::MCR && self.busy.get() > 0 {
            self.busy.set(self.busy.get() - 1);
            if self.busy.get() == 0 {
                if let Some(v) = self.pending_read.take() {
                    self.words.borrow_mut().insert(m::MRD, v as u32);
                }
                let done = self.get(off) | m::MCR_READY;
                self.words.borrow_mut().insert(off, done);
                return done;
            }
            return self.get(off) & !m::MCR_READY;
        }
        if off == d::MM2S + d::CR || off == d::S2MM + d::CR {
            let v = self.get(off);
            if v & d::CR_RESET != 0 && self.reset_reads.get() != u32::MAX {
                let n = self.reset_reads.get();
                if n == 0 {
                    self.words.borrow_mut().insert(d::MM2S + d::CR, 0);
                    return 0;
                }
                self.reset_reads.set(n - 1);
            }
            return self.get(d::MM2S + d::CR) & d::CR_RESET | v;
        }
        self.get(off)
    }
    fn write(&self, off: usize, v: u32) {
        if off == m::MCR && v & m::MCR_INITIATE != 0 {
            assert!(self.busy.get() == 0, "MDIO initiate while a transaction runs");
            assert!(self.get(m::MC) & m::MC_ENABLE != 0, "MDIO used before MC enabled it");
            self.mdio_ops.set(self.mdio_ops.get() + 1);
            let (a, reg) = ((v >> m::MCR_PHY_SHIFT) as u8 & 0x1F, (v >> m::MCR_REG_SHIFT) as u8 & 0x1F);
            let read = v & (3 << 14) == m::MCR_OP_READ;
            let present = a == self.phy_addr;
            if read {
                let val = if present { *self.phy.borrow().get(&reg).unwrap_or(&0) } else { 0xFFFF };
                self.pending_read.set(Some(val));
            } else if present {
                self.phy.borrow_mut().insert(reg, self.get(m::MWD) as u16);
            }
            self.busy.set(3);
            self.words.borrow_mut().insert(off, v & !m::MCR_READY);
            return;
        }
        self.words.borrow_mut().insert(off, v);
    }
}

fn clock() -> impl FnMut() -> u64 {
    let mut t = 0;
    move || {
        t += 10;
        t
    }
}

#[test]
fn bring_up_finds_the_phy_sets_speed_address_and_enables() {
    // Catches: skipping the ready handshake, a wrong divisor, a wrong byte order of the
    // address, forgetting RX/TX enable or the speed bits.
    let dev = Dev::new(1, true);
    let link = Mac::new(&dev, clock()).bring_up(100_000_000, [0x02, 0x0a, 0x35, 0x01, 0x02, 0x03]).unwrap();
    assert_eq!(link, Link { phy_addr: 1, phy_id: 0x0022_1622, mbps: 1000 });
    assert_eq!(dev.get(m::MC), m::MC_ENABLE | 19, "100 MHz / (2 * 20) = 2.5 MHz MDC");
    assert_eq!(dev.get(m::EMMC) >> m::EMMC_SPEED_SHIFT, m::SPEED_1000);
    assert_eq!(dev.get(m::UAWL), 0x0135_0a02);
    assert_eq!(dev.get(m::UAWU), 0x0302);
    assert_eq!(dev.get(m::RCW1) & m::RCW1_RX_EN, m::RCW1_RX_EN);
    assert_eq!(dev.get(m::TC) & m::TC_TX_EN, m::TC_TX_EN);
    assert_eq!(dev.get(m::IE), 0);
}

#[test]
fn bring_up_scans_for_a_phy_elsewhere_and_reports_100_mbps() {
    let dev = Dev::new(7, true);
    dev.phy.borrow_mut().insert(p::STAT1000, 0);
    let link = Mac::new(&dev, clock()).bring_up(100_000_000, [2, 0, 0, 0, 0, 1]).unwrap();
    assert_eq!((link.phy_addr, link.mbps), (7, 100));
    assert_eq!(dev.get(m::EMMC) >> m::EMMC_SPEED_SHIFT, m::SPEED_100);
}

#[test]
fn bring_up_failures_are_reported() {
    // No link within the limit.
    let dev = Dev::new(1, false);
    assert_eq!(Mac::new(&dev, clock()).bring_up(100_000_000, [2, 0, 0, 0, 0, 1]), Err(MacError::NoLink { bmsr: 0 }));
    assert_eq!(dev.get(m::RCW1) & m::RCW1_RX_EN, 0, "receiver left off");
    // No PHY anywhere.
    let dev = Dev::new(40, true);
    assert_eq!(Mac::new(&dev, clock()).bring_up(100_000_000, [2, 0, 0, 0, 0, 1]), Err(MacError::NoPhy));
    // MgtRdy never set.
    let dev = Dev::new(1, true);
    dev.words.borrow_mut().insert(m::IS, 0);
    assert_eq!(Mac::new(&dev, clock()).bring_up(100_000_000, [2, 0, 0, 0, 0, 1]), Err(MacError::NotReady { is: 0 }));
    // MDIO stuck busy.
    let dev = Dev::new(1, true);
    dev.words.borrow_mut().insert(m::MCR, 0);
    assert_eq!(
        Mac::new(&dev, clock()).bring_up(100_000_000, [2, 0, 0, 0, 0, 1]),
        Err(MacError::MdioTimeout { phy: 1, reg: p::PHYID1 })
    );
}

#[test]
fn dma_reset_start_tail_and_irq_enables() {
    // Catches: CURDESC written after run/stop, the tail's low word written first, a reset
    // that never finishes taken as success, completion interrupts enabled over stale status.
    let dev = Dev::new(1, true);
    let mut dma = Dma::new(&dev);
    let mut n = 0;
    dma.reset(|| {
        n += 1;
        n > 100
    })
    .unwrap();
    dev.words.borrow_mut().insert(d::MM2S + d::SR, d::SR_SG_INCLUDED);
    dma.start(Channel::Tx, 0x1_2345_6780).unwrap();
    assert_eq!((dev.get(d::CURDESC_MSB), dev.get(d::CURDESC)), (1, 0x2345_6780));
    assert_eq!(dev.get(d::CR) & d::CR_RUN, d::CR_RUN);
    assert_eq!(dev.get(d::CR) & d::CR_IOC_IRQ_EN, 0);
    dma.tail(Channel::Rx, 0x2_0000_0040);
    assert_eq!((dev.get(d::S2MM + d::TAILDESC_MSB), dev.get(d::S2MM + d::TAILDESC)), (2, 0x40));
    // The same high word is not written again; a new one is.
    dev.words.borrow_mut().insert(d::S2MM + d::TAILDESC_MSB, 0xdead);
    dma.tail(Channel::Rx, 0x2_0000_0080);
    assert_eq!((dev.get(d::S2MM + d::TAILDESC_MSB), dev.get(d::S2MM + d::TAILDESC)), (0xdead, 0x80));
    dma.tail(Channel::Rx, 0x3_0000_0000);
    assert_eq!((dev.get(d::S2MM + d::TAILDESC_MSB), dev.get(d::S2MM + d::TAILDESC)), (3, 0));
    dev.words.borrow_mut().insert(d::S2MM + d::SR, d::SR_IOC_IRQ);
    dma.completion_irqs(Channel::Rx, true);
    assert_eq!(dev.get(d::S2MM + d::CR) & d::CR_IOC_IRQ_EN, d::CR_IOC_IRQ_EN);
    assert_eq!(dev.get(d::S2MM + d::SR), d::SR_IOC_IRQ | d::SR_DLY_IRQ, "stale completions written 1 to clear");
    assert_eq!(dev.get(d::MM2S + d::CR) & d::CR_IOC_IRQ_EN, 0, "the other channel untouched");
    dma.completion_irqs(Channel::Rx, false);
    assert_eq!(dev.get(d::S2MM + d::CR) & (d::CR_IOC_IRQ_EN | d::CR_RUN), d::CR_RUN);
    // A channel halted on an error is reported by ack.
    dev.words.borrow_mut().insert(d::S2MM + d::SR, d::SR_HALTED | d::SR_SG_DEC_ERR | d::SR_ERR_IRQ);
    assert_eq!(
        dma.ack(),
        Err(DmaError::Halted { channel: Channel::Rx, sr: d::SR_HALTED | d::SR_SG_DEC_ERR | d::SR_ERR_IRQ })
    );
    // A reset that never completes.
    let dev = Dev::new(1, true);
    dev.reset_reads.set(u32::MAX);
    let mut n = 0;
    assert_eq!(
        Dma::new(&dev).reset(|| {
            n += 1;
            n > 100
        }),
        Err(DmaError::ResetTimeout)
    );
}
