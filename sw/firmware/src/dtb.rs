//! The device tree the boot ROM hands over lives in the ROM, which the SoC does not cache:
//! every byte the firmware and the kernel read there is a bus round trip (parsing it in place
//! took ~5 M cycles in the firmware and again in the kernel on the RTL). The boot hart copies
//! it once to the top of DRAM and passes the copy on; the kernel keeps the copy's pages out of
//! its free memory, as it does for the tree QEMU places in RAM.
use platform::memmap::{DRAM_BASE, DRAM_SIZE};

const FDT_MAGIC: u32 = 0xd00d_feed;
/// The header's fixed part; a tree larger than MAX_COPY stays where it is (read slowly).
const HEADER_BYTES: usize = 40;
const MAX_COPY: usize = 64 * 1024;

/// The address of a device tree in DRAM with the contents of the one at `dtb`.
pub fn to_ram(dtb: usize) -> usize {
    if (DRAM_BASE..DRAM_BASE + DRAM_SIZE).contains(&dtb) || !dtb.is_multiple_of(8) {
        return dtb;
    }
    // SAFETY: M-mode reads the tree the boot ROM passed (its header first, then its bytes).
    let be32 = |off: usize| u32::from_be(unsafe { core::ptr::read_volatile((dtb + off) as *const u32) });
    let size = be32(4) as usize;
    if be32(0) != FDT_MAGIC || !(HEADER_BYTES..=MAX_COPY).contains(&size) {
        return dtb;
    }
    let dst = (DRAM_BASE + DRAM_SIZE - size) & !0xfff;
    for i in 0..size.div_ceil(8) {
        // SAFETY: whole words of the ROM (the tree is 8-byte aligned, the ROM larger than it)
        // into the last pages of DRAM, which nothing uses before the kernel.
        unsafe {
            let w = core::ptr::read_volatile((dtb + 8 * i) as *const u64);
            core::ptr::write_volatile((dst + 8 * i) as *mut u64, w);
        }
    }
    dst
}
