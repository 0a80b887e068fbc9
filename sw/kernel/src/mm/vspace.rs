//! User address spaces: an Sv39 root whose upper half is the kernel's (shared, global), and user
//! pages in the lower half.
use super::frames;
use super::WindowMem;
use sv39::{Flags, MapError, Mapper, PageSize, PhysMem, ENTRIES};

pub struct VSpace {
    root: usize,
}

impl VSpace {
    pub fn new() -> Result<Self, MapError> {
        let root = frames::alloc_zeroed().ok_or(MapError::OutOfMemory)?;
        let kernel_root = super::kspace::root();
        let mut mem = WindowMem;
        let kernel = *mem.table(kernel_root);
        mem.table(root)[ENTRIES / 2..].copy_from_slice(&kernel[ENTRIES / 2..]);
        Ok(VSpace { root })
    }

    /// Map a fresh zeroed frame at `va` (user, `flags`); returns its physical address.
    pub fn map_new_page(&mut self, va: usize, flags: Flags) -> Result<usize, MapError> {
        if va >= abi::layout::USER_TOP {
            return Err(MapError::NonCanonical);
        }
        let pa = frames::alloc_zeroed().ok_or(MapError::OutOfMemory)?;
        Mapper::new(self.root, &mut WindowMem).map(va, pa, PageSize::Size4K, flags | Flags::U)?;
        Ok(pa)
    }

    pub fn translate(&self, va: usize) -> Option<(usize, Flags)> {
        Mapper::new(self.root, &mut WindowMem).translate(va)
    }

    pub fn activate(&self) {
        let satp = Mapper::new(self.root, &mut WindowMem).satp(0);
        // SAFETY: the upper half is the kernel's own mapping, so the kernel keeps running.
        unsafe { core::arch::asm!("csrw satp, {0}", "sfence.vma", in(reg) satp) };
    }
}
