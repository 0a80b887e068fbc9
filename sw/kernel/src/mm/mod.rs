//! Memory: the kernel window, the boot frame allocator and the kernel address space.
pub mod frames;
pub mod icache;
pub mod kspace;
pub mod probe;
pub mod root_retire;
pub mod tlb;

use platform::image::KERNEL_WINDOW;

pub fn phys_to_virt(pa: usize) -> usize {
    pa + KERNEL_WINDOW
}

pub fn virt_to_phys(va: usize) -> usize {
    debug_assert!(va >= KERNEL_WINDOW);
    va - KERNEL_WINDOW
}

/// Page-table frames seen through the kernel window: how `sv39::Mapper` reaches physical memory
/// in the kernel (new tables come from the boot frame allocator).
pub(crate) struct WindowMem;

impl sv39::PhysMem for WindowMem {
    fn alloc_table(&mut self) -> Option<usize> {
        frames::alloc_zeroed()
    }
    fn table(&mut self, pa: usize) -> &mut [sv39::Pte; sv39::ENTRIES] {
        // SAFETY: table frames come from alloc_table (or the kernel's own) and live in the window.
        unsafe { &mut *(phys_to_virt(pa) as *mut [sv39::Pte; sv39::ENTRIES]) }
    }
}

/// Is this physical address in RAM (as opposed to a device)?
pub fn is_ram(pa: u64) -> bool {
    crate::machine::try_get().is_some_and(|m| m.memory.iter().any(|r| r.contains(pa as usize)))
}
