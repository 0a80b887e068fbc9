//! Untyped invocations.
use crate::invoke::{invoke0, Result};
use abi::label;

/// seL4_Untyped_Retype: `num_objects` objects of `obj_type` (`abi::object`; `size_bits` for the
/// variable-sized ones) into slots `node_offset..` of the CNode found at `node_index`/`node_depth`
/// from `root` (depth 0: `root` itself).
#[allow(clippy::too_many_arguments)]
pub fn retype(
    service: usize,
    obj_type: usize,
    size_bits: usize,
    root: usize,
    node_index: usize,
    node_depth: usize,
    node_offset: usize,
    num_objects: usize,
) -> Result<()> {
    invoke0(
        service,
        label::UNTYPED_RETYPE,
        &[obj_type, size_bits, node_index, node_depth, node_offset, num_objects],
        &[root],
    )
}
