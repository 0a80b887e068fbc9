//! RISC-V virtual-memory invocations: page tables, frames, ASIDs.
use crate::invoke::{invoke, invoke0, Result};
use abi::label;

/// seL4_RISCV_PageTable_Map: install the table at the next missing level for `vaddr`.
pub fn page_table_map(service: usize, vspace: usize, vaddr: usize, attr: usize) -> Result<()> {
    invoke0(service, label::RISCV_PAGE_TABLE_MAP, &[vaddr, attr], &[vspace])
}

pub fn page_table_unmap(service: usize) -> Result<()> {
    invoke0(service, label::RISCV_PAGE_TABLE_UNMAP, &[], &[])
}

/// seL4_RISCV_Page_Map: `rights` are seL4_CapRights words (see `invoke::rights`).
pub fn page_map(service: usize, vspace: usize, vaddr: usize, rights: usize, attr: usize) -> Result<()> {
    invoke0(service, label::RISCV_PAGE_MAP, &[vaddr, rights, attr], &[vspace])
}

pub fn page_unmap(service: usize) -> Result<()> {
    invoke0(service, label::RISCV_PAGE_UNMAP, &[], &[])
}

/// seL4_RISCV_Page_GetAddress: the frame's physical address.
pub fn page_get_address(service: usize) -> Result<usize> {
    invoke(service, label::RISCV_PAGE_GET_ADDRESS, &[], &[]).map(|r| r.mr(0))
}

/// seL4_RISCV_ASIDControl_MakePool: turn `untyped` (exactly a pool's size, no children) into an
/// ASID pool placed at `index`/`depth` of `root`.
pub fn asid_control_make_pool(service: usize, untyped: usize, root: usize, index: usize, depth: usize) -> Result<()> {
    invoke0(service, label::RISCV_ASID_CONTROL_MAKE_POOL, &[index, depth], &[untyped, root])
}

/// seL4_RISCV_ASIDPool_Assign: give the top-level page table `vspace` an ASID.
pub fn asid_pool_assign(service: usize, vspace: usize) -> Result<()> {
    invoke0(service, label::RISCV_ASID_POOL_ASSIGN, &[], &[vspace])
}
