//! The two-level priority bitmap: O(1) "highest non-empty priority" with two leading-zero
//! counts, whatever the number of ready tasks.

/// Number of task priorities; higher numbers run first.
pub const PRIORITIES: usize = 256;
const GROUPS: usize = PRIORITIES / 64;

/// Bit `p` of `words` is set iff priority `p` has a ready task; bit `g` of `top` iff
/// `words[g] != 0`.
#[derive(Debug, Default)]
pub(crate) struct PrioBitmap {
    top: u64,
    words: [u64; GROUPS],
}

impl PrioBitmap {
    pub const fn new() -> PrioBitmap {
        PrioBitmap { top: 0, words: [0; GROUPS] }
    }

    pub fn insert(&mut self, p: u8) {
        let (g, bit) = (p as usize / 64, p as usize % 64);
        self.words[g] |= 1 << bit;
        self.top |= 1 << g;
    }

    pub fn remove(&mut self, p: u8) {
        let (g, bit) = (p as usize / 64, p as usize % 64);
        self.words[g] &= !(1 << bit);
        if self.words[g] == 0 {
            self.top &= !(1 << g);
        }
    }

    pub fn highest(&self) -> Option<u8> {
        if self.top == 0 {
            return None;
        }
        let g = 63 - self.top.leading_zeros() as usize;
        let bit = 63 - self.words[g].leading_zeros() as usize;
        Some((g * 64 + bit) as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

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
