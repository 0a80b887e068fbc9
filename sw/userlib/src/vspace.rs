//! RISC-V virtual-memory invocations: page tables, frames, ASIDs.
use crate::invoke::invocations;

invocations! {
    /// seL4_RISCV_PageTable_Map: install the table at the next missing level for `vaddr`.
    fn page_table_map / page_table_map_async(service, vspace, vaddr, attr) -> ()
        = RISCV_PAGE_TABLE_MAP [vaddr, attr] [vspace];

    /// seL4_RISCV_PageTable_Unmap.
    fn page_table_unmap / page_table_unmap_async(service) -> () = RISCV_PAGE_TABLE_UNMAP [] [];

    /// seL4_RISCV_Page_Map: `rights` are seL4_CapRights words (see `invoke::rights`).
    fn page_map / page_map_async(service, vspace, vaddr, rights, attr) -> ()
        = RISCV_PAGE_MAP [vaddr, rights, attr] [vspace];

    /// seL4_RISCV_Page_Unmap.
    fn page_unmap / page_unmap_async(service) -> () = RISCV_PAGE_UNMAP [] [];

    /// seL4_RISCV_Page_GetAddress: the frame's physical address.
    fn page_get_address / page_get_address_async(service) -> usize
        = RISCV_PAGE_GET_ADDRESS [] [] |r| r.mr(0);

    /// seL4_RISCV_ASIDControl_MakePool: turn `untyped` (exactly a pool's size, no children) into
    /// an ASID pool placed at `index`/`depth` of `root`.
    fn asid_control_make_pool(service, untyped, root, index, depth) -> ()
        = RISCV_ASID_CONTROL_MAKE_POOL [index, depth] [untyped, root];

    /// seL4_RISCV_ASIDPool_Assign: give the top-level page table `vspace` an ASID.
    fn asid_pool_assign(service, vspace) -> () = RISCV_ASID_POOL_ASSIGN [] [vspace];
}
