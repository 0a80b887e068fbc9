//! Kernel console: every output path (the kernel's `kprintln`, user DebugPutChar and
//! DebugPutString, async PutChar and PutString) appends to a ring (`ring.rs`) and returns
//! without waiting; harts hand the ring to the device tree's UART outside the kernel lock, only
//! as much as its FIFO takes (`drain`), where they hold no lock: on the way out of the kernel
//! (not the IPC fastpath's), in the idle loop, after kernel output printed without the lock.
//! Only the end of a run (`flush`, DebugHalt and panics) waits for the UART.
mod ring;

use core::fmt::{self, Write};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use ns16550::Ns16550;
use ring::{APPEND, RING, UNREPORTED, USER_LIMIT};

static UART: spin::Once<Ns16550> = spin::Once::new();
/// No UART in the device tree: the drain writes through SBI's console, a byte per turn.
static SBI_ONLY: AtomicBool = AtomicBool::new(false);
/// Who drains: one hart at a time, so bytes leave in ring order.
static DRAINING: AtomicBool = AtomicBool::new(false);
/// `abi::stat::CONSOLE_*` counters (global: the drainer and appenders are serialised anyway).
static WRITTEN: AtomicU64 = AtomicU64::new(0);
static WRITTEN_LOCKED: AtomicU64 = AtomicU64::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Bytes one drain hands over at most: a FIFO's worth on the board (its UART takes no more
/// without waiting); QEMU's and the RTL model's take every byte at once, and this bounds the
/// time a hart leaving the kernel spends on them.
const DRAIN_BUDGET: usize = ns16550::FIFO_DEPTH;
/// The idle loop has nothing better to do: it drains more per turn (between looks at its
/// mailbox and interrupts).
pub const IDLE_DRAIN_BUDGET: usize = 256;
/// A `flush` waits this many turns for another hart's drain to end (one budget's worth of
/// UART writes) before it takes over: that hart may have panicked in the middle.
const FLUSH_WAIT_TURNS: u32 = 1_000_000;

pub fn init(m: &devtree::Machine) {
    SBI_ONLY.store(m.uart.is_none(), Ordering::Relaxed);
    if let Some(u) = m.uart {
        // SAFETY: the device tree describes this UART; mm maps it at phys_to_virt(base).
        // The firmware already configured the line; do not touch the divisor again.
        UART.call_once(|| unsafe { Ns16550::new(crate::mm::phys_to_virt(u.reg.base), u.reg_shift, u.reg_io_width) });
    }
}

pub(crate) fn count_dropped(n: u64) {
    DROPPED.fetch_add(n, Ordering::Relaxed);
}

/// Append under the append lock, interrupts off (a handler that prints must not deadlock).
fn append<R>(f: impl FnOnce(&mut ring::Writer) -> R) -> R {
    let was = crate::arch::cpu::interrupts_off();
    let r = {
        let mut guard = APPEND.lock();
        let mut w = RING.writer(&mut guard);
        f(&mut w)
    };
    if was {
        crate::arch::cpu::interrupts_on();
    }
    r
}

/// Kernel output (`kprintln`): appended whole or, where the ring is full, the rest dropped and
/// counted. Without the kernel lock it also drains.
pub fn print(args: fmt::Arguments) {
    append(|w| {
        w.note_dropped();
        let _ = w.write_fmt(args);
    });
    if !crate::lock::held() {
        drain(DRAIN_BUDGET);
    }
}

/// User output (DebugPutChar/DebugPutString, async PutChar/PutString): how many of `bytes`
/// the ring took ('\n' stored as CRLF, non-ASCII as '?'); fewer, down to 0, when it is full.
pub fn put_user(bytes: &[u8]) -> usize {
    append(|w| bytes.iter().take_while(|&&b| w.put_shown(b, USER_LIMIT)).count())
}

/// Anything waiting for the UART (two loads of one line).
#[inline(always)]
pub fn pending() -> bool {
    RING.nonempty()
}

/// The slow path's exit, the lock gone, `pending` said so: out of the exit's straight line.
#[cold]
#[inline(never)]
pub fn drain_on_exit() {
    drain(DRAIN_BUDGET);
}

/// Hand the UART what it takes now, at most `budget` bytes, without waiting; nothing if
/// another hart is draining (it keeps the order).
pub fn drain(budget: usize) {
    let uart = UART.get();
    if (uart.is_none() && !SBI_ONLY.load(Ordering::Relaxed)) || !pending() || DRAINING.swap(true, Ordering::Acquire) {
        return;
    }
    // The UART takes a FIFO's worth when its transmitter is idle; SBI's console a byte (and
    // waits for it in the firmware).
    let put = |bytes: &[u8]| match uart {
        Some(u) => u.try_write(bytes),
        None => {
            sbi_defs::call::legacy_putchar(bytes[0]);
            1
        }
    };
    let (a, b) = RING.filled();
    let mut done = 0;
    for run in [a, b] {
        let run = &run[..run.len().min(budget - done)];
        let mut at = 0;
        while at < run.len() {
            match put(&run[at..]) {
                0 => break,
                n => at += n,
            }
            if uart.is_none() {
                break;
            }
        }
        done += at;
        if at < run.len() || done == budget {
            break;
        }
    }
    RING.consume(done);
    WRITTEN.fetch_add(done as u64, Ordering::Relaxed);
    if crate::lock::held() {
        WRITTEN_LOCKED.fetch_add(done as u64, Ordering::Relaxed);
    }
    DRAINING.store(false, Ordering::Release);
    if done > 0 && UNREPORTED.load(Ordering::Relaxed) > 0 {
        append(|w| w.note_dropped());
    }
}

/// Write out everything, waiting for the UART (or SBI's console without one): the end of a
/// run (DebugHalt, a panic), where nothing may be left behind.
pub fn flush() {
    let mut turns = 0;
    while DRAINING.swap(true, Ordering::Acquire) && turns < FLUSH_WAIT_TURNS {
        turns += 1;
        core::hint::spin_loop();
    }
    loop {
        let (a, b) = RING.filled();
        if a.is_empty() {
            break;
        }
        let n = a.len() + b.len();
        for &byte in a.iter().chain(b) {
            match UART.get() {
                Some(u) => u.putc(byte),
                None => sbi_defs::call::legacy_putchar(byte),
            }
        }
        RING.consume(n);
        WRITTEN.fetch_add(n as u64, Ordering::Relaxed);
    }
    DRAINING.store(false, Ordering::Release);
}

/// `abi::stat::CONSOLE_*`.
pub fn stat(which: usize) -> Option<u64> {
    use abi::stat::*;
    match which {
        CONSOLE_QUEUED => Some(RING.queued() as u64),
        CONSOLE_WRITTEN => Some(WRITTEN.load(Ordering::Relaxed)),
        CONSOLE_DROPPED => Some(DROPPED.load(Ordering::Relaxed)),
        CONSOLE_WRITTEN_LOCKED => Some(WRITTEN_LOCKED.load(Ordering::Relaxed)),
        _ => None,
    }
}

/// Straight to the device, waiting per byte (panics only).
struct Direct;

impl Write for Direct {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            for c in if b == b'\n' { &b"\r\n"[..] } else { core::slice::from_ref(&b) } {
                match UART.get() {
                    Some(u) => u.putc(*c),
                    None => sbi_defs::call::legacy_putchar(*c),
                }
            }
        }
        Ok(())
    }
}

/// For panics: what the ring holds first (in order), then the message, synchronously; never
/// waits for a lock another hart might hold forever.
pub fn panic_print(args: fmt::Arguments) {
    crate::arch::cpu::interrupts_off();
    flush();
    let _ = Direct.write_fmt(args);
}

#[macro_export]
macro_rules! kprintln {
    ($($arg:tt)*) => {
        $crate::console::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}
