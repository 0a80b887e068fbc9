//! The AXI DMA's two channels (PG021, scatter-gather): reset, start on a descriptor ring,
//! tail writes, interrupt enables and acknowledgement.
use crate::regs::dma::*;
use crate::regs::Regs;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// Memory to stream: transmit.
    Tx,
    /// Stream to memory: receive.
    Rx,
}

impl Channel {
    fn base(self) -> usize {
        match self {
            Channel::Tx => MM2S,
            Channel::Rx => S2MM,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmaError {
    /// The soft reset bit did not clear within the time given.
    ResetTimeout,
    /// DMASR says the core was built without scatter-gather.
    NoScatterGather,
    /// A channel still halted after run/stop was set (DMASR given).
    NotRunning { channel: Channel, sr: u32 },
    /// A channel reported errors and halted (DMASR given); reset to go on.
    Halted { channel: Channel, sr: u32 },
}

impl core::fmt::Display for DmaError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            DmaError::ResetTimeout => write!(f, "DMA reset did not finish"),
            DmaError::NoScatterGather => write!(f, "DMA has no scatter-gather engine (DMASR.SGIncld = 0)"),
            DmaError::NotRunning { channel, sr } => write!(f, "DMA {channel:?} channel did not start (DMASR {sr:#x})"),
            DmaError::Halted { channel, sr } => write!(f, "DMA {channel:?} channel halted on an error (DMASR {sr:#x})"),
        }
    }
}

/// Interrupt coalescing: an IOC interrupt per completed descriptor (threshold 1), no delay
/// timer; errors always interrupt.
const CR_BASE: u32 = CR_RUN | CR_ERR_IRQ_EN | (1 << CR_THRESHOLD_SHIFT);

pub struct Dma<R: Regs> {
    pub regs: R,
    /// Completion interrupts on, transmit and receive.
    ioc: [bool; 2],
    /// The high word each channel's TAILDESC_MSB holds, once written since the last reset: a
    /// tail move writes it only when it changes (one register write per tail move, not two).
    tail_msb: [Option<u32>; 2],
}

impl Channel {
    fn index(self) -> usize {
        match self {
            Channel::Tx => 0,
            Channel::Rx => 1,
        }
    }
}

impl<R: Regs> Dma<R> {
    pub fn new(regs: R) -> Self {
        Dma { regs, ioc: [false; 2], tail_msb: [None; 2] }
    }

    /// Soft reset (the MM2S bit resets both channels and the Ethernet's streams with them);
    /// `expired()` bounds the wait.
    pub fn reset(&mut self, mut expired: impl FnMut() -> bool) -> Result<(), DmaError> {
        self.regs.write(MM2S + CR, CR_RESET);
        while self.regs.read(MM2S + CR) & CR_RESET != 0 || self.regs.read(S2MM + CR) & CR_RESET != 0 {
            if expired() {
                return Err(DmaError::ResetTimeout);
            }
        }
        self.ioc = [false; 2];
        self.tail_msb = [None; 2];
        if self.regs.read(MM2S + SR) & SR_SG_INCLUDED == 0 {
            return Err(DmaError::NoScatterGather);
        }
        Ok(())
    }

    /// Start a halted channel at the descriptor with bus address `first` (CURDESC is written
    /// while halted, as PG021 requires); it fetches nothing until a tail write.
    pub fn start(&mut self, ch: Channel, first: u64) -> Result<(), DmaError> {
        let b = ch.base();
        self.regs.write(b + CURDESC_MSB, (first >> 32) as u32);
        self.regs.write(b + CURDESC, first as u32);
        self.regs.write(b + CR, self.cr(ch));
        let sr = self.regs.read(b + SR);
        if sr & SR_HALTED != 0 {
            return Err(DmaError::NotRunning { channel: ch, sr });
        }
        Ok(())
    }

    fn cr(&self, ch: Channel) -> u32 {
        CR_BASE | if self.ioc[ch.index()] { CR_IOC_IRQ_EN } else { 0 }
    }

    /// Let the channel run up to and including the descriptor at bus address `tail` (the high
    /// word first, when it is not the one written last since the reset: the low word's write
    /// starts the fetch).
    pub fn tail(&mut self, ch: Channel, tail: u64) {
        let b = ch.base();
        let msb = (tail >> 32) as u32;
        if self.tail_msb[ch.index()] != Some(msb) {
            self.regs.write(b + TAILDESC_MSB, msb);
            self.tail_msb[ch.index()] = Some(msb);
        }
        self.regs.write(b + TAILDESC, tail as u32);
    }

    /// Completion interrupts of channel `ch` on or off (errors always interrupt). Switching
    /// them on first clears the completions already seen, so only new ones interrupt.
    pub fn completion_irqs(&mut self, ch: Channel, on: bool) {
        if on == self.ioc[ch.index()] {
            return;
        }
        self.ioc[ch.index()] = on;
        if on {
            self.regs.write(ch.base() + SR, SR_IOC_IRQ | SR_DLY_IRQ);
        }
        self.regs.write(ch.base() + CR, self.cr(ch));
    }

    /// Whether channel `ch`'s completion interrupts are on.
    pub fn completion_irqs_on(&self, ch: Channel) -> bool {
        self.ioc[ch.index()]
    }

    /// Acknowledge both channels' interrupts (write-1-to-clear) and report a channel that
    /// halted on an error.
    pub fn ack(&self) -> Result<(), DmaError> {
        let mut first_err = Ok(());
        for ch in [Channel::Tx, Channel::Rx] {
            let b = ch.base();
            let sr = self.regs.read(b + SR);
            if sr & SR_IRQS != 0 {
                self.regs.write(b + SR, sr & SR_IRQS);
            }
            if sr & SR_ERRORS != 0 && first_err.is_ok() {
                first_err = Err(DmaError::Halted { channel: ch, sr });
            }
        }
        first_err
    }

    /// DMASR of a channel (for errors and reports).
    pub fn status(&self, ch: Channel) -> u32 {
        self.regs.read(ch.base() + SR)
    }
}
