//! Debug output and the other debug system calls.
use core::fmt::{self, Write};
use core::sync::atomic::{AtomicUsize, Ordering};

pub use crate::syscall::{
    debug_cap_identify as cap_identify, debug_dump_scheduler as dump_scheduler, debug_get_clock as get_clock,
    debug_halt as halt, debug_stat as stat,
};

/// The Console cap this process prints with: the root task's `init_cap::CONSOLE` unless
/// `rt::init` found a process's info page (`bootinfo::process::CONSOLE`) or `set_console`
/// says otherwise. Every thread of the address space uses it (in its own CSpace).
static CONSOLE: AtomicUsize = AtomicUsize::new(abi::init_cap::CONSOLE);

pub fn console() -> usize {
    CONSOLE.load(Ordering::Relaxed)
}

pub fn set_console(cptr: usize) {
    CONSOLE.store(cptr, Ordering::Relaxed);
}

/// One byte with DebugPutChar; while the kernel's console ring is full, yield and try again
/// (the ring drains as harts leave the kernel). False without the Console cap.
pub fn put_char(c: u8) -> bool {
    loop {
        match crate::syscall::debug_put_char(console(), c) {
            0 => crate::syscall::yield_now(),
            1 => return true,
            _ => return false,
        }
    }
}

/// `println!` goes through DebugPutChar, one byte per call: it never touches the IPC buffer, so
/// printing between `set_mr` and a call, or before reading a received message, is safe.
pub struct DebugConsole;

impl Write for DebugConsole {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if s.bytes().all(put_char) {
            Ok(())
        } else {
            Err(fmt::Error)
        }
    }
}

pub fn print(args: fmt::Arguments) {
    let _ = DebugConsole.write_fmt(args);
}

/// Print `bytes` with DebugPutString: copied into this thread's IPC buffer message area (which
/// it overwrites) in pieces of at most 960 bytes; while the console ring is full, yield and
/// try again. Stops without the Console cap.
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
            match crate::syscall::debug_put_string_raw(console(), piece.len() - done, done) {
                usize::MAX => return,
                0 => crate::syscall::yield_now(),
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
