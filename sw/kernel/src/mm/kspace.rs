//! The kernel address space: kernel image with per-section permissions, every other byte of
//! RAM read-write in the window (never executable), and each device the machine has.
use super::WindowMem;
use super::{frames, phys_to_virt, virt_to_phys};
use devtree::Region;
use spin::Once;
use sv39::{Flags, Mapper};

/// `satp` of the kernel address space, once built.
static KERNEL_SATP: Once<usize> = Once::new();

/// Build the kernel page table. Returns its satp value.
pub fn build(m: &devtree::Machine) -> usize {
    let mut mem = WindowMem;
    let mut map = Mapper::create(&mut mem).expect("no frame for the kernel root table");
    let g = Flags::G;
    let [text, rodata, data] = crate::arch::entry::image_sections();
    let kernel = Region { base: virt_to_phys(text.0), size: data.1 - text.0 };
    for ((start, end), flags) in [(text, Flags::RX), (rodata, Flags::R), (data, Flags::RW)] {
        map.map_range(start, virt_to_phys(start), end - start, flags | g).expect("mapping the kernel image");
    }
    // The rest of RAM, minus the firmware (PMP forbids it anyway) and the kernel image.
    let fw = Region { base: platform::image::FIRMWARE_BASE, size: platform::image::FIRMWARE_SIZE };
    for r in devtree::subtract_regions(&m.memory, &[fw, kernel], sv39::PAGE_SIZE) {
        map.map_range(phys_to_virt(r.base), r.base, r.size, Flags::RW | g).expect("mapping RAM");
    }
    let mut devices: heapless::Vec<Region, 32> = heapless::Vec::new();
    devices.extend(m.uart.map(|u| u.reg));
    devices.extend(m.clint);
    devices.extend(m.plic.map(|p| p.reg));
    devices.extend(m.uintc.map(|u| u.reg));
    devices.extend(m.exit_device);
    devices.extend(m.virtio_mmio.iter().map(|v| v.reg));
    for d in devices {
        let base = d.base & !(sv39::PAGE_SIZE - 1);
        let size = (d.end().max(d.base + 1) - base).next_multiple_of(sv39::PAGE_SIZE);
        map.map_range(phys_to_virt(base), base, size, Flags::RW | g).expect("mapping a device");
    }
    let satp = map.satp(0);
    *KERNEL_SATP.call_once(|| satp)
}

/// Switch this hart to the kernel address space (boot page table no longer used).
pub fn activate() {
    let satp = *KERNEL_SATP.get().expect("kernel page table not built");
    // SAFETY: the new table maps everything the kernel touches at the same addresses.
    unsafe { core::arch::asm!("sfence.vma", "csrw satp, {0}", "sfence.vma", in(reg) satp) };
}

/// Look up a kernel virtual address in the live kernel page table.
pub fn translate(va: usize) -> Option<(usize, Flags)> {
    let satp = *KERNEL_SATP.get()?;
    let mut mem = WindowMem;
    Mapper::new((satp & ((1 << 44) - 1)) << 12, &mut mem).translate(va)
}

/// Frames used by the kernel page table (for the boot report).
pub fn table_frames() -> usize {
    frames::frames_taken()
}

/// Physical address of the kernel's root table (its upper half is shared with user spaces).
pub fn root() -> usize {
    let satp = *KERNEL_SATP.get().expect("kernel page table not built");
    (satp & ((1 << 44) - 1)) << 12
}
