//! The two-level priority bitmap: O(1) "highest non-empty priority" with two highest-bit
//! lookups, whatever the number of ready tasks.

/// Number of task priorities; higher numbers run first.
pub const PRIORITIES: usize = 256;
const GROUPS: usize = PRIORITIES / 64;

/// Bit `p` of `words` is set iff priority `p` has a ready task; bit `g` of `top` iff
/// `words[g] != 0`.
#[derive(Debug, Default)]
pub(crate) struct PrioBitmap {
    top: u64,
    words: [u64; GROUPS],
    /// The highest set priority while any is set: kept by `insert`, looked up again by
    /// `remove` only when it clears that one and others remain. A thread whose tasks share a
    /// priority (a server's) empties the set at every pop, so it never looks (two lookups per
    /// task picked were ~70 cycles on the RTL).
    high: u8,
}

impl PrioBitmap {
    pub const fn new() -> PrioBitmap {
        PrioBitmap { top: 0, words: [0; GROUPS], high: 0 }
    }

    pub fn insert(&mut self, p: u8) {
        let (g, bit) = (p as usize / 64, p as usize % 64);
        if self.top == 0 || p > self.high {
            self.high = p;
        }
        self.words[g] |= 1 << bit;
        self.top |= 1 << g;
    }

    pub fn remove(&mut self, p: u8) {
        let (g, bit) = (p as usize / 64, p as usize % 64);
        self.words[g] &= !(1 << bit);
        if self.words[g] == 0 {
            self.top &= !(1 << g);
        }
        if p == self.high && self.top != 0 {
            self.high = self.lookup();
        }
    }

    pub fn highest(&self) -> Option<u8> {
        (self.top != 0).then_some(self.high)
    }

    fn lookup(&self) -> u8 {
        let g = top_bit(self.top);
        let bit = top_bit(self.words[g]);
        (g * 64 + bit) as u8
    }
}

/// The highest set bit of each byte value (0 for 0).
const BYTE_TOP: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 1;
    while i < 256 {
        t[i] = t[i / 2] + (i > 1) as u8;
        i += 1;
    }
    t
};

/// The index of the highest set bit of `x` (0 for 0): three halvings and a table. Our harts
/// have no count-leading-zeros instruction (no Zbb), and the compiler's stand-in for
/// `leading_zeros` (bit smearing and a population count with multiplies) cost ~50 cycles on
/// the RTL: two of them per task picked.
fn top_bit(mut x: u64) -> usize {
    let mut n = 0;
    if x >> 32 != 0 {
        x >>= 32;
        n += 32;
    }
    if x >> 16 != 0 {
        x >>= 16;
        n += 16;
    }
    if x >> 8 != 0 {
        x >>= 8;
        n += 8;
    }
    n + BYTE_TOP[x as usize] as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn top_bit_matches_leading_zeros() {
        for b in 0..64 {
            assert_eq!(top_bit(1 << b), b);
            assert_eq!(top_bit((1 << b) | 1), b);
            assert_eq!(top_bit(u64::MAX >> (63 - b)), b);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x >> (x % 64)) | 1;
            assert_eq!(top_bit(v), 63 - v.leading_zeros() as usize, "{v:#x}");
        }
    }

    #[test]
    fn every_single_priority() {
        for p in 0..PRIORITIES {
            let mut b = PrioBitmap::new();
            assert_eq!(b.highest(), None);
            b.insert(p as u8);
            assert_eq!(b.highest(), Some(p as u8));
            b.remove(p as u8);
            assert_eq!(b.highest(), None);
        }
    }

    #[test]
    fn every_pair_of_priorities() {
        for lo in 0..PRIORITIES {
            for hi in lo + 1..PRIORITIES {
                let mut b = PrioBitmap::new();
                b.insert(hi as u8);
                b.insert(lo as u8);
                assert_eq!(b.highest(), Some(hi as u8));
                b.remove(hi as u8);
                assert_eq!(b.highest(), Some(lo as u8));
            }
        }
    }

    #[test]
    fn random_sets_match_a_reference() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut b = PrioBitmap::new();
        let mut reference = BTreeSet::new();
        for _ in 0..100_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let p = (seed >> 24) as u8;
            if seed & 1 == 0 {
                b.insert(p);
                reference.insert(p);
            } else {
                b.remove(p);
                reference.remove(&p);
            }
            assert_eq!(b.highest(), reference.last().copied());
        }
    }
}
