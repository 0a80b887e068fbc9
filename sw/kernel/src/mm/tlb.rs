//! The user half of each hart's TLB: the address space a hart returns to user mode in, and when
//! it must flush. Every change to a user mapping moves a generation, per address space (ASID
//! mod `BUCKETS`: a collision only costs a flush) and one for all of them; a hart flushes an
//! address space before it enters user mode in it if that space's generation moved since the
//! hart last flushed it there.
//!
//! With hardware ASIDs (satp.ASID wide enough for every kernel ASID, probed at boot; our Rocket
//! cores since core patch 0006) the TLB keeps the spaces apart: a switch is a `csrw satp` that
//! flushes nothing, and a moved generation flushes only that space (`sfence.vma x0, asid`).
//! Without them every change of satp flushes the user half.
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use platform::image::MAX_HARTS;

use crate::percpu::PerCpu;
use crate::stats;
use abi::stat;

const BUCKETS: usize = 64;
static GEN_ALL: AtomicU64 = AtomicU64::new(0);
static GEN: [AtomicU64; BUCKETS] = [const { AtomicU64::new(0) }; BUCKETS];

/// satp.ASID's place, and the width every kernel ASID (`u16`) needs.
const SATP_ASID_SHIFT: usize = 44;
const ASID_MASK: usize = 0xffff;
static HW_ASIDS: AtomicBool = AtomicBool::new(false);

/// Per hart and bucket: the ASID this hart last flushed there and the generation it flushed at
/// (side by side: one line for the exit path's check). Only that hart touches its row (with or
/// without the kernel lock: `sched::run_handed`).
struct Seen {
    asid: AtomicUsize,
    gen: AtomicU64,
}

impl Seen {
    const fn new() -> Self {
        Seen { asid: AtomicUsize::new(usize::MAX), gen: AtomicU64::new(0) }
    }
}

static SEEN: [[Seen; BUCKETS]; MAX_HARTS] = [const { [const { Seen::new() }; BUCKETS] }; MAX_HARTS];

/// Whether satp keeps all 16 ASID bits (boot hart, once, before the others start: all harts
/// are the same core). Writing an ASID changes nothing the kernel uses (its pages are global).
pub fn probe_asids() -> bool {
    let wide: usize;
    // SAFETY: only the ASID field changes, and it is put back; the fence drops anything
    // filled under the probe's ASID.
    unsafe {
        core::arch::asm!(
            "csrr {s}, satp",
            "or {t}, {s}, {m}",
            "csrw satp, {t}",
            "csrr {t}, satp",
            "csrw satp, {s}",
            "sfence.vma",
            s = out(reg) _, t = out(reg) wide, m = in(reg) ASID_MASK << SATP_ASID_SHIFT,
        )
    };
    let ok = (wide >> SATP_ASID_SHIFT) & ASID_MASK == ASID_MASK;
    HW_ASIDS.store(ok, Ordering::Relaxed);
    ok
}

pub fn hw_asids() -> bool {
    HW_ASIDS.load(Ordering::Relaxed)
}

/// A change to `asid`'s mappings, or (None) to any address space's; also an ASID given to a new
/// VSpace (its old entries must go before anyone runs it).
pub fn bump(asid: Option<u16>) {
    match asid {
        Some(a) => GEN[a as usize % BUCKETS].fetch_add(1, Ordering::AcqRel),
        None => GEN_ALL.fetch_add(1, Ordering::AcqRel),
    };
}

/// The generation a hart running `asid` has to have flushed up to (a sum of two counts that
/// only grow, so it moves whenever either does).
fn gen(asid: usize) -> u64 {
    GEN_ALL.load(Ordering::Acquire).wrapping_add(GEN[asid % BUCKETS].load(Ordering::Acquire))
}

/// Make `satp` (no ASID in it) with kernel ASID `asid` this hart's address space, flushing what
/// may be stale; and say which ASID it runs (`sched::shootdown` kicks by it). `asid` is not a
/// `u16` for a thread without a VSpace: it runs the kernel's table, whose user half is empty,
/// under hardware ASID 0, which no VSpace gets (seL4's asidInvalid).
#[inline(always)]
pub fn switch_space(cpu: &PerCpu, satp: usize, asid: usize) {
    let seen = &SEEN[cpu.index()][asid % BUCKETS];
    let gen = gen(asid);
    let fresh = seen.asid.load(Ordering::Relaxed) == asid && seen.gen.load(Ordering::Relaxed) == gen;
    if hw_asids() {
        let hw = if asid <= ASID_MASK { asid } else { 0 };
        let satp = satp | hw << SATP_ASID_SHIFT;
        if cpu.active_satp.load(Ordering::Relaxed) != satp {
            // SAFETY: every VSpace shares the kernel's upper half (global pages).
            unsafe { core::arch::asm!("csrw satp, {0}", in(reg) satp) };
            cpu.active_satp.store(satp, Ordering::Relaxed);
            stats::count(stat::SATP_WRITES);
        }
        if !fresh {
            // rs2 names the ASID even when it holds 0 (only x0 means all of them).
            // SAFETY: drops translations only.
            unsafe { core::arch::asm!("sfence.vma zero, {0}", in(reg) hw) };
            stats::count(stat::TLB_FLUSHES);
        }
    } else if cpu.active_satp.load(Ordering::Relaxed) != satp || !fresh {
        // One TLB for every space: the user half goes. `sfence.vma x0, rs2` with rs2 != x0
        // keeps global entries, the kernel's (the same in every VSpace), so the kernel does not
        // refill its own translations after every switch.
        // SAFETY: every VSpace shares the kernel's upper half.
        unsafe { core::arch::asm!("csrw satp, {0}", "sfence.vma zero, {1}", in(reg) satp, in(reg) 0usize) };
        cpu.active_satp.store(satp, Ordering::Relaxed);
        stats::count(stat::SATP_WRITES);
        stats::count(stat::TLB_FLUSHES);
    }
    if !fresh {
        seen.asid.store(asid, Ordering::Relaxed);
        seen.gen.store(gen, Ordering::Relaxed);
    }
    cpu.active_asid.store(asid, Ordering::Relaxed);
}

/// This hart's address space is the one `t` has now (lock held): its root and ASID are what
/// `satp_of` says (the hardware ASID bits of `active_satp` aside).
#[inline(always)]
pub fn runs_space_of(t: &crate::object::tcb::Tcb) -> bool {
    let cpu = crate::percpu::this();
    let (satp, asid) = crate::object::vspace::satp_of(t);
    const ROOT: usize = !(ASID_MASK << SATP_ASID_SHIFT);
    cpu.active_asid.load(Ordering::Relaxed) == asid && cpu.active_satp.load(Ordering::Relaxed) & ROOT == satp & ROOT
}
