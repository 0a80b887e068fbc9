//! The demo process (README.md): started from its boot module by the root task, in its own
//! VSpace and CSpace. It greets over the endpoint it is given, answers a challenge, then reads
//! the address the root task names, which its VSpace must not have: the read faults and the
//! root task sees the fault on the fault endpoint, not a value.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    /// Message labels of the exchange (the kernel-test `process_start_from_module` is the peer).
    mod proto {
        /// Child → root: [hart id it runs on, hart index in its ProcessInfo, its priority, magic ok].
        pub const HELLO: usize = 1;
        /// Child → root: [challenge + 1]; the reply to HELLO carried [challenge, probe address].
        pub const ANSWER: usize = 2;
        /// Child → root: [the word it read at the probe address]: the read did not fault.
        pub const READ_ROOT_MEMORY: usize = 3;
    }

    use abi::bootinfo::process::{ProcessInfo, FIRST_GIVEN, MAGIC};
    use abi::MessageInfo;
    use userlib::syscall;

    userlib::entry!(main);

    /// The endpoint the manifest gives first (`caps` of `[process.hello-proc]` in sw/image.toml).
    const HELLO_EP: usize = FIRST_GIVEN;

    extern "C" fn main(info: usize) -> ! {
        // SAFETY: the loader maps the ProcessInfo page read-only here and passes it in a0.
        let info = unsafe { &*(info as *const ProcessInfo) };
        userlib::ipc::set_ipc_buffer(info.ipc_buffer);
        let hart = syscall::debug_get_clock().1;
        let hello = [hart, info.hart, info.priority, (info.magic == MAGIC) as usize];
        let (_, _, r) = syscall::call(HELLO_EP, MessageInfo::new(proto::HELLO, 0, 0, 4), hello);
        let (challenge, probe) = (r[0], r[1]);
        syscall::call(HELLO_EP, MessageInfo::new(proto::ANSWER, 0, 0, 1), [challenge.wrapping_add(1), 0, 0, 0]);
        // SAFETY: deliberately not: the probe address is the root task's, absent here, so
        // this read faults and the thread stops (its fault goes to the fault endpoint).
        let word = unsafe { core::ptr::read_volatile(probe as *const usize) };
        syscall::call(HELLO_EP, MessageInfo::new(proto::READ_ROOT_MEMORY, 0, 0, 1), [word, 0, 0, 0]);
        loop {
            syscall::yield_now();
        }
    }

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        loop {
            syscall::yield_now();
        }
    }
}
