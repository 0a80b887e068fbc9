//! The CLINT: machine software interrupts (msip), timer compare and mtime.
use core::ptr::{read_volatile, write_volatile};

use devtree::clint::{MSIP, MTIME, MTIMECMP};

fn base() -> usize {
    crate::machine::get().clint.expect("no CLINT in the device tree").base
}

pub fn set_msip(hart: usize, on: bool) {
    // SAFETY: the CLINT register block comes from the device tree; one word per hart.
    unsafe { write_volatile((base() + MSIP + 4 * hart) as *mut u32, on as u32) }
}

pub fn set_timecmp(hart: usize, deadline: u64) {
    // SAFETY: as above, one doubleword per hart.
    unsafe { write_volatile((base() + MTIMECMP + 8 * hart) as *mut u64, deadline) }
}

pub fn mtime() -> u64 {
    // SAFETY: as above.
    unsafe { read_volatile((base() + MTIME) as *const u64) }
}
