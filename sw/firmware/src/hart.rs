//! Per-hart M-mode set-up and the two ways into the firmware: boot hart and secondary harts.
use crate::csr::{self, *};
use crate::{clint, console, entry, hsm, machine, println};
use core::sync::atomic::{AtomicBool, Ordering};

/// `rdtime` works in hardware (QEMU); otherwise (Rocket 1.2.6) the trap handler emulates it.
pub static TIME_CSR: AtomicBool = AtomicBool::new(false);

const FW_NAME: &str = concat!("uintr-fw ", env!("CARGO_PKG_VERSION"));

/// What one hart's M-mode configuration ended up with (hardware decides what sticks).
struct HartSetup {
    uintr_delegated: bool,
    sstc: bool,
    pmp: bool,
    time_csr: bool,
}

fn init_this_hart() -> HartSetup {
    csrw!("mtvec", crate::trap::vector_address());
    csrw!("mie", 0);

    // S-mode gets all RAM and MMIO, but not the firmware itself. PMP entries without L bit do
    // not bind M-mode. Entry 0 (no permissions) shadows the firmware window, entry 1 allows all.
    let fw = platform::image::FIRMWARE_BASE;
    let fw_napot = (fw | (platform::image::FIRMWARE_SIZE / 2 - 1)) >> 2;
    let pmp = probe_write!("pmpaddr0", fw_napot).is_some();
    if pmp {
        csrw!("pmpaddr1", usize::MAX);
        const NAPOT: usize = 3 << 3;
        const RWX: usize = 0b111;
        csrw!("pmpcfg0", ((NAPOT | RWX) << 8) | NAPOT);
    }

    // Delegate the supervisor interrupts and, where the hardware has them, the user-level ones
    // (docs/uintr-spec.md section 5): mideleg is WARL, so a bit that does not stick is not there.
    let wanted = IRQ_SSI | IRQ_STI | IRQ_SEI | IRQ_USI | IRQ_UTI | IRQ_UEI;
    csrw!("mideleg", wanted);
    let got = csrr!("mideleg");
    let user_bits = IRQ_USI | IRQ_UTI | IRQ_UEI;

    let time_csr = probe_read!("time").is_some();
    let mut medeleg = (1 << EXC_INST_MISALIGNED)
        | (1 << EXC_INST_ACCESS)
        | (1 << EXC_BREAKPOINT)
        | (1 << EXC_LOAD_MISALIGNED)
        | (1 << EXC_LOAD_ACCESS)
        | (1 << EXC_STORE_MISALIGNED)
        | (1 << EXC_STORE_ACCESS)
        | (1 << EXC_ECALL_U)
        | (1 << EXC_INST_PAGE)
        | (1 << EXC_LOAD_PAGE)
        | (1 << EXC_STORE_PAGE);
    if time_csr {
        // Nothing to emulate: illegal instructions (including the user-interrupt
        // instructions on machines without them) go straight to the kernel.
        medeleg |= 1 << EXC_ILLEGAL;
    }
    csrw!("medeleg", medeleg);

    // Let S and U read cycle, time and instret (benchmarks read cycle counters from user space).
    let _ = probe_write!("mcounteren", 0b111);
    // Sstc: S-mode may program stimecmp itself when menvcfg.STCE sticks.
    const STCE: usize = 1 << 63;
    let sstc = probe_write!("menvcfg", STCE).is_some_and(|v| v & STCE != 0);

    // FS Off (the kernel turns it on through sstatus for the user thread that owns the FP
    // registers: lazy FP switching), XS on so custom-3 (uipi) instructions do not trap.
    csr::csrc!("mstatus", MSTATUS_FS_MASK | MSTATUS_MIE);
    csr::csrs!("mstatus", MSTATUS_XS_INITIAL);
    // Machine software interrupts carry IPIs and HSM starts; the timer is enabled on demand.
    csrw!("mie", IRQ_MSI);

    HartSetup { uintr_delegated: got & user_bits == user_bits, sstc, pmp, time_csr }
}

pub extern "C" fn boot_main(hart: usize, dtb: usize) -> ! {
    let dtb = crate::dtb::to_ram(dtb);
    let m = match machine::init(dtb) {
        Ok(m) => m,
        // Without a device tree there is no console to complain on; stop here.
        Err(_) => entry_park(),
    };
    console::init(m);
    let setup = init_this_hart();
    TIME_CSR.store(setup.time_csr, Ordering::Relaxed);
    hsm::init(m, hart);
    println!(
        "[firmware] {FW_NAME}: SBI v2.0 on '{}', {} harts, boot hart {}, timebase {} Hz",
        m.model,
        m.harts.len(),
        hart,
        m.timebase_hz
    );
    println!(
        "[firmware] pmp={} sstc={} time-csr={} user-interrupt delegation={} uintc={}",
        yes(setup.pmp),
        yes(setup.sstc && m.all_sstc()),
        if setup.time_csr { "hw" } else { "emulated" },
        yes(setup.uintr_delegated),
        m.uintc.map_or(0, |u| u.slots),
    );
    if m.uintc.is_some() && !setup.uintr_delegated {
        println!("[firmware] warning: a UINTC is present but mideleg does not take bits 0/4/8");
    }
    println!("[firmware] entering the kernel at {:#x} in S-mode", platform::image::KERNEL_PHYS_BASE);
    entry::enter_supervisor(hart, platform::image::KERNEL_PHYS_BASE, dtb)
}

pub extern "C" fn secondary_main(hart: usize) -> ! {
    let m = machine::wait();
    if m.hart(hart).is_none() {
        // Disabled or unknown to the device tree: never offered to the kernel.
        entry_park();
    }
    init_this_hart();
    clint::set_msip(hart, false);
    hsm::park_until_started(hart)
}

fn entry_park() -> ! {
    loop {
        // SAFETY: wfi has no side effects beyond waiting.
        unsafe { core::arch::asm!("wfi") };
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}
