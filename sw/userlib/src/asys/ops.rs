//! The async forms of the ordinary invocations: the same arguments as the sync functions in
//! `vspace`, `untyped`, `cnode`, `tcb` and `debug`, returning a future of the same result.
//! Through the thread's installed client when there is one, else the sync way.
//!
//! Each op is an [`Op`]: the call itself and how its reply becomes the result, no bigger than
//! the call (a task holding one stays small: it is copied into its slot when spawned).
use super::{call, Call, Request};
use crate::invoke::{Reply, Result};
use abi::label;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

/// An async invocation in flight; resolves to what the sync function returns.
#[must_use = "futures do nothing unless awaited"]
pub struct Op<T> {
    call: Call,
    map: fn(Reply) -> T,
}

impl<T> Future for Op<T> {
    type Output = Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        let map = self.map;
        Pin::new(&mut self.call).poll(cx).map(|c| c.into_result().map(map))
    }
}

fn invoke<T>(cap: usize, l: usize, mrs: &[usize], caps: &[usize], map: fn(Reply) -> T) -> Op<T> {
    // Every op below fits a request (at most 3 caps and 14 words).
    let r = Request::invocation(cap, l, mrs, caps).expect("fits a request");
    Op { call: call(r), map }
}

fn unit(_: Reply) {}

pub fn page_map(service: usize, vspace: usize, vaddr: usize, rights: usize, attr: usize) -> Op<()> {
    invoke(service, label::RISCV_PAGE_MAP, &[vaddr, rights, attr], &[vspace], unit)
}

pub fn page_unmap(service: usize) -> Op<()> {
    invoke(service, label::RISCV_PAGE_UNMAP, &[], &[], unit)
}

pub fn page_get_address(service: usize) -> Op<usize> {
    invoke(service, label::RISCV_PAGE_GET_ADDRESS, &[], &[], |r| r.mr(0))
}

pub fn page_table_map(service: usize, vspace: usize, vaddr: usize, attr: usize) -> Op<()> {
    invoke(service, label::RISCV_PAGE_TABLE_MAP, &[vaddr, attr], &[vspace], unit)
}

pub fn page_table_unmap(service: usize) -> Op<()> {
    invoke(service, label::RISCV_PAGE_TABLE_UNMAP, &[], &[], unit)
}

/// Untyped_Retype, arguments as `untyped::retype`.
#[allow(clippy::too_many_arguments)]
pub fn untyped_retype(
    service: usize,
    ty: usize,
    size_bits: usize,
    root: usize,
    node_index: usize,
    node_depth: usize,
    node_offset: usize,
    num_objects: usize,
) -> Op<()> {
    invoke(
        service,
        label::UNTYPED_RETYPE,
        &[ty, size_bits, node_index, node_depth, node_offset, num_objects],
        &[root],
        unit,
    )
}

pub fn tcb_bind_notification(tcb: usize, ntfn: usize) -> Op<()> {
    invoke(tcb, label::TCB_BIND_NOTIFICATION, &[], &[ntfn], unit)
}

pub fn tcb_unbind_notification(tcb: usize) -> Op<()> {
    invoke(tcb, label::TCB_UNBIND_NOTIFICATION, &[], &[], unit)
}

pub fn cnode_delete(service: usize, index: usize, depth: usize) -> Op<()> {
    invoke(service, label::CNODE_DELETE, &[index, depth], &[], unit)
}

pub fn cnode_revoke(service: usize, index: usize, depth: usize) -> Op<()> {
    invoke(service, label::CNODE_REVOKE, &[index, depth], &[], unit)
}

pub fn cnode_cancel_badged_sends(service: usize, index: usize, depth: usize) -> Op<()> {
    invoke(service, label::CNODE_CANCEL_BADGED_SENDS, &[index, depth], &[], unit)
}

/// CNode_Copy, arguments as `cnode::copy`.
#[allow(clippy::too_many_arguments)]
pub fn cnode_copy(
    service: usize,
    dest_index: usize,
    dest_depth: usize,
    src_root: usize,
    src_index: usize,
    src_depth: usize,
    rights: usize,
) -> Op<()> {
    invoke(service, label::CNODE_COPY, &[dest_index, dest_depth, src_index, src_depth, rights], &[src_root], unit)
}

/// CNode_Mint, arguments as `cnode::mint`.
#[allow(clippy::too_many_arguments)]
pub fn cnode_mint(
    service: usize,
    dest_index: usize,
    dest_depth: usize,
    src_root: usize,
    src_index: usize,
    src_depth: usize,
    rights: usize,
    badge: usize,
) -> Op<()> {
    invoke(
        service,
        label::CNODE_MINT,
        &[dest_index, dest_depth, src_index, src_depth, rights, badge],
        &[src_root],
        unit,
    )
}

/// Debug output of up to 16 bytes; resolves to how many were written.
pub fn put_string(bytes: &[u8]) -> Op<usize> {
    Op { call: call(Request::put_string(bytes)), map: |r| r.mr(0) }
}

pub fn put_char(c: u8) -> Op<()> {
    Op { call: call(Request::put_char(c)), map: unit }
}
