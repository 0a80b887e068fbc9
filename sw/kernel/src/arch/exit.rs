//! Ending a run with a status the host sees: the `sifive,test0` device where the machine has
//! one (QEMU virt, the Verilator harness), SBI system reset otherwise.
use platform::exitdev;
use sbi_defs::srst;

fn exit_device() -> Option<usize> {
    crate::machine::try_get().and_then(|m| m.exit_device).map(|r| crate::mm::phys_to_virt(r.base))
}

pub fn pass() -> ! {
    // Everything still in the console ring goes out first (waiting for the UART: the end).
    crate::console::flush();
    if let Some(dev) = exit_device() {
        // SAFETY: the device is mapped in the kernel window (mm::kspace maps every device).
        unsafe { core::ptr::write_volatile(dev as *mut u32, exitdev::PASS as u32) };
    }
    let _ = sbi_defs::call::system_reset(srst::TYPE_SHUTDOWN, srst::REASON_NONE);
    super::cpu::idle()
}

pub fn fail(code: u32) -> ! {
    crate::console::flush();
    if let Some(dev) = exit_device() {
        let v = (code.max(1) << exitdev::CODE_SHIFT) | exitdev::FAIL as u32;
        // SAFETY: as above.
        unsafe { core::ptr::write_volatile(dev as *mut u32, v) };
    }
    let _ = sbi_defs::call::system_reset(srst::TYPE_SHUTDOWN, srst::REASON_SYSTEM_FAILURE);
    loop {
        super::cpu::wait_for_interrupt();
    }
}
