//! A ring of `N` descriptors, each with a buffer of its own, in memory the DMA can reach
//! (physically contiguous: a descriptor's bus address is its offset from the ring's). The DMA
//! runs from CURDESC to TAILDESC and stops there (PG021 scatter-gather), so the driver posts
//! descriptors at the tail, reaps them in order at the head, and moves TAILDESC to the last
//! one posted. The descriptors are chained in a circle once; only CONTROL, STATUS and APP are
//! rewritten afterwards.
//!
//! Coherence: on the board and in the simulation the DMA masters into Rocket's front bus, so
//! its accesses are coherent with the L1 caches (docs/board-axu15eg.md, "DMA path"); ordering is
//! all the driver needs: a release fence before the tail register write makes the descriptor
//! visible first (`Regs::write` orders memory before the device access), an acquire fence
//! after reading a complete bit makes the buffer's bytes visible. A non-coherent path (the DMA
//! through HP0 into PS DDR) would need cache cleans and invalidates at the same two places.
use crate::desc::{Desc, CTRL_LEN_MASK, MAX_BUF, ST_COMPLETE};
use core::sync::atomic::{fence, Ordering};

pub struct Ring<const N: usize> {
    desc_va: usize,
    desc_pa: u64,
    buf_va: usize,
    buf_pa: u64,
    /// Each buffer's stride, and the bytes skipped at its start (its data begins `pad` bytes
    /// in, so a frame's headers after the 14-byte Ethernet one land word-aligned with a pad of 2).
    buf_len: usize,
    pad: usize,
    /// Oldest posted descriptor, and how many are posted (owned by the DMA).
    head: usize,
    count: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingError {
    /// Descriptors not 64-byte aligned, buffers too big for a descriptor (or no room after
    /// their padding), or no descriptors.
    Layout,
}

impl<const N: usize> Ring<N> {
    /// Bytes of descriptor memory a ring needs.
    pub const DESC_BYTES: usize = N * core::mem::size_of::<Desc>();

    /// Chain `N` descriptors at `desc_va` (bus address `desc_pa`) into a circle, descriptor i
    /// owning buffer i of `buf_len` bytes at `buf_va` (bus address `buf_pa`). Nothing posted.
    ///
    /// # Safety
    /// `desc_va` must point to `DESC_BYTES` and `buf_va` to `N * buf_len` bytes of memory that
    /// this ring alone uses for as long as it lives, which the DMA sees at `desc_pa`/`buf_pa`.
    pub unsafe fn new(
        desc_va: usize,
        desc_pa: u64,
        buf_va: usize,
        buf_pa: u64,
        buf_len: usize,
    ) -> Result<Self, RingError> {
        // SAFETY: the caller's promise, as ours.
        unsafe { Self::new_padded(desc_va, desc_pa, buf_va, buf_pa, buf_len, 0) }
    }

    /// [`Ring::new`], each descriptor's buffer starting `pad` bytes into its `buf_len`: the DMA
    /// writes and reads `buf_len - pad` bytes from there (PG021's data realignment engine takes
    /// any byte address), and `buf_ptr`/`buf` give that part.
    ///
    /// # Safety
    /// As for [`Ring::new`].
    pub unsafe fn new_padded(
        desc_va: usize,
        desc_pa: u64,
        buf_va: usize,
        buf_pa: u64,
        buf_len: usize,
        pad: usize,
    ) -> Result<Self, RingError> {
        if N == 0 || !desc_va.is_multiple_of(64) || !desc_pa.is_multiple_of(64) || buf_len > MAX_BUF || pad >= buf_len {
            return Err(RingError::Layout);
        }
        let r = Ring { desc_va, desc_pa, buf_va, buf_pa, buf_len, pad, head: 0, count: 0 };
        for i in 0..N {
            let next = r.desc_pa(i + 1);
            let buf = r.buf_pa + (i * buf_len + pad) as u64;
            let d = Desc {
                next: next as u32,
                next_msb: (next >> 32) as u32,
                buf: buf as u32,
                buf_msb: (buf >> 32) as u32,
                ..Desc::default()
            };
            // SAFETY: descriptor i of the memory the caller gave us.
            unsafe { r.desc(i).write_volatile(d) };
        }
        Ok(r)
    }

    fn desc(&self, i: usize) -> *mut Desc {
        (self.desc_va as *mut Desc).wrapping_add(i % N)
    }

    /// Bus address of descriptor `i` (mod N).
    pub fn desc_pa(&self, i: usize) -> u64 {
        self.desc_pa + ((i % N) * core::mem::size_of::<Desc>()) as u64
    }

    /// Bytes a buffer holds (after its padding).
    pub fn buf_len(&self) -> usize {
        self.buf_len - self.pad
    }

    /// Address of buffer `i` (mod N), for a caller that must not hold the ring borrowed while
    /// it uses the buffer; it is the caller's while its descriptor is not posted.
    pub fn buf_ptr(&self, i: usize) -> *mut u8 {
        (self.buf_va + (i % N) * self.buf_len + self.pad) as *mut u8
    }

    /// Buffer `i`: ours while its descriptor is not posted.
    pub fn buf(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: buffer i % N of the memory given to `new`, after its padding, borrowed
        // through &mut self.
        unsafe { core::slice::from_raw_parts_mut(self.buf_ptr(i), self.buf_len()) }
    }

    pub fn posted(&self) -> usize {
        self.count
    }

    pub fn is_full(&self) -> bool {
        self.count == N
    }

    /// Hand the next descriptor (the tail) to the DMA with CONTROL = `len | flags` (STATUS and
    /// APP cleared: PG021 halts on a descriptor fetched with its complete bit set). Returns its
    /// index, None if every descriptor is posted or `len` does not fit the buffer. The caller
    /// then writes the tail register with [`Ring::desc_pa`] of it.
    pub fn post(&mut self, len: usize, flags: u32) -> Option<usize> {
        if self.count == N || len > self.buf_len() || len as u32 & !CTRL_LEN_MASK != 0 {
            return None;
        }
        let i = (self.head + self.count) % N;
        let d = self.desc(i);
        // SAFETY: descriptor i is not posted, so the DMA does not touch it.
        unsafe {
            core::ptr::addr_of_mut!((*d).status).write_volatile(0);
            for a in 0..5 {
                core::ptr::addr_of_mut!((*d).app[a]).write_volatile(0);
            }
            core::ptr::addr_of_mut!((*d).control).write_volatile(len as u32 | flags);
        }
        // The descriptor (and the buffer the caller filled) before the tail write that lets
        // the DMA fetch it.
        fence(Ordering::Release);
        self.count += 1;
        Some(i)
    }

    /// The oldest posted descriptor if the DMA has completed it: (index, STATUS, APP4). Reads
    /// memory only.
    pub fn peek(&self) -> Option<(usize, u32, u32)> {
        if self.count == 0 {
            return None;
        }
        let d = self.desc(self.head);
        // SAFETY: a descriptor of ours; the DMA may be writing it, hence volatile.
        let status = unsafe { core::ptr::addr_of!((*d).status).read_volatile() };
        if status & ST_COMPLETE == 0 {
            return None;
        }
        // Status before the APP words and the buffer it describes.
        fence(Ordering::Acquire);
        // SAFETY: as above.
        let app4 = unsafe { core::ptr::addr_of!((*d).app[4]).read_volatile() };
        Some((self.head, status, app4))
    }

    /// Take the oldest posted descriptor back (after `peek` saw it complete, or after a DMA
    /// reset); returns its index.
    pub fn pop(&mut self) -> Option<usize> {
        if self.count == 0 {
            return None;
        }
        let i = self.head;
        self.head = (self.head + 1) % N;
        self.count -= 1;
        Some(i)
    }

    /// Forget every posted descriptor (the DMA was reset): the next post is at the head.
    pub fn clear(&mut self) {
        self.count = 0;
    }

    /// Index of the next descriptor `post` hands out (for CURDESC after a reset).
    pub fn next(&self) -> usize {
        (self.head + self.count) % N
    }
}
