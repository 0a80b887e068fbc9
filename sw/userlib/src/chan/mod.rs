//! Async IPC over shared-memory rings (issue #16; design notes: `docs/perf/async-ipc.md`): a
//! channel is one shared memory region ([`ChanMem`]) holding a small header (each side's
//! open/closed word) and two `aring` rings, requests and replies, plus a U-notification each
//! way.
//!
//! - [`Client::call`]`(msg).await` pushes a request whose id names a slot of the client's
//!   table of outstanding calls (slot index and a generation), and completes when the reply
//!   with that id arrives. The thread's [`ThreadPark`] collects the replies for all of them
//!   when the executor idles or has been busy for a while (and a call polled again without its
//!   reply looks too): no separate client dispatcher task, and one drain of the ring per batch
//!   of replies.
//! - [`Server::serve`] is the dispatcher coroutine: it pops requests and spawns one handler task
//!   per request on the thread's executor (handlers may await, so they run concurrently); each
//!   handler pushes its own reply. It takes a request only while the reply ring has a free slot
//!   for every handler in flight, so a reply push never finds the ring full.
//!   [`Server::serve_keeping`] may also keep a request by what it is [`Owed`] (its reply slot
//!   held, no task) for [`Server::answer`] from other code of the serving thread.
//! - Adaptive notification: a side signals its peer (`uipi.send`) only when the peer's ring
//!   flag says it sleeps. A thread's [`ThreadPark`] (the executor's `Park` hook) first polls
//!   its rings for a while if it was given a spin budget (peer on another hart), then announces
//!   sleep on every ring, re-checks them, and only then blocks in a U-notification Wait.
//! - Peer death: see [`ChanMem::close`]. A supervisor that learns that one side is gone (a
//!   fault message on its fault endpoint, or because it deleted the thread) marks that side
//!   closed in the header and signals the survivor's U-notification; the survivor's pending and
//!   later calls, or its dispatcher, end with [`ChanError::PeerGone`].
//! - Nothing read from shared memory is trusted: `aring` validates the indices, and ids, labels
//!   and lengths are checked here; a bad one is [`ChanError::Corrupt`] for good.
//!
//! Endpoints are `'static` objects used by one thread (the one running the executor they were
//! attached on): no heap, and no lock on the data path.
mod blocking;
mod client;
mod layout;
mod msg;
mod park;
mod server;
#[cfg(test)]
mod tests;

/// The rings' layout (`aring`), for code that inspects a channel's memory (tests, debuggers).
pub use aring::{ring_bytes, HEADER_BYTES as RING_HEADER_BYTES};
pub use blocking::call_blocking;
pub use client::{Call, Client};
pub use layout::{chan_bytes, ChanMem, Side, CHAN_HEADER_BYTES};
pub use msg::{Msg, BAD_REQUEST};
pub use park::{Endpoint, ThreadPark, MAX_ENDPOINTS, REMOTE_SPIN_CYCLES};
pub use server::{Owed, Server};

/// Why a call or a dispatcher ended without a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChanError {
    /// The peer is gone: its side of the channel was closed (by itself or a supervisor).
    PeerGone,
    /// The peer broke the protocol (an impossible ring index, a reply for no outstanding call,
    /// a bad length, a full ring that cannot be full): the channel is unusable from now on.
    Corrupt,
    /// Setup was given an unusable region, capacity or table size, or the endpoint was attached
    /// twice, or a handler future does not fit the executor's slots.
    BadSetup,
}

impl core::fmt::Display for ChanError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(self, f)
    }
}

/// Ring the peer's doorbell: `uipi.send` through sender-table entry `index`, ordered after our
/// ring writes. (On the host, where unit tests build this crate, there is no UINTC.)
fn signal(index: usize) {
    #[cfg(target_arch = "riscv64")]
    crate::uintr::send(index);
    #[cfg(not(target_arch = "riscv64"))]
    let _ = index;
}

/// Count one more in a statistic only the endpoint's own thread writes (others may read it):
/// a load and a store, not an atomic read-modify-write per call.
fn bump(counter: &core::sync::atomic::AtomicUsize) {
    use core::sync::atomic::Ordering::Relaxed;
    counter.store(counter.load(Relaxed).wrapping_add(1), Relaxed);
}

/// The cycle counter (0 on the host), for the spin budget.
fn cycles() -> u64 {
    #[cfg(target_arch = "riscv64")]
    {
        let v: u64;
        // SAFETY: reads a counter CSR user mode may read.
        unsafe { core::arch::asm!("rdcycle {0}", out(reg) v, options(nomem, nostack)) };
        v
    }
    #[cfg(not(target_arch = "riscv64"))]
    0
}
