//! Memory: the kernel window, the boot frame allocator and the kernel address space.
pub mod frames;
pub mod kspace;
pub mod probe;

use platform::image::KERNEL_WINDOW;

pub fn phys_to_virt(pa: usize) -> usize {
    pa + KERNEL_WINDOW
}

pub fn virt_to_phys(va: usize) -> usize {
    debug_assert!(va >= KERNEL_WINDOW);
    va - KERNEL_WINDOW
}
