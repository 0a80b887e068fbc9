//! The executor's ready tasks: one FIFO per priority, linked through the slots' `next` fields,
//! and the two-level bitmap of non-empty priorities, so picking the next task is O(1).
//! Executor thread only. `link(i)` gives slot i's `next` field.
use super::bitmap::{PrioBitmap, PRIORITIES};
use super::shared::NIL;
use core::sync::atomic::{AtomicU32, Ordering::Relaxed};

pub(crate) struct RunQueue {
    ready: PrioBitmap,
    head: [u32; PRIORITIES],
    tail: [u32; PRIORITIES],
}

impl RunQueue {
    pub const fn new() -> RunQueue {
        RunQueue { ready: PrioBitmap::new(), head: [NIL; PRIORITIES], tail: [NIL; PRIORITIES] }
    }

    /// Append slot `idx` to the FIFO of priority `prio`.
    pub fn push<'a>(&mut self, idx: u32, prio: u8, link: impl Fn(u32) -> &'a AtomicU32) {
        let p = prio as usize;
        link(idx).store(NIL, Relaxed);
        match self.tail[p] {
            NIL => {
                self.head[p] = idx;
                self.ready.insert(prio);
            }
            last => link(last).store(idx, Relaxed),
        }
        self.tail[p] = idx;
    }

    /// Remove the oldest task of the highest non-empty priority.
    pub fn pop<'a>(&mut self, link: impl Fn(u32) -> &'a AtomicU32) -> Option<u32> {
        let prio = self.ready.highest()?;
        let p = prio as usize;
        let idx = self.head[p];
        let next = link(idx).load(Relaxed);
        self.head[p] = next;
        if next == NIL {
            self.tail[p] = NIL;
            self.ready.remove(prio);
        }
        Some(idx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_priority_first_fifo_within() {
        let links: Vec<AtomicU32> = (0..8).map(|_| AtomicU32::new(NIL)).collect();
        let link = |i: u32| &links[i as usize];
        let mut q = RunQueue::new();
        for (idx, prio) in [(0, 5), (1, 200), (2, 5), (3, 0), (4, 200), (5, 64), (6, 63), (7, 255)] {
            q.push(idx, prio, link);
        }
        let order: Vec<u32> = core::iter::from_fn(|| q.pop(link)).collect();
        assert_eq!(order, [7, 1, 4, 5, 6, 0, 2, 3]);
        // Emptied completely: a push after that starts a fresh list.
        q.push(2, 9, link);
        assert_eq!(q.pop(link), Some(2));
        assert_eq!(q.pop(link), None);
    }
}
