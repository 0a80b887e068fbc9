//! Ending the machine: the `sifive,test0` device (QEMU, the Verilator harness) or parking.
use platform::exitdev;

fn write_exit(value: u32) {
    if let Some(dev) = crate::machine::try_get().and_then(|m| m.exit_device) {
        // SAFETY: the device tree names this register as the exit device.
        unsafe { core::ptr::write_volatile(dev.base as *mut u32, value) };
    }
}

pub fn pass() -> ! {
    write_exit(exitdev::PASS as u32);
    park()
}

pub fn fail(code: u32) -> ! {
    write_exit((code.max(1) << exitdev::CODE_SHIFT) | exitdev::FAIL as u32);
    park()
}

pub fn reset() -> ! {
    write_exit(exitdev::RESET as u32);
    park()
}

fn park() -> ! {
    crate::println!("[firmware] no exit device: halting this hart");
    loop {
        // SAFETY: wfi only waits.
        unsafe { core::arch::asm!("wfi") };
    }
}
