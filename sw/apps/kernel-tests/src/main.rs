//! The kernel test suite, run as the root task. Each test prints `[ktest] <name> ... ok` or
//! `... FAILED: <why>`; then a summary and the fastpath counters, and DebugHalt(0) iff every test
//! passed. See README.md for what is covered.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
#[macro_use]
mod macros;
#[cfg(target_arch = "riscv64")]
mod env;
#[cfg(target_arch = "riscv64")]
mod fuzz_spinner;
#[cfg(target_arch = "riscv64")]
mod t_async;
#[cfg(target_arch = "riscv64")]
mod t_asys;
#[cfg(target_arch = "riscv64")]
mod t_basic;
#[cfg(target_arch = "riscv64")]
mod t_bench;
#[cfg(target_arch = "riscv64")]
mod t_cnode;
#[cfg(target_arch = "riscv64")]
mod t_console;
#[cfg(target_arch = "riscv64")]
mod t_fault;
#[cfg(target_arch = "riscv64")]
mod t_fpu;
#[cfg(target_arch = "riscv64")]
mod t_fuzz;
#[cfg(target_arch = "riscv64")]
mod t_ipc;
#[cfg(target_arch = "riscv64")]
mod t_irq;
#[cfg(target_arch = "riscv64")]
mod t_isolation;
#[cfg(target_arch = "riscv64")]
mod t_leak;
#[cfg(target_arch = "riscv64")]
mod t_preempt;
#[cfg(target_arch = "riscv64")]
mod t_process;
#[cfg(target_arch = "riscv64")]
mod t_stale_space;
#[cfg(target_arch = "riscv64")]
mod t_sync;
#[cfg(target_arch = "riscv64")]
mod t_tcb;
#[cfg(target_arch = "riscv64")]
mod t_timer;
#[cfg(target_arch = "riscv64")]
mod t_uintr;
#[cfg(target_arch = "riscv64")]
mod t_uintr_irq;
#[cfg(target_arch = "riscv64")]
mod t_untyped;
#[cfg(target_arch = "riscv64")]
mod t_vm;

#[cfg(target_arch = "riscv64")]
mod rt {
    use crate::env::{Env, TResult, PARK};
    use core::sync::atomic::Ordering;
    use userlib::{print, println, syscall};

    userlib::entry!(main);

    type Test = (&'static str, fn(&mut Env) -> TResult);

    const TESTS: &[Test] = &[
        ("bootinfo", crate::t_basic::bootinfo),
        ("initial_caps", crate::t_basic::initial_caps),
        ("debug_output", crate::t_basic::debug_output),
        ("debug_clock_and_stat", crate::t_basic::debug_clock_and_stat),
        ("registers_survive_syscalls", crate::t_basic::registers_survive_syscalls),
        ("untyped_retype_every_type", crate::t_untyped::retype_every_type),
        ("untyped_retype_errors", crate::t_untyped::retype_errors),
        ("untyped_not_enough_memory", crate::t_untyped::not_enough_memory),
        ("untyped_watermark_and_reuse_after_revoke", crate::t_untyped::watermark_and_reuse),
        ("untyped_device_only_frames", crate::t_untyped::device_only_frames),
        ("cnode_copy", crate::t_cnode::copy),
        ("cnode_mint_badge_and_rights", crate::t_cnode::mint),
        ("cnode_move", crate::t_cnode::move_),
        ("cnode_mutate", crate::t_cnode::mutate),
        ("cnode_rotate", crate::t_cnode::rotate),
        ("cnode_delete", crate::t_cnode::delete),
        ("cnode_revoke", crate::t_cnode::revoke),
        ("cnode_lookup_errors", crate::t_cnode::lookup_errors),
        ("cspace_two_level_with_guards", crate::t_cnode::two_level_cspace),
        ("cspace_guarded_thread_cspace", crate::t_cnode::guarded_thread_cspace),
        ("cnode_cancel_badged_sends", crate::t_cnode::cancel_badged_sends),
        ("cnode_save_caller", crate::t_cnode::save_caller),
        ("tcb_configure_and_resume", crate::t_tcb::configure_and_resume),
        ("tcb_set_space_and_ipc_buffer", crate::t_tcb::set_space_and_ipc_buffer),
        ("tcb_argument_errors", crate::t_tcb::argument_errors),
        ("tcb_read_write_registers", crate::t_tcb::read_write_registers),
        ("tcb_copy_registers", crate::t_tcb::copy_registers),
        ("tcb_suspend_resume", crate::t_tcb::suspend_resume),
        ("tcb_priority_and_mcp", crate::t_tcb::priority_and_mcp),
        ("tcb_cannot_raise_above_own_mcp", crate::t_tcb::own_mcp),
        ("tcb_priority_order", crate::t_tcb::priority_order),
        ("tcb_affinity_every_hart", crate::t_tcb::affinity_every_hart),
        ("tcb_affinity_migrate", crate::t_tcb::affinity_migrate),
        ("tcb_set_tls_base", crate::t_tcb::set_tls_base),
        ("tcb_bind_unbind_notification", crate::t_tcb::bind_unbind),
        ("ep_send_recv_badge", crate::t_ipc::send_recv_badge),
        ("ep_call_reply_replyrecv", crate::t_ipc::call_reply),
        ("ep_nbsend_nbrecv", crate::t_ipc::nb_send_recv),
        ("ep_long_messages", crate::t_ipc::long_messages),
        ("ep_cap_transfer_grant", crate::t_ipc::cap_transfer),
        ("ep_no_grant_no_transfer", crate::t_ipc::no_grant),
        ("ep_unwrapped_badge", crate::t_ipc::unwrapped_badge),
        ("ep_rights_enforced", crate::t_ipc::rights_enforced),
        ("ep_cross_core", crate::t_ipc::cross_core),
        ("ntfn_signal_wait_poll", crate::t_ipc::ntfn_signal_wait_poll),
        ("ntfn_wait_spin", crate::t_ipc::ntfn_wait_spin),
        ("ntfn_badge_or_accumulates", crate::t_ipc::ntfn_badges_or),
        ("ntfn_bound_wakes_endpoint_recv", crate::t_ipc::bound_ntfn_delivery),
        ("vm_map_read_write", crate::t_vm::map_read_write),
        ("vm_get_address", crate::t_vm::get_address),
        ("vm_map_errors", crate::t_vm::map_errors),
        ("vm_page_table_map_unmap", crate::t_vm::page_table_map_unmap),
        ("vm_asid_pool", crate::t_vm::asid_pool),
        ("vm_new_address_space_ipc", crate::t_vm::new_address_space),
        ("vm_asid_reuse", crate::t_vm::asid_reuse),
        ("fault_vm_unmapped", crate::t_fault::vm_unmapped),
        ("fault_unmap_then_access", crate::t_fault::unmap_then_access),
        ("fault_write_read_only", crate::t_fault::write_read_only),
        ("fault_illegal_instruction", crate::t_fault::illegal_instruction),
        ("fault_unknown_syscall", crate::t_fault::unknown_syscall),
        ("fault_cap_fault", crate::t_fault::cap_fault),
        ("fault_no_handler_stops_thread", crate::t_fault::no_handler),
        ("irq_control_and_handler", crate::t_irq::control_and_handler),
        ("fpu_survives_ipc", crate::t_fpu::survive_ipc),
        ("fpu_survives_preemption", crate::t_fpu::survive_preemption),
        ("fpu_survives_faults", crate::t_fpu::survive_faults),
        ("fpu_register_invocations", crate::t_fpu::register_invocations),
        ("fpu_survives_migration", crate::t_fpu::survive_migration),
        ("fpu_deleted_owner_leaks_nothing", crate::t_fpu::deleted_owner),
        ("fpu_never_used_never_pays", crate::t_fpu::never_used_never_pays),
        ("uintr_bootinfo", crate::t_uintr::bootinfo),
        ("uintr_csr_state_per_thread", crate::t_uintr::csr_state_per_thread),
        ("uintr_cross_core_signal_zero_entries", crate::t_uintr::cross_core_signal_zero_entries),
        ("uintr_delivery_after_deschedule", crate::t_uintr::delivery_after_deschedule),
        ("uintr_many_senders_distinct_vectors", crate::t_uintr::many_senders_distinct_vectors),
        ("uintr_poll_and_wait", crate::t_uintr::poll_and_wait),
        ("uintr_sender_rights", crate::t_uintr::sender_rights),
        ("uintr_create_destroy_10000", crate::t_uintr::create_destroy),
        ("uintr_two_receivers_one_hart", crate::t_uintr::two_receivers_one_hart),
        ("uintr_irq_set_uintr", crate::t_uintr::irq_set_uintr),
        ("uintr_device_irq", crate::t_uintr_irq::device_irq),
        ("revoke_reclaims_memory", crate::t_untyped::revoke_reclaims),
        ("isolation_untyped_copy_no_overlap", crate::t_isolation::untyped_copy_no_overlap),
        ("isolation_untyped_ipc_transfer", crate::t_isolation::untyped_ipc_transfer),
        ("isolation_page_table_stale_copy", crate::t_isolation::page_table_stale_copy),
        ("isolation_frame_remap_in_place", crate::t_isolation::frame_remap_in_place),
        ("isolation_configure_emptied_source", crate::t_isolation::configure_emptied_source),
        ("isolation_debug_calls_need_the_cap", crate::t_isolation::debug_calls_need_the_cap),
        ("isolation_receive_depth_out_of_range", crate::t_isolation::receive_depth_out_of_range),
        ("isolation_read_registers_without_buffer", crate::t_isolation::read_registers_without_buffer),
        ("isolation_uintr_resources_need_a_grant", crate::t_isolation::uintr_resources_need_a_grant),
        ("isolation_sender_tables_from_untyped", crate::t_isolation::sender_tables_from_untyped),
        ("isolation_senders_per_notification_bounded", crate::t_isolation::senders_per_notification_bounded),
        ("process_start_from_module", crate::t_process::start_from_module),
        ("async_same_hart_many_coroutines", crate::t_async::same_hart_many_coroutines),
        ("async_cross_hart_busy_polling", crate::t_async::cross_hart_busy_polling),
        ("async_blocking_call", crate::t_async::blocking_call),
        ("async_other_space_wake_after_sleep", crate::t_async::other_space_wake_after_sleep),
        ("async_server_death", crate::t_async::server_death),
        ("async_client_death", crate::t_async::client_death),
        ("async_hostile_ring_indices", crate::t_async::hostile_ring_indices),
        ("asys_functional", crate::t_asys::functional),
        ("asys_error_paths", crate::t_asys::error_paths),
        ("asys_hostile_ring", crate::t_asys::hostile_ring),
        ("asys_register_unregister_10000", crate::t_asys::register_unregister_10000),
        ("asys_wake_paths", crate::t_asys::wake_paths),
        ("asys_hart_mask", crate::t_asys::hart_mask),
        ("asys_hart_mask_refused", crate::t_asys::hart_mask_refused),
        ("asys_idle_time_per_hart", crate::t_asys::idle_time_per_hart),
        ("asys_many_in_flight", crate::t_asys::many_in_flight),
        ("asys_stale_translation_reuse", crate::t_asys::stale_translation_reuse),
        ("console_needs_the_cap", crate::t_console::needs_the_cap),
        ("console_flood_outside_lock", crate::t_console::flood_outside_lock),
        ("console_full_ring", crate::t_console::full_ring),
        ("stale_translation_reuse_sync", crate::t_asys::stale_translation_reuse_sync),
        ("timer_deadline_abi", crate::t_timer::deadline_abi),
        ("timer_sleep_wakes_in_order", crate::t_timer::sleep_wakes_in_order),
        ("timer_timeout", crate::t_timer::timeout),
        ("timer_dropped_sleep_cancelled", crate::t_timer::dropped_sleep_cancelled),
        ("timer_deadline_follows_the_thread", crate::t_timer::deadline_follows_the_thread),
        ("timer_deadlines_on_every_hart", crate::t_timer::deadlines_on_every_hart),
        ("timer_many_deadlines_one_hart", crate::t_timer::many_deadlines_one_hart),
        ("sync_mutex_every_hart", crate::t_sync::mutex_every_hart),
        ("sync_semaphore_token_ring", crate::t_sync::semaphore_token_ring),
        ("sync_condvar_turns", crate::t_sync::condvar_turns),
        ("stale_space_spin_wait_vspace_replaced", crate::t_stale_space::spin_wait_vspace_replaced),
        ("stale_space_idle_hart_leaves_freed_root", crate::t_stale_space::idle_hart_leaves_freed_root),
        ("preempt_long_retype", crate::t_preempt::long_retype),
        ("preempt_long_revoke", crate::t_preempt::long_revoke),
        ("preempt_big_cnode_delete", crate::t_preempt::big_cnode_delete),
        ("preempt_endpoint_waiters_delete", crate::t_preempt::endpoint_waiters_delete),
        ("preempt_cancel_badged_sends_many", crate::t_preempt::cancel_badged_sends_many),
        ("preempt_set_space_big_cnode", crate::t_preempt::set_space_big_cnode),
        ("leak_create_destroy_every_kind", crate::t_leak::create_destroy_every_kind),
        ("fuzz_invocations", crate::t_fuzz::fuzz),
        ("fastpath_call_replyrecv", crate::t_bench::fastpath),
        ("bench_round_trip", crate::t_bench::round_trip),
        ("bench_round_trip_other_space", crate::t_bench::round_trip_other_space),
        ("uintr_bench", crate::t_uintr::bench),
        ("bench_fpu", crate::t_fpu::bench),
        ("bench_lock_hold", crate::t_preempt::bench_lock_hold),
    ];

    /// The `rtl-subset` feature builds an image for the slow RTL simulation: the basic boot
    /// tests, the user-interrupt tests, one short timer test (kernel deadlines through the
    /// UINTC), the stale-translation tests (async batch and sync unmap: their races are real
    /// there), the console flood (output drained outside the lock, the drain's race with
    /// appenders), the FP tests that switch FP state across harts, the FP benchmark and the IPC
    /// benchmarks (the fastpath's same-hart round trip, the cross-hart one)
    /// only. `make bench-lock` runs the lock-hold benchmark there
    /// (about 20 M cycles of its own).
    /// `make ktest-filtered KTEST_ONLY=a,b` (at build time) keeps only the tests whose names
    /// contain one of the patterns, in images of their own: quick iterations, mostly for the RTL
    /// simulation.
    fn selected(name: &str) -> bool {
        if let Some(only) = option_env!("KTEST_ONLY").filter(|s| !s.is_empty()) {
            return name == "bootinfo" || only.split(',').any(|p| name.contains(p));
        }
        !cfg!(feature = "rtl-subset")
            || name.starts_with("uintr_")
            || matches!(
                name,
                "bootinfo"
                    | "debug_output"
                    | "fastpath_call_replyrecv"
                    | "bench_round_trip"
                    | "timer_sleep_wakes_in_order"
                    | "asys_stale_translation_reuse"
                    | "console_flood_outside_lock"
                    | "fpu_survives_migration"
                    | "fpu_deleted_owner_leaks_nothing"
                    | "fpu_never_used_never_pays"
                    | "stale_translation_reuse_sync"
            )
            || name.starts_with("stale_space_")
    }

    extern "C" fn main(bootinfo: usize) -> ! {
        userlib::ipc::set_ipc_buffer(abi::layout::ROOT_IPC_BUFFER);
        let tests = || TESTS.iter().filter(|(name, _)| selected(name));
        println!("[ktest] kernel test suite: {} tests", tests().count());
        // SAFETY: the kernel passes the boot-info page in a0; it stays mapped.
        let bi = unsafe { userlib::bootinfo::from_addr(bootinfo) };
        let mut env = Env::new(bi);
        match env.alloc_cap(abi::object::NOTIFICATION) {
            Ok(n) => PARK.store(n, Ordering::SeqCst),
            Err(f) => println!("[ktest] cannot create the park notification: {}", f.as_str()),
        }
        // The root task sends U-notifications through a table from its own memory.
        if let Err(f) = env.sender_table(abi::init_cap::TCB) {
            println!("[ktest] cannot give the root task a sender table: {}", f.as_str());
        }
        let (mut passed, mut failed, mut skipped) = (0, 0, 0);
        for (name, test) in tests() {
            print!("[ktest] {} ... ", name);
            let mut r = test(&mut env);
            env.stop_helpers();
            // Whatever the test did, the kernel's own consistency checker must still agree (on
            // the RTL, where a check costs real time, once at the end instead).
            if r.is_ok() && !cfg!(feature = "rtl-subset") {
                r = crate::env::check_invariants();
            }
            match r {
                Ok(()) => {
                    passed += 1;
                    println!("ok");
                }
                Err(f) if f.skipped => {
                    skipped += 1;
                    println!("skipped: {}", f.as_str());
                }
                Err(f) => {
                    failed += 1;
                    println!("FAILED: {}", f.as_str());
                }
            }
        }
        // (Not in the RTL subset: its cycle budget is for the user-interrupt figures.)
        if !cfg!(feature = "rtl-subset") {
            if let Err(f) = crate::env::check_invariants() {
                failed += 1;
                println!("[ktest] final consistency check FAILED: {}", f.as_str());
            }
        }
        println!("[ktest] summary: {} passed, {} failed, {} skipped", passed, failed, skipped);
        println!(
            "[ktest] fastpath: call {}, reply_recv {}, slowpath ipc {}",
            syscall::debug_stat(abi::stat::FASTPATH_CALL),
            syscall::debug_stat(abi::stat::FASTPATH_REPLY_RECV),
            syscall::debug_stat(abi::stat::SLOWPATH_IPC)
        );
        print_benches();
        syscall::debug_halt(if failed == 0 { 0 } else { 1 })
    }

    /// The figures of the benchmarks that ran to their end (a filtered build runs some of
    /// them, or none): a figure that was not measured is left out rather than printed as 0.
    fn print_benches() {
        let b = |i: usize| crate::env::BENCH[i].load(Ordering::SeqCst);
        use crate::t_bench as tb;
        if b(0) != 0 {
            let e = b(tb::B_SAME_ENTRIES);
            println!(
                "[ktest] bench: Call+ReplyRecv round trip {} cycles same hart ({} fastpath calls, {} fastpath replies in {}; {}.{:02} kernel entries per round trip)",
                b(0),
                b(2),
                b(3),
                tb::ROUNDS,
                e / 100,
                e % 100
            );
        }
        if b(1) != 0 {
            let (e, h) = (b(tb::B_CROSS_ENTRIES), b(tb::B_CROSS_HANDOFFS));
            println!(
                "[ktest] bench: Call+ReplyRecv round trip {} cycles across harts ({}.{:02} kernel entries, {}.{:02} handoffs to an idle hart per round trip)",
                b(1),
                e / 100,
                e % 100,
                h / 100,
                h % 100
            );
        }
        if b(tb::B_OTHER_SPACE) != 0 {
            let e = b(tb::B_OTHER_SPACE_ENTRIES);
            println!(
                "[ktest] bench: Call+ReplyRecv round trip {} cycles same hart across address spaces ({}.{:02} kernel entries per round trip)",
                b(tb::B_OTHER_SPACE),
                e / 100,
                e % 100
            );
        }
        use crate::t_uintr as tu;
        if b(tu::B_ROUNDS) != 0 {
            println!(
                "[ktest] uintr bench ({} mode, {} rounds, across harts): signal->handler one way {} cycles (half a send/handler-answers round trip), send/poll ping-pong round trip {} cycles ({} kernel entries per round trip); seL4 notification (kernel-forwarded): Signal->Wait one way {} cycles (half a round trip), Signal/Wait ping-pong round trip {} cycles ({}.{:02} kernel entries, {}.{:02} handoffs to an idle hart, {}.{:02} Waits spinning for their signal ({}.{:02} completed by the signaller) per round trip, wall clock)",
                match b(tu::B_MODE) {
                    abi::uintr::MODE_HARDWARE => "hardware",
                    _ => "emulated",
                },
                b(tu::B_ROUNDS),
                b(tu::B_UINTR_ONE_WAY),
                b(tu::B_UINTR_ROUND_TRIP),
                b(tu::B_UINTR_RT_ENTRIES),
                b(tu::B_NTFN_ONE_WAY),
                b(tu::B_NTFN_ROUND_TRIP),
                b(tu::B_NTFN_ENTRIES) / 100,
                b(tu::B_NTFN_ENTRIES) % 100,
                b(tu::B_NTFN_HANDOFFS) / 100,
                b(tu::B_NTFN_HANDOFFS) % 100,
                b(tu::B_NTFN_SPINS) / 100,
                b(tu::B_NTFN_SPINS) % 100,
                b(tu::B_NTFN_DELIVERED) / 100,
                b(tu::B_NTFN_DELIVERED) % 100
            );
        }
        use crate::t_fpu as tf;
        if b(tf::B_RT_FP) != 0 {
            println!(
                "[ktest] fpu bench (same hart): first FP write after a switch {} cycles (trap and load; the write alone {}); Call+ReplyRecv round trip {} cycles with both threads writing FP state, {} with threads that never used FP",
                b(tf::B_FIRST_USE),
                b(tf::B_WRITE_ON),
                b(tf::B_RT_FP),
                b(tf::B_RT_PLAIN)
            );
        }
        use crate::t_preempt as tp;
        if b(tp::B_LOCK_PREEMPTIONS) != 0 {
            println!(
                "[ktest] bench: worst kernel lock hold {} cycles while a thread on another hart retyped 2 MiB frames and revoked 1000-cap trees ({} preemptions)",
                b(tp::B_LOCK_HOLD),
                b(tp::B_LOCK_PREEMPTIONS)
            );
        }
        use crate::t_uintr_irq as ti;
        if b(ti::B_DEV_ROUTE) != 0 {
            println!(
                "[ktest] uintr device irq bench ({} route, UART THR-empty interrupt, same hart, best of 5): IER write -> user handler {} cycles; seL4 IRQ -> notification, polled: IER write -> Poll returns {} cycles",
                if b(ti::B_DEV_ROUTE) == 2 { "direct UEIP" } else { "kernel-forwarded" },
                b(ti::B_DEV_UINTR),
                b(ti::B_DEV_SEL4)
            );
        }
    }

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo) -> ! {
        println!("[ktest] panic: {}", info);
        println!("[ktest] summary: aborted by a panic");
        syscall::debug_halt(1)
    }
}
