//! CNode invocations (seL4's argument order; `depth` is the number of bits of the index to
//! resolve from the invoked CNode: 64 for a single-level CSpace whose guard pads to a word).
use crate::invoke::invocations;

invocations! {
    /// seL4_CNode_Copy: derive the cap at `src_root`/`src_index` into `dest_index`, masked by
    /// `rights`.
    fn copy / copy_async(service, dest_index, dest_depth, src_root, src_index, src_depth, rights) -> ()
        = CNODE_COPY [dest_index, dest_depth, src_index, src_depth, rights] [src_root];

    /// seL4_CNode_Mint: like Copy and also set the badge (endpoint/notification) or guard (CNode).
    fn mint / mint_async(service, dest_index, dest_depth, src_root, src_index, src_depth, rights, badge) -> ()
        = CNODE_MINT [dest_index, dest_depth, src_index, src_depth, rights, badge] [src_root];

    /// seL4_CNode_Move.
    fn move_(service, dest_index, dest_depth, src_root, src_index, src_depth) -> ()
        = CNODE_MOVE [dest_index, dest_depth, src_index, src_depth] [src_root];

    /// seL4_CNode_Mutate: move and apply `badge` (cap data: a CNode guard; endpoint and
    /// notification caps cannot be re-badged this way in seL4).
    fn mutate(service, dest_index, dest_depth, src_root, src_index, src_depth, badge) -> ()
        = CNODE_MUTATE [dest_index, dest_depth, src_index, src_depth, badge] [src_root];

    /// seL4_CNode_Rotate: src -> pivot, pivot -> dest (dest empty, or equal to src for a swap).
    /// On the wire the order is seL4's decoder's: dest_index, dest_depth, pivot_badge,
    /// pivot_index, pivot_depth, src_badge, src_index, src_depth; extra caps pivot_root, src_root.
    fn rotate(
        service, dest_index, dest_depth, pivot_root, pivot_index, pivot_depth, pivot_badge, src_root, src_index,
        src_depth, src_badge,
    ) -> () = CNODE_ROTATE
        [dest_index, dest_depth, pivot_badge, pivot_index, pivot_depth, src_badge, src_index, src_depth]
        [pivot_root, src_root];

    /// seL4_CNode_Delete.
    fn delete / delete_async(service, index, depth) -> () = CNODE_DELETE [index, depth] [];

    /// seL4_CNode_Revoke: delete every cap derived from the one at `index`.
    fn revoke / revoke_async(service, index, depth) -> () = CNODE_REVOKE [index, depth] [];

    /// seL4_CNode_CancelBadgedSends: abort pending sends carrying the badge of the cap at `index`.
    fn cancel_badged_sends / cancel_badged_sends_async(service, index, depth) -> ()
        = CNODE_CANCEL_BADGED_SENDS [index, depth] [];

    /// seL4_CNode_SaveCaller: move this thread's reply cap into the (empty) slot at `index`.
    fn save_caller(service, index, depth) -> () = CNODE_SAVE_CALLER [index, depth] [];
}
