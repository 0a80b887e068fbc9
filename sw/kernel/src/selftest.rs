//! Boot checks: each one exercises real hardware paths (timer interrupts on every hart, IPIs,
//! HSM stop/start, page-table permissions) and can fail. The host reads their lines and the
//! exit status.
use crate::arch::{self, cpu, ipi::Msg};
use crate::{kprintln, mm, percpu};
use core::sync::atomic::Ordering;
use sbi_defs::hsm;

/// Wait up to `ms` of machine time for `cond`.
fn wait_for(m: &devtree::Machine, ms: u64, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = cpu::time() + m.timebase_hz * ms / 1000;
    while cpu::time() < deadline {
        if cond() {
            return true;
        }
        core::hint::spin_loop();
    }
    cond()
}

fn report(name: &str, ok: bool, detail: core::fmt::Arguments) -> bool {
    kprintln!("[kernel] check {:<6} {} ({})", name, if ok { "ok" } else { "FAILED" }, detail);
    ok
}

pub fn run(m: &devtree::Machine, boot: usize) -> bool {
    let n = m.harts.len();
    let others = || m.harts.iter().map(|h| h.id).filter(move |&h| h != boot);
    let mut all = true;

    let online = wait_for(m, 5000, || percpu::online_count() == n);
    all &= report("smp", online, format_args!("{}/{} harts online", percpu::online_count(), n));

    let ticks_ok = wait_for(m, 2000, || m.harts.iter().all(|h| percpu::of(h.id).ticks.load(Ordering::Relaxed) >= 3));
    let min_ticks = m.harts.iter().map(|h| percpu::of(h.id).ticks.load(Ordering::Relaxed)).min().unwrap_or(0);
    all &= report(
        "timer",
        ticks_ok,
        format_args!("every hart took >= {} ticks at {} Hz", min_ticks, arch::timer::TICK_HZ),
    );

    let mut answered = 0;
    for h in others() {
        let before = percpu::of(h).ipis.load(Ordering::Acquire);
        arch::ipi::send(h, Msg::Ping);
        answered += wait_for(m, 1000, || percpu::of(h).ipis.load(Ordering::Acquire) > before) as usize;
    }
    all &= report("ipi", answered == n - 1, format_args!("{}/{} harts answered", answered, n - 1));

    if let Some(target) = others().next() {
        all &= legacy_ipi_check(m, target);
    }

    if let Some(victim) = others().next_back() {
        let ok = hsm_cycle(m, victim);
        all &= report("hsm", ok, format_args!("hart {victim} stopped and restarted"));
    }

    all &= idle_check(m, boot);
    all &= sv39_checks();
    if all {
        kprintln!("[kernel] all boot checks passed on {} harts", n);
    }
    all
}

fn hsm_cycle(m: &devtree::Machine, hart: usize) -> bool {
    let cpu = percpu::of(hart);
    let starts = cpu.starts.load(Ordering::Acquire);
    arch::ipi::send(hart, Msg::Stop);
    let stopped = wait_for(m, 1000, || sbi_defs::call::hart_status(hart).value == hsm::STOPPED);
    if !stopped {
        return false;
    }
    // Starting a started hart must be refused; starting the stopped one must work.
    let refused = sbi_defs::call::hart_start(cpu::hart_id(), arch::entry::secondary_entry_phys(), 0).error
        == sbi_defs::error::ALREADY_AVAILABLE;
    crate::smp::start(hart);
    let back =
        wait_for(m, 2000, || cpu.online.load(Ordering::Acquire) && cpu.starts.load(Ordering::Acquire) == starts + 1);
    refused && back && sbi_defs::call::hart_status(hart).value == hsm::STARTED
}

/// The kernel page table really enforces what kspace built.
fn sv39_checks() -> bool {
    let [text, rodata, _] = arch::entry::image_sections();
    let text_readable = mm::probe::try_read_u8(text.0).is_some();
    let text_read_only = !mm::probe::try_write_u8(text.0, 0);
    let rodata_read_only = !mm::probe::try_write_u8(rodata.0, 0);
    let text_flags = mm::kspace::translate(text.0).map(|(_, f)| f);
    let exec_not_write = text_flags.is_some_and(|f| f.contains(sv39::Flags::X) && !f.contains(sv39::Flags::W));
    // A free frame through the window: writable, and reads back what was written.
    let frame = mm::frames::alloc_zeroed().map(mm::phys_to_virt);
    let ram_rw =
        frame.is_some_and(|va| mm::probe::try_write_u8(va + 7, 0xa5) && mm::probe::try_read_u8(va + 7) == Some(0xa5));
    // Nothing is mapped below the window (user space will live there).
    let low_unmapped = mm::probe::try_read_u8(text.0 - platform::image::KERNEL_WINDOW).is_none();
    let ok = text_readable && text_read_only && rodata_read_only && exec_not_write && ram_rw && low_unmapped;
    report(
        "sv39",
        ok,
        format_args!(
            "text r-x {}, rodata r-- {}, ram rw {}, low half unmapped {}",
            text_readable && text_read_only && exec_not_write,
            rodata_read_only,
            ram_rw,
            low_unmapped
        ),
    )
}

/// Idle harts must sleep in `wfi`: while each takes 5 more interrupts (ticks), it wakes about
/// once per interrupt. A spinning idle loop would wake thousands of times. Counting interrupts
/// rather than a time window keeps the check independent of how fast the host runs QEMU.
fn idle_check(m: &devtree::Machine, boot: usize) -> bool {
    let idle: heapless::Vec<usize, { devtree::MAX_HARTS }> =
        m.harts.iter().map(|h| h.id).filter(|&h| h != boot).collect();
    let snap = |h: usize| {
        let c = percpu::of(h);
        (c.idle_wakeups.load(Ordering::Relaxed), c.ticks.load(Ordering::Relaxed) + c.ipis.load(Ordering::Relaxed))
    };
    let before: heapless::Vec<(u64, u64), { devtree::MAX_HARTS }> = idle.iter().map(|&h| snap(h)).collect();
    let enough = wait_for(m, 2000, || idle.iter().enumerate().all(|(i, &h)| snap(h).1 >= before[i].1 + 5));
    let mut worst = (0, 0);
    let mut ok = true;
    for (i, &h) in idle.iter().enumerate() {
        let (w1, i1) = snap(h);
        let (wakeups, irqs) = (w1 - before[i].0, i1 - before[i].1);
        ok &= enough && wakeups <= irqs + 2;
        if wakeups > worst.0 {
            worst = (wakeups, irqs);
        }
    }
    report(
        "idle",
        ok,
        format_args!("{} idle harts; at most {} wfi wakeups for {} interrupts", idle.len(), worst.0, worst.1),
    )
}

/// SBI v0.1 send_ipi takes a *virtual* pointer to the hart mask: the firmware must read it
/// through S-mode's translation (ours and OpenSBI both do). Ours also refuses a pointer S-mode
/// cannot read; OpenSBI would redirect the fault to us instead, so that half runs only on ours.
fn legacy_ipi_check(m: &devtree::Machine, target: usize) -> bool {
    let mask: usize = 1 << target;
    let before = percpu::of(target).ipis.load(Ordering::Acquire);
    let sent = sbi_defs::call::legacy_send_ipi(&mask) == 0;
    let arrived = sent && wait_for(m, 1000, || percpu::of(target).ipis.load(Ordering::Acquire) > before);
    if sbi_defs::call::impl_id() != sbi_defs::IMPL_ID {
        return report("sbi", arrived, format_args!("legacy send_ipi through a virtual mask pointer: {arrived}"));
    }
    // A low-half address: nothing is mapped there in the kernel's address space.
    let refused = sbi_defs::call::legacy_send_ipi(0x1000 as *const usize) == sbi_defs::error::INVALID_ADDRESS;
    report(
        "sbi",
        arrived && refused,
        format_args!("legacy send_ipi through a virtual mask pointer: {arrived}, bad pointer refused: {refused}"),
    )
}
