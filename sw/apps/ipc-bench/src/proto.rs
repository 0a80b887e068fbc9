//! Labels, badges and addresses the root task, the client and the servers agree on (the
//! manifest `app.toml` gives the caps; the order of each process's caps is fixed here).

/// Ring capacity of each channel: the client keeps up to this many calls outstanding, the
/// largest concurrency of the sweep.
pub const CAP: usize = 64;

/// Where the channel to server k (0 near, 1 far) is mapped in the client and in that server.
pub const CHAN_VA: [usize; 2] = [0x20_0000_0000, 0x20_0020_0000];

/// The given caps of each process, by index (`caps` order in app.toml).
pub mod caps {
    use abi::bootinfo::process::FIRST_GIVEN;
    /// Everyone: the root task's control endpoint (badged per process) and its fault endpoint.
    pub const CONTROL: usize = FIRST_GIVEN;
    pub const FAULT: usize = FIRST_GIVEN + 1;
    /// Client: the sync endpoints of the near and far server, then its U-notification.
    pub const CLIENT_EP: [usize; 2] = [FIRST_GIVEN + 2, FIRST_GIVEN + 3];
    pub const CLIENT_WAKE: usize = FIRST_GIVEN + 4;
    /// Server: its sync endpoint, then its U-notification.
    pub const SERVER_EP: usize = FIRST_GIVEN + 2;
    pub const SERVER_WAKE: usize = FIRST_GIVEN + 3;
}

/// Badges of the control endpoint: a process's own, and its faults' (FAULT_BASE + own).
pub const BADGE_CLIENT: usize = 1;
pub const BADGE_SERVER: [usize; 2] = [2, 3];
pub const FAULT_BASE: usize = 16;

/// Control messages (to the root task).
pub mod control {
    /// Process → root, first thing: the reply carries its set-up (`Hello*`).
    pub const HELLO: usize = 1;
    /// Client → root: the run is over, MR0 = status (0: every check passed). Not answered.
    pub const DONE: usize = 2;
}

/// HELLO reply to the client: sender entries for the servers' U-notifications, hart indices
/// of itself and of the two servers, and the target (`TARGET_*`).
pub const HELLO_CLIENT_WORDS: usize = 6;
/// HELLO reply to server k: its sender entry for the client's U-notification, k, its hart
/// index, the client's.
pub const HELLO_SERVER_WORDS: usize = 4;
pub const TARGET_QEMU: usize = 1;
pub const TARGET_RTL: usize = 2;

/// Request labels, sync and async: the work to do (`work::Work` as a number), or a switch.
pub mod label {
    /// Client → server over the sync endpoint: leave the sync loop and serve the channel.
    pub const GO_ASYNC: usize = 100;
}

/// Words of a sync message that forces the kernel's slow path (more than the 4 message
/// registers the fastpath takes).
pub const SLOW_WORDS: usize = 5;

/// The region (sw/lib/marker) the client's hart is in during a point's measured window:
/// `make ipc-point` profiles every hart while it is open.
pub const WINDOW: u16 = 30;

/// Polling budget (cycles) of a side whose peer runs on another hart: long enough that a busy
/// peer never finds it asleep; on QEMU the counter is host time, so it also rides out a vCPU
/// the host deschedules for a while.
pub const SPIN: usize = 1 << 22;
