//! The Supervisor Binary Interface as both sides see it: our M-mode firmware implements these
//! ids, the kernel calls them. Numbers follow the RISC-V SBI specification v2.0.
#![no_std]

/// Specification version we implement: 2.0 (major in bits 30:24, minor in 23:0).
pub const SPEC_VERSION: usize = 2 << 24;
/// Implementation id reported by our firmware. Ids 0..=10 are assigned by the SBI spec;
/// we use a private value so tools do not mistake us for OpenSBI or RustSBI.
pub const IMPL_ID: usize = 0x5549_4E54; // "UINT"

pub mod eid {
    pub const LEGACY_SET_TIMER: usize = 0x00;
    pub const LEGACY_CONSOLE_PUTCHAR: usize = 0x01;
    pub const LEGACY_CONSOLE_GETCHAR: usize = 0x02;
    pub const LEGACY_CLEAR_IPI: usize = 0x03;
    pub const LEGACY_SEND_IPI: usize = 0x04;
    pub const LEGACY_REMOTE_FENCE_I: usize = 0x05;
    pub const LEGACY_REMOTE_SFENCE_VMA: usize = 0x06;
    pub const LEGACY_REMOTE_SFENCE_VMA_ASID: usize = 0x07;
    pub const LEGACY_SHUTDOWN: usize = 0x08;
    pub const BASE: usize = 0x10;
    pub const TIME: usize = 0x5449_4D45;
    pub const IPI: usize = 0x0073_5049;
    pub const RFENCE: usize = 0x5246_4E43;
    pub const HSM: usize = 0x0048_534D;
    pub const SRST: usize = 0x5352_5354;
    pub const DBCN: usize = 0x4442_434E;
}

pub mod base {
    pub const GET_SPEC_VERSION: usize = 0;
    pub const GET_IMPL_ID: usize = 1;
    pub const GET_IMPL_VERSION: usize = 2;
    pub const PROBE_EXTENSION: usize = 3;
    pub const GET_MVENDORID: usize = 4;
    pub const GET_MARCHID: usize = 5;
    pub const GET_MIMPID: usize = 6;
}

pub mod time {
    pub const SET_TIMER: usize = 0;
}

pub mod ipi {
    pub const SEND_IPI: usize = 0;
}

pub mod rfence {
    pub const REMOTE_FENCE_I: usize = 0;
    pub const REMOTE_SFENCE_VMA: usize = 1;
    pub const REMOTE_SFENCE_VMA_ASID: usize = 2;
}

pub mod hsm {
    pub const HART_START: usize = 0;
    pub const HART_STOP: usize = 1;
    pub const HART_GET_STATUS: usize = 2;
    pub const HART_SUSPEND: usize = 3;

    pub const STARTED: usize = 0;
    pub const STOPPED: usize = 1;
    pub const START_PENDING: usize = 2;
    pub const STOP_PENDING: usize = 3;
    pub const SUSPENDED: usize = 4;

    pub const SUSPEND_DEFAULT_RETENTIVE: usize = 0;
}

pub mod srst {
    pub const SYSTEM_RESET: usize = 0;

    pub const TYPE_SHUTDOWN: usize = 0;
    pub const TYPE_COLD_REBOOT: usize = 1;
    pub const TYPE_WARM_REBOOT: usize = 2;

    pub const REASON_NONE: usize = 0;
    pub const REASON_SYSTEM_FAILURE: usize = 1;
}

pub mod dbcn {
    pub const WRITE: usize = 0;
    pub const READ: usize = 1;
    pub const WRITE_BYTE: usize = 2;
}

/// SBI error codes (returned in a0; a1 carries the value).
pub mod error {
    pub const SUCCESS: isize = 0;
    pub const FAILED: isize = -1;
    pub const NOT_SUPPORTED: isize = -2;
    pub const INVALID_PARAM: isize = -3;
    pub const DENIED: isize = -4;
    pub const INVALID_ADDRESS: isize = -5;
    pub const ALREADY_AVAILABLE: isize = -6;
    pub const ALREADY_STARTED: isize = -7;
    pub const ALREADY_STOPPED: isize = -8;
}

/// The (error, value) pair every SBI v0.2+ call returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SbiRet {
    pub error: isize,
    pub value: usize,
}

impl SbiRet {
    pub const fn ok(value: usize) -> Self {
        SbiRet { error: error::SUCCESS, value }
    }
    pub const fn err(error: isize) -> Self {
        SbiRet { error, value: 0 }
    }
    pub fn is_ok(&self) -> bool {
        self.error == error::SUCCESS
    }
}

/// A hart mask as SBI passes it: `mask` bit i selects hart `base + i`; base == usize::MAX means all.
#[derive(Clone, Copy, Debug)]
pub struct HartMask {
    pub mask: usize,
    pub base: usize,
}

impl HartMask {
    pub const ALL: HartMask = HartMask { mask: 0, base: usize::MAX };

    pub fn contains(&self, hart: usize) -> bool {
        if self.base == usize::MAX {
            return true;
        }
        hart >= self.base && hart - self.base < usize::BITS as usize && self.mask & (1 << (hart - self.base)) != 0
    }
}

/// S-mode side: the `ecall` into the SBI implementation.
#[cfg(target_arch = "riscv64")]
pub mod call {
    use super::*;

    #[inline(always)]
    pub fn ecall(eid: usize, fid: usize, args: [usize; 3]) -> SbiRet {
        let (error, value): (isize, usize);
        // SAFETY: the SBI calling convention clobbers only a0/a1.
        unsafe {
            core::arch::asm!("ecall",
                inlateout("a0") args[0] => error, inlateout("a1") args[1] => value,
                in("a2") args[2], in("a6") fid, in("a7") eid, options(nostack));
        }
        SbiRet { error, value }
    }

    pub fn probe_extension(eid: usize) -> bool {
        ecall(eid::BASE, base::PROBE_EXTENSION, [eid, 0, 0]).value != 0
    }
    pub fn impl_id() -> usize {
        ecall(eid::BASE, base::GET_IMPL_ID, [0; 3]).value
    }
    pub fn spec_version() -> usize {
        ecall(eid::BASE, base::GET_SPEC_VERSION, [0; 3]).value
    }
    pub fn set_timer(deadline: u64) -> SbiRet {
        ecall(eid::TIME, time::SET_TIMER, [deadline as usize, 0, 0])
    }
    pub fn send_ipi(mask: HartMask) -> SbiRet {
        ecall(eid::IPI, ipi::SEND_IPI, [mask.mask, mask.base, 0])
    }
    /// RFENCE remote_sfence_vma over the whole address space (size = -1): the harts in `mask`
    /// flush their TLBs in M-mode; returns once they have.
    pub fn remote_sfence_vma_all(mask: HartMask) -> SbiRet {
        let (error, value): (isize, usize);
        // SAFETY: the SBI calling convention clobbers only a0/a1.
        unsafe {
            core::arch::asm!("ecall",
                inlateout("a0") mask.mask => error, inlateout("a1") mask.base => value,
                in("a2") 0usize, in("a3") usize::MAX, in("a6") rfence::REMOTE_SFENCE_VMA, in("a7") eid::RFENCE, options(nostack));
        }
        SbiRet { error, value }
    }
    pub fn hart_start(hart: usize, start_addr: usize, opaque: usize) -> SbiRet {
        ecall(eid::HSM, hsm::HART_START, [hart, start_addr, opaque])
    }
    pub fn hart_stop() -> SbiRet {
        ecall(eid::HSM, hsm::HART_STOP, [0; 3])
    }
    pub fn hart_status(hart: usize) -> SbiRet {
        ecall(eid::HSM, hsm::HART_GET_STATUS, [hart, 0, 0])
    }
    pub fn system_reset(kind: usize, reason: usize) -> SbiRet {
        ecall(eid::SRST, srst::SYSTEM_RESET, [kind, reason, 0])
    }
    /// v0.1 send_ipi: `mask` points to a hart mask in S-mode memory (a virtual address).
    pub fn legacy_send_ipi(mask: *const usize) -> isize {
        ecall(eid::LEGACY_SEND_IPI, 0, [mask as usize, 0, 0]).error
    }
    pub fn legacy_putchar(c: u8) {
        ecall(eid::LEGACY_CONSOLE_PUTCHAR, 0, [c as usize, 0, 0]);
    }
    pub fn legacy_getchar() -> Option<u8> {
        let r = ecall(eid::LEGACY_CONSOLE_GETCHAR, 0, [0; 3]);
        (r.error >= 0).then_some(r.error as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hart_mask_selects_from_base() {
        let m = HartMask { mask: 0b101, base: 2 };
        assert!(m.contains(2) && !m.contains(3) && m.contains(4));
        assert!(!m.contains(0) && !m.contains(1) && !m.contains(5));
        assert!(!m.contains(2 + 64), "bits beyond the word never match");
        assert!(HartMask::ALL.contains(7));
    }
}
