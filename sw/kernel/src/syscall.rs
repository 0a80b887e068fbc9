//! Everything that enters the kernel from user mode: system calls, interrupts taken while a
//! user thread ran, and user faults.
use crate::arch::{self, csr::*, trap::UserContext};
use crate::{kprintln, percpu, thread};
use abi::syscall as nr;

const A0: usize = 10;
const A7: usize = 17;
const EXC_ECALL_U: usize = 8;

pub extern "C" fn user_trap(ctx: &mut UserContext) -> ! {
    let scause = csrr!("scause");
    let cpu = percpu::this();
    if scause & INTERRUPT != 0 {
        arch::trap::handle_interrupt(scause, cpu);
    } else if scause == EXC_ECALL_U {
        ctx.sepc += 4;
        handle_syscall(ctx);
    } else {
        // No fault endpoints yet: report and stop the thread.
        kprintln!(
            "[kernel] user fault: scause {:#x} at pc {:#x}, stval {:#x}; thread stopped",
            scause,
            ctx.sepc,
            csrr!("stval")
        );
        thread::stop_current()
    }
    arch::trap::enter_user(ctx)
}

fn handle_syscall(ctx: &mut UserContext) {
    let number = ctx.regs[A7] as isize;
    match number {
        nr::DEBUG_PUT_CHAR => crate::console::put_byte(ctx.regs[A0] as u8),
        nr::YIELD => thread::count_yield(),
        nr::DEBUG_HALT => {
            let status = ctx.regs[A0];
            kprintln!("[kernel] DebugHalt({status}) from the root task");
            if status == 0 {
                arch::exit::pass()
            } else {
                arch::exit::fail(status.min(255) as u32)
            }
        }
        // Unknown numbers are an error for the caller, never for the kernel.
        _ => ctx.regs[A0] = usize::MAX,
    }
}
