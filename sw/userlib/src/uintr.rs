//! User interrupts and U-notifications (docs/uintr-spec.md, abi::uintr).
//!
//! A *receiver* is a thread bound to a notification that has a UINTC slot
//! ([`register_receiver`]); a *sender* holds an entry in its own sender table naming that slot
//! and a vector ([`register_sender`]). [`send`] (`uipi.send`) sets the vector's bit in the
//! receiver's pending word without entering the kernel; the receiver takes a user interrupt at
//! the handler [`install`]ed for it, or collects the bits with [`poll`] (`uipi.read`) or the
//! blocking [`wait`]. Without a UINTC the kernel emulates every instruction and CSR here, so
//! the same code runs, only slower.
//!
//! The handler runs on the interrupted thread's stack with user interrupts off; the trampoline
//! saves the caller-saved registers, so a handler is an ordinary Rust function.
use crate::invoke::{invoke, Result};
use abi::{label, uintr};

/// What a receiver thread does when a user interrupt arrives. One per thread: `uscratch` points
/// at it while the thread runs, so threads sharing an address space can each have their own.
#[repr(C)]
pub struct Handler {
    /// A software user interrupt: called with the pending word, already read and cleared (it
    /// can be 0 if another path, e.g. [`poll`], took the bits first).
    pub on_signal: fn(u64),
    /// A user external interrupt (a device IRQ routed to the PLIC's U-mode context).
    pub on_external: fn(),
}

/// NotificationRegisterReceiver: give the notification's bound thread a receiver slot.
/// Returns the slot index.
pub fn register_receiver(ntfn: usize) -> Result<usize> {
    Ok(invoke(ntfn, label::NOTIFICATION_REGISTER_RECEIVER, &[], &[])?.mr(0))
}

/// SenderTableBind: make `table` (a UintrSenderTable cap, `abi::object::UINTR_SENDER_TABLE`
/// retyped from the caller's Untyped) thread `tcb`'s sender table. A thread needs one before
/// [`register_sender`] can give it entries.
pub fn sender_table_bind(table: usize, tcb: usize) -> Result<()> {
    invoke(table, label::SENDER_TABLE_BIND, &[], &[tcb]).map(|_| ())
}

/// SenderTableUnbind: detach `table` from its thread; every entry in it is freed.
pub fn sender_table_unbind(table: usize) -> Result<()> {
    invoke(table, label::SENDER_TABLE_UNBIND, &[], &[]).map(|_| ())
}

/// NotificationRegisterSender: an entry in `tcb`'s sender table (bound with
/// [`sender_table_bind`]) that sends vector `badge of
/// ntfn` to the notification's receiver. Returns the entry index for [`send`].
pub fn register_sender(ntfn: usize, tcb: usize) -> Result<usize> {
    Ok(invoke(ntfn, label::NOTIFICATION_REGISTER_SENDER, &[], &[tcb])?.mr(0))
}

/// UintrControl_Grant: let thread `tcb` hold a UINTC receiver slot
/// (`abi::uintr::GRANT_RECEIVE`); 0 withdraws it and frees the slot it holds. `control` is the
/// UintrControl cap (the root task's is `abi::init_cap::UINTR_CONTROL`).
pub fn grant(control: usize, tcb: usize, grants: usize) -> Result<()> {
    invoke(control, label::UINTR_CONTROL_GRANT, &[grants], &[tcb]).map(|_| ())
}

/// How IRQSetUIntr routed a device interrupt (abi::label::IRQ_SET_UINTR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqRoute {
    /// The kernel claims it and raises the cap's badge as a vector (`Handler::on_signal`);
    /// quiet the device, then `irq::handler_ack`.
    Forwarded,
    /// The PLIC's U context of hart index `hart` raises UEIP (`Handler::on_external`): claim
    /// and complete it through that hart's [`PlicContext`], no kernel entry.
    Direct { hart: usize },
}

/// IRQSetUIntr: deliver an IRQ to a U-notification's receiver as a user interrupt.
pub fn irq_set_uintr(irq_handler: usize, ntfn: usize) -> Result<IrqRoute> {
    let r = invoke(irq_handler, label::IRQ_SET_UINTR, &[], &[ntfn])?;
    Ok(match r.mr(0) {
        uintr::IRQ_DIRECT => IrqRoute::Direct { hart: r.mr(1) },
        _ => IrqRoute::Forwarded,
    })
}

/// A hart's PLIC U-mode context page (`BootInfo::plic_user_context`), mapped by the caller:
/// claim and complete the interrupts routed to it with [`IrqRoute::Direct`].
#[derive(Clone, Copy, Debug)]
pub struct PlicContext {
    va: usize,
}

impl PlicContext {
    /// # Safety
    /// `va` must be a mapping of a PLIC U-context page.
    pub const unsafe fn new(va: usize) -> PlicContext {
        PlicContext { va }
    }

    /// The highest-priority pending source enabled for the running thread (0: none); it stays
    /// masked until [`PlicContext::complete`].
    pub fn claim(&self) -> u32 {
        // SAFETY: the context's claim/complete register (see `new`).
        unsafe { ((self.va + 4) as *const u32).read_volatile() }
    }

    /// Re-arm `irq` (after the device was quieted).
    pub fn complete(&self, irq: u32) {
        // SAFETY: as above.
        unsafe { ((self.va + 4) as *mut u32).write_volatile(irq) }
    }
}

/// The vector bit a sender with badge `badge` sets.
pub const fn vector_bit(badge: usize) -> u64 {
    1 << (badge & uintr::MAX_VECTOR)
}

/// Blocking Wait on a U-notification (the caller must be its registered receiver): sleeps in
/// the kernel until the slot has a pending bit, returns (and clears) the pending word.
pub fn wait(ntfn: usize) -> u64 {
    crate::syscall::wait(ntfn) as u64
}

#[cfg(target_arch = "riscv64")]
pub use imp::*;

#[cfg(target_arch = "riscv64")]
mod imp {
    use super::*;
    use platform::{csr, uipi};
    // By number: the assembler no longer knows the N-extension CSR names.
    use ::csr::{csrc_n, csrr_n, csrs_n, csrw_n};

    macro_rules! uipi_insn {
        ($op:expr, rd = $rd:literal, rs1 = $rs1:literal; $($operands:tt)*) => {
            // SAFETY: uipi instructions touch only the UINTC and the kernel's sender table.
            unsafe {
                core::arch::asm!(
                    concat!(".insn r {opc}, {f3}, {op}, ", $rd, ", ", $rs1, ", x0"),
                    opc = const uipi::OPCODE, f3 = const uipi::FUNCT3, op = const $op,
                    $($operands)* options(nostack)
                )
            }
        };
    }

    /// `uipi.send`: raise the interrupt of sender-table entry `index`, after the caller's
    /// earlier memory writes (`fence w, o`: ring data before the doorbell).
    #[inline(always)]
    pub fn send(index: usize) {
        // SAFETY: a fence has no other effect.
        unsafe { core::arch::asm!("fence w, o", options(nostack)) };
        send_relaxed(index);
    }

    /// `uipi.send` without ordering against earlier writes.
    #[inline(always)]
    pub fn send_relaxed(index: usize) {
        uipi_insn!(uipi::SEND, rd = "x0", rs1 = "{i}"; i = in(reg) index,);
    }

    /// `uipi.read`: this thread's pending word, cleared (Poll). 0 if nothing is pending or the
    /// thread is not a receiver.
    #[inline(always)]
    pub fn poll() -> u64 {
        let v: u64;
        uipi_insn!(uipi::READ, rd = "{v}", rs1 = "x0"; v = out(reg) v,);
        v
    }

    /// `uipi.write`: OR bits into this thread's own pending word.
    #[inline(always)]
    pub fn write(bits: u64) {
        uipi_insn!(uipi::WRITE, rd = "x0", rs1 = "{b}"; b = in(reg) bits,);
    }

    /// `uipi.activate` / `uipi.deactivate` of this thread's slot (the kernel activates it again
    /// whenever the thread is switched in).
    #[inline(always)]
    pub fn activate() {
        uipi_insn!(uipi::ACTIVATE, rd = "x0", rs1 = "x0";);
    }

    #[inline(always)]
    pub fn deactivate() {
        uipi_insn!(uipi::DEACTIVATE, rd = "x0", rs1 = "x0";);
    }

    const UIE: usize = 1;
    const USIE: usize = 1 << csr::USIP_BIT;
    const UEIE: usize = 1 << csr::UEIP_BIT;

    /// Make `h` this thread's handler and enable software and external user interrupts.
    pub fn install(h: &'static Handler) {
        csrw_n!(csr::USCRATCH, h as *const Handler as usize);
        csrw_n!(csr::UTVEC, userlib_uintr_entry as *const () as usize);
        csrs_n!(csr::UIE, USIE | UEIE);
        enable();
    }

    /// Undo `install`: user interrupts off and every U-CSR of this thread back to 0, as a
    /// new thread starts. A thread whose U-CSRs are all 0 and that receives nothing switches
    /// on the kernel's short path (no CSR to save or load).
    pub fn uninstall() {
        csrw_n!(csr::USTATUS, 0);
        csrw_n!(csr::UIE, 0);
        csrw_n!(csr::UTVEC, 0);
        csrw_n!(csr::USCRATCH, 0);
        csrw_n!(csr::UEPC, 0);
        csrw_n!(csr::UCAUSE, 0);
        csrw_n!(csr::UTVAL, 0);
    }

    /// `ustatus.UIE` on / off: user interrupts are taken / held pending.
    #[inline(always)]
    pub fn enable() {
        csrs_n!(csr::USTATUS, UIE);
    }

    #[inline(always)]
    pub fn disable() {
        csrc_n!(csr::USTATUS, UIE);
    }

    /// The U-mode CSRs of the calling thread, for tests and debugging.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct UCsrs {
        pub ustatus: usize,
        pub uie: usize,
        pub utvec: usize,
        pub uscratch: usize,
        pub uepc: usize,
        pub ucause: usize,
        pub utval: usize,
        pub uip: usize,
    }

    pub fn csrs() -> UCsrs {
        UCsrs {
            ustatus: csrr_n!(csr::USTATUS),
            uie: csrr_n!(csr::UIE),
            utvec: csrr_n!(csr::UTVEC),
            uscratch: csrr_n!(csr::USCRATCH),
            uepc: csrr_n!(csr::UEPC),
            ucause: csrr_n!(csr::UCAUSE),
            utval: csrr_n!(csr::UTVAL),
            uip: csrr_n!(csr::UIP),
        }
    }

    pub fn set_uscratch(v: usize) {
        csrw_n!(csr::USCRATCH, v);
    }

    pub fn set_utvec(v: usize) {
        csrw_n!(csr::UTVEC, v);
    }

    extern "C" {
        fn userlib_uintr_entry();
    }

    /// Called by the trampoline with ucause and uscratch (this thread's `Handler`).
    extern "C" fn dispatch(ucause: usize, handler: *const Handler) {
        // SAFETY: `install` put a &'static Handler in uscratch.
        let Some(h) = (unsafe { handler.as_ref() }) else { return };
        match ucause & !uintr::CAUSE_INTERRUPT {
            uintr::CAUSE_EXTERNAL => (h.on_external)(),
            _ => (h.on_signal)(poll()),
        }
    }

    // The user trap entry: utvec (direct mode) points here. It saves what the Rust ABI lets a
    // call clobber (the callee saves the rest), calls `dispatch`, and returns with `uret`.
    core::arch::global_asm!(
        ".section .text",
        ".balign 4",
        ".globl userlib_uintr_entry",
        "userlib_uintr_entry:",
        "   addi sp, sp, -128",
        "   sd ra, 0(sp)",
        "   sd t0, 8(sp)",
        "   sd t1, 16(sp)",
        "   sd t2, 24(sp)",
        "   sd a0, 32(sp)",
        "   sd a1, 40(sp)",
        "   sd a2, 48(sp)",
        "   sd a3, 56(sp)",
        "   sd a4, 64(sp)",
        "   sd a5, 72(sp)",
        "   sd a6, 80(sp)",
        "   sd a7, 88(sp)",
        "   sd t3, 96(sp)",
        "   sd t4, 104(sp)",
        "   sd t5, 112(sp)",
        "   sd t6, 120(sp)",
        "   csrr a0, {ucause}",
        "   csrr a1, {uscratch}",
        "   call {dispatch}",
        "   ld ra, 0(sp)",
        "   ld t0, 8(sp)",
        "   ld t1, 16(sp)",
        "   ld t2, 24(sp)",
        "   ld a0, 32(sp)",
        "   ld a1, 40(sp)",
        "   ld a2, 48(sp)",
        "   ld a3, 56(sp)",
        "   ld a4, 64(sp)",
        "   ld a5, 72(sp)",
        "   ld a6, 80(sp)",
        "   ld a7, 88(sp)",
        "   ld t3, 96(sp)",
        "   ld t4, 104(sp)",
        "   ld t5, 112(sp)",
        "   ld t6, 120(sp)",
        "   addi sp, sp, 128",
        "   .4byte {uret}",
        ucause = const csr::UCAUSE,
        uscratch = const csr::USCRATCH,
        uret = const uipi::URET,
        dispatch = sym dispatch,
    );
}
