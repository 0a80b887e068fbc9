//! Kernel console: the device tree's UART, mapped in the kernel window; SBI legacy putchar
//! until then (and for panics when the UART lock is held).
use core::fmt::{self, Write};
use ns16550::Ns16550;
use spin::Mutex;

static UART: Mutex<Option<Ns16550>> = Mutex::new(None);

pub fn init(m: &devtree::Machine) {
    if let Some(u) = m.uart {
        // SAFETY: the device tree describes this UART; mm maps it at phys_to_virt(base).
        // The firmware already configured the line; do not touch the divisor again.
        let uart = unsafe { Ns16550::new(crate::mm::phys_to_virt(u.reg.base), u.reg_shift, u.reg_io_width) };
        *UART.lock() = Some(uart);
    }
}

struct Sink<'a>(Option<&'a mut Ns16550>);

impl Write for Sink<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        match self.0.as_mut() {
            Some(u) => u.write_str(s),
            None => {
                for b in s.bytes() {
                    sbi_defs::call::legacy_putchar(b);
                }
                Ok(())
            }
        }
    }
}

pub fn print(args: fmt::Arguments) {
    // Interrupts off while holding the lock: a handler that prints must not deadlock.
    let was = crate::arch::cpu::interrupts_off();
    {
        let mut guard = UART.lock();
        let _ = Sink(guard.as_mut()).write_fmt(args);
    }
    if was {
        crate::arch::cpu::interrupts_on();
    }
}

/// One byte from user space (DebugPutChar); '\n' becomes CRLF like kernel output.
pub fn put_byte(b: u8) {
    print(format_args!("{}", if b.is_ascii() { b as char } else { '?' }));
}

/// Bytes from user space (DebugPutString): non-ASCII shown as '?'.
pub fn put_bytes(bytes: &[u8]) {
    let was = crate::arch::cpu::interrupts_off();
    {
        let mut guard = UART.lock();
        let mut sink = Sink(guard.as_mut());
        for &b in bytes {
            let c = if b.is_ascii() { b as char } else { '?' };
            let _ = sink.write_char(c);
        }
    }
    if was {
        crate::arch::cpu::interrupts_on();
    }
}

/// For panics: never wait for a lock another hart might hold forever.
pub fn panic_print(args: fmt::Arguments) {
    crate::arch::cpu::interrupts_off();
    match UART.try_lock() {
        Some(mut g) => {
            let _ = Sink(g.as_mut()).write_fmt(args);
        }
        None => {
            let _ = Sink(None).write_fmt(args);
        }
    }
}

#[macro_export]
macro_rules! kprintln {
    ($($arg:tt)*) => {
        $crate::console::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}
