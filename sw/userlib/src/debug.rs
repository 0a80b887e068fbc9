//! Debug output and the other debug system calls.
use core::fmt::{self, Write};

pub use crate::syscall::{
    debug_cap_identify as cap_identify, debug_dump_scheduler as dump_scheduler, debug_get_clock as get_clock,
    debug_halt as halt, debug_put_char as put_char, debug_stat as stat,
};

/// `println!` goes through DebugPutChar, one byte per call: it never touches the IPC buffer, so
/// printing between `set_mr` and a call, or before reading a received message, is safe.
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

/// Print `bytes` with DebugPutString: copied into this thread's IPC buffer message area (which
/// it overwrites) in pieces of at most 960 bytes.
pub fn put_string(bytes: &[u8]) {
    const CHUNK: usize = abi::ipc::MSG_MAX_LENGTH * core::mem::size_of::<usize>();
    for piece in bytes.chunks(CHUNK) {
        crate::ipc::with_buffer(|b| {
            // SAFETY: msg is CHUNK bytes of plain words; piece.len() <= CHUNK.
            let dst = b.msg.as_mut_ptr() as *mut u8;
            unsafe { core::ptr::copy_nonoverlapping(piece.as_ptr(), dst, piece.len()) };
        });
        let mut done = 0;
        while done < piece.len() {
            match crate::syscall::debug_put_string_raw(piece.len() - done, done) {
                0 | usize::MAX => return,
                n => done += n,
            }
        }
    }
}

#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::debug::print(format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => { $crate::debug::print(format_args!("{}\n", format_args!($($arg)*))) };
}
