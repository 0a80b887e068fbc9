//! The producing side of a ring.
use crate::sync::Ordering;
use crate::{flag, Item, Notify, RingError, RingMem};

/// Pushes items. Keeps its own copy of the tail (the shared one is only published, never read
/// back) and the last head it saw; each head read from shared memory must lie between the last
/// one seen and the tail we published, or the ring is corrupt. Items may be staged (written,
/// not yet visible) and published together: one index store and one look at the consumer's
/// flag per batch.
#[derive(Debug)]
pub struct Producer {
    mem: RingMem,
    /// Our tail, staged items included.
    tail: u64,
    /// The tail the consumer can see.
    published: u64,
    head_seen: u64,
    broken: bool,
}

impl Producer {
    pub(crate) fn new(mem: RingMem) -> Producer {
        // Our own index, as the setup left it; the peer's is validated against it from now on.
        let tail = mem.header().tail.0.load(Ordering::Relaxed);
        Producer { mem, tail, published: tail, head_seen: tail, broken: false }
    }

    pub fn capacity(&self) -> usize {
        self.mem.capacity()
    }

    /// Publish `item`. `Notify::Signal` means the consumer announced sleep and must now be sent
    /// its notification. [`RingError::Full`] leaves the ring unchanged; [`RingError::Corrupt`]
    /// is final (every later call returns it too).
    pub fn push(&mut self, item: &Item) -> Result<Notify, RingError> {
        self.stage(item)?;
        Ok(self.publish())
    }

    /// Write `item` into the next slot without making it visible: it travels with the next
    /// [`Producer::publish`] (or `push`/`push_all`). Errors as `push`.
    pub fn stage(&mut self, item: &Item) -> Result<(), RingError> {
        if self.free()? == 0 {
            return Err(RingError::Full);
        }
        self.mem.slot(self.tail).write(item.to_words());
        self.tail = self.tail.wrapping_add(1);
        Ok(())
    }

    /// Items staged and not yet published.
    pub fn staged(&self) -> usize {
        self.tail.wrapping_sub(self.published) as usize
    }

    /// Make every staged item visible: one release store of the tail, then the consumer's
    /// flag (`Notify::Signal`: it announced sleep and must be sent its notification). Quiet,
    /// and nothing written, when nothing is staged.
    pub fn publish(&mut self) -> Notify {
        if self.published == self.tail {
            return Notify::Quiet;
        }
        self.published = self.tail;
        // Release: the slots' words are visible before the consumer can see the new tail.
        self.mem.header().tail.0.store(self.tail, Ordering::Release);
        Notify::from(flag::take(&self.mem.header().consumer_sleep.0))
    }

    /// Publish all of `items` at once (one index store, one look at the consumer's flag), or
    /// none: [`RingError::Full`] if they do not all fit.
    pub fn push_all(&mut self, items: &[Item]) -> Result<Notify, RingError> {
        if items.is_empty() {
            return Ok(Notify::Quiet);
        }
        if self.free()? < items.len() && self.free_now()? < items.len() {
            return Err(RingError::Full);
        }
        for (k, it) in items.iter().enumerate() {
            self.mem.slot(self.tail.wrapping_add(k as u64)).write(it.to_words());
        }
        self.tail = self.tail.wrapping_add(items.len() as u64);
        Ok(self.publish())
    }

    /// Free slots, from the cached head when that already shows space, else from a fresh,
    /// validated read of the shared head.
    pub fn free(&mut self) -> Result<usize, RingError> {
        if self.broken {
            return Err(RingError::Corrupt);
        }
        let cap = self.mem.mask + 1;
        let used = self.tail.wrapping_sub(self.head_seen);
        if used < cap {
            return Ok((cap - used) as usize);
        }
        self.refresh()?;
        Ok((cap - self.tail.wrapping_sub(self.head_seen)) as usize)
    }

    /// Free slots from a fresh read of the shared head. `free` answers from the cached head
    /// whenever that shows any space, so it only ever under-counts; a caller that needs more
    /// than one slot (a server holding a reply credit per request in flight) asks this one when
    /// the cached count falls short.
    pub fn free_now(&mut self) -> Result<usize, RingError> {
        if self.broken {
            return Err(RingError::Corrupt);
        }
        self.refresh()?;
        Ok((self.mem.mask + 1 - self.tail.wrapping_sub(self.head_seen)) as usize)
    }

    fn refresh(&mut self) -> Result<(), RingError> {
        // Acquire: the consumer has finished reading every slot before the head it published.
        let head = self.mem.header().head.0.load(Ordering::Acquire);
        // The consumer may only move forward and never past what we published.
        if head.wrapping_sub(self.head_seen) > self.published.wrapping_sub(self.head_seen) {
            self.broken = true;
            return Err(RingError::Corrupt);
        }
        self.head_seen = head;
        Ok(())
    }

    /// Sleep protocol, step 1 (the ring was full): announce that we wait for space. Then
    /// re-check with [`Producer::free`]; if it shows space call [`Producer::cancel_sleep`],
    /// else block until signalled and call `cancel_sleep` after waking.
    pub fn prepare_sleep(&self) {
        flag::announce(&self.mem.header().producer_sleep.0);
    }

    pub fn cancel_sleep(&self) {
        flag::cancel(&self.mem.header().producer_sleep.0);
    }

    /// Whether the consumer has announced that it sleeps (a push now would have to signal
    /// it). Only a snapshot: for tests and diagnostics, never for the protocol itself.
    pub fn consumer_asleep(&self) -> bool {
        self.mem.header().consumer_sleep.0.load(Ordering::Relaxed) != crate::layout::AWAKE
    }

    /// Both sleep steps: true if the caller may now block (it must then call
    /// [`Producer::cancel_sleep`] when it wakes), false if space appeared (flag already
    /// cleared).
    pub fn try_sleep(&mut self) -> Result<bool, RingError> {
        self.prepare_sleep();
        let full = self.free()? == 0;
        if !full {
            self.cancel_sleep();
        }
        Ok(full)
    }
}
