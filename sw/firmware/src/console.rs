//! The firmware's console: the device tree's 16550, shared by every hart behind a lock.
use ns16550::Ns16550;
use spin::Mutex;

static UART: Mutex<Option<Ns16550>> = Mutex::new(None);

pub fn init(m: &devtree::Machine) {
    if let Some(u) = m.uart {
        // SAFETY: the device tree says a 16550 with this layout lives there.
        let uart = unsafe { Ns16550::new(u.reg.base, u.reg_shift, u.reg_io_width) };
        uart.init(u.clock_hz, platform::clock::UART_BAUD as u32);
        *UART.lock() = Some(uart);
    }
}

pub fn putc(c: u8) {
    if let Some(u) = UART.lock().as_ref() {
        u.putc(c);
    }
}

pub fn getc() -> Option<u8> {
    UART.lock().as_ref().and_then(|u| u.getc())
}

pub struct Console;

impl core::fmt::Write for Console {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        if let Some(u) = UART.lock().as_mut() {
            u.write_str(s)?;
        }
        Ok(())
    }
}

#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => {{
        use core::fmt::Write;
        let _ = writeln!($crate::console::Console, $($arg)*);
    }};
}
