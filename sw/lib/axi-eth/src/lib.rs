//! The board NIC's driver core (README.md): Xilinx AXI DMA (PG021) in scatter-gather mode with
//! 64-bit addresses, and the AXI 1G/2.5G Ethernet (PG138) with its PHY on MDIO. No operating
//! system here: registers go through [`regs::Regs`], memory is given as addresses.
#![cfg_attr(not(test), no_std)]

pub mod desc;
pub mod dma;
pub mod mac;
pub mod regs;
pub mod ring;

#[cfg(test)]
mod tests;
