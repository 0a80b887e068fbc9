//! The console ring: bytes on their way to the UART, in the order they were appended
//! (`abi::console`). Appenders on any hart, with or without the kernel lock, are serialised by
//! a spin lock held for the copy only; one drainer at a time takes bytes from the other end.
//! The two ends meet through `head` and `tail` alone: an appender writes only the free part,
//! the drainer reads only the filled part.
use abi::console::{KERNEL_RESERVE, RING_BYTES};
use core::cell::UnsafeCell;
use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};

const MASK: usize = RING_BYTES - 1;
const _: () = assert!(RING_BYTES.is_power_of_two());
/// User output stops here: the rest is kept for the kernel's own messages.
pub const USER_LIMIT: usize = RING_BYTES - KERNEL_RESERVE;

/// The two ends share a line: `pending` (every slow-path exit) reads both with one miss at
/// most, and only output writes it.
#[repr(C, align(64))]
pub struct Ring {
    /// Free-running counts: bytes taken by the drainer, bytes appended.
    head: AtomicUsize,
    tail: AtomicUsize,
    bytes: UnsafeCell<[u8; RING_BYTES]>,
}

// SAFETY: appenders write only [tail, head + RING_BYTES) under the append lock; the one drainer
// reads only [head, tail); `tail` is published with Release after the bytes, `head` after the
// drainer is done with them.
unsafe impl Sync for Ring {}

pub static RING: Ring =
    Ring { head: AtomicUsize::new(0), tail: AtomicUsize::new(0), bytes: UnsafeCell::new([0; RING_BYTES]) };

/// Serialises appenders (it guards the ring's free part and `UNREPORTED`'s updates).
pub static APPEND: spin::Mutex<()> = spin::Mutex::new(());
/// Kernel bytes dropped since the last "[N bytes dropped]" line (read without the lock).
pub static UNREPORTED: AtomicUsize = AtomicUsize::new(0);

impl Ring {
    /// Anything waiting (a hint: the drainer looks again properly).
    #[inline(always)]
    pub fn nonempty(&self) -> bool {
        self.tail.load(Ordering::Relaxed) != self.head.load(Ordering::Relaxed)
    }

    /// Bytes waiting.
    pub fn queued(&self) -> usize {
        self.tail.load(Ordering::Acquire).wrapping_sub(self.head.load(Ordering::Acquire))
    }

    /// The filled part as at most two runs (the second after the wrap), for the drainer only.
    pub fn filled(&self) -> (&[u8], &[u8]) {
        let head = self.head.load(Ordering::Relaxed);
        let n = self.tail.load(Ordering::Acquire).wrapping_sub(head);
        let start = head & MASK;
        let first = n.min(RING_BYTES - start);
        // SAFETY: [head, head + n) is filled and no appender writes it until `consume`.
        let all = unsafe { &*self.bytes.get() };
        (&all[start..start + first], &all[..n - first])
    }

    /// The drainer is done with `n` bytes from the head.
    pub fn consume(&self, n: usize) {
        self.head.store(self.head.load(Ordering::Relaxed).wrapping_add(n), Ordering::Release);
    }

    /// An appender's view, under the append lock.
    pub fn writer<'a>(&'a self, lock: &'a mut spin::MutexGuard<'static, ()>) -> Writer<'a> {
        Writer { ring: self, tail: self.tail.load(Ordering::Relaxed), _lock: lock }
    }
}

/// Appends through the append lock's guard; the bytes become visible to the drainer at
/// `publish` (or when dropped).
pub struct Writer<'a> {
    ring: &'a Ring,
    tail: usize,
    _lock: &'a mut spin::MutexGuard<'static, ()>,
}

impl Writer<'_> {
    fn used(&self) -> usize {
        self.tail.wrapping_sub(self.ring.head.load(Ordering::Acquire))
    }

    /// Room left below `limit` (`RING_BYTES`, or `USER_LIMIT` for user output).
    pub fn room(&self, limit: usize) -> usize {
        limit.saturating_sub(self.used())
    }

    fn put_raw(&mut self, b: u8) {
        // SAFETY: the caller checked the room: this byte is in the free part, which only the
        // append lock's holder writes.
        unsafe { (*self.ring.bytes.get())[self.tail & MASK] = b };
        self.tail = self.tail.wrapping_add(1);
    }

    /// One byte as the console shows it ('\n' as CRLF, anything but ASCII as '?'), if it fits
    /// below `limit`.
    pub fn put_shown(&mut self, b: u8, limit: usize) -> bool {
        let need = if b == b'\n' { 2 } else { 1 };
        if self.room(limit) < need {
            return false;
        }
        if b == b'\n' {
            self.put_raw(b'\r');
        }
        self.put_raw(if b.is_ascii() { b } else { b'?' });
        true
    }

    /// Kernel output: what does not fit is counted as dropped.
    pub fn put_kernel(&mut self, s: &[u8]) {
        for &b in s {
            if !self.put_shown(b, RING_BYTES) {
                UNREPORTED.store(UNREPORTED.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                super::count_dropped(1);
            }
        }
    }

    /// The "[N bytes dropped]" line for kernel bytes dropped so far, if it fits now.
    pub fn note_dropped(&mut self) {
        let dropped = UNREPORTED.load(Ordering::Relaxed);
        if dropped == 0 {
            return;
        }
        let mut line = LineBuf::default();
        // On a line of its own: the message it cut short ends mid-line.
        let _ = fmt::write(&mut line, format_args!("\n[{dropped} bytes dropped]\n"));
        let text = line.as_bytes();
        if self.room(RING_BYTES) >= text.len() + 2 {
            for &b in text {
                self.put_shown(b, RING_BYTES);
            }
            UNREPORTED.store(0, Ordering::Relaxed);
        }
    }

    pub fn publish(&self) {
        self.ring.tail.store(self.tail, Ordering::Release);
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        self.publish();
    }
}

impl fmt::Write for Writer<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.put_kernel(s.as_bytes());
        Ok(())
    }
}

/// A short line formatted on the stack.
struct LineBuf {
    bytes: [u8; 40],
    len: usize,
}

impl Default for LineBuf {
    fn default() -> Self {
        LineBuf { bytes: [0; 40], len: 0 }
    }
}

impl LineBuf {
    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl fmt::Write for LineBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let n = s.len().min(self.bytes.len() - self.len);
        self.bytes[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}
