//! The async forms of the ordinary invocations: the same arguments as the sync functions in
//! `vspace`, `untyped`, `cnode`, `tcb` and `debug`, returning a future of the same result.
//! Through the thread's installed client when there is one, else the sync way.
use super::{call, Request};
use crate::invoke::{Reply, Result};
use abi::label;
use core::future::Future;

async fn invoke(cap: usize, l: usize, mrs: &[usize], caps: &[usize]) -> Result<Reply> {
    // Every op below fits a request (at most 3 caps and 14 words).
    let r = Request::invocation(cap, l, mrs, caps).expect("fits a request");
    call(r).await.into_result()
}

pub fn page_map(service: usize, vspace: usize, vaddr: usize, rights: usize, attr: usize) -> impl Future<Output = Result<()>> {
    let r = Request::invocation(service, label::RISCV_PAGE_MAP, &[vaddr, rights, attr], &[vspace]);
    async move { call(r.expect("fits")).await.into_result().map(|_| ()) }
}

pub async fn page_unmap(service: usize) -> Result<()> {
    invoke(service, label::RISCV_PAGE_UNMAP, &[], &[]).await.map(|_| ())
}

pub async fn page_get_address(service: usize) -> Result<usize> {
    invoke(service, label::RISCV_PAGE_GET_ADDRESS, &[], &[]).await.map(|r| r.mr(0))
}

pub async fn page_table_map(service: usize, vspace: usize, vaddr: usize, attr: usize) -> Result<()> {
    invoke(service, label::RISCV_PAGE_TABLE_MAP, &[vaddr, attr], &[vspace]).await.map(|_| ())
}

pub async fn page_table_unmap(service: usize) -> Result<()> {
    invoke(service, label::RISCV_PAGE_TABLE_UNMAP, &[], &[]).await.map(|_| ())
}

/// Untyped_Retype, arguments as `untyped::retype`.
#[allow(clippy::too_many_arguments)]
pub async fn untyped_retype(
    service: usize,
    ty: usize,
    size_bits: usize,
    root: usize,
    node_index: usize,
    node_depth: usize,
    node_offset: usize,
    num_objects: usize,
) -> Result<()> {
    invoke(service, label::UNTYPED_RETYPE, &[ty, size_bits, node_index, node_depth, node_offset, num_objects], &[root]).await.map(|_| ())
}

pub async fn tcb_bind_notification(tcb: usize, ntfn: usize) -> Result<()> {
    invoke(tcb, label::TCB_BIND_NOTIFICATION, &[], &[ntfn]).await.map(|_| ())
}

pub async fn tcb_unbind_notification(tcb: usize) -> Result<()> {
    invoke(tcb, label::TCB_UNBIND_NOTIFICATION, &[], &[]).await.map(|_| ())
}

pub async fn cnode_delete(service: usize, index: usize, depth: usize) -> Result<()> {
    invoke(service, label::CNODE_DELETE, &[index, depth], &[]).await.map(|_| ())
}

pub async fn cnode_revoke(service: usize, index: usize, depth: usize) -> Result<()> {
    invoke(service, label::CNODE_REVOKE, &[index, depth], &[]).await.map(|_| ())
}

pub async fn cnode_cancel_badged_sends(service: usize, index: usize, depth: usize) -> Result<()> {
    invoke(service, label::CNODE_CANCEL_BADGED_SENDS, &[index, depth], &[]).await.map(|_| ())
}

/// CNode_Copy, arguments as `cnode::copy`.
#[allow(clippy::too_many_arguments)]
pub async fn cnode_copy(
    service: usize,
    dest_index: usize,
    dest_depth: usize,
    src_root: usize,
    src_index: usize,
    src_depth: usize,
    rights: usize,
) -> Result<()> {
    invoke(service, label::CNODE_COPY, &[dest_index, dest_depth, src_index, src_depth, rights], &[src_root]).await.map(|_| ())
}

/// CNode_Mint, arguments as `cnode::mint`.
#[allow(clippy::too_many_arguments)]
pub async fn cnode_mint(
    service: usize,
    dest_index: usize,
    dest_depth: usize,
    src_root: usize,
    src_index: usize,
    src_depth: usize,
    rights: usize,
    badge: usize,
) -> Result<()> {
    invoke(service, label::CNODE_MINT, &[dest_index, dest_depth, src_index, src_depth, rights, badge], &[src_root]).await.map(|_| ())
}

/// Debug output of up to 16 bytes; resolves to how many were written.
pub fn put_string(bytes: &[u8]) -> impl Future<Output = Result<usize>> {
    let r = Request::put_string(bytes);
    async move { call(r).await.into_result().map(|r| r.mr(0)) }
}

pub async fn put_char(c: u8) -> Result<()> {
    call(Request::put_char(c)).await.into_result().map(|_| ())
}
