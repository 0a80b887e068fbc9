//! Capability addressing: resolve a capability pointer (`cptr`) of `depth` bits through a tree
//! of CNodes, each consuming its guard and then `radix` bits (seL4 resolveAddressBits).
use crate::{Cap, SlotRef, Slots};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookupFault {
    /// The root (or a cap on the way) is not a CNode.
    InvalidRoot,
    /// A slot on the way is empty or not a CNode, with `bits_left` still to resolve.
    MissingCapability {
        bits_left: u8,
    },
    /// `depth` ran out or overflowed in the middle of a level.
    DepthMismatch {
        bits_found: u8,
        bits_left: u8,
    },
    GuardMismatch {
        bits_left: u8,
        guard: u64,
        guard_bits: u8,
    },
}

/// The slot a CNode operation names: `cptr` must resolve exactly `depth` bits.
pub fn lookup_slot_exact(s: &impl Slots, root: Cap, cptr: u64, depth: u8) -> Result<SlotRef, LookupFault> {
    match resolve(s, root, cptr, depth)? {
        (slot, 0) => Ok(slot),
        (_, left) => Err(LookupFault::DepthMismatch { bits_found: 0, bits_left: left }),
    }
}

/// The slot an invocation names (`depth` = 64): resolution stops at the first non-CNode cap.
pub fn lookup_slot(s: &impl Slots, root: Cap, cptr: u64) -> Result<SlotRef, LookupFault> {
    resolve(s, root, cptr, 64).map(|(slot, _)| slot)
}

/// seL4 resolveAddressBits: the slot reached and the bits left unresolved.
fn resolve(s: &impl Slots, root: Cap, cptr: u64, depth: u8) -> Result<(SlotRef, u8), LookupFault> {
    if depth == 0 || depth > 64 {
        return Err(LookupFault::DepthMismatch { bits_found: 0, bits_left: depth });
    }
    let mut node = root;
    let mut left = depth;
    loop {
        let Cap::CNode { base, radix, guard, guard_bits } = node else {
            return Err(if left == depth {
                LookupFault::InvalidRoot
            } else {
                LookupFault::MissingCapability { bits_left: left }
            });
        };
        let level = radix + guard_bits;
        if level == 0 || level > left {
            return Err(LookupFault::DepthMismatch { bits_found: level, bits_left: left });
        }
        let bits = |n: u8, shift: u8| if n == 0 { 0 } else { (cptr >> shift) & (u64::MAX >> (64 - n as u32)) };
        if bits(guard_bits, left - guard_bits) != guard {
            return Err(LookupFault::GuardMismatch { bits_left: left, guard, guard_bits });
        }
        let index = bits(radix, left - level);
        let slot = s.cnode_slot(base, index);
        left -= level;
        if left == 0 {
            return Ok((slot, 0));
        }
        let next = s.cap(slot);
        if !matches!(next, Cap::CNode { .. }) {
            return Ok((slot, left));
        }
        node = next;
    }
}
