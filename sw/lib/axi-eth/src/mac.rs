//! Bring-up of the AXI Ethernet (PG138) and its PHY over MDIO, in the order docs/board-axu15eg.md
//! gives: wait for MgtRdy; options (receiver and transmitter off, no MAC interrupts); MDIO
//! clock divisor; find the PHY; link (autonegotiation, KSZ9031 defaults advertise 1000FD);
//! speed; unicast address; transmitter and receiver on. Every wait is bounded by the caller's
//! clock.
use crate::regs::mac::*;
use crate::regs::{phy, Regs};

/// MDC at most 2.5 MHz: MDC = AXI clock / (2 * (divisor + 1)).
pub const MDC_MAX_HZ: u64 = 2_500_000;
/// The board's PHY address (hw/fpga/board.toml); looked at first, then all 32.
pub const BOARD_PHY_ADDR: u8 = 1;
/// Waits: MgtRdy and MDIO transactions (microseconds), and link-up after autonegotiation.
pub const READY_US: u64 = 100_000;
pub const LINK_US: u64 = 5_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacError {
    /// IS.MgtRdy never came (the MAC's clocks or the PHY interface are not up).
    NotReady { is: u32 },
    /// An MDIO transaction did not finish (MCR.ready stayed low).
    MdioTimeout { phy: u8, reg: u8 },
    /// No PHY answered on any MDIO address.
    NoPhy,
    /// The link did not come up (BMSR given).
    NoLink { bmsr: u16 },
}

impl core::fmt::Display for MacError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            MacError::NotReady { is } => write!(f, "MAC not ready (IS {is:#x}: no MgtRdy)"),
            MacError::MdioTimeout { phy, reg } => write!(f, "MDIO transaction to PHY {phy} register {reg} timed out"),
            MacError::NoPhy => write!(f, "no PHY on MDIO"),
            MacError::NoLink { bmsr } => write!(f, "no link (BMSR {bmsr:#06x})"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub phy_addr: u8,
    /// PHYID1:PHYID2.
    pub phy_id: u32,
    pub mbps: u32,
}

/// A clock in microseconds, for the bounded waits.
pub trait Clock {
    fn now_us(&mut self) -> u64;
}

impl<F: FnMut() -> u64> Clock for F {
    fn now_us(&mut self) -> u64 {
        self()
    }
}

pub struct Mac<'a, R: Regs, C: Clock> {
    regs: &'a R,
    clock: C,
}

impl<'a, R: Regs, C: Clock> Mac<'a, R, C> {
    pub fn new(regs: &'a R, clock: C) -> Self {
        Mac { regs, clock }
    }

    fn wait(&mut self, us: u64, mut done: impl FnMut(&R) -> bool) -> bool {
        let t0 = self.clock.now_us();
        loop {
            if done(self.regs) {
                return true;
            }
            if self.clock.now_us().wrapping_sub(t0) > us {
                return done(self.regs);
            }
        }
    }

    fn mdio(&mut self, phy: u8, reg: u8, op: u32, data: u16) -> Result<u16, MacError> {
        let ready = |r: &R| r.read(MCR) & MCR_READY != 0;
        if !self.wait(READY_US, ready) {
            return Err(MacError::MdioTimeout { phy, reg });
        }
        if op == MCR_OP_WRITE {
            self.regs.write(MWD, data as u32);
        }
        let mcr = (phy as u32 & 0x1F) << MCR_PHY_SHIFT | (reg as u32 & 0x1F) << MCR_REG_SHIFT | op | MCR_INITIATE;
        self.regs.write(MCR, mcr);
        if !self.wait(READY_US, ready) {
            return Err(MacError::MdioTimeout { phy, reg });
        }
        Ok(self.regs.read(MRD) as u16)
    }

    pub fn mdio_read(&mut self, phy: u8, reg: u8) -> Result<u16, MacError> {
        self.mdio(phy, reg, MCR_OP_READ, 0)
    }

    pub fn mdio_write(&mut self, phy: u8, reg: u8, v: u16) -> Result<(), MacError> {
        self.mdio(phy, reg, MCR_OP_WRITE, v).map(|_| ())
    }

    /// The PHY's address and id: the board's address first, then every other one. An address
    /// nobody answers reads all ones (MDIO idles high) or zeros.
    fn find_phy(&mut self) -> Result<(u8, u32), MacError> {
        for a in core::iter::once(BOARD_PHY_ADDR).chain((0..32).filter(|&a| a != BOARD_PHY_ADDR)) {
            let id1 = self.mdio_read(a, phy::PHYID1)?;
            if id1 == 0xFFFF || id1 == 0 {
                continue;
            }
            let id2 = self.mdio_read(a, phy::PHYID2)?;
            return Ok((a, (id1 as u32) << 16 | id2 as u32));
        }
        Err(MacError::NoPhy)
    }

    /// BMSR's link bit latches low: the second read is the current state.
    fn link_up(&mut self, a: u8) -> Result<(bool, u16), MacError> {
        self.mdio_read(a, phy::BMSR)?;
        let bmsr = self.mdio_read(a, phy::BMSR)?;
        Ok((bmsr & phy::BMSR_LINK != 0 && bmsr & phy::BMSR_AN_DONE != 0, bmsr))
    }

    /// Negotiated speed from what both sides advertise (clause 22/40 registers).
    fn speed(&mut self, a: u8) -> Result<u32, MacError> {
        let ours = self.mdio_read(a, phy::CTRL1000)?;
        let theirs = self.mdio_read(a, phy::STAT1000)?;
        if ours & phy::CTRL1000_FULL != 0 && theirs & phy::STAT1000_PARTNER_FULL != 0 {
            return Ok(1000);
        }
        let common = self.mdio_read(a, phy::ANAR)? & self.mdio_read(a, phy::ANLPAR)?;
        Ok(if common & (phy::ADV_100_FULL | phy::ADV_100_HALF) != 0 { 100 } else { 10 })
    }

    /// The whole bring-up (module doc), `axi_hz` the AXI clock of the MAC's register port,
    /// `addr` our unicast address. Returns the link it found.
    pub fn bring_up(&mut self, axi_hz: u64, addr: [u8; 6]) -> Result<Link, MacError> {
        if !self.wait(READY_US, |r| r.read(IS) & INT_MGT_RDY != 0) {
            return Err(MacError::NotReady { is: self.regs.read(IS) });
        }
        // Options: nothing passes while we set up; the DMA's interrupts are the ones we use.
        self.regs.write(RCW1, 0);
        self.regs.write(TC, 0);
        self.regs.write(IE, 0);
        self.regs.write(IS, self.regs.read(IS));
        let divisor = (axi_hz.div_ceil(2 * MDC_MAX_HZ).saturating_sub(1)).min(MC_DIVISOR_MASK as u64) as u32;
        self.regs.write(MC, MC_ENABLE | divisor);
        let (a, phy_id) = self.find_phy()?;
        // The PHY negotiates by itself after its reset (KSZ9031 defaults: autonegotiation on,
        // 10/100/1000 advertised); restart only if it is off or the link is down, since a
        // restart costs seconds on a real PHY.
        let (mut up, mut bmsr) = self.link_up(a)?;
        if !up {
            let bmcr = self.mdio_read(a, phy::BMCR)?;
            if bmcr & phy::BMCR_AN_ENABLE == 0 {
                self.mdio_write(a, phy::BMCR, bmcr | phy::BMCR_AN_ENABLE | phy::BMCR_AN_RESTART)?;
            }
            let t0 = self.clock.now_us();
            while !up && self.clock.now_us().wrapping_sub(t0) <= LINK_US {
                (up, bmsr) = self.link_up(a)?;
            }
        }
        if !up {
            return Err(MacError::NoLink { bmsr });
        }
        let mbps = self.speed(a)?;
        let code = match mbps {
            1000 => SPEED_1000,
            100 => SPEED_100,
            _ => SPEED_10,
        };
        let emmc = self.regs.read(EMMC) & !EMMC_SPEED_MASK;
        self.regs.write(EMMC, emmc | code << EMMC_SPEED_SHIFT);
        self.regs.write(UAWL, u32::from_le_bytes([addr[0], addr[1], addr[2], addr[3]]));
        self.regs.write(UAWU, u16::from_le_bytes([addr[4], addr[5]]) as u32);
        self.regs.write(TC, TC_TX_EN);
        self.regs.write(RCW1, RCW1_RX_EN);
        Ok(Link { phy_addr: a, phy_id, mbps })
    }
}
