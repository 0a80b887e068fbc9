//! Untyped invocations.
use crate::invoke::invocations;

invocations! {
    /// seL4_Untyped_Retype: `num_objects` objects of `obj_type` (`abi::object`; `size_bits` for
    /// the variable-sized ones) into slots `node_offset..` of the CNode found at
    /// `node_index`/`node_depth` from `root` (depth 0: `root` itself).
    fn retype / retype_async(service, obj_type, size_bits, root, node_index, node_depth, node_offset, num_objects) -> ()
        = UNTYPED_RETYPE [obj_type, size_bits, node_index, node_depth, node_offset, num_objects] [root];
}
