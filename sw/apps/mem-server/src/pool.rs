//! The server's bookkeeping, apart from the kernel calls: which frames are free, and for each
//! page of the client's pool whether it is free, in the kernel (a map or unmap under way), or
//! mapped and by which frame. Every request is checked here before any system call: the
//! client's word is never trusted, so a bad request changes nothing and gets a clear status.
use crate::proto::{status, PAGE};

const FREE: u16 = u16::MAX;
const BUSY: u16 = u16::MAX - 1;

/// `P` pages of one client's pool at `base`, `F` frames.
pub struct Pool<const P: usize, const F: usize> {
    base: usize,
    /// Per page: FREE, BUSY, or the frame mapped there.
    page: [u16; P],
    /// Stack of free frame numbers.
    free: [u16; F],
    nfree: usize,
}

/// A map or unmap the caller is to do in the kernel (then `finish` it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub page: usize,
    pub frame: usize,
    pub map: bool,
}

impl<const P: usize, const F: usize> Pool<P, F> {
    pub const fn new(base: usize) -> Self {
        assert!(F < BUSY as usize && P > 0);
        let mut free = [0u16; F];
        let mut i = 0;
        while i < F {
            // Popped from the end: frame 0 first.
            free[i] = (F - 1 - i) as u16;
            i += 1;
        }
        Pool { base, page: [FREE; P], free, nfree: F }
    }

    pub fn free_frames(&self) -> usize {
        self.nfree
    }

    /// The page index of `va`, or why it is none of the pool's.
    fn index(&self, va: u64) -> Result<usize, u32> {
        let off = (va as usize).wrapping_sub(self.base);
        if (va as usize) < self.base || off >= P * PAGE || va > usize::MAX as u64 {
            return Err(status::RANGE);
        }
        if !off.is_multiple_of(PAGE) {
            return Err(status::ALIGN);
        }
        Ok(off / PAGE)
    }

    /// Start mapping a frame at `va`: the page is BUSY and the frame taken until `finish`.
    pub fn begin_map(&mut self, va: u64) -> Result<Op, u32> {
        let page = self.index(va)?;
        match self.page[page] {
            FREE => {}
            BUSY => return Err(status::BUSY),
            _ => return Err(status::MAPPED),
        }
        if self.nfree == 0 {
            return Err(status::NO_FRAME);
        }
        self.nfree -= 1;
        let frame = self.free[self.nfree] as usize;
        self.page[page] = BUSY;
        Ok(Op { page, frame, map: true })
    }

    /// Start unmapping the page at `va`.
    pub fn begin_unmap(&mut self, va: u64) -> Result<Op, u32> {
        let page = self.index(va)?;
        match self.page[page] {
            FREE => Err(status::NOT_MAPPED),
            BUSY => Err(status::BUSY),
            f => {
                self.page[page] = BUSY;
                Ok(Op { page, frame: f as usize, map: false })
            }
        }
    }

    /// The kernel call of `op` is done: `ok` says whether it succeeded. A failed map gives the
    /// frame back and leaves the page free; a failed unmap leaves it mapped.
    pub fn finish(&mut self, op: Op, ok: bool) {
        // Mapped after a good map or a failed unmap; free (frame back) otherwise.
        if op.map == ok {
            self.page[op.page] = op.frame as u16;
        } else {
            self.page[op.page] = FREE;
            self.free[self.nfree] = op.frame as u16;
            self.nfree += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: usize = 0x30_0000_0000;
    type P = Pool<4, 3>;

    #[test]
    fn map_then_unmap_returns_the_frame() {
        let mut p = P::new(BASE);
        let op = p.begin_map(BASE as u64 + PAGE as u64).unwrap();
        assert_eq!(op, Op { page: 1, frame: 0, map: true });
        assert_eq!(p.free_frames(), 2);
        p.finish(op, true);
        let op = p.begin_unmap(BASE as u64 + PAGE as u64).unwrap();
        assert_eq!(op, Op { page: 1, frame: 0, map: false });
        p.finish(op, true);
        assert_eq!(p.free_frames(), 3);
        assert_eq!(p.begin_unmap(BASE as u64 + PAGE as u64), Err(status::NOT_MAPPED));
    }

    #[test]
    fn bad_addresses_are_refused_and_change_nothing() {
        let mut p = P::new(BASE);
        assert_eq!(p.begin_map(BASE as u64 - PAGE as u64), Err(status::RANGE));
        assert_eq!(p.begin_map((BASE + 4 * PAGE) as u64), Err(status::RANGE));
        assert_eq!(p.begin_map(u64::MAX), Err(status::RANGE));
        assert_eq!(p.begin_map(0), Err(status::RANGE));
        assert_eq!(p.begin_map(BASE as u64 + 8), Err(status::ALIGN));
        assert_eq!(p.begin_unmap(BASE as u64 + 8), Err(status::ALIGN));
        assert_eq!(p.free_frames(), 3);
    }

    #[test]
    fn double_map_busy_and_exhaustion() {
        let mut p = P::new(BASE);
        let a = p.begin_map(BASE as u64).unwrap();
        assert_eq!(p.begin_map(BASE as u64), Err(status::BUSY));
        assert_eq!(p.begin_unmap(BASE as u64), Err(status::BUSY));
        p.finish(a, true);
        assert_eq!(p.begin_map(BASE as u64), Err(status::MAPPED));
        for i in 1..3 {
            let op = p.begin_map((BASE + i * PAGE) as u64).unwrap();
            p.finish(op, true);
        }
        assert_eq!(p.begin_map((BASE + 3 * PAGE) as u64), Err(status::NO_FRAME));
    }

    #[test]
    fn failed_kernel_calls_roll_back() {
        let mut p = P::new(BASE);
        let op = p.begin_map(BASE as u64).unwrap();
        p.finish(op, false);
        assert_eq!(p.free_frames(), 3);
        assert_eq!(p.begin_unmap(BASE as u64), Err(status::NOT_MAPPED));
        let op = p.begin_map(BASE as u64).unwrap();
        p.finish(op, true);
        let un = p.begin_unmap(BASE as u64).unwrap();
        p.finish(un, false);
        assert_eq!(p.free_frames(), 2);
        assert_eq!(p.begin_map(BASE as u64), Err(status::MAPPED));
    }
}
