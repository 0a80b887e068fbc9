//! `print!`-style output through the kernel's debug console.
use core::fmt::{self, Write};

pub struct DebugConsole;

impl Write for DebugConsole {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        s.bytes().for_each(crate::syscall::debug_put_char);
        Ok(())
    }
}

pub fn print(args: fmt::Arguments) {
    let _ = DebugConsole.write_fmt(args);
}

#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => { $crate::debug::print(format_args!("{}\n", format_args!($($arg)*))) };
}
