//! An intrusive ordered set: an AVL tree whose links live in the elements themselves (the
//! kernel's threads), so nothing is allocated, with worst-case O(log n) insert, remove and
//! walk to the first element, and the first element kept at hand. The kernel's deadline
//! queues use it: a sorted list costs a walk linear in the deadlines armed on a hart, which a
//! thread arming many deadlines (one per thread it owns) turns into a long kernel lock hold.
//!
//! Keys are `(u64, u64)` pairs and must be distinct (the kernel adds an arming sequence number
//! to the time, so equal times keep their arming order). The tree never recurses: its walks
//! follow parent links, so the kernel's stack use does not depend on the tree's size.
#![no_std]

use core::ptr::null_mut;

/// The links an element carries (in the element, one set per tree it can be in).
pub struct Links<T> {
    left: *mut T,
    right: *mut T,
    parent: *mut T,
    /// Height of the subtree rooted here (1 for a leaf); 0: in no tree.
    height: u8,
}

impl<T> Links<T> {
    pub const fn new() -> Self {
        Links { left: null_mut(), right: null_mut(), parent: null_mut(), height: 0 }
    }

    /// In a tree.
    pub fn linked(&self) -> bool {
        self.height != 0
    }
}

impl<T> Default for Links<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for Links<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Links<T> {}

impl<T> core::fmt::Debug for Links<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Links(height {})", self.height)
    }
}

/// An element of a tree.
///
/// # Safety
/// `links` returns the same `Links` every time, and `key` does not change while the element is
/// in a tree.
pub unsafe trait Node: Sized {
    fn links(&self) -> &Links<Self>;
    fn links_mut(&mut self) -> &mut Links<Self>;
    fn key(&self) -> (u64, u64);
}

/// The set, smallest key first.
pub struct Tree<T> {
    root: *mut T,
    first: *mut T,
    len: usize,
}

impl<T> Default for Tree<T> {
    fn default() -> Self {
        Tree { root: null_mut(), first: null_mut(), len: 0 }
    }
}

impl<T> Clone for Tree<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Tree<T> {}

/// What `check` found wrong.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Broken {
    /// A child does not point back at its parent (or the root has a parent).
    ParentLink,
    /// A stored height is not one more than its taller child's.
    Height,
    /// Subtree heights differ by more than one.
    Balance,
    /// Keys out of order (or equal).
    Order,
    /// More elements than recorded, or fewer.
    Length,
    /// The first element kept at hand is not the smallest.
    First,
}

// SAFETY (for the helpers below): every pointer they take is null or an element in the tree,
// live while it is there (the callers' contract).
unsafe fn links<'a, T: Node>(p: *mut T) -> &'a mut Links<T> {
    (*p).links_mut()
}

unsafe fn height<T: Node>(p: *mut T) -> u8 {
    if p.is_null() {
        0
    } else {
        (*p).links().height
    }
}

unsafe fn update<T: Node>(p: *mut T) {
    let l = links(p);
    l.height = 1 + height(l.left).max(height(l.right));
}

unsafe fn leftmost<T: Node>(mut p: *mut T) -> *mut T {
    while !links(p).left.is_null() {
        p = links(p).left;
    }
    p
}

impl<T: Node> Tree<T> {
    pub const fn new() -> Self {
        Tree { root: null_mut(), first: null_mut(), len: 0 }
    }

    /// The element with the smallest key (null: empty).
    pub fn first(&self) -> *mut T {
        self.first
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Put `t` in.
    ///
    /// # Safety
    /// `t` is live, in no tree, and stays live (its key unchanged) while in this one.
    pub unsafe fn insert(&mut self, t: *mut T) {
        let key = (*t).key();
        let (mut parent, mut p, mut left) = (null_mut(), self.root, false);
        while !p.is_null() {
            parent = p;
            left = key < (*p).key();
            p = if left { links(p).left } else { links(p).right };
        }
        *links(t) = Links { left: null_mut(), right: null_mut(), parent, height: 1 };
        if parent.is_null() {
            self.root = t;
        } else if left {
            links(parent).left = t;
        } else {
            links(parent).right = t;
        }
        if self.first.is_null() || key < (*self.first).key() {
            self.first = t;
        }
        self.len += 1;
        self.rebalance(parent);
    }

    /// Take `t` out.
    ///
    /// # Safety
    /// `t` is in this tree.
    pub unsafe fn remove(&mut self, t: *mut T) {
        if self.first == t {
            self.first = Self::next(t);
        }
        let Links { left, right, parent, height } = *links(t);
        let from;
        if left.is_null() || right.is_null() {
            let child = if left.is_null() { right } else { left };
            self.replace_child(parent, t, child);
            if !child.is_null() {
                links(child).parent = parent;
            }
            from = parent;
        } else {
            // Two children: the successor (leftmost on the right, no left child) takes t's place.
            let s = leftmost(right);
            if s == right {
                from = s;
            } else {
                let sp = links(s).parent;
                let sr = links(s).right;
                links(sp).left = sr;
                if !sr.is_null() {
                    links(sr).parent = sp;
                }
                links(s).right = right;
                links(right).parent = s;
                from = sp;
            }
            links(s).left = left;
            links(left).parent = s;
            links(s).parent = parent;
            links(s).height = height;
            self.replace_child(parent, t, s);
        }
        *links(t) = Links::new();
        self.len -= 1;
        self.rebalance(from);
    }

    /// The element after `t` in key order (null: none).
    ///
    /// # Safety
    /// `t` is in this tree.
    pub unsafe fn next(t: *mut T) -> *mut T {
        let r = links(t).right;
        if !r.is_null() {
            return leftmost(r);
        }
        let (mut child, mut p) = (t, links(t).parent);
        while !p.is_null() && links(p).right == child {
            child = p;
            p = links(p).parent;
        }
        p
    }

    unsafe fn replace_child(&mut self, parent: *mut T, old: *mut T, new: *mut T) {
        if parent.is_null() {
            self.root = new;
        } else if links(parent).left == old {
            links(parent).left = new;
        } else {
            links(parent).right = new;
        }
    }

    /// Rotate `x`'s right child up into its place; returns it.
    unsafe fn rotate_left(&mut self, x: *mut T) -> *mut T {
        let y = links(x).right;
        let b = links(y).left;
        links(x).right = b;
        if !b.is_null() {
            links(b).parent = x;
        }
        let p = links(x).parent;
        links(y).parent = p;
        self.replace_child(p, x, y);
        links(y).left = x;
        links(x).parent = y;
        update(x);
        update(y);
        y
    }

    /// Rotate `x`'s left child up into its place; returns it.
    unsafe fn rotate_right(&mut self, x: *mut T) -> *mut T {
        let y = links(x).left;
        let b = links(y).right;
        links(x).left = b;
        if !b.is_null() {
            links(b).parent = x;
        }
        let p = links(x).parent;
        links(y).parent = p;
        self.replace_child(p, x, y);
        links(y).right = x;
        links(x).parent = y;
        update(x);
        update(y);
        y
    }

    /// Restore heights and balance from `p` up to the root (O(log n) steps).
    unsafe fn rebalance(&mut self, mut p: *mut T) {
        while !p.is_null() {
            update(p);
            let (l, r) = (links(p).left, links(p).right);
            let balance = height(l) as i32 - height(r) as i32;
            if balance > 1 {
                if height(links(l).left) < height(links(l).right) {
                    self.rotate_left(l);
                }
                p = self.rotate_right(p);
            } else if balance < -1 {
                if height(links(r).right) < height(links(r).left) {
                    self.rotate_right(r);
                }
                p = self.rotate_left(p);
            }
            p = links(p).parent;
        }
    }

    /// Every element in key order.
    ///
    /// # Safety
    /// The tree is well formed (`check` says so) and `f` does not change it.
    pub unsafe fn for_each(&self, mut f: impl FnMut(*mut T)) {
        let mut p = if self.root.is_null() { null_mut() } else { leftmost(self.root) };
        while !p.is_null() {
            f(p);
            p = Self::next(p);
        }
    }

    /// The consistency checker: links both ways, heights, balance, order, length and first,
    /// visiting at most `limit` elements (a corrupted tree may have cycles). `visit` sees each
    /// element; it judges whether the pointer is a live element at all before the tree reads it
    /// further (return false to stop).
    ///
    /// # Safety
    /// Every element `visit` accepts is live.
    pub unsafe fn check(&self, limit: usize, mut visit: impl FnMut(*mut T) -> bool) -> Result<(), Broken> {
        if !self.root.is_null() && (!visit(self.root) || !links(self.root).parent.is_null()) {
            return Err(Broken::ParentLink);
        }
        // Iterative in-order walk by parent links, each step checked before it is taken.
        let mut n = 0usize;
        let mut last: Option<(u64, u64)> = None;
        let mut p = self.root;
        // Down to the leftmost, checking each link on the way.
        while !p.is_null() && !links(p).left.is_null() {
            let l = links(p).left;
            if !visit(l) || links(l).parent != p {
                return Err(Broken::ParentLink);
            }
            p = l;
        }
        if p != self.first {
            return Err(Broken::First);
        }
        while !p.is_null() {
            n += 1;
            if n > limit || n > self.len {
                return Err(Broken::Length);
            }
            let Links { left, right, .. } = *links(p);
            if !right.is_null() && (!visit(right) || links(right).parent != p) {
                return Err(Broken::ParentLink);
            }
            if links(p).height != 1 + height(left).max(height(right)) {
                return Err(Broken::Height);
            }
            if (height(left) as i32 - height(right) as i32).abs() > 1 {
                return Err(Broken::Balance);
            }
            let key = (*p).key();
            if last.is_some_and(|k| k >= key) {
                return Err(Broken::Order);
            }
            last = Some(key);
            // Next in order: down the right subtree's left spine, or up past right children.
            if !right.is_null() {
                p = right;
                while !links(p).left.is_null() {
                    let l = links(p).left;
                    if !visit(l) || links(l).parent != p {
                        return Err(Broken::ParentLink);
                    }
                    p = l;
                }
            } else {
                let mut child = p;
                p = links(p).parent;
                while !p.is_null() && links(p).right == child {
                    child = p;
                    p = links(p).parent;
                }
            }
        }
        if n != self.len {
            return Err(Broken::Length);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::boxed::Box;
    use std::collections::BTreeSet;
    use std::vec::Vec;

    struct Item {
        key: (u64, u64),
        links: Links<Item>,
    }

    unsafe impl Node for Item {
        fn links(&self) -> &Links<Self> {
            &self.links
        }
        fn links_mut(&mut self) -> &mut Links<Self> {
            &mut self.links
        }
        fn key(&self) -> (u64, u64) {
            self.key
        }
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    fn check(tree: &Tree<Item>, model: &BTreeSet<(u64, u64)>) {
        unsafe { tree.check(usize::MAX, |_| true) }.unwrap();
        assert_eq!(tree.len(), model.len());
        let mut seen = Vec::new();
        unsafe { tree.for_each(|p| seen.push((*p).key)) };
        assert_eq!(seen, model.iter().copied().collect::<Vec<_>>());
        let first = tree.first();
        assert_eq!(if first.is_null() { None } else { Some(unsafe { (*first).key }) }, model.first().copied());
        // AVL: height <= 1.44 log2(n + 2).
        let h = unsafe { height(tree.root) } as f64;
        assert!(h <= 1.45 * ((tree.len() + 2) as f64).log2(), "height {h} for {} elements", tree.len());
    }

    #[test]
    fn random_inserts_and_removes_match_a_sorted_set() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let items: Vec<*mut Item> =
            (0..600).map(|_| Box::into_raw(Box::new(Item { key: (0, 0), links: Links::new() }))).collect();
        let mut tree = Tree::new();
        let mut model = BTreeSet::new();
        let mut seq = 0;
        for step in 0..20_000 {
            let p = items[(rng.next() % items.len() as u64) as usize];
            let it = unsafe { &mut *p };
            if it.links.linked() {
                unsafe { tree.remove(p) };
                assert!(model.remove(&it.key));
                assert!(!it.links.linked());
            } else {
                seq += 1;
                // Few distinct times: equal times are common, as with a timer tick.
                it.key = (rng.next() % 50, seq);
                unsafe { tree.insert(p) };
                model.insert(it.key);
            }
            if step % 7 == 0 || step < 200 {
                check(&tree, &model);
            }
        }
        // Drain from the front, as expiry does.
        while !tree.first().is_null() {
            let p = tree.first();
            let k = unsafe { (*p).key };
            unsafe { tree.remove(p) };
            assert_eq!(model.pop_first(), Some(k));
            check(&tree, &model);
        }
        for p in items {
            drop(unsafe { Box::from_raw(p) });
        }
    }

    #[test]
    fn ascending_and_descending_keys_stay_balanced() {
        for descending in [false, true] {
            let items: Vec<*mut Item> = (0..1000u64)
                .map(|i| {
                    let k = if descending { 1000 - i } else { i };
                    Box::into_raw(Box::new(Item { key: (k, 0), links: Links::new() }))
                })
                .collect();
            let mut tree = Tree::new();
            let mut model = BTreeSet::new();
            for &p in &items {
                unsafe { tree.insert(p) };
                model.insert(unsafe { (*p).key });
            }
            check(&tree, &model);
            for &p in items.iter().step_by(3) {
                unsafe { tree.remove(p) };
                model.remove(&unsafe { (*p).key });
            }
            check(&tree, &model);
            for p in items {
                drop(unsafe { Box::from_raw(p) });
            }
        }
    }

    #[test]
    fn check_finds_a_broken_link_and_a_wrong_key() {
        let items: Vec<*mut Item> =
            (0..10u64).map(|i| Box::into_raw(Box::new(Item { key: (i, 0), links: Links::new() }))).collect();
        let mut tree = Tree::new();
        for &p in &items {
            unsafe { tree.insert(p) };
        }
        assert_eq!(unsafe { tree.check(100, |_| true) }, Ok(()));
        // A key changed behind the tree's back.
        let third = items[3];
        unsafe { (*third).key = (100, 0) };
        assert_eq!(unsafe { tree.check(100, |_| true) }, Err(Broken::Order));
        unsafe { (*third).key = (3, 0) };
        // A parent link that does not point back.
        let leaf = items[9];
        let saved = unsafe { (*leaf).links.parent };
        unsafe { (*leaf).links.parent = items[0] };
        assert_eq!(unsafe { tree.check(100, |_| true) }, Err(Broken::ParentLink));
        unsafe { (*leaf).links.parent = saved };
        // A limit below the length.
        assert_eq!(unsafe { tree.check(5, |_| true) }, Err(Broken::Length));
        for p in items {
            drop(unsafe { Box::from_raw(p) });
        }
    }
}
