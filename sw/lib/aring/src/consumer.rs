//! The consuming side of a ring.
use crate::sync::Ordering;
use crate::{flag, Item, Notify, RingError, RingMem};

/// An item taken from a ring, and whether the producer (asleep on a full ring) must be
/// signalled because of the space it freed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Popped {
    pub item: Item,
    pub notify: Notify,
}

/// Pops items. Keeps its own copy of the head and the last tail it saw; each tail read from
/// shared memory must lie between the last one seen and the published head + capacity, or the
/// ring is corrupt. Items may be taken one by one and their slots released together: one
/// index store and one look at the producer's flag per batch.
#[derive(Debug)]
pub struct Consumer {
    mem: RingMem,
    /// Our head, items taken but not yet released included.
    head: u64,
    /// The head the producer can see.
    released: u64,
    tail_seen: u64,
    broken: bool,
}

impl Consumer {
    pub(crate) fn new(mem: RingMem) -> Consumer {
        let head = mem.header().head.0.load(Ordering::Relaxed);
        Consumer { mem, head, released: head, tail_seen: head, broken: false }
    }

    pub fn capacity(&self) -> usize {
        self.mem.capacity()
    }

    /// Take the oldest item, `Ok(None)` if the ring is empty. [`RingError::Corrupt`] is final.
    pub fn pop(&mut self) -> Result<Option<Popped>, RingError> {
        let Some(item) = self.take()? else { return Ok(None) };
        Ok(Some(Popped { item, notify: self.release() }))
    }

    /// Take the oldest item (`Ok(None)` if the ring is empty) without giving its slot back:
    /// that happens at the next [`Consumer::release`] (or `pop`/`skip`), for every item taken
    /// since.
    pub fn take(&mut self) -> Result<Option<Item>, RingError> {
        if self.available()? == 0 {
            return Ok(None);
        }
        let item = Item::from_words(self.mem.slot(self.head).read());
        self.head = self.head.wrapping_add(1);
        Ok(Some(item))
    }

    /// Give the producer back the slots of every item taken: one release store of the head,
    /// then the producer's flag (`Notify::Signal`: it waits for space and must be sent its
    /// notification). Quiet, and nothing written, when nothing was taken since.
    pub fn release(&mut self) -> Notify {
        if self.released == self.head {
            return Notify::Quiet;
        }
        self.released = self.head;
        // Release: our reads of the slots are done before the producer may reuse them.
        self.mem.header().head.0.store(self.head, Ordering::Release);
        Notify::from(flag::take(&self.mem.header().producer_sleep.0))
    }

    /// Items ready, from the cached tail when that already shows some, else from a fresh,
    /// validated read of the shared tail.
    pub fn available(&mut self) -> Result<usize, RingError> {
        if self.broken {
            return Err(RingError::Corrupt);
        }
        if self.tail_seen == self.head {
            self.refresh()?;
        }
        Ok(self.tail_seen.wrapping_sub(self.head) as usize)
    }

    /// Items ready, from a fresh, validated read of the shared tail.
    pub fn available_now(&mut self) -> Result<usize, RingError> {
        if self.broken {
            return Err(RingError::Corrupt);
        }
        self.refresh()?;
        Ok(self.tail_seen.wrapping_sub(self.head) as usize)
    }

    fn refresh(&mut self) -> Result<(), RingError> {
        // Acquire: the producer's writes of the slots before this tail are visible.
        let tail = self.mem.header().tail.0.load(Ordering::Acquire);
        let limit = self.released.wrapping_add(self.mem.mask + 1);
        // Forward only, and never more than a full ring ahead of us.
        if tail.wrapping_sub(self.tail_seen) > limit.wrapping_sub(self.tail_seen) {
            self.broken = true;
            return Err(RingError::Corrupt);
        }
        self.tail_seen = tail;
        Ok(())
    }

    /// The item `k` places behind the oldest one, without taking it (`Ok(None)` while fewer
    /// than `k + 1` are ready): a consumer that takes multi-item messages, or that must finish
    /// a message before it may take it, looks first and [`Consumer::skip`]s after.
    pub fn peek(&mut self, k: usize) -> Result<Option<Item>, RingError> {
        let mut n = self.available()?;
        if n <= k {
            n = self.available_now()?;
        }
        if n <= k {
            return Ok(None);
        }
        Ok(Some(Item::from_words(self.mem.slot(self.head.wrapping_add(k as u64)).read())))
    }

    /// Where the producer publishes its tail, for a poller that cannot hold this consumer
    /// while it waits (a kernel hart that let its lock go): reading it tells that something
    /// was published, nothing more; the value is only trusted once [`Consumer::available`]
    /// has validated it.
    #[cfg(not(loom))]
    pub fn tail_word(&self) -> *const core::sync::atomic::AtomicU64 {
        &self.mem.header().tail.0
    }

    /// Take the `n` oldest items (seen through [`Consumer::peek`]) without reading them again;
    /// never more than are ready.
    pub fn skip(&mut self, n: usize) -> Result<Notify, RingError> {
        let n = n.min(self.available_now()?);
        if n == 0 {
            return Ok(Notify::Quiet);
        }
        self.head = self.head.wrapping_add(n as u64);
        Ok(self.release())
    }

    /// Sleep protocol, step 1 (the ring was empty): announce that we wait for items. Then
    /// re-check with [`Consumer::available`]; if it shows items call
    /// [`Consumer::cancel_sleep`], else block until signalled and call `cancel_sleep` after
    /// waking. A thread with several rings announces on all of them, then re-checks all.
    pub fn prepare_sleep(&self) {
        flag::announce(&self.mem.header().consumer_sleep.0);
    }

    pub fn cancel_sleep(&self) {
        flag::cancel(&self.mem.header().consumer_sleep.0);
    }

    /// Both sleep steps: true if the caller may now block (and must call
    /// [`Consumer::cancel_sleep`] when it wakes), false if items arrived (flag already
    /// cleared).
    pub fn try_sleep(&mut self) -> Result<bool, RingError> {
        self.prepare_sleep();
        let empty = self.available()? == 0;
        if !empty {
            self.cancel_sleep();
        }
        Ok(empty)
    }
}
