//! The machine description (from the device tree), read once by the boot hart.
use devtree::{Machine, Region};
use spin::Once;

static MACHINE: Once<Machine> = Once::new();
static DTB: Once<Region> = Once::new();

pub fn init(dtb_phys: usize) -> &'static Machine {
    // SAFETY: the firmware hands over a device tree; the boot page table maps it in the window.
    let (m, size) = match unsafe { Machine::from_addr(crate::mm::phys_to_virt(dtb_phys)) } {
        Ok(v) => v,
        Err(e) => panic!("cannot read the device tree at {dtb_phys:#x}: {e:?}"),
    };
    DTB.call_once(|| Region { base: dtb_phys, size });
    MACHINE.call_once(|| m)
}

pub fn try_get() -> Option<&'static Machine> {
    MACHINE.get()
}

pub fn dtb() -> Region {
    *DTB.get().expect("machine used before init")
}
