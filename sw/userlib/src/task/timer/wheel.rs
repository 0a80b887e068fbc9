//! A hierarchical timer wheel over intrusive nodes (the nodes live in the `Sleep` futures, which
//! are pinned, so no allocation): 8 levels of 64 slots, level `l` slots `64^l` ticks wide, so
//! the wheel reaches 2^48 ticks ahead of its current time; later entries wait in an overflow
//! list that is looked at once every 2^48 ticks. Insert and remove are O(1) (a list push or
//! unlink and an occupancy bit); the next expiry is found from the occupancy bitmaps in
//! O(levels), and its exact time from a scan of at most 32 entries of that slot. An entry is
//! cascaded to a lower level when its slot's time comes, at most once per level.
//!
//! Times are absolute ticks. `elapsed` is the wheel's current time: every entry due at or
//! before it has been handed out, and every occupied slot starts after it.
use core::cell::Cell;
use core::ptr::null;
use core::task::Waker;

pub(crate) const LEVELS: usize = 8;
const BITS: u32 = 6;
const SLOTS: usize = 1 << BITS;
/// Ticks the wheel covers ahead of its current time.
pub(crate) const RANGE: u64 = 1 << (BITS * LEVELS as u32);

/// List indices: level * SLOTS + slot, then the overflow list and the list of due entries.
const OVERFLOW: u16 = (LEVELS * SLOTS) as u16;
const DUE: u16 = OVERFLOW + 1;
const LISTS: usize = DUE as usize + 1;
const NOWHERE: u16 = u16::MAX;
/// Entries `next_expiration` looks at in the earliest list for its exact time.
const SCAN: usize = 32;

/// A timer: its time, where it is linked, the waker to call when it fires.
pub(crate) struct Node {
    prev: Cell<*const Node>,
    next: Cell<*const Node>,
    when: Cell<u64>,
    list: Cell<u16>,
    /// Handed out as due (it stays so until re-armed).
    pub fired: Cell<bool>,
    pub waker: Cell<Option<Waker>>,
}

impl Node {
    pub const fn new() -> Node {
        Node {
            prev: Cell::new(null()),
            next: Cell::new(null()),
            when: Cell::new(0),
            list: Cell::new(NOWHERE),
            fired: Cell::new(false),
            waker: Cell::new(None),
        }
    }

    pub fn linked(&self) -> bool {
        self.list.get() != NOWHERE
    }

    #[cfg(test)]
    pub fn when(&self) -> u64 {
        self.when.get()
    }
}

pub(crate) struct Wheel {
    elapsed: u64,
    heads: [*const Node; LISTS],
    /// Per level: bit s set iff slot s's list is not empty.
    occupied: [u64; LEVELS],
    len: usize,
    /// No list's span starts before this (the start of the earliest one when `pop_expired` last
    /// found nothing due; 0 after an insertion): until `now` reaches it, `pop_expired` has
    /// nothing to hand out or cascade and skips the search (a poller's timer stays linked
    /// across many parks, each of which asks).
    quiet_until: u64,
}

impl Wheel {
    pub const fn new() -> Wheel {
        Wheel { elapsed: 0, heads: [null(); LISTS], occupied: [0; LEVELS], len: 0, quiet_until: 0 }
    }

    /// Start at time `now` (an empty wheel only).
    pub fn reset(&mut self, now: u64) {
        debug_assert_eq!(self.len, 0);
        self.elapsed = now;
        self.quiet_until = 0;
    }

    #[cfg(test)]
    pub fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Timers linked (waiting or due but not yet handed out).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Link `node` (not linked) to fire at `when`. False if `when` is not after the wheel's
    /// time: it is due already, and nothing was linked.
    ///
    /// # Safety
    /// `node` must stay where it is, alive, until it is removed or handed out by
    /// [`Wheel::pop_expired`].
    pub unsafe fn insert(&mut self, node: &Node, when: u64) -> bool {
        debug_assert!(!node.linked());
        node.fired.set(false);
        node.when.set(when);
        if when <= self.elapsed {
            return false;
        }
        self.quiet_until = 0;
        self.push(node, self.list_for(when));
        self.len += 1;
        true
    }

    /// Unlink `node` if it is linked (cancel).
    pub fn remove(&mut self, node: &Node) {
        if node.linked() {
            self.unlink(node);
            self.len -= 1;
        }
    }

    /// Where an entry due at `when` (> elapsed) belongs: the level of the highest 6-bit group
    /// in which it differs from the wheel's time, the slot its time has in that level.
    fn list_for(&self, when: u64) -> u16 {
        let differ = (self.elapsed ^ when) | (SLOTS as u64 - 1);
        let level = (63 - differ.leading_zeros()) / BITS;
        if level as usize >= LEVELS {
            return OVERFLOW;
        }
        (level as usize * SLOTS + ((when >> (level * BITS)) as usize & (SLOTS - 1))) as u16
    }

    /// Append `node` to `list`. Lists run from the head by `next` (oldest first) and the
    /// head's `prev` is the tail, so appending and unlinking are O(1) with one pointer a list.
    fn push(&mut self, node: &Node, list: u16) {
        node.next.set(null());
        match unsafe_ref(self.heads[list as usize]) {
            None => {
                node.prev.set(node);
                self.heads[list as usize] = node;
            }
            Some(head) => {
                let tail = unsafe_ref(head.prev.get()).expect("a list's head knows its tail");
                tail.next.set(node);
                node.prev.set(tail);
                head.prev.set(node);
            }
        }
        node.list.set(list);
        if list < OVERFLOW {
            self.occupied[list as usize / SLOTS] |= 1 << (list as usize % SLOTS);
        }
    }

    fn unlink(&mut self, node: &Node) {
        let list = node.list.get() as usize;
        let (prev, next) = (node.prev.get(), node.next.get());
        let head = self.heads[list];
        if core::ptr::eq(head, node) {
            self.heads[list] = next;
            if let Some(n) = unsafe_ref(next) {
                n.prev.set(prev); // the tail
            }
        } else {
            let p = unsafe_ref(prev).expect("a listed node that is not the head has a prev");
            p.next.set(next);
            match unsafe_ref(next) {
                Some(n) => n.prev.set(prev),
                // It was the tail: the head learns the new one.
                None => unsafe_ref(head).expect("a list with a tail has a head").prev.set(prev),
            }
        }
        if list < OVERFLOW as usize && self.heads[list].is_null() {
            self.occupied[list / SLOTS] &= !(1 << (list % SLOTS));
        }
        node.list.set(NOWHERE);
        node.prev.set(null());
        node.next.set(null());
    }

    /// When to look at the wheel next: the earliest entry's time, or (when that is not known
    /// cheaply) a lower bound of it, the time its list's span starts. Sleeping until then and
    /// calling `pop_expired` hands out the earliest entry, or cascades it closer.
    pub fn next_expiration(&self) -> Option<u64> {
        if !self.heads[DUE as usize].is_null() {
            return Some(self.elapsed);
        }
        let (start, list) = self.next_list()?;
        // The earliest entry is in this list: its exact time if the list is short (one wake-up
        // per timer rather than one per level it cascades through), else the list's start.
        let mut p = self.heads[list as usize];
        let mut earliest = u64::MAX;
        for _ in 0..SCAN {
            let Some(n) = unsafe_ref(p) else { return Some(earliest) };
            earliest = earliest.min(n.when.get());
            p = n.next.get();
        }
        Some(if p.is_null() { earliest } else { start })
    }

    fn next_list(&self) -> Option<(u64, u16)> {
        // Lower levels hold earlier entries: every entry of level l shares the wheel's time's
        // bits above group l, and differs from it in group l.
        for level in 0..LEVELS {
            let occ = self.occupied[level];
            if occ == 0 {
                continue;
            }
            let shift = level as u32 * BITS;
            let now_slot = (self.elapsed >> shift) as u32 & (SLOTS as u32 - 1);
            let slot = (occ.rotate_right(now_slot).trailing_zeros() + now_slot) % SLOTS as u32;
            let level_range = 1u64 << (shift + BITS);
            let mut at = (self.elapsed & !(level_range - 1)) + ((slot as u64) << shift);
            if at <= self.elapsed {
                at = at.saturating_add(level_range); // next revolution (not expected: see above)
            }
            return Some((at, (level * SLOTS) as u16 + slot as u16));
        }
        if self.heads[OVERFLOW as usize].is_null() {
            return None;
        }
        // Overflow entries come into range when the wheel's time enters their 2^48 block.
        Some(((self.elapsed | (RANGE - 1)).saturating_add(1), OVERFLOW))
    }

    /// The next entry due at or before `now`, unlinked (and marked fired), in time order;
    /// None when there is none, and then the wheel's time is `now`.
    pub fn pop_expired(&mut self, now: u64) -> Option<&Node> {
        if now < self.quiet_until && self.heads[DUE as usize].is_null() {
            // Nothing starts before `quiet_until`: no list to process (an unlink since only
            // moves the earliest start later).
            self.elapsed = self.elapsed.max(now);
            return None;
        }
        loop {
            if let Some(n) = unsafe_ref(self.heads[DUE as usize]) {
                self.unlink(n);
                self.len -= 1;
                n.fired.set(true);
                return Some(n);
            }
            match self.next_list() {
                Some((at, list)) if at <= now => self.process(at, list),
                next => {
                    self.elapsed = self.elapsed.max(now);
                    self.quiet_until = next.map_or(u64::MAX, |(at, _)| at);
                    return None;
                }
            }
        }
    }

    /// The wheel's time reaches `at`, the start of `list`'s span: its entries are due or move
    /// to lower levels.
    fn process(&mut self, at: u64, list: u16) {
        self.elapsed = at;
        let mut p = self.heads[list as usize];
        self.heads[list as usize] = null();
        if list < OVERFLOW {
            self.occupied[list as usize / SLOTS] &= !(1 << (list as usize % SLOTS));
        }
        while let Some(n) = unsafe_ref(p) {
            p = n.next.get();
            n.list.set(NOWHERE);
            let when = n.when.get();
            // In list order, so entries due at the same time come out in arming order.
            let to = if when <= at { DUE } else { self.list_for(when) };
            self.push(n, to);
        }
    }
}

/// A list link as a reference.
fn unsafe_ref<'a>(p: *const Node) -> Option<&'a Node> {
    // SAFETY: every linked node is alive and in place (`Wheel::insert`'s contract), and links
    // only ever point at linked nodes.
    unsafe { p.as_ref() }
}
