//! Register maps: AXI DMA (PG021), AXI Ethernet (PG138), and the clause-22 PHY registers the
//! bring-up uses (IEEE 802.3; the board's PHY is a Micrel KSZ9031RNX).

/// 32-bit register access at a byte offset of one device's register page. The implementation
/// orders accesses with the memory the device reads (descriptors) as the platform requires.
pub trait Regs {
    fn read(&self, off: usize) -> u32;
    fn write(&self, off: usize, v: u32);
}

impl<R: Regs + ?Sized> Regs for &R {
    fn read(&self, off: usize) -> u32 {
        (**self).read(off)
    }
    fn write(&self, off: usize, v: u32) {
        (**self).write(off, v)
    }
}

/// AXI DMA. Each channel's registers at its base: MM2S (transmit) at 0x00, S2MM (receive) at
/// 0x30, the same layout.
pub mod dma {
    pub const MM2S: usize = 0x00;
    pub const S2MM: usize = 0x30;
    pub const CR: usize = 0x00;
    pub const SR: usize = 0x04;
    pub const CURDESC: usize = 0x08;
    pub const CURDESC_MSB: usize = 0x0C;
    pub const TAILDESC: usize = 0x10;
    pub const TAILDESC_MSB: usize = 0x14;

    /// DMACR.
    pub const CR_RUN: u32 = 1 << 0;
    pub const CR_RESET: u32 = 1 << 2;
    pub const CR_IOC_IRQ_EN: u32 = 1 << 12;
    pub const CR_DLY_IRQ_EN: u32 = 1 << 13;
    pub const CR_ERR_IRQ_EN: u32 = 1 << 14;
    pub const CR_THRESHOLD_SHIFT: u32 = 16;

    /// DMASR.
    pub const SR_HALTED: u32 = 1 << 0;
    pub const SR_IDLE: u32 = 1 << 1;
    pub const SR_SG_INCLUDED: u32 = 1 << 3;
    pub const SR_DMA_INT_ERR: u32 = 1 << 4;
    pub const SR_DMA_SLV_ERR: u32 = 1 << 5;
    pub const SR_DMA_DEC_ERR: u32 = 1 << 6;
    pub const SR_SG_INT_ERR: u32 = 1 << 8;
    pub const SR_SG_SLV_ERR: u32 = 1 << 9;
    pub const SR_SG_DEC_ERR: u32 = 1 << 10;
    pub const SR_IOC_IRQ: u32 = 1 << 12;
    pub const SR_DLY_IRQ: u32 = 1 << 13;
    pub const SR_ERR_IRQ: u32 = 1 << 14;
    /// Every error bit; any of them halts the channel until a reset.
    pub const SR_ERRORS: u32 =
        SR_DMA_INT_ERR | SR_DMA_SLV_ERR | SR_DMA_DEC_ERR | SR_SG_INT_ERR | SR_SG_SLV_ERR | SR_SG_DEC_ERR;
    /// The interrupt bits (write 1 to clear).
    pub const SR_IRQS: u32 = SR_IOC_IRQ | SR_DLY_IRQ | SR_ERR_IRQ;
}

/// AXI Ethernet (the register page's first 4 KiB is all the driver uses).
pub mod mac {
    /// Interrupt status / pending / enable.
    pub const IS: usize = 0x0C;
    pub const IP: usize = 0x10;
    pub const IE: usize = 0x14;
    /// Unicast address, bytes 0-3 and 4-5 (first byte on the wire in the low bits).
    pub const UAWL: usize = 0x20;
    pub const UAWU: usize = 0x24;
    /// Statistics counters (64-bit each, low word first).
    pub const STATS: usize = 0x200;
    pub const RCW1: usize = 0x404;
    pub const TC: usize = 0x408;
    /// Ethernet MAC mode configuration: bits 31:30 link speed.
    pub const EMMC: usize = 0x410;
    /// MDIO setup, control, write data, read data.
    pub const MC: usize = 0x500;
    pub const MCR: usize = 0x504;
    pub const MWD: usize = 0x508;
    pub const MRD: usize = 0x50C;

    pub const INT_MGT_RDY: u32 = 1 << 7;
    pub const RCW1_RX_EN: u32 = 1 << 28;
    pub const TC_TX_EN: u32 = 1 << 28;
    pub const EMMC_SPEED_SHIFT: u32 = 30;
    pub const EMMC_SPEED_MASK: u32 = 3 << EMMC_SPEED_SHIFT;
    pub const MC_ENABLE: u32 = 1 << 6;
    pub const MC_DIVISOR_MASK: u32 = 0x3F;
    pub const MCR_PHY_SHIFT: u32 = 24;
    pub const MCR_REG_SHIFT: u32 = 16;
    pub const MCR_OP_WRITE: u32 = 1 << 14;
    pub const MCR_OP_READ: u32 = 2 << 14;
    pub const MCR_INITIATE: u32 = 1 << 11;
    pub const MCR_READY: u32 = 1 << 7;

    /// EMMC speed codes.
    pub const SPEED_10: u32 = 0;
    pub const SPEED_100: u32 = 1;
    pub const SPEED_1000: u32 = 2;
}

/// Clause-22 PHY registers and bits.
pub mod phy {
    pub const BMCR: u8 = 0;
    pub const BMSR: u8 = 1;
    pub const PHYID1: u8 = 2;
    pub const PHYID2: u8 = 3;
    pub const ANAR: u8 = 4;
    pub const ANLPAR: u8 = 5;
    pub const CTRL1000: u8 = 9;
    pub const STAT1000: u8 = 10;

    pub const BMCR_AN_RESTART: u16 = 1 << 9;
    pub const BMCR_AN_ENABLE: u16 = 1 << 12;
    pub const BMSR_LINK: u16 = 1 << 2;
    pub const BMSR_AN_DONE: u16 = 1 << 5;
    pub const ADV_100_FULL: u16 = 1 << 8;
    pub const ADV_100_HALF: u16 = 1 << 7;
    pub const CTRL1000_FULL: u16 = 1 << 9;
    pub const STAT1000_PARTNER_FULL: u16 = 1 << 11;

    /// Micrel/Microchip KSZ9031: PHYID1 and PHYID2 without its revision bits.
    pub const KSZ9031_ID: u32 = 0x0022_1620;
    pub const ID_REVISION_MASK: u32 = 0xF;
}
