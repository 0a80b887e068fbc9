//! The server's requests in the kernel: each MAP or UNMAP whose system call is in the syscall
//! buffer, under the tag its completion comes back with (`asys::Direct`). At most `N` (the
//! buffer's calls in flight): a request beyond them waits in the channel's ring. The free tags
//! are a stack, so a tag is found without a scan, and the most recently freed (its record
//! still in the cache) is reused first.
pub struct Flights<T, const N: usize> {
    at: [Option<T>; N],
    free: [u16; N],
    nfree: usize,
}

impl<T, const N: usize> Flights<T, N> {
    pub const fn new() -> Self {
        assert!(N <= u16::MAX as usize);
        let mut free = [0u16; N];
        let mut i = 0;
        while i < N {
            // Popped from the end: tag 0 first.
            free[i] = (N - 1 - i) as u16;
            i += 1;
        }
        Flights { at: [const { None }; N], free, nfree: N }
    }

    pub fn is_full(&self) -> bool {
        self.nfree == 0
    }

    /// Requests recorded now.
    pub fn len(&self) -> usize {
        N - self.nfree
    }

    pub fn is_empty(&self) -> bool {
        self.nfree == N
    }

    /// Record `t` under a free tag; `Err(t)` when every tag is taken.
    pub fn insert(&mut self, t: T) -> Result<usize, T> {
        if self.nfree == 0 {
            return Err(t);
        }
        self.nfree -= 1;
        let tag = self.free[self.nfree] as usize;
        self.at[tag] = Some(t);
        Ok(tag)
    }

    /// The record under `tag`, which is free again (None: no record there).
    pub fn take(&mut self, tag: usize) -> Option<T> {
        let t = self.at.get_mut(tag)?.take()?;
        self.free[self.nfree] = tag as u16;
        self.nfree += 1;
        Some(t)
    }
}

impl<T, const N: usize> Default for Flights<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_unique_reused_and_bounded() {
        let mut f: Flights<u32, 3> = Flights::new();
        assert_eq!((f.insert(10), f.insert(11), f.insert(12)), (Ok(0), Ok(1), Ok(2)));
        assert!(f.is_full());
        assert_eq!(f.insert(13), Err(13));
        assert_eq!(f.take(1), Some(11));
        assert_eq!(f.take(1), None, "taken once");
        assert_eq!(f.take(3), None, "out of range");
        assert_eq!(f.len(), 2);
        // The freed tag is the next one handed out.
        assert_eq!(f.insert(14), Ok(1));
        assert_eq!((f.take(0), f.take(2), f.take(1)), (Some(10), Some(12), Some(14)));
        assert!(f.is_empty());
    }
}
