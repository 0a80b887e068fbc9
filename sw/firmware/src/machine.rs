//! The machine description read from the device tree once, by the boot hart.
use devtree::Machine;
use spin::Once;

static MACHINE: Once<Machine> = Once::new();

pub fn init(dtb: usize) -> Result<&'static Machine, devtree::Error> {
    // SAFETY: the boot ROM / QEMU passes a device tree in a1; `from_addr` checks its header.
    let (m, _size) = unsafe { Machine::from_addr(dtb)? };
    Ok(MACHINE.call_once(|| m))
}

/// Secondary harts wait here until the boot hart has published the machine.
pub fn wait() -> &'static Machine {
    MACHINE.wait()
}

pub fn get() -> &'static Machine {
    MACHINE.get().expect("machine description used before the boot hart read the device tree")
}

pub fn try_get() -> Option<&'static Machine> {
    MACHINE.get()
}
