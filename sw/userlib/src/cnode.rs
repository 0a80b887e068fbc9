//! CNode invocations (seL4's argument order; `depth` is the number of bits of the index to
//! resolve from the invoked CNode: 64 for a single-level CSpace whose guard pads to a word).
use crate::invoke::{invoke0, Result};
use abi::label;

/// seL4_CNode_Copy: derive the cap at `src_root`/`src_index` into `dest_index`, masked by `rights`.
pub fn copy(
    service: usize,
    dest_index: usize,
    dest_depth: usize,
    src_root: usize,
    src_index: usize,
    src_depth: usize,
    rights: usize,
) -> Result<()> {
    invoke0(service, label::CNODE_COPY, &[dest_index, dest_depth, src_index, src_depth, rights], &[src_root])
}

/// seL4_CNode_Mint: like Copy and also set the badge (endpoint/notification) or guard (CNode).
#[allow(clippy::too_many_arguments)]
pub fn mint(
    service: usize,
    dest_index: usize,
    dest_depth: usize,
    src_root: usize,
    src_index: usize,
    src_depth: usize,
    rights: usize,
    badge: usize,
) -> Result<()> {
    invoke0(service, label::CNODE_MINT, &[dest_index, dest_depth, src_index, src_depth, rights, badge], &[src_root])
}

/// seL4_CNode_Move.
pub fn move_(
    service: usize,
    dest_index: usize,
    dest_depth: usize,
    src_root: usize,
    src_index: usize,
    src_depth: usize,
) -> Result<()> {
    invoke0(service, label::CNODE_MOVE, &[dest_index, dest_depth, src_index, src_depth], &[src_root])
}

/// seL4_CNode_Mutate: move and apply `badge` (cap data: a CNode guard; endpoint and
/// notification caps cannot be re-badged this way in seL4).
pub fn mutate(
    service: usize,
    dest_index: usize,
    dest_depth: usize,
    src_root: usize,
    src_index: usize,
    src_depth: usize,
    badge: usize,
) -> Result<()> {
    invoke0(service, label::CNODE_MUTATE, &[dest_index, dest_depth, src_index, src_depth, badge], &[src_root])
}

/// seL4_CNode_Rotate: src -> pivot, pivot -> dest (dest empty, or equal to src for a swap).
/// On the wire the order is seL4's decoder's: dest_index, dest_depth, pivot_badge, pivot_index,
/// pivot_depth, src_badge, src_index, src_depth; extra caps pivot_root, src_root.
#[allow(clippy::too_many_arguments)]
pub fn rotate(
    service: usize,
    dest_index: usize,
    dest_depth: usize,
    pivot_root: usize,
    pivot_index: usize,
    pivot_depth: usize,
    pivot_badge: usize,
    src_root: usize,
    src_index: usize,
    src_depth: usize,
    src_badge: usize,
) -> Result<()> {
    invoke0(
        service,
        label::CNODE_ROTATE,
        &[dest_index, dest_depth, pivot_badge, pivot_index, pivot_depth, src_badge, src_index, src_depth],
        &[pivot_root, src_root],
    )
}

/// seL4_CNode_Delete.
pub fn delete(service: usize, index: usize, depth: usize) -> Result<()> {
    invoke0(service, label::CNODE_DELETE, &[index, depth], &[])
}

/// seL4_CNode_Revoke: delete every cap derived from the one at `index`.
pub fn revoke(service: usize, index: usize, depth: usize) -> Result<()> {
    invoke0(service, label::CNODE_REVOKE, &[index, depth], &[])
}

/// seL4_CNode_CancelBadgedSends: abort pending sends carrying the badge of the cap at `index`.
pub fn cancel_badged_sends(service: usize, index: usize, depth: usize) -> Result<()> {
    invoke0(service, label::CNODE_CANCEL_BADGED_SENDS, &[index, depth], &[])
}

/// seL4_CNode_SaveCaller: move this thread's reply cap into the (empty) slot at `index`.
pub fn save_caller(service: usize, index: usize, depth: usize) -> Result<()> {
    invoke0(service, label::CNODE_SAVE_CALLER, &[index, depth], &[])
}
