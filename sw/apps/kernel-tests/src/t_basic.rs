//! Boot info, initial caps and the debug system calls.
use crate::env::{identify, Env, TResult};
use abi::{init_cap as ic, layout, object as o};
use userlib::{debug, syscall};

pub fn bootinfo(env: &mut Env) -> TResult {
    let bi = env.bi;
    ensure!(bi.num_nodes >= 1 && bi.num_nodes <= bi.hart_ids.len(), "num_nodes {} out of 1..=8", bi.num_nodes);
    ensure!(bi.node_id < bi.num_nodes, "node_id {} >= num_nodes {}", bi.node_id, bi.num_nodes);
    ensure_eq!(bi.ipc_buffer, layout::ROOT_IPC_BUFFER, "BootInfo.ipc_buffer");
    ensure_eq!(bi.init_cnode_size_bits, ic::ROOT_CNODE_BITS, "init_cnode_size_bits");
    let slots = 1 << ic::ROOT_CNODE_BITS;
    ensure!(
        bi.empty.start >= ic::FIRST_FREE && bi.empty.start < bi.empty.end && bi.empty.end <= slots,
        "empty region {:?} not inside the root CNode",
        bi.empty
    );
    ensure!(bi.untyped.end > bi.untyped.start, "no Untyped caps");
    ensure!(bi.untyped.end - bi.untyped.start <= abi::bootinfo::MAX_UNTYPEDS, "too many Untypeds");
    ensure!(bi.user_image_frames.end > bi.user_image_frames.start, "no user image frames");
    let mut ram = 0usize;
    for (_, d) in userlib::bootinfo::untypeds(bi) {
        ensure!(
            (o::MIN_UNTYPED_BITS..=o::MAX_UNTYPED_BITS).contains(&(d.size_bits as usize)),
            "untyped size_bits {}",
            d.size_bits
        );
        ensure!(d.paddr & ((1 << d.size_bits) - 1) == 0, "untyped at {:#x} not aligned to its size", d.paddr);
        if d.is_device == 0 {
            ram += 1 << d.size_bits;
            ensure_eq!(d.irq, 0, "interrupt source of a RAM untyped");
            ensure_eq!(d.kind, abi::bootinfo::device_kind::NONE, "device kind of a RAM untyped");
        } else {
            ensure!(d.kind != abi::bootinfo::device_kind::NONE, "device untyped at {:#x} of no kind", d.paddr);
        }
        // Only the AXI DMA and Ethernet have a second interrupt, and only with a first.
        let two = matches!(d.kind, abi::bootinfo::device_kind::AXI_DMA | abi::bootinfo::device_kind::AXI_ETHERNET);
        ensure!(d.irq2 == 0 || (two && d.irq != 0), "second interrupt {} on a device of kind {}", d.irq2, d.kind);
    }
    // The console UART's page carries its interrupt source for a user driver.
    let uart = bi.console_uart;
    if uart.paddr != 0 && uart.irq != 0 {
        let page = uart.paddr & !((1 << o::PAGE_BITS) - 1);
        let found = userlib::bootinfo::untypeds(bi).find(|(_, d)| d.is_device != 0 && d.paddr == page);
        ensure!(
            found.is_some_and(|(_, d)| d.irq as usize == uart.irq),
            "the UART's device untyped does not name IRQ {}",
            uart.irq
        );
        ensure!(
            found.is_some_and(|(_, d)| d.kind == abi::bootinfo::device_kind::CONSOLE_UART),
            "the UART's device untyped is not of kind CONSOLE_UART"
        );
    }
    ensure!(ram >= 4 << 20, "only {} bytes of RAM untyped", ram);
    // The boot info page is where a0 said, and the hart ids are distinct.
    ensure_eq!(bi as *const _ as usize, layout::ROOT_BOOTINFO, "boot info address");
    for i in 0..bi.num_nodes {
        for j in 0..i {
            ensure!(bi.hart_ids[i] != bi.hart_ids[j], "hart id {} listed twice", bi.hart_ids[i]);
        }
    }
    Ok(())
}

pub fn initial_caps(env: &mut Env) -> TResult {
    let bi = env.bi;
    let expect = [
        (ic::NULL, None),
        (ic::TCB, Some(o::TCB)),
        (ic::CNODE, Some(o::CNODE)),
        (ic::VSPACE, Some(o::PAGE_TABLE)),
        (ic::IRQ_CONTROL, Some(o::IRQ_CONTROL)),
        (ic::ASID_CONTROL, Some(o::ASID_CONTROL)),
        (ic::ASID_POOL, Some(o::ASID_POOL)),
        (ic::BOOTINFO_FRAME, Some(o::PAGE_4K)),
        (ic::IPC_BUFFER, Some(o::PAGE_4K)),
    ];
    for (slot, t) in expect {
        ensure!(identify(slot) == t, "slot {}: identify {:?}, expected {:?}", slot, identify(slot), t);
    }
    ensure!(identify(bi.empty.end - 1).is_none(), "last empty slot is not empty");
    for s in userlib::bootinfo::slots(bi.untyped) {
        ensure!(identify(s) == Some(o::UNTYPED), "untyped slot {} holds {:?}", s, identify(s));
    }
    for s in userlib::bootinfo::slots(bi.user_image_frames) {
        ensure!(identify(s) == Some(o::PAGE_4K), "image frame slot {} holds {:?}", s, identify(s));
    }
    for s in userlib::bootinfo::slots(bi.user_image_paging) {
        ensure!(identify(s) == Some(o::PAGE_TABLE), "image paging slot {} holds {:?}", s, identify(s));
    }
    // Out-of-range cptrs identify as nothing rather than faulting.
    ensure!(identify(1 << 40).is_none(), "cptr 1<<40 identified as something");
    Ok(())
}

pub fn debug_output(_env: &mut Env) -> TResult {
    // (Our lines go between the runner's "[ktest] debug_output ... " and its verdict, so start
    // on a new line and repeat that prefix at the end.)
    for b in b"\n[ktest] putchar: hello\n" {
        ensure_eq!(syscall::debug_put_char(debug::console(), *b), 1, "DebugPutChar took the byte");
    }
    debug::put_string(b"[ktest] putstring: hello\n");
    // A string longer than the IPC buffer's message area goes out in pieces.
    let mut long = [b'='; 1100];
    long[..8].copy_from_slice(b"[ktest] ");
    long[1099] = b'\n';
    debug::put_string(&long);
    // The message area now holds our text: PutString really read the buffer, not registers.
    let w = userlib::ipc::get_mr(0).to_le_bytes();
    userlib::print!("[ktest] debug_output ... ");
    ensure!(&w == b"========", "IPC buffer msg[0] {:x?} after PutString", w);
    Ok(())
}

pub fn debug_clock_and_stat(env: &mut Env) -> TResult {
    let (c1, h1) = syscall::debug_get_clock();
    let entries1 = syscall::debug_stat(abi::stat::KERNEL_ENTRIES);
    for _ in 0..10 {
        syscall::yield_now();
    }
    let (c2, h2) = syscall::debug_get_clock();
    let entries2 = syscall::debug_stat(abi::stat::KERNEL_ENTRIES);
    ensure!(c2 > c1, "clock did not advance: {} then {}", c1, c2);
    ensure_eq!(h1, env.bi.hart_ids[env.bi.node_id], "hart from GetClock vs BootInfo.node_id");
    ensure_eq!(h2, h1, "root task moved harts");
    ensure!(entries2 >= entries1 + 11, "KERNEL_ENTRIES grew by {} over 12 syscalls", entries2 - entries1);
    ensure!(syscall::debug_dump_scheduler(abi::init_cap::DEBUG), "DebugDumpScheduler with the debug cap was refused");
    Ok(())
}

/// Every register but a0..a5 (the IPC registers) survives a system call.
pub fn registers_survive_syscalls(_env: &mut Env) -> TResult {
    ensure!(userlib::rt::registers_survive_syscall(), "a register changed across Yield");
    Ok(())
}
