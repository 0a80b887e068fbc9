//! Faults delivered to a fault endpoint, and the handler's reply resuming the thread.
use crate::env::{identify, park, sadd, sget, sset, wait_for, Env, TResult, ThreadCfg, PAGE, ROOT_TCB, VSPACE};
use abi::{fault, object as o, MessageInfo};
use userlib::invoke::{lookup_failure as lf, rights};
use userlib::tcb::UserContext;
use userlib::{ipc, syscall, tcb, vspace};

// Small functions whose faulting instruction is their first one, so a test knows the pc.
core::arch::global_asm!(
    ".globl kt_load_word",
    "kt_load_word:",
    "   ld a0, 0(a0)",
    "   ret",
    ".globl kt_store_word",
    "kt_store_word:",
    "   sd a1, 0(a0)",
    "   ret",
    ".globl kt_illegal",
    "kt_illegal:",
    "   .4byte 0",
    "   ret",
    ".globl kt_bad_syscall",
    "kt_bad_syscall:",
    "   li a7, -100",
    ".globl kt_bad_syscall_ecall",
    "kt_bad_syscall_ecall:",
    "   ecall",
    "   ret",
);

extern "C" {
    fn kt_load_word(addr: usize) -> usize;
    fn kt_store_word(addr: usize, v: usize);
    fn kt_illegal();
    fn kt_bad_syscall(a0: usize) -> usize;
    fn kt_bad_syscall_ecall();
}

const BAD_SYSCALL: isize = -100;
const FAULT_BADGE: usize = 0xfa;

/// A fault endpoint and the badged cap threads name as their fault handler.
pub(crate) fn fault_ep(env: &mut Env) -> Result<(usize, usize), crate::env::Fail> {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let b = env.mint(ep, rights::ALL, FAULT_BADGE)?;
    Ok((ep, b))
}

pub(crate) fn cfg_with(fault_ep: usize, affinity: usize) -> ThreadCfg {
    ThreadCfg { fault_ep, affinity: Some(affinity), ..ThreadCfg::default() }
}

pub(crate) extern "C" fn load_child(addr: usize) -> ! {
    // SAFETY: may fault; the fault handler makes the address readable.
    let v = unsafe { kt_load_word(addr) };
    sset(1, v);
    sadd(0, 1);
    park()
}

pub fn vm_unmapped(env: &mut Env) -> TResult {
    let (ep, fb) = fault_ep(env)?;
    let mut harts = [env.bi.node_id, usize::MAX];
    if let Some(o) = env.other_hart() {
        harts[1] = o;
    }
    for a in harts.into_iter().filter(|a| *a != usize::MAX) {
        let x = env.va(1);
        sset(0, 0);
        env.spawn_cfg(load_child as *const () as usize, x, cfg_with(fb, a))?;
        let (badge, info, mrs) = syscall::recv(ep);
        ensure_eq!(badge, FAULT_BADGE, "fault message badge");
        ensure_eq!(info.label, fault::VM_FAULT, "fault label");
        ensure_eq!(info.length, fault::VM_FAULT_LENGTH, "VM fault length");
        ensure_eq!(mrs[0], kt_load_word as *const () as usize, "VM fault IP");
        ensure_eq!(mrs[1], x, "VM fault address");
        ensure_eq!(mrs[2], 0, "PrefetchFault for a load");
        ensure_eq!(mrs[3], 13, "FSR (scause: load page fault)");
        // Fix it: map a page there with a value in it, and reply to restart the load.
        env.new_page_at(VSPACE, x)?;
        // SAFETY: mapped just above.
        unsafe { core::ptr::write_volatile(x as *mut usize, 0x77 + a) };
        syscall::reply(MessageInfo::new(0, 0, 0, 0), [0; 4]);
        wait_for(0, 1, 100_000)?;
        ensure_eq!(sget(1), 0x77 + a, "value loaded after the handler mapped the page");
    }
    // An instruction fetch from an unmapped page.
    let y = env.va(1);
    env.spawn_cfg(y, 0, cfg_with(fb, env.bi.node_id))?;
    let (_, info, mrs) = syscall::recv(ep);
    ensure_eq!(info.label, fault::VM_FAULT, "fetch fault label");
    ensure_eq!(mrs[0], y, "fetch fault IP");
    ensure_eq!(mrs[1], y, "fetch fault address");
    ensure_eq!(mrs[2], 1, "PrefetchFault for a fetch");
    ensure_eq!(mrs[3], 12, "FSR (scause: instruction page fault)");
    Ok(())
}

extern "C" fn load_twice(addr: usize) -> ! {
    // SAFETY: may fault; the handler remaps the page.
    sset(1, unsafe { kt_load_word(addr) });
    sadd(0, 1);
    syscall::wait(sget(3));
    // SAFETY: as above.
    sset(2, unsafe { kt_load_word(addr) });
    sadd(0, 1);
    park()
}

pub fn unmap_then_access(env: &mut Env) -> TResult {
    let (ep, fb) = fault_ep(env)?;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let x = env.va(1);
    let f = env.new_page_at(VSPACE, x)?.cptr;
    // SAFETY: mapped just above.
    unsafe { core::ptr::write_volatile(x as *mut usize, 0x1234) };
    sset(0, 0);
    sset(3, n);
    env.spawn_cfg(load_twice as *const () as usize, x, cfg_with(fb, env.bi.node_id))?;
    wait_for(0, 1, 100)?;
    ensure_eq!(sget(1), 0x1234, "load through the mapping");
    ok!(vspace::page_unmap(f));
    syscall::signal(n);
    let (_, info, mrs) = syscall::recv(ep);
    ensure_eq!(info.label, fault::VM_FAULT, "fault after unmap");
    ensure_eq!(mrs[1], x, "fault address after unmap");
    ensure_eq!(mrs[0], kt_load_word as *const () as usize, "fault IP after unmap");
    env.map_frame(f, VSPACE, x, rights::READ_WRITE)?;
    syscall::reply(MessageInfo::new(0, 0, 0, 0), [0; 4]);
    wait_for(0, 2, 100)?;
    ensure_eq!(sget(2), 0x1234, "the frame kept its contents across unmap and map");
    Ok(())
}

extern "C" fn store_child(addr: usize) -> ! {
    // SAFETY: may fault; the handler makes the page writable.
    unsafe { kt_store_word(addr, 0x5678) };
    sadd(0, 1);
    park()
}

pub fn write_read_only(env: &mut Env) -> TResult {
    let (ep, fb) = fault_ep(env)?;
    let x = env.va(1);
    let f = env.alloc_cap(o::PAGE_4K)?;
    env.map_frame(f, VSPACE, x, rights::READ)?;
    sset(0, 0);
    env.spawn_cfg(store_child as *const () as usize, x, cfg_with(fb, env.bi.node_id))?;
    let (_, info, mrs) = syscall::recv(ep);
    ensure_eq!(info.label, fault::VM_FAULT, "fault label for a store to a read-only page");
    ensure_eq!(mrs[0], kt_store_word as *const () as usize, "fault IP");
    ensure_eq!(mrs[1], x, "fault address");
    ensure_eq!(mrs[3], 15, "FSR (scause: store page fault)");
    ensure_eq!(sget(0), 0, "the store completed");
    ok!(vspace::page_map(f, VSPACE, x, rights::READ_WRITE, 0));
    syscall::reply(MessageInfo::new(0, 0, 0, 0), [0; 4]);
    wait_for(0, 1, 100)?;
    // SAFETY: mapped read-write now.
    let v = unsafe { core::ptr::read_volatile(x as *const usize) };
    ensure_eq!(v, 0x5678, "value stored after the handler remapped the page writable");
    Ok(())
}

extern "C" fn illegal_child(_: usize) -> ! {
    // SAFETY: raises an illegal-instruction exception; the handler skips it.
    unsafe { kt_illegal() };
    sadd(0, 1);
    park()
}

pub fn illegal_instruction(env: &mut Env) -> TResult {
    let (ep, fb) = fault_ep(env)?;
    sset(0, 0);
    let t = env.spawn_cfg(illegal_child as *const () as usize, 0, cfg_with(fb, env.bi.node_id))?;
    let (badge, info) = ipc::recv(ep);
    ensure_eq!(badge, FAULT_BADGE, "badge");
    ensure_eq!(info.label, fault::USER_EXCEPTION, "fault label");
    ensure_eq!(info.length, fault::USER_EXCEPTION_LENGTH, "UserException length");
    let pc = ipc::get_mr(0);
    let sp = ipc::get_mr(1);
    ensure_eq!(pc, kt_illegal as *const () as usize, "UserException pc");
    ensure!(sp < t.stack_top && sp >= t.stack_top - crate::env::STACK_PAGES * PAGE, "UserException sp {:#x}", sp);
    ensure_eq!(ipc::get_mr(3), 2, "scause (illegal instruction)");
    ensure_eq!(sget(0), 0, "the thread went past the illegal instruction on its own");
    // Reply with a new pc past the bad instruction.
    syscall::reply(MessageInfo::new(0, 0, 0, 2), [pc + 4, sp, 0, 0]);
    wait_for(0, 1, 100)?;
    Ok(())
}

extern "C" fn bad_syscall_child(_: usize) -> ! {
    // SAFETY: an ecall with an unknown number; the handler emulates it.
    let v = unsafe { kt_bad_syscall(0x1234) };
    sset(1, v);
    sadd(0, 1);
    park()
}

pub fn unknown_syscall(env: &mut Env) -> TResult {
    let (ep, fb) = fault_ep(env)?;
    sset(0, 0);
    let t = env.spawn_cfg(bad_syscall_child as *const () as usize, 0, cfg_with(fb, env.bi.node_id))?;
    let (_, info) = ipc::recv(ep);
    ensure_eq!(info.label, fault::UNKNOWN_SYSCALL, "fault label");
    ensure_eq!(info.length, fault::UNKNOWN_SYSCALL_LENGTH, "UnknownSyscall length");
    let mut mrs = [0usize; fault::UNKNOWN_SYSCALL_LENGTH];
    for (i, m) in mrs.iter_mut().enumerate() {
        *m = ipc::get_mr(i);
    }
    ensure_eq!(mrs[0], kt_bad_syscall_ecall as *const () as usize, "UnknownSyscall pc");
    ensure!(
        mrs[1] < t.stack_top && mrs[1] >= t.stack_top - crate::env::STACK_PAGES * PAGE,
        "UnknownSyscall sp {:#x}",
        mrs[1]
    );
    ensure_eq!(mrs[3], 0x1234, "a0");
    ensure_eq!(mrs[10], BAD_SYSCALL as usize, "a7");
    ensure_eq!(mrs[11], BAD_SYSCALL as usize, "syscall number");
    // Emulate it: a0 = result, pc past the ecall.
    mrs[0] = kt_bad_syscall_ecall as *const () as usize + 4;
    mrs[3] = 0x5a5a;
    for (i, m) in mrs.iter().enumerate() {
        ipc::set_mr(i, *m);
    }
    ipc::reply(MessageInfo::new(0, 0, 0, fault::UNKNOWN_SYSCALL_LENGTH));
    wait_for(0, 1, 100)?;
    ensure_eq!(sget(1), 0x5a5a, "a0 written by the handler's reply");
    Ok(())
}

extern "C" fn call_cap(cptr: usize) -> ! {
    let (_, info, _) = syscall::call(cptr, MessageInfo::new(0, 0, 0, 0), [0; 4]);
    sset(1, info.label);
    sadd(0, 1);
    syscall::signal(sget(3));
    park()
}

extern "C" fn recv_cap(cptr: usize) -> ! {
    syscall::recv(cptr);
    sadd(0, 1);
    park()
}

pub fn cap_fault(env: &mut Env) -> TResult {
    let (ep, fb) = fault_ep(env)?;
    let here = env.bi.node_id;
    // Calling an empty slot is an InvalidCapability error returned to the caller (seL4: the
    // lookup itself succeeds). We listen for either that or a fault.
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let nb = env.mint(n, rights::ALL, 0x1000)?;
    ok!(tcb::bind_notification(ROOT_TCB, n));
    let empty = env.slot()?;
    sset(0, 0);
    sset(3, nb);
    env.spawn_cfg(call_cap as *const () as usize, empty, cfg_with(fb, here))?;
    let (badge, info, _) = syscall::recv(ep);
    ok!(tcb::unbind_notification(ROOT_TCB));
    ensure!(badge == 0x1000, "Call on an empty slot raised fault {} instead of an error reply", info.label);
    ensure_eq!(sget(1), abi::error::INVALID_CAPABILITY, "reply label of a Call on an empty slot");
    // A cptr that fails to resolve (guard mismatch): a cap fault.
    let bad = 1usize << 40;
    env.spawn_cfg(call_cap as *const () as usize, bad, cfg_with(fb, here))?;
    let (badge, info, mrs) = syscall::recv(ep);
    ensure_eq!(badge, FAULT_BADGE, "badge");
    ensure_eq!(info.label, fault::CAP_FAULT, "fault label for an unresolvable cptr");
    ensure_eq!(mrs[1], bad, "CapFault address");
    ensure_eq!(mrs[2], 0, "InRecvPhase for a send-phase fault");
    ensure_eq!(mrs[3], lf::GUARD_MISMATCH, "lookup failure type (+1)");
    // Receiving on an endpoint cap without Read: a cap fault in the receive phase.
    let e2 = env.alloc_cap(o::ENDPOINT)?;
    let wo = env.mint(e2, rights::WRITE, 0)?;
    env.spawn_cfg(recv_cap as *const () as usize, wo, cfg_with(fb, here))?;
    let (_, info, mrs) = syscall::recv(ep);
    ensure_eq!(info.label, fault::CAP_FAULT, "fault label for Recv without Read");
    ensure_eq!(mrs[1], wo, "CapFault address");
    ensure_eq!(mrs[2], 1, "InRecvPhase");
    ensure_eq!(mrs[3], lf::MISSING_CAPABILITY, "lookup failure type (+1)");
    ensure_eq!(sget(0), 1, "a faulting thread continued");
    Ok(())
}

pub fn no_handler(env: &mut Env) -> TResult {
    let x = env.va(1);
    let empty = env.slot()?;
    sset(0, 0);
    for fault_ep in [0, empty] {
        let t = env.spawn_cfg(load_child as *const () as usize, x, cfg_with(fault_ep, env.bi.node_id))?;
        for _ in 0..10 {
            syscall::yield_now();
        }
        ensure_eq!(sget(0), 0, "a thread with no fault handler went past its fault");
        let ctx = ok!(tcb::read_registers(t.tcb, false, 0, abi::regs::COUNT));
        ensure_eq!(ctx.regs[UserContext::PC], kt_load_word as *const () as usize, "pc of the stopped thread");
        ensure!(identify(t.tcb) == Some(o::TCB), "TCB cap lost");
    }
    Ok(())
}
