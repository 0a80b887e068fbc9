//! The queue of waiting futures: an intrusive doubly-linked list of [`Node`]s, each living
//! inside the pinned future that waits, highest priority first and FIFO within a priority.
//! Every operation runs under the owning primitive's lock, except reading `granted`.
use crate::sync::{AtomicBool, Ordering, UnsafeCell};
use core::marker::PhantomPinned;
use core::ptr;
use core::task::Waker;

/// One waiting future's entry. Pinned in its future: the list points at it.
pub(crate) struct Node {
    /// Set (Release) by whoever takes the node off the list to hand it what it waited for; the
    /// last write anyone but the owner makes to the node, so the owner may read it without the
    /// lock and free the node right after seeing it.
    granted: AtomicBool,
    links: UnsafeCell<Links>,
    _pinned: PhantomPinned,
}

struct Links {
    prev: *const Node,
    next: *const Node,
    prio: u8,
    waker: Option<Waker>,
}

impl Node {
    crate::sync::const_unless_loom! {
        pub fn new() -> Node {
            Node {
                granted: AtomicBool::new(false),
                links: UnsafeCell::new(Links {
                    prev: ptr::null(),
                    next: ptr::null(),
                    prio: 0,
                    waker: None,
                }),
                _pinned: PhantomPinned,
            }
        }
    }

    /// Whether the node was handed its grant (and so is off the list for good).
    pub fn is_granted(&self) -> bool {
        self.granted.load(Ordering::Acquire)
    }

    fn links<R>(&self, f: impl FnOnce(&mut Links) -> R) -> R {
        // SAFETY: links are only touched under the list owner's lock (every caller holds it),
        // so no other reference exists while `f` runs.
        self.links.with_mut(|l| f(unsafe { &mut *l }))
    }

    /// Under the lock: the waker to call when granted (kept unless it would wake the same task).
    pub fn set_waker(&self, w: &Waker) {
        self.links(|l| match &l.waker {
            Some(old) if old.will_wake(w) => {}
            _ => l.waker = Some(w.clone()),
        });
    }
}

/// The list head. Holds raw pointers into pinned futures: only touched under the owner's lock.
pub(crate) struct WaitList {
    head: *const Node,
    tail: *const Node,
}

impl WaitList {
    pub const fn new() -> WaitList {
        WaitList { head: ptr::null(), tail: ptr::null() }
    }

    pub fn is_empty(&self) -> bool {
        self.head.is_null()
    }

    /// Queue `node` (not queued, pinned until it leaves the list) behind every node of its
    /// priority or higher.
    ///
    /// # Safety
    /// The caller holds the owner's lock, and `node` stays where it is until it is removed or
    /// granted (its future's `Drop` removes it).
    pub unsafe fn push(&mut self, node: &Node, prio: u8, waker: &Waker) {
        // Walk back from the tail past lower priorities: O(1) when all are equal.
        let mut after = self.tail;
        // SAFETY: every listed node is alive (caller's contract for each of them).
        while !after.is_null() && unsafe { &*after }.links(|l| l.prio) < prio {
            after = unsafe { &*after }.links(|l| l.prev);
        }
        let before = if after.is_null() { self.head } else { unsafe { &*after }.links(|l| l.next) };
        let me: *const Node = node;
        node.links(|l| {
            l.prev = after;
            l.next = before;
            l.prio = prio;
        });
        node.set_waker(waker);
        // SAFETY (both branches): listed nodes are alive.
        match after.is_null() {
            true => self.head = me,
            false => unsafe { &*after }.links(|l| l.next = me),
        }
        match before.is_null() {
            true => self.tail = me,
            false => unsafe { &*before }.links(|l| l.prev = me),
        }
    }

    /// Take `node` off the list (a future that stops waiting).
    ///
    /// # Safety
    /// The caller holds the owner's lock and `node` is on this list.
    pub unsafe fn remove(&mut self, node: &Node) {
        let (prev, next) = node.links(|l| {
            l.waker = None;
            (core::mem::replace(&mut l.prev, ptr::null()), core::mem::replace(&mut l.next, ptr::null()))
        });
        // SAFETY (both branches): listed nodes are alive.
        match prev.is_null() {
            true => self.head = next,
            false => unsafe { &*prev }.links(|l| l.next = next),
        }
        match next.is_null() {
            true => self.tail = prev,
            false => unsafe { &*next }.links(|l| l.prev = prev),
        }
    }

    /// Take the first node off the list, mark it granted and return its waker (to be called
    /// after the lock is released). `None` if the list is empty.
    ///
    /// # Safety
    /// The caller holds the owner's lock.
    pub unsafe fn grant_first(&mut self) -> Option<Option<Waker>> {
        // SAFETY: listed nodes are alive.
        let node = unsafe { self.head.as_ref() }?;
        let waker = node.links(|l| l.waker.take());
        // SAFETY: lock held, node listed.
        unsafe { self.remove(node) };
        // Last touch of the node: from here its owner may see it granted and free it.
        node.granted.store(true, Ordering::Release);
        Some(waker)
    }
}

/// Wakers taken under a lock, called once it is released (a waker may do anything, e.g. take
/// another primitive's lock). Fixed size: grants beyond it are done in further rounds.
pub(crate) struct WakeBatch {
    wakers: [Option<Waker>; WakeBatch::SIZE],
    len: usize,
}

impl WakeBatch {
    pub const SIZE: usize = 8;

    pub const fn new() -> WakeBatch {
        WakeBatch { wakers: [const { None }; WakeBatch::SIZE], len: 0 }
    }

    pub fn is_full(&self) -> bool {
        self.len == Self::SIZE
    }

    pub fn push(&mut self, w: Option<Waker>) {
        self.wakers[self.len] = w;
        self.len += 1;
    }

    pub fn wake_all(&mut self) {
        for w in self.wakers[..self.len].iter_mut() {
            if let Some(w) = w.take() {
                w.wake();
            }
        }
        self.len = 0;
    }
}
