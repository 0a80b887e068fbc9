//! A polled 16550 UART. The same driver serves QEMU's byte-spaced UART and the board's AXI
//! UART16550, whose registers sit on a 32-bit stride (`reg-shift = 2`, `reg-io-width = 4`).
#![no_std]

const RBR_THR_DLL: usize = 0;
const IER_DLM: usize = 1;
const FCR: usize = 2;
const LCR: usize = 3;
const MCR: usize = 4;
const LSR: usize = 5;

const LCR_DLAB: u8 = 0x80;
const LCR_8N1: u8 = 0x03;
const FCR_ENABLE_CLEAR: u8 = 0x07;
const MCR_DTR_RTS: u8 = 0x03;
const LSR_DATA_READY: u8 = 0x01;
const LSR_THR_EMPTY: u8 = 0x20;
/// The transmit FIFO of a 16550 (FIFOs on, as `init` sets them).
pub const FIFO_DEPTH: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ns16550 {
    base: usize,
    reg_shift: u32,
    io_width: u32,
}

impl Ns16550 {
    /// # Safety
    /// `base` must be the (mapped) address of a 16550 register block with the given layout,
    /// and nothing else may drive the device concurrently without a lock.
    pub const unsafe fn new(base: usize, reg_shift: u32, io_width: u32) -> Self {
        Ns16550 { base, reg_shift, io_width }
    }

    pub fn base(&self) -> usize {
        self.base
    }

    /// The same device seen at another virtual address (after the MMU is on).
    pub fn relocated(&self, base: usize) -> Self {
        Ns16550 { base, ..*self }
    }

    fn read(&self, reg: usize) -> u8 {
        let addr = self.base + (reg << self.reg_shift);
        // SAFETY: `new`'s contract; 32-bit wide registers must be read with 32-bit accesses.
        unsafe {
            if self.io_width == 4 {
                core::ptr::read_volatile(addr as *const u32) as u8
            } else {
                core::ptr::read_volatile(addr as *const u8)
            }
        }
    }

    fn write(&self, reg: usize, value: u8) {
        let addr = self.base + (reg << self.reg_shift);
        // SAFETY: as in `read`.
        unsafe {
            if self.io_width == 4 {
                core::ptr::write_volatile(addr as *mut u32, value as u32)
            } else {
                core::ptr::write_volatile(addr as *mut u8, value)
            }
        }
    }

    /// 8N1, FIFOs on, interrupts off. `clock_hz == 0` keeps the divisor the boot ROM or
    /// emulator left (QEMU ignores it; the board's clock is 100 MHz).
    pub fn init(&self, clock_hz: u32, baud: u32) {
        self.write(IER_DLM, 0);
        if clock_hz != 0 && baud != 0 {
            let divisor = (clock_hz + 8 * baud) / (16 * baud);
            self.write(LCR, LCR_DLAB);
            self.write(RBR_THR_DLL, divisor as u8);
            self.write(IER_DLM, (divisor >> 8) as u8);
        }
        self.write(LCR, LCR_8N1);
        self.write(FCR, FCR_ENABLE_CLEAR);
        self.write(MCR, MCR_DTR_RTS);
    }

    pub fn putc(&self, byte: u8) {
        while self.read(LSR) & LSR_THR_EMPTY == 0 {
            core::hint::spin_loop();
        }
        self.write(RBR_THR_DLL, byte);
    }

    /// Hand the transmitter what it takes without waiting: nothing while it is still sending,
    /// else up to [`FIFO_DEPTH`] bytes (THR empty means the whole FIFO is free). Returns how
    /// many of `bytes` it wrote; bytes go out as given (no CRLF translation).
    pub fn try_write(&self, bytes: &[u8]) -> usize {
        if self.read(LSR) & LSR_THR_EMPTY == 0 {
            return 0;
        }
        let n = bytes.len().min(FIFO_DEPTH);
        for &b in &bytes[..n] {
            self.write(RBR_THR_DLL, b);
        }
        n
    }

    pub fn getc(&self) -> Option<u8> {
        (self.read(LSR) & LSR_DATA_READY != 0).then(|| self.read(RBR_THR_DLL))
    }

    /// Enable the "received data available" interrupt (for interrupt-driven consoles).
    pub fn enable_rx_interrupt(&self, on: bool) {
        self.write(IER_DLM, on as u8);
    }
}

impl core::fmt::Write for Ns16550 {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for b in s.bytes() {
            if b == b'\n' {
                self.putc(b'\r');
            }
            self.putc(b);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    /// A register file standing in for the device: checks the stride and width handling.
    #[repr(C, align(8))]
    struct Regs([u32; 8]);

    #[test]
    fn wide_registers_use_the_stride_and_divisor_is_rounded() {
        let mut regs = Regs([0; 8]);
        // All accesses go through one raw pointer, as the device would see them.
        let p = regs.0.as_mut_ptr();
        let reg = |i: usize| unsafe { core::ptr::read_volatile(p.add(i)) };
        let set = |i: usize, v: u32| unsafe { core::ptr::write_volatile(p.add(i), v) };
        set(LSR, LSR_THR_EMPTY as u32);
        let uart = unsafe { Ns16550::new(p as usize, 2, 4) };
        uart.init(100_000_000, 115_200);
        // 100e6 / (16 * 115200) = 54.25 -> 54
        assert_eq!(reg(RBR_THR_DLL), 54);
        assert_eq!(reg(LCR), LCR_8N1 as u32);
        assert_eq!(reg(FCR), FCR_ENABLE_CLEAR as u32);
        uart.putc(b'x');
        assert_eq!(reg(RBR_THR_DLL), b'x' as u32);
        assert_eq!(uart.try_write(&[b'y'; 40]), FIFO_DEPTH, "a free FIFO takes 16");
        set(LSR, 0);
        assert_eq!(uart.try_write(b"z"), 0, "a busy transmitter takes nothing, no wait");
        assert_eq!(reg(RBR_THR_DLL), b'y' as u32);
        set(LSR, LSR_THR_EMPTY as u32);
        assert_eq!(uart.getc(), None);
        set(LSR, (LSR_THR_EMPTY | LSR_DATA_READY) as u32);
        set(RBR_THR_DLL, b'k' as u32);
        assert_eq!(uart.getc(), Some(b'k'));
    }

    #[test]
    fn byte_registers_are_packed() {
        let mut regs = [0u8; 8];
        let p = regs.as_mut_ptr();
        unsafe { core::ptr::write_volatile(p.add(LSR), LSR_THR_EMPTY) };
        let uart = unsafe { Ns16550::new(p as usize, 0, 1) };
        uart.init(0, 0);
        assert_eq!(unsafe { core::ptr::read_volatile(p.add(LCR)) }, LCR_8N1);
        uart.putc(b'!');
        assert_eq!(unsafe { core::ptr::read_volatile(p) }, b'!');
    }
}
