//! TCB invocations.
use crate::invoke::{invocations, invoke, invoke0, Result};
use abi::{label, regs};

/// seL4_UserContext: registers in `abi::regs::ORDER` (pc, ra, sp, gp, s0..s11, a0..a7, t0..t6, tp).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserContext {
    pub regs: [usize; regs::COUNT],
}

impl UserContext {
    pub const PC: usize = 0;
    pub const RA: usize = 1;
    pub const SP: usize = 2;
    pub const GP: usize = 3;
    pub const S0: usize = 4;
    pub const A0: usize = 16;
    pub const T0: usize = 24;
    pub const TP: usize = 31;

    /// Index in the ORDER array of x-register `x` (32 = pc).
    pub fn index_of(x: u8) -> usize {
        regs::ORDER.iter().position(|r| *r == x).expect("not a register")
    }
    /// a-register `n` (0..7).
    pub fn a(&self, n: usize) -> usize {
        self.regs[Self::A0 + n]
    }
    pub fn set_a(&mut self, n: usize, v: usize) {
        self.regs[Self::A0 + n] = v;
    }
    pub fn pc(&self) -> usize {
        self.regs[Self::PC]
    }
    pub fn sp(&self) -> usize {
        self.regs[Self::SP]
    }
}

/// seL4_TCB_ReadRegisters: the first `count` registers; MRs [suspend_source, arch_flags, count].
pub fn read_registers(service: usize, suspend_source: bool, arch_flags: usize, count: usize) -> Result<UserContext> {
    let r = invoke(service, label::TCB_READ_REGISTERS, &[suspend_source as usize, arch_flags, count], &[])?;
    let mut ctx = UserContext::default();
    for (i, v) in ctx.regs.iter_mut().enumerate().take(count.min(regs::COUNT)) {
        *v = r.mr(i);
    }
    Ok(ctx)
}

/// seL4_TCB_WriteRegisters: MRs [resume_target, arch_flags, count, regs[0..count]...].
pub fn write_registers(
    service: usize,
    resume_target: bool,
    arch_flags: usize,
    count: usize,
    ctx: &UserContext,
) -> Result<()> {
    let count = count.min(regs::COUNT);
    let mut args = [0usize; 3 + regs::COUNT];
    args[0] = resume_target as usize;
    args[1] = arch_flags;
    args[2] = count;
    args[3..3 + count].copy_from_slice(&ctx.regs[..count]);
    invoke0(service, label::TCB_WRITE_REGISTERS, &args[..3 + count], &[])
}

/// seL4_TCB_CopyRegisters (seL4 packs the flags into MR0: bit0 suspend_source, bit1
/// resume_target, bit2 transfer_frame, bit3 transfer_integer, arch_flags from bit 8).
pub fn copy_registers(
    service: usize,
    source: usize,
    suspend_source: bool,
    resume_target: bool,
    transfer_frame: bool,
    transfer_integer: bool,
    arch_flags: usize,
) -> Result<()> {
    let w = suspend_source as usize
        | (resume_target as usize) << 1
        | (transfer_frame as usize) << 2
        | (transfer_integer as usize) << 3
        | arch_flags << 8;
    invoke0(service, label::TCB_COPY_REGISTERS, &[w], &[source])
}

/// seL4_TCB_Configure (non-MCS).
#[allow(clippy::too_many_arguments)]
pub fn configure(
    service: usize,
    fault_ep: usize,
    cspace_root: usize,
    cspace_root_data: usize,
    vspace_root: usize,
    vspace_root_data: usize,
    buffer: usize,
    buffer_frame: usize,
) -> Result<()> {
    invoke0(
        service,
        label::TCB_CONFIGURE,
        &[fault_ep, cspace_root_data, vspace_root_data, buffer],
        &[cspace_root, vspace_root, buffer_frame],
    )
}

pub fn set_priority(service: usize, authority: usize, priority: usize) -> Result<()> {
    invoke0(service, label::TCB_SET_PRIORITY, &[priority], &[authority])
}

pub fn set_mc_priority(service: usize, authority: usize, mcp: usize) -> Result<()> {
    invoke0(service, label::TCB_SET_MC_PRIORITY, &[mcp], &[authority])
}

pub fn set_sched_params(service: usize, authority: usize, mcp: usize, priority: usize) -> Result<()> {
    invoke0(service, label::TCB_SET_SCHED_PARAMS, &[mcp, priority], &[authority])
}

pub fn set_ipc_buffer(service: usize, buffer: usize, buffer_frame: usize) -> Result<()> {
    invoke0(service, label::TCB_SET_IPC_BUFFER, &[buffer], &[buffer_frame])
}

pub fn set_space(
    service: usize,
    fault_ep: usize,
    cspace_root: usize,
    cspace_root_data: usize,
    vspace_root: usize,
    vspace_root_data: usize,
) -> Result<()> {
    invoke0(service, label::TCB_SET_SPACE, &[fault_ep, cspace_root_data, vspace_root_data], &[cspace_root, vspace_root])
}

pub fn suspend(service: usize) -> Result<()> {
    invoke0(service, label::TCB_SUSPEND, &[], &[])
}

pub fn resume(service: usize) -> Result<()> {
    invoke0(service, label::TCB_RESUME, &[], &[])
}

invocations! {
    /// seL4_TCB_BindNotification: signals to `notification` reach the thread in its receives.
    fn bind_notification / bind_notification_async(service, notification) -> ()
        = TCB_BIND_NOTIFICATION [] [notification];

    /// seL4_TCB_UnbindNotification.
    fn unbind_notification / unbind_notification_async(service) -> () = TCB_UNBIND_NOTIFICATION [] [];
}

/// seL4_TCB_SetAffinity: `affinity` indexes `BootInfo::hart_ids`.
pub fn set_affinity(service: usize, affinity: usize) -> Result<()> {
    invoke0(service, label::TCB_SET_AFFINITY, &[affinity], &[])
}

/// TCB_SetSyscallHandlerHarts (ours): the harts that may serve the thread's async-syscall
/// handler, bit i = hart index i (`abi::asys::ANY_HART`: any).
pub fn set_syscall_handler_harts(service: usize, mask: usize) -> Result<()> {
    invoke0(service, label::TCB_SET_SYSCALL_HANDLER_HARTS, &[mask], &[])
}

/// seL4_TCB_SetTLSBase: the thread's `tp` (this library keeps the IPC buffer address there).
pub fn set_tls_base(service: usize, tls_base: usize) -> Result<()> {
    invoke0(service, label::TCB_SET_TLS_BASE, &[tls_base], &[])
}

#[cfg(test)]
mod tests {
    use super::UserContext;

    #[test]
    fn register_indices_follow_sel4_user_context() {
        assert_eq!(UserContext::index_of(32), UserContext::PC);
        assert_eq!(UserContext::index_of(1), UserContext::RA);
        assert_eq!(UserContext::index_of(2), UserContext::SP);
        assert_eq!(UserContext::index_of(3), UserContext::GP);
        assert_eq!(UserContext::index_of(8), UserContext::S0);
        assert_eq!(UserContext::index_of(10), UserContext::A0);
        assert_eq!(UserContext::index_of(17), UserContext::A0 + 7);
        assert_eq!(UserContext::index_of(5), UserContext::T0);
        assert_eq!(UserContext::index_of(4), UserContext::TP);
    }
}
