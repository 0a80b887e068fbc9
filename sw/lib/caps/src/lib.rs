//! seL4-style capabilities, independent of how the kernel stores them.
//!
//! * [`cap`]: what a capability names (object, rights, badge) and how Mint/derive change it.
//! * [`cdt`]: the capability derivation tree (seL4's MDB: a depth-first doubly linked list of
//!   slots, parenthood decided by position and [`cdt::is_parent_of`]), with Copy/Mint/Move/
//!   Delete/Revoke semantics.
//! * [`cspace`]: guard/radix addressing through CNodes.
//! * [`untyped`]: object sizes and the retype watermark.
//!
//! Slots are reached through the [`Slots`] trait, so the same code runs on kernel memory and in
//! host tests.
#![no_std]

pub mod cap;
pub mod cdt;
pub mod cspace;
pub mod untyped;

pub use cap::{Cap, Rights};
pub use cdt::{Mdb, Slot};

/// A slot's identity: in the kernel, the slot's physical address; 0 is "none".
pub type SlotRef = u64;
pub const NO_SLOT: SlotRef = 0;

/// Storage of slots. CNodes are arrays of slots; `cnode_slot` finds slot `index` of the CNode
/// object at `base`.
pub trait Slots {
    fn get(&self, s: SlotRef) -> Slot;
    fn set(&mut self, s: SlotRef, slot: Slot);
    fn cnode_slot(&self, base: u64, index: u64) -> SlotRef;

    fn cap(&self, s: SlotRef) -> Cap {
        self.get(s).cap
    }
    fn mdb(&self, s: SlotRef) -> Mdb {
        self.get(s).mdb
    }
    fn set_mdb(&mut self, s: SlotRef, mdb: Mdb) {
        let mut slot = self.get(s);
        slot.mdb = mdb;
        self.set(s, slot);
    }
    fn set_cap(&mut self, s: SlotRef, cap: Cap) {
        let mut slot = self.get(s);
        slot.cap = cap;
        self.set(s, slot);
    }
}

/// Failures reported to the invoker (mapped onto `abi::error`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    InvalidArgument(u8),
    InvalidCapability(u8),
    IllegalOperation,
    RangeError {
        min: u64,
        max: u64,
    },
    AlignmentError,
    FailedLookup(cspace::LookupFault),
    /// A lookup of a destination (seL4's failedLookupWasSource = false).
    FailedDestLookup(cspace::LookupFault),
    DeleteFirst,
    RevokeFirst,
    /// The message is shorter than the invocation needs (seL4_TruncatedMessage).
    Truncated,
    NotEnoughMemory {
        available: u64,
    },
    /// Not an answer: the kernel's work budget for this entry ran out with the invocation's
    /// state consistent; the system call is restarted and carries on where it stopped.
    Preempted,
}

impl Error {
    pub fn code(&self) -> usize {
        use abi::error::*;
        match self {
            Error::InvalidArgument(_) => INVALID_ARGUMENT,
            Error::InvalidCapability(_) => INVALID_CAPABILITY,
            Error::IllegalOperation => ILLEGAL_OPERATION,
            Error::RangeError { .. } => RANGE_ERROR,
            Error::AlignmentError => ALIGNMENT_ERROR,
            Error::FailedLookup(_) | Error::FailedDestLookup(_) => FAILED_LOOKUP,
            Error::DeleteFirst => DELETE_FIRST,
            Error::RevokeFirst => REVOKE_FIRST,
            Error::Truncated => TRUNCATED_MESSAGE,
            Error::NotEnoughMemory { .. } => NOT_ENOUGH_MEMORY,
            Error::Preempted => NO_ERROR,
        }
    }
}

#[cfg(test)]
mod tests;
