//! SBI call dispatch (a7 = extension, a6 = function, a0..a5 = arguments).
use crate::trap::{TrapFrame, A0, A1};
use crate::{clint, console, csr, exit, hsm, ipi, println};
use sbi_defs::{base, dbcn, eid, error, rfence, srst, HartMask, SbiRet};

const EXTENSIONS: [usize; 7] = [eid::BASE, eid::TIME, eid::IPI, eid::RFENCE, eid::HSM, eid::SRST, eid::DBCN];

pub fn dispatch(hart: usize, f: &mut TrapFrame) {
    let (ext, func) = (f.regs[17], f.regs[16]);
    let a = [f.regs[10], f.regs[11], f.regs[12], f.regs[13], f.regs[14], f.regs[15]];
    if ext <= eid::LEGACY_SHUTDOWN {
        // Legacy v0.1 calls return one value in a0 and leave a1 alone.
        f.regs[A0] = legacy(hart, ext, a) as usize;
        return;
    }
    let ret = match ext {
        eid::BASE => base_call(func, a[0]),
        eid::TIME if func == sbi_defs::time::SET_TIMER => set_timer(hart, a[0] as u64),
        eid::IPI if func == sbi_defs::ipi::SEND_IPI => ipi::send(HartMask { mask: a[0], base: a[1] }, ipi::OP_SSIP),
        eid::RFENCE => remote_fence(func, HartMask { mask: a[0], base: a[1] }),
        eid::HSM => match func {
            sbi_defs::hsm::HART_START => hsm::start(a[0], a[1], a[2]),
            sbi_defs::hsm::HART_STOP => hsm::stop(hart),
            sbi_defs::hsm::HART_GET_STATUS => hsm::status(a[0]),
            sbi_defs::hsm::HART_SUSPEND => hsm::suspend(hart, a[0]),
            _ => SbiRet::err(error::NOT_SUPPORTED),
        },
        eid::SRST if func == srst::SYSTEM_RESET => system_reset(a[0], a[1]),
        eid::DBCN => debug_console(func, a),
        _ => SbiRet::err(error::NOT_SUPPORTED),
    };
    f.regs[A0] = ret.error as usize;
    f.regs[A1] = ret.value;
}

fn base_call(func: usize, arg: usize) -> SbiRet {
    match func {
        base::GET_SPEC_VERSION => SbiRet::ok(sbi_defs::SPEC_VERSION),
        base::GET_IMPL_ID => SbiRet::ok(sbi_defs::IMPL_ID),
        base::GET_IMPL_VERSION => SbiRet::ok(1),
        base::PROBE_EXTENSION => SbiRet::ok((EXTENSIONS.contains(&arg) || arg <= eid::LEGACY_SHUTDOWN) as usize),
        base::GET_MVENDORID => SbiRet::ok(csr::csrr!("mvendorid")),
        base::GET_MARCHID => SbiRet::ok(csr::csrr!("marchid")),
        base::GET_MIMPID => SbiRet::ok(csr::csrr!("mimpid")),
        _ => SbiRet::err(error::NOT_SUPPORTED),
    }
}

fn set_timer(hart: usize, deadline: u64) -> SbiRet {
    clint::set_timecmp(hart, deadline);
    csr::csrc!("mip", csr::IRQ_STI);
    csr::csrs!("mie", csr::IRQ_MTI);
    SbiRet::ok(0)
}

fn remote_fence(func: usize, mask: HartMask) -> SbiRet {
    match func {
        rfence::REMOTE_FENCE_I => ipi::send(mask, ipi::OP_FENCE_I),
        // Address ranges and ASIDs are widened to a full flush: always correct.
        rfence::REMOTE_SFENCE_VMA | rfence::REMOTE_SFENCE_VMA_ASID => ipi::send(mask, ipi::OP_SFENCE_VMA),
        _ => SbiRet::err(error::NOT_SUPPORTED),
    }
}

fn system_reset(kind: usize, reason: usize) -> SbiRet {
    match kind {
        srst::TYPE_SHUTDOWN if reason == srst::REASON_NONE => {
            println!("[firmware] shutdown requested");
            exit::pass()
        }
        srst::TYPE_SHUTDOWN => {
            // Unlike OpenSBI 1.1, a failure reason reaches the host as a failing exit status.
            println!("[firmware] shutdown with failure reason {reason}");
            exit::fail(1)
        }
        srst::TYPE_COLD_REBOOT | srst::TYPE_WARM_REBOOT => exit::reset(),
        _ => SbiRet::err(error::INVALID_PARAM),
    }
}

/// Debug console: S-mode passes physical addresses; M-mode reads them with the MMU off.
fn debug_console(func: usize, a: [usize; 6]) -> SbiRet {
    let in_ram = |addr: usize, len: usize| {
        crate::machine::get().memory.iter().any(|r| r.contains(addr) && len <= r.end() - addr)
    };
    match func {
        dbcn::WRITE_BYTE => {
            console::putc(a[0] as u8);
            SbiRet::ok(0)
        }
        dbcn::WRITE | dbcn::READ => {
            let (len, addr) = (a[0], a[1]);
            if a[2] != 0 || !in_ram(addr, len) {
                return SbiRet::err(error::INVALID_PARAM);
            }
            let mut done = 0;
            while done < len {
                // SAFETY: bounds checked against RAM above.
                unsafe {
                    if func == dbcn::WRITE {
                        console::putc(*((addr + done) as *const u8));
                    } else {
                        match console::getc() {
                            Some(c) => *((addr + done) as *mut u8) = c,
                            None => break,
                        }
                    }
                }
                done += 1;
            }
            SbiRet::ok(done)
        }
        _ => SbiRet::err(error::NOT_SUPPORTED),
    }
}

fn legacy(hart: usize, ext: usize, a: [usize; 6]) -> isize {
    // v0.1 passes a pointer to a hart mask in S-mode's (virtual) memory, or 0 for all harts.
    // A pointer S-mode could not read itself is refused rather than followed.
    let all_or_mask = |ptr: usize| -> Option<HartMask> {
        if ptr == 0 {
            Some(HartMask::ALL)
        } else {
            csr::read_smode_u64(ptr).map(|mask| HartMask { mask: mask as usize, base: 0 })
        }
    };
    let post = |ptr: usize, op: usize| match all_or_mask(ptr) {
        Some(mask) => ipi::send(mask, op).error,
        None => error::INVALID_ADDRESS,
    };
    match ext {
        eid::LEGACY_SET_TIMER => set_timer(hart, a[0] as u64).error,
        eid::LEGACY_CONSOLE_PUTCHAR => {
            console::putc(a[0] as u8);
            0
        }
        eid::LEGACY_CONSOLE_GETCHAR => console::getc().map_or(-1, |c| c as isize),
        eid::LEGACY_CLEAR_IPI => {
            csr::csrc!("mip", csr::IRQ_SSI);
            0
        }
        eid::LEGACY_SEND_IPI => post(a[0], ipi::OP_SSIP),
        eid::LEGACY_REMOTE_FENCE_I => post(a[0], ipi::OP_FENCE_I),
        eid::LEGACY_REMOTE_SFENCE_VMA | eid::LEGACY_REMOTE_SFENCE_VMA_ASID => post(a[0], ipi::OP_SFENCE_VMA),
        eid::LEGACY_SHUTDOWN => exit::pass(),
        _ => error::NOT_SUPPORTED,
    }
}
