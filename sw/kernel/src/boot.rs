//! The boot hart's path from the firmware to a running system.
use crate::arch::{self, cpu};
use crate::{kprintln, machine, mm, percpu, selftest, smp};
use devtree::Region;

pub extern "C" fn boot_main(hart: usize, dtb: usize) -> ! {
    let (t0, c0) = (cpu::time(), cpu::cycles());
    percpu::install(hart);
    arch::trap::install();
    let m = machine::init(dtb);
    crate::console::init(m);
    kprintln!(
        "[kernel] booting on hart {} of {}: '{}', timebase {} Hz, SBI impl {:#x} v{}.{}",
        hart,
        m.harts.len(),
        m.model,
        m.timebase_hz,
        sbi_defs::call::impl_id(),
        sbi_defs::call::spec_version() >> 24,
        sbi_defs::call::spec_version() & 0xff_ffff
    );

    // Sender-table links pack a table's address into 32 bits (uintr::sender): a machine
    // description, not user input, so stopping here is right.
    let top = m.memory.iter().map(|r| r.end() as u64).max().unwrap_or(0);
    assert!(top <= crate::uintr::SENDER_LINKABLE_LIMIT, "RAM ends at {top:#x}, above what sender tables can link");
    let [text, _, data] = arch::entry::image_sections();
    let kernel = Region { base: mm::virt_to_phys(text.0), size: data.1 - text.0 };
    let free = mm::frames::init(m, kernel, machine::dtb());
    mm::kspace::build(m);
    mm::kspace::activate();
    let asids = mm::tlb::probe_asids();
    kprintln!(
        "[kernel] Sv39 kernel space: image {:#x}..{:#x} at {:#x}, {} MiB free RAM, {} table frames",
        kernel.base,
        kernel.end(),
        text.0,
        free >> 20,
        mm::kspace::table_frames()
    );
    kprintln!(
        "[kernel] TLB: {}",
        if asids {
            "16-bit hardware ASIDs, no flush on an address-space switch"
        } else {
            "no hardware ASIDs, a flush on every address-space switch"
        }
    );
    kprintln!(
        "[kernel] devices: uart {:#x} plic {:#x} uintc {:#x} ({} slots) virtio-mmio x{}; timer via {}",
        m.uart.map_or(0, |u| u.reg.base),
        m.plic.map_or(0, |p| p.reg.base),
        m.uintc.map_or(0, |u| u.reg.base),
        m.uintc.map_or(0, |u| u.slots),
        m.virtio_mmio.len(),
        if arch::timer::init(m) { "Sstc" } else { "SBI TIME" }
    );

    crate::plic::init(m);
    crate::uintr::init(m);
    smp::come_online();
    smp::start_secondaries(m);
    let passed = selftest::run(m, hart);
    if m.has_bootarg("selftest.inject-panic") {
        // Lets the test suite prove that a kernel panic reaches the host as a failing exit.
        panic!("injected by the selftest.inject-panic boot argument");
    }
    let elapsed = cpu::time() - t0;
    kprintln!(
        "[kernel] boot {} in {} ms of machine time ({} timebase ticks, {} cycles on hart {})",
        if passed { "complete" } else { "FAILED" },
        elapsed * 1000 / m.timebase_hz,
        elapsed,
        cpu::cycles() - c0,
        hart
    );
    if !passed {
        arch::exit::fail(3)
    }
    crate::lock::acquire();
    match crate::rootserver::create(m) {
        Ok(true) => {}
        Ok(false) => arch::exit::pass(), // no root task: the boot checks were the whole run
        Err(e) => panic!("cannot start the root task: {e:?}"),
    }
    crate::sched::start(hart);
    crate::sched::exit_to_user()
}
