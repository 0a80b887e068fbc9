//! Isolation: what an attacker holding ordinary capabilities tried against the kernel (issue
//! #15's review), each as the sequence that once reached kernel memory, now refused; and the
//! debug calls that need the debug capability.
use crate::env::{
    check_invariants, identify, park, sget, sset, wait_for, Env, TResult, ThreadCfg, CNODE, PAGE, ROOT_DEPTH, VSPACE,
};
use abi::{error as e, init_cap as ic, object as o, stat, MessageInfo};
use userlib::invoke::rights;
use userlib::{cnode, ipc, syscall, tcb, untyped, vspace};

/// A copied Untyped must not hand out memory its original also hands out: the copy marks the
/// original as fully used, and an Untyped with children cannot be copied at all (also not
/// through IPC).
pub fn untyped_copy_no_overlap(env: &mut Env) -> TResult {
    let u = env.alloc(o::UNTYPED, 16)?.cptr;
    let u2 = env.copy(u)?;
    let cn = env.slot()?;
    ok!(untyped::retype(u2, o::CNODE, 4, CNODE, 0, 0, cn, 1));
    // The exploit: a frame from the original, over the CNode, mapped writable.
    let f = env.slot()?;
    expect_err!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, f, 1), e::NOT_ENOUGH_MEMORY);
    ensure!(identify(f).is_none(), "a frame was made from the copied-from Untyped");
    // The copy still works, and never over its own objects.
    ok!(untyped::retype(u2, o::PAGE_4K, 0, CNODE, 0, 0, f, 1));
    // Now that the copy has children, neither it nor the original can be copied again.
    let s = env.slot()?;
    expect_err!(cnode::copy(CNODE, s, ROOT_DEPTH, CNODE, u2, ROOT_DEPTH, rights::ALL), e::REVOKE_FIRST);
    expect_err!(cnode::copy(CNODE, s, ROOT_DEPTH, CNODE, u, ROOT_DEPTH, rights::ALL), e::REVOKE_FIRST);
    // Revoking the original takes everything; it then starts again from its base.
    ok!(cnode::revoke(CNODE, u, ROOT_DEPTH));
    ensure!(identify(u2).is_none() && identify(cn).is_none() && identify(f).is_none(), "revoke left children");
    ok!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, f, 1));
    check_invariants()
}

/// The same through IPC: a granted Untyped arrives as a copy that marks the sender's full; an
/// Untyped with children does not go at all.
pub fn untyped_ipc_transfer(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let granting = env.mint(ep, rights::ALL, 0x1)?;
    let u = env.alloc(o::UNTYPED, 14)?.cptr;
    let (info, got) = crate::t_ipc::receive_with_cap(env, ep, granting, u)?;
    ensure_eq!(info.extra_caps, 1, "a fresh Untyped is transferred");
    ensure!(identify(got) == Some(o::UNTYPED), "received {:?}", identify(got));
    let s = env.slots(2)?;
    expect_err!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, s, 1), e::NOT_ENOUGH_MEMORY);
    ok!(untyped::retype(got, o::PAGE_4K, 0, CNODE, 0, 0, s, 1));
    // `got` has a child now: sending it transfers nothing.
    let (info, got2) = crate::t_ipc::receive_with_cap(env, ep, granting, got)?;
    ensure_eq!(info.extra_caps, 0, "an Untyped with children was transferred");
    ensure!(identify(got2).is_none(), "receive slot filled with an Untyped that has children");
    check_invariants()
}

/// A page table unmapped through one copy while another still names the old mapping: refused,
/// so the last delete cannot free a table that is still linked into a VSpace.
pub fn page_table_stale_copy(env: &mut Env) -> TResult {
    let _ = env.new_pages(1)?;
    let va1 = env.va_region(1);
    let va2 = env.va_region(1);
    let a = env.alloc_cap(o::PAGE_TABLE)?;
    ok!(vspace::page_table_map(a, VSPACE, va1, 0));
    let b = env.copy(a)?;
    expect_err!(vspace::page_table_unmap(a), e::REVOKE_FIRST);
    expect_err!(vspace::page_table_unmap(b), e::REVOKE_FIRST);
    // The old exploit's next steps now cannot remap `a` elsewhere.
    expect_any_err!(vspace::page_table_map(a, VSPACE, va2, 0), e::INVALID_CAPABILITY, e::DELETE_FIRST);
    ok!(cnode::delete(CNODE, a, ROOT_DEPTH));
    // The last copy unmaps and remaps freely; deleting it unlinks the table where it is.
    ok!(vspace::page_table_unmap(b));
    ok!(vspace::page_table_map(b, VSPACE, va2, 0));
    let f = env.alloc_cap(o::PAGE_4K)?;
    ok!(vspace::page_map(f, VSPACE, va2, rights::READ_WRITE, 0));
    ok!(vspace::page_unmap(f));
    ok!(cnode::delete(CNODE, b, ROOT_DEPTH));
    expect_err!(vspace::page_map(f, VSPACE, va2, rights::READ_WRITE, 0), e::FAILED_LOOKUP);
    check_invariants()
}

/// A frame cap still recording a mapping whose table went away may not "remap in place" over
/// whatever now lives at that address.
pub fn frame_remap_in_place(env: &mut Env) -> TResult {
    let _ = env.new_pages(1)?;
    let va = env.va_region(1);
    let pt = env.alloc_cap(o::PAGE_TABLE)?;
    ok!(vspace::page_table_map(pt, VSPACE, va, 0));
    let f = env.alloc_cap(o::PAGE_4K)?;
    ok!(vspace::page_map(f, VSPACE, va, rights::READ_WRITE, 0));
    // The table goes (its entries with it); a new one and another frame take the address.
    ok!(vspace::page_table_unmap(pt));
    let pt2 = env.alloc_cap(o::PAGE_TABLE)?;
    ok!(vspace::page_table_map(pt2, VSPACE, va, 0));
    let g = env.alloc_cap(o::PAGE_4K)?;
    ok!(vspace::page_map(g, VSPACE, va, rights::READ_WRITE, 0));
    // SAFETY: `va` is mapped read-write to `g` just above.
    unsafe { core::ptr::write_volatile(va as *mut usize, 0x5eed) };
    expect_err!(vspace::page_map(f, VSPACE, va, rights::READ, 0), e::DELETE_FIRST);
    // SAFETY: as above; `g` must still be what is mapped there.
    ensure_eq!(
        unsafe { core::ptr::read_volatile(va as *const usize) },
        0x5eed,
        "word at the address after the refused remap"
    );
    // A real remap in place (new rights) still works.
    ok!(vspace::page_map(g, VSPACE, va, rights::READ, 0));
    check_invariants()
}

/// TCB_Configure by a thread on itself whose argument caps live in its own CSpace root, and
/// that root's last cap is the one Configure replaces: deleting it destroys the CNode holding
/// the arguments. The kernel must notice and not insert from the emptied slots.
pub fn configure_emptied_source(env: &mut Env) -> TResult {
    let c2 = env.alloc(o::CNODE, 4)?.cptr;
    let c3 = env.alloc(o::CNODE, 4)?.cptr;
    // c2's contents: its own TCB (slot 1), the new CSpace (2), a VSpace (3), a copy of the
    // park notification (4) and the root's endpoint to report on (5).
    let t = env.alloc_cap(o::TCB)?;
    let ipc_va = env.va(1);
    let ipc_f = env.new_page_at(VSPACE, ipc_va)?;
    let stack = env.new_pages(crate::env::STACK_PAGES)?;
    ok!(cnode::copy(c2, 1, 4, CNODE, t, ROOT_DEPTH, rights::ALL));
    ok!(cnode::copy(c2, 2, 4, CNODE, c3, ROOT_DEPTH, rights::ALL));
    ok!(cnode::copy(c2, 3, 4, CNODE, VSPACE, ROOT_DEPTH, rights::ALL));
    // The thread's CSpace is c2 alone (guard pads 4 bits of radix to a word).
    // Guard data: 60 guard bits of 0 (bits 5:0), padding the 4-bit radix to a word.
    let data = 64 - 4;
    let cs = env.slot()?;
    ok!(cnode::mint(CNODE, cs, ROOT_DEPTH, CNODE, c2, ROOT_DEPTH, rights::ALL, data));
    ok!(tcb::configure(t, 0, cs, 0, VSPACE, 0, ipc_va, ipc_f.cptr));
    ok!(tcb::set_sched_params(t, ic::TCB, 255, 255));
    ok!(tcb::set_affinity(t, env.bi.node_id));
    // Only the thread's CTABLE names c2 now.
    ok!(cnode::delete(CNODE, cs, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, c2, ROOT_DEPTH));
    sset(0, 0);
    let mut ctx = userlib::tcb::UserContext::default();
    ctx.regs[userlib::tcb::UserContext::PC] = self_configure as *const () as usize;
    ctx.regs[userlib::tcb::UserContext::SP] = stack + crate::env::STACK_PAGES * PAGE;
    ctx.regs[userlib::tcb::UserContext::GP] = crate::env::gp();
    ctx.regs[userlib::tcb::UserContext::TP] = ipc_va;
    ok!(tcb::write_registers(t, true, 0, abi::regs::COUNT, &ctx));
    // The thread loses its CSpace and VSpace in the call and faults (no handler): it stops.
    for _ in 0..50 {
        syscall::yield_now();
    }
    ok!(tcb::suspend(t));
    ensure!(sget(0) == 0, "the thread survived its own reconfiguration: {:#x}", sget(0));
    // The new CSpace's other cap (ours) is still the only one that counts: deleting it must
    // destroy c3 with no dangling cap left in the thread.
    check_invariants()?;
    ok!(cnode::delete(CNODE, c3, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, t, ROOT_DEPTH));
    check_invariants()
}

extern "C" fn self_configure(_: usize) -> ! {
    // Slots of c2 (this thread's CSpace root, depth 64 with its guard): 1 = own TCB, 2 = c3,
    // 3 = VSpace.
    let r = tcb::set_space(1, 0, 2, 0, 3, 0);
    // Not reached with the old CSpace gone: record what happened if it is.
    sset(0, 0x100 | r.is_ok() as usize);
    park()
}

/// The privileged debug calls need the debug capability; it cannot be copied.
pub fn debug_calls_need_the_cap(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    ensure!(!syscall::debug_dump_scheduler(ep), "DebugDumpScheduler with an endpoint cap ran");
    ensure!(syscall::debug_check_invariants(ep).is_none(), "DebugCheckInvariants with an endpoint cap ran");
    syscall::try_debug_halt(ep, 3);
    syscall::try_debug_halt(0, 3);
    // Starting the lock-hold measurement over needs the cap; a refused reset resets nothing:
    // the maximum after a long hold (a 2 MiB frame zeroed, 256 KiB per hold) stays.
    ensure!(syscall::debug_stat_reset(ic::DEBUG, stat::LOCK_HOLD_MAX) != usize::MAX, "DebugStat reset with the cap");
    env.alloc(o::MEGA_PAGE, 0)?;
    let long = syscall::debug_stat(stat::LOCK_HOLD_MAX);
    ensure_eq!(syscall::debug_stat_reset(ep, stat::LOCK_HOLD_MAX), usize::MAX, "DebugStat reset with an endpoint cap");
    ensure_eq!(syscall::debug_stat_reset(0, stat::LOCK_HOLD_MAX), usize::MAX, "DebugStat reset with no cap");
    // A thread's entry count needs the debug cap besides the TCB cap.
    ensure!(syscall::debug_thread_entries(ep, ic::TCB).is_none(), "DebugThreadEntries with an endpoint cap");
    ensure!(
        syscall::debug_thread_entries(ic::DEBUG, ic::TCB).is_some_and(|n| n > 0),
        "DebugThreadEntries with the cap"
    );
    let after = syscall::debug_stat(stat::LOCK_HOLD_MAX);
    ensure!(after >= long && long > 0, "a refused reset started the measurement over: {} after {}", after, long);
    ensure_eq!(identify(ic::DEBUG).unwrap_or(99), o::DEBUG_CONTROL, "the root task's debug cap");
    let s = env.slot()?;
    expect_err!(cnode::copy(CNODE, s, ROOT_DEPTH, CNODE, ic::DEBUG, ROOT_DEPTH, rights::ALL), e::ILLEGAL_OPERATION);
    // A thread in another CSpace without it cannot halt the machine.
    let c = env.alloc(o::CNODE, 4)?.cptr;
    ok!(cnode::copy(c, 1, 4, CNODE, ep, ROOT_DEPTH, rights::ALL));
    sset(1, 0);
    env.spawn_cfg(
        try_halt as *const () as usize,
        0,
        ThreadCfg { cspace: c, cspace_data: 60, affinity: Some(env.bi.node_id), ..ThreadCfg::default() },
    )?;
    wait_for(1, 1, 200)?;
    ensure_eq!(sget(1), 1, "the unprivileged thread ran past its refused halt");
    Ok(())
}

extern "C" fn try_halt(_: usize) -> ! {
    // Its CSpace: slot 1 = an endpoint; slot 12 (the root's debug slot) is empty.
    syscall::try_debug_halt(ic::DEBUG, 4);
    syscall::try_debug_halt(1, 4);
    sset(1, 1);
    park()
}

/// A receive depth past 64 means "no receive slot", not its value modulo 256.
pub fn receive_depth_out_of_range(env: &mut Env) -> TResult {
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let granting = env.mint(ep, rights::ALL, 0x1)?;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let slot = env.slot()?;
    ipc::set_receive_path(CNODE, slot, ROOT_DEPTH + 256);
    sset(4, n);
    env.spawn(crate::t_ipc::cap_sender, granting, 255)?;
    let (_, info) = ipc::recv(ep);
    ipc::set_receive_path(0, 0, 0);
    ensure_eq!(info.extra_caps, 0, "caps received through a depth of 320");
    ensure!(identify(slot).is_none(), "receive slot filled through a depth of 320");
    Ok(())
}

/// ReadRegisters by a thread without an IPC buffer: only what fits in the registers is
/// reported (it used to claim all it was asked for).
pub fn read_registers_without_buffer(env: &mut Env) -> TResult {
    let target = env.alloc_cap(o::TCB)?;
    sset(2, target);
    sset(3, 0);
    let th = env.spawn_cfg(
        read_regs_no_buffer as *const () as usize,
        0,
        ThreadCfg { affinity: Some(env.bi.node_id), start: false, ..ThreadCfg::default() },
    )?;
    ok!(tcb::set_ipc_buffer(th.tcb, 0, 0));
    ok!(tcb::resume(th.tcb));
    wait_for(3, 1, 200)?;
    ensure_eq!(sget(3), 1 + abi::ipc::MSG_REGISTERS, "registers reported (+1) without an IPC buffer");
    Ok(())
}

extern "C" fn read_regs_no_buffer(_: usize) -> ! {
    let (_, info, _) =
        syscall::call(sget(2), MessageInfo::new(abi::label::TCB_READ_REGISTERS, 0, 0, 3), [0, 0, abi::regs::COUNT, 0]);
    sset(3, 1 + if info.label == 0 { info.length } else { 1000 + info.label });
    park()
}

/// The UINTC's receiver slots are a fixed pool handed out by UintrControl: a thread without a
/// grant cannot take any, so it cannot starve others; withdrawing a grant frees its slot.
pub fn uintr_resources_need_a_grant(env: &mut Env) -> TResult {
    use abi::{stat, uintr as u};
    use userlib::uintr;
    if env.bi.uintr_mode == u::MODE_NONE {
        return Err(crate::env::Fail::skip(format_args!("no user interrupts on this machine")));
    }
    let gauge = |w| syscall::debug_stat(w);
    let t = env.alloc_cap(o::TCB)?;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    ok!(tcb::bind_notification(t, n));
    let slots0 = gauge(stat::UINTR_SLOTS_USED);
    // No grant: no slot, however often it asks.
    for _ in 0..100 {
        expect_err!(uintr::register_receiver(n), e::ILLEGAL_OPERATION);
    }
    ensure_eq!(gauge(stat::UINTR_SLOTS_USED), slots0, "slots used after refused registrations");
    // Only UintrControl grants; a copy of it cannot be made, and bad grant bits (the old
    // sender-table bit 2 included) are refused.
    let s = env.slot()?;
    expect_err!(
        cnode::copy(CNODE, s, ROOT_DEPTH, CNODE, ic::UINTR_CONTROL, ROOT_DEPTH, rights::ALL),
        e::ILLEGAL_OPERATION
    );
    expect_err!(uintr::grant(t, t, u::GRANT_RECEIVE), e::ILLEGAL_OPERATION);
    expect_err!(uintr::grant(ic::UINTR_CONTROL, n, u::GRANT_RECEIVE), e::INVALID_CAPABILITY);
    expect_err!(uintr::grant(ic::UINTR_CONTROL, t, 4), e::INVALID_ARGUMENT);
    expect_err!(uintr::grant(ic::UINTR_CONTROL, t, 2), e::INVALID_ARGUMENT);
    // Granted: it works.
    ok!(uintr::grant(ic::UINTR_CONTROL, t, u::GRANT_RECEIVE));
    ok!(uintr::register_receiver(n));
    ensure_eq!(gauge(stat::UINTR_SLOTS_USED), slots0 + 1, "slots used after a granted registration");
    // Withdrawn: the slot goes back at once, and stays refused.
    ok!(uintr::grant(ic::UINTR_CONTROL, t, 0));
    ensure_eq!(gauge(stat::UINTR_SLOTS_USED), slots0, "slots used after the grant was withdrawn");
    expect_err!(uintr::register_receiver(n), e::ILLEGAL_OPERATION);
    // Granted again, the slot goes with the notification's deletion.
    ok!(uintr::grant(ic::UINTR_CONTROL, t, u::GRANT_RECEIVE));
    ok!(uintr::register_receiver(n));
    ok!(cnode::delete(CNODE, n, ROOT_DEPTH));
    ensure_eq!(gauge(stat::UINTR_SLOTS_USED), slots0, "slots used after deleting the notification");
    ok!(cnode::delete(CNODE, t, ROOT_DEPTH));
    check_invariants()
}

/// Sender tables are objects retyped from the sender's own Untyped, not a kernel pool: a
/// thread with no table gets no entry (and there is nothing global to take one from), one
/// domain exhausting its Untyped (or making more tables than the old pool of 64 had) stops
/// nobody else, and deleting a table, its thread or revoking its Untyped takes back the table
/// and every entry in it, the sender caps' handles too (wherever the caps moved).
pub fn sender_tables_from_untyped(env: &mut Env) -> TResult {
    use abi::stat;
    use userlib::uintr;
    let gauge = |w| syscall::debug_stat(w);
    let (tables0, entries0) = (gauge(stat::UINTR_TABLES_USED), gauge(stat::UINTR_ENTRIES_USED));
    let tbits = o::UINTR_SENDER_TABLE_BITS;
    let n = env.alloc_cap(o::NOTIFICATION)?;
    // A thread with no table: no entry, and nothing taken from anywhere.
    let t = env.alloc_cap(o::TCB)?;
    let m = env.mint(n, rights::ALL, 5)?;
    for _ in 0..100 {
        expect_err!(uintr::register_sender(m, t), e::ILLEGAL_OPERATION);
    }
    ensure_eq!(gauge(stat::UINTR_TABLES_USED), tables0, "tables after refused registrations");
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), entries0, "entries after refused registrations");
    // Domain A: an Untyped too small for a table, then one just big enough, used up.
    let small = env.alloc(o::UNTYPED, tbits - 1)?.cptr;
    let tb = env.slot()?;
    expect_err!(untyped::retype(small, o::UINTR_SENDER_TABLE, 0, CNODE, 0, 0, tb, 1), e::NOT_ENOUGH_MEMORY);
    let ua = env.alloc(o::UNTYPED, tbits)?.cptr;
    ok!(untyped::retype(ua, o::UINTR_SENDER_TABLE, 0, CNODE, 0, 0, tb, 1));
    ensure!(identify(tb) == Some(o::UINTR_SENDER_TABLE), "the table's cap type: {:?}", identify(tb));
    ensure_eq!(gauge(stat::UINTR_TABLES_USED), tables0 + 1, "tables after a retype");
    let tb2 = env.slot()?;
    expect_err!(untyped::retype(ua, o::UINTR_SENDER_TABLE, 0, CNODE, 0, 0, tb2, 1), e::NOT_ENOUGH_MEMORY);
    // Domain B, with its own Untyped, makes more tables than the old global pool held.
    const MANY: usize = 80;
    let ub = env.alloc(o::UNTYPED, tbits + 7)?.cptr;
    let many = env.slots(MANY)?;
    for i in 0..MANY {
        ok!(untyped::retype(ub, o::UINTR_SENDER_TABLE, 0, CNODE, 0, 0, many + i, 1));
    }
    ensure_eq!(gauge(stat::UINTR_TABLES_USED), tables0 + 1 + MANY, "tables after domain B's retypes");
    // Binding: one table per thread, one thread per table; only a TCB.
    expect_err!(uintr::sender_table_unbind(tb), e::ILLEGAL_OPERATION);
    expect_err!(uintr::sender_table_bind(tb, n), e::INVALID_CAPABILITY);
    ok!(uintr::sender_table_bind(tb, t));
    expect_err!(uintr::sender_table_bind(tb, t), e::ILLEGAL_OPERATION);
    expect_err!(uintr::sender_table_bind(many, t), e::ILLEGAL_OPERATION);
    let t2 = env.alloc_cap(o::TCB)?;
    expect_err!(uintr::sender_table_bind(tb, t2), e::ILLEGAL_OPERATION);
    ok!(uintr::sender_table_bind(many, t2));
    // Entries: the cap moves, and the table's side follows it.
    let i0 = ok!(uintr::register_sender(m, t));
    let m2 = env.mint(n, rights::ALL, 6)?;
    let i1 = ok!(uintr::register_sender(m2, t));
    ensure!(i0 != i1, "two entries share index {}", i0);
    let m3 = env.mint(n, rights::ALL, 7)?;
    ok!(uintr::register_sender(m3, t2));
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), entries0 + 3, "entries after three registrations");
    let moved = env.slot()?;
    ok!(cnode::move_(CNODE, moved, ROOT_DEPTH, CNODE, m, ROOT_DEPTH));
    check_invariants()?;
    // Unbind frees every entry, and the caps (the moved one too) may register again.
    ok!(uintr::sender_table_unbind(tb));
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), entries0 + 1, "entries after unbinding the table");
    check_invariants()?;
    expect_err!(uintr::register_sender(moved, t), e::ILLEGAL_OPERATION);
    ok!(uintr::sender_table_bind(tb, t));
    ok!(uintr::register_sender(moved, t));
    ok!(uintr::register_sender(m2, t));
    // Deleting the thread unbinds its table (entries freed), the table stays an object.
    ok!(cnode::delete(CNODE, t, ROOT_DEPTH));
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), entries0 + 1, "entries after deleting the thread");
    ensure_eq!(gauge(stat::UINTR_TABLES_USED), tables0 + 1 + MANY, "tables after deleting the thread");
    check_invariants()?;
    // Deleting a bound table frees its entries and unbinds it; so does revoking its Untyped.
    ok!(cnode::delete(CNODE, tb, ROOT_DEPTH));
    ensure_eq!(gauge(stat::UINTR_TABLES_USED), tables0 + MANY, "tables after deleting one");
    ok!(cnode::revoke(CNODE, ub, ROOT_DEPTH));
    ensure_eq!(gauge(stat::UINTR_TABLES_USED), tables0, "tables after revoking domain B's Untyped");
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), entries0, "entries after revoking domain B's Untyped");
    check_invariants()?;
    // t2 has no table now; its memory is someone else's (a frame) and the stale caps are inert.
    expect_err!(uintr::register_sender(m3, t2), e::ILLEGAL_OPERATION);
    let f = env.slot()?;
    ok!(untyped::retype(ub, o::PAGE_4K, 0, CNODE, 0, 0, f, 1));
    for c in [moved, m2, m3] {
        ok!(cnode::delete(CNODE, c, ROOT_DEPTH));
    }
    ok!(cnode::delete(CNODE, t2, ROOT_DEPTH));
    check_invariants()
}

/// A notification takes at most `MAX_SENDERS_PER_NOTIFICATION` sender entries, across every
/// table: past it a registration is a RangeError, and freeing one makes room again. Registering
/// and withdrawing its receiver rewrites exactly its entries (the checker verifies each entry's
/// Valid bit and slot against the notification, and the notification's list both ways).
pub fn senders_per_notification_bounded(env: &mut Env) -> TResult {
    use abi::{stat, uintr as u};
    use userlib::uintr;
    if env.bi.uintr_mode == u::MODE_NONE {
        return Err(crate::env::Fail::skip(format_args!("no user interrupts on this machine")));
    }
    const MAX: usize = u::MAX_SENDERS_PER_NOTIFICATION;
    let gauge = |w| syscall::debug_stat(w);
    let entries0 = gauge(stat::UINTR_ENTRIES_USED);
    let n = env.alloc_cap(o::NOTIFICATION)?;
    // Three senders, each with its own table (512 entries each).
    let mut ts = [0; 3];
    for t in ts.iter_mut() {
        *t = env.alloc_cap(o::TCB)?;
        let tb = env.alloc_cap(o::UINTR_SENDER_TABLE)?;
        ok!(uintr::sender_table_bind(tb, *t));
    }
    let r = env.alloc_cap(o::TCB)?;
    // The suite's slots are few: these go back at the end.
    let caps = env.slots(MAX + 1)?;
    for i in 0..=MAX {
        ok!(cnode::mint(CNODE, caps + i, ROOT_DEPTH, CNODE, n, ROOT_DEPTH, rights::ALL, i % (u::MAX_VECTOR + 1)));
    }
    for i in 0..MAX {
        ok!(uintr::register_sender(caps + i, ts[i / u::SENDER_ENTRIES]));
    }
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), entries0 + MAX, "entries after the allowed registrations");
    // The third table has room, the notification has not.
    expect_err!(uintr::register_sender(caps + MAX, ts[2]), e::RANGE_ERROR);
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), entries0 + MAX, "entries after a refused registration");
    check_invariants()?;
    // Its receiver comes and goes: every entry follows (the checker looks at each).
    ok!(tcb::bind_notification(r, n));
    ok!(uintr::grant(ic::UINTR_CONTROL, r, u::GRANT_RECEIVE));
    ok!(uintr::register_receiver(n));
    check_invariants()?;
    // Entries leave the list from its middle, its head (the newest) and its tail (the oldest).
    for i in [MAX / 2, MAX - 1, 0] {
        ok!(cnode::delete(CNODE, caps + i, ROOT_DEPTH));
    }
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), entries0 + MAX - 3, "entries after deleting three caps");
    check_invariants()?;
    // Room again: the refused cap registers now, and is deliverable at once.
    ok!(uintr::register_sender(caps + MAX, ts[2]));
    check_invariants()?;
    ok!(uintr::grant(ic::UINTR_CONTROL, r, 0));
    check_invariants()?;
    for i in 1..=MAX {
        if i != MAX / 2 && i != MAX - 1 {
            ok!(cnode::delete(CNODE, caps + i, ROOT_DEPTH));
        }
    }
    ensure_eq!(gauge(stat::UINTR_ENTRIES_USED), entries0, "entries after deleting every sender cap");
    env.release_slots(caps, MAX + 1)?;
    ok!(cnode::delete(CNODE, r, ROOT_DEPTH));
    check_invariants()
}
