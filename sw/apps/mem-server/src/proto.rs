//! What the root task, the server and the client agree on: slots, addresses, labels, badges
//! (the manifest `app.toml` gives the named caps; their order per process is fixed here).

/// Largest concurrency of the sweep: the channel's ring capacity, the client's outstanding
/// calls, the server's frames and the pages of the client's pool.
pub const CAP: usize = 512;
pub const PAGE: usize = 4096;

/// Where the channel is mapped in the client and in the server.
pub const CHAN_VA: usize = 0x20_0000_0000;

/// Where the server's syscall buffer is mapped (request ring frame, then reply ring frame),
/// the rings' capacity (32 items fit a 4 KiB frame) and the vector completions raise on the
/// server's U-notification (the client's doorbell is vector 1).
pub const SYSBUF_VA: usize = 0x20_0100_0000;
pub const SYSBUF_CAP: usize = 32;
pub const SYSBUF_VECTOR: usize = 2;

/// The client's pool: the part of its VSpace the server maps frames into (CAP pages, one leaf
/// page table: the root task installs the tables before the client runs). Coroutine i uses
/// page i. A 1 GiB slot of its own, so no table of the program's is shared with it.
pub const POOL_VA: usize = 0x30_0000_0000;
pub const POOL_PAGES: usize = CAP;

/// Slots of the server's CNode the root task fills besides the given caps: an Untyped of
/// exactly `FRAMES` frames (the server retypes them itself at start), the client's VSpace
/// (its root page table, for Page_Map), the server's own TCB and the two frames of its syscall
/// buffer (for TCB_RegisterSyscallBuffer); and where the server puts its frames.
pub mod slots {
    pub const UNTYPED: usize = 32;
    pub const CLIENT_VSPACE: usize = 33;
    pub const OWN_TCB: usize = 34;
    pub const SYSBUF_REQ: usize = 35;
    pub const SYSBUF_REP: usize = 36;
    pub const FRAMES: usize = 64;
    /// log2 of the server's CNode size (app.toml's `cnode-bits` must say at least this).
    pub const CNODE_BITS: usize = 10;
}
pub const FRAMES: usize = CAP;
/// log2 of the bytes of the frames' Untyped.
pub const FRAMES_BITS: usize = 21;
const _: () = assert!(FRAMES * PAGE == 1 << FRAMES_BITS);
const _: () = assert!(slots::FRAMES + FRAMES <= 1 << slots::CNODE_BITS);

/// The given caps of each process, by index (`caps` order in app.toml).
pub mod caps {
    use abi::bootinfo::process::FIRST_GIVEN;
    /// Everyone: the root task's control endpoint (badged per process) and its fault endpoint.
    pub const CONTROL: usize = FIRST_GIVEN;
    pub const FAULT: usize = FIRST_GIVEN + 1;
    /// Each: its U-notification.
    pub const WAKE: usize = FIRST_GIVEN + 2;
}

/// Badges of the control endpoint: a process's own, and its faults' (FAULT_BASE + own).
pub const BADGE_CLIENT: usize = 1;
pub const BADGE_SERVER: usize = 2;
pub const FAULT_BASE: usize = 16;

/// Control messages (to the root task, over a sync Call).
pub mod control {
    /// First thing: the reply carries the process's set-up (`Hello*` below).
    pub const HELLO: usize = 1;
    /// Client: place me and the server's kernel handler for placement MR0 (`super::placement`):
    /// the root task sets our affinity and the harts that may serve the server's handler. Reply
    /// MR0 = 0 if done, MR1 = our hart index.
    pub const PLACE: usize = 2;
    /// Client: my next access to address MR0 must fault (the unmapped-page check); the root
    /// task ends the run with the verdict of that fault.
    pub const EXPECT_FAULT: usize = 3;
    /// Client: the run is over, MR0 = status (0: every check passed). Not answered.
    pub const DONE: usize = 4;
}

/// Where the client, the server and the server's async-syscall handler run in a phase (the
/// server stays on its hart; `MEM_PHASES` names a phase `MODE-PLACEMENT`).
pub mod placement {
    /// Client beside the server; only the server's hart may serve the handler, so it runs
    /// inside the server's wake calls.
    pub const ONE_HART: usize = 0;
    /// Client on another hart; the handler only on the client's or the server's hart.
    pub const TWO_HARTS: usize = 1;
    /// Client on another hart; the handler only on the other harts (a third, otherwise idle
    /// hart serves it, polling).
    pub const DEDICATED_HANDLER_HART: usize = 2;
    /// Names, by number (CSV rows, plots, `MEM_PHASES`).
    pub const NAMES: [&str; 3] = ["one-hart", "two-harts", "dedicated-handler-hart"];

    pub fn of_name(name: &str) -> Option<usize> {
        NAMES.iter().position(|&n| n == name)
    }
}

/// HELLO reply to the client: sender entry for the server's U-notification, its own hart
/// index, the server's, the number of harts, the target.
/// To the server: sender entry for the client's U-notification, its own hart index.
pub const TARGET_QEMU: usize = 1;
pub const TARGET_RTL: usize = 2;

/// Requests over the channel (label; words).
pub mod req {
    /// [va]: map one of the server's frames at va of the client's pool (read-write, never
    /// executable). Reply [va, frame number].
    pub const MAP: u32 = 1;
    /// [va]: unmap the page at va. Reply [va, frame number].
    pub const UNMAP: u32 = 2;
    /// [mode]: sync (0) or async (1) system calls from now on. Reply [mode].
    pub const MODE: u32 = 3;
    /// [spin cycles]: how long the server polls before it sleeps (the client's placement).
    pub const SPIN: u32 = 4;
    /// []: reply [maps, unmaps, system calls, refused requests, frames free].
    pub const STATS: u32 = 5;
}

pub const MODE_SYNC: u64 = 0;
pub const MODE_ASYNC: u64 = 1;

/// Reply labels: OK, or why the request was refused (the server changed nothing then).
pub mod status {
    pub const OK: u32 = 0;
    /// The address is outside the client's pool.
    pub const RANGE: u32 = 1;
    /// The address is not page-aligned.
    pub const ALIGN: u32 = 2;
    /// Map of a page that is mapped already.
    pub const MAPPED: u32 = 3;
    /// Unmap of a page that is not mapped.
    pub const NOT_MAPPED: u32 = 4;
    /// Another request on the same page is still in the kernel (async mode).
    pub const BUSY: u32 = 5;
    /// Every frame is in use.
    pub const NO_FRAME: u32 = 6;
    /// The kernel refused the call: word 1 is its error code.
    pub const KERNEL: u32 = 7;
    /// Unknown label or wrong number of words.
    pub const BAD_REQUEST: u32 = 8;
    /// The mode asked for is not available (no async system calls in this build).
    pub const UNSUPPORTED: u32 = 9;
}

/// Polling budget (cycles) of a side whose peer runs on another hart (as the IPC benchmark's).
pub const SPIN: usize = 1 << 22;
