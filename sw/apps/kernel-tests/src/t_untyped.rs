//! Untyped_Retype: every type, every error, the watermark, reuse after revoke, reclaiming.
use crate::env::{identify, obj_bits, Env, TResult, CNODE, ROOT_DEPTH};
use abi::{error as e, label, object as o, stat};
use userlib::invoke::{invoke0, rights};
use userlib::{cnode, syscall, untyped, vspace};

fn object_bytes() -> usize {
    syscall::debug_stat(stat::OBJECT_BYTES)
}

pub fn retype_every_type(env: &mut Env) -> TResult {
    let cases = [
        (o::TCB, 0),
        (o::ENDPOINT, 0),
        (o::NOTIFICATION, 0),
        (o::CNODE, 4),
        (o::PAGE_4K, 0),
        (o::MEGA_PAGE, 0),
        (o::PAGE_TABLE, 0),
        (o::UNTYPED, 16),
    ];
    for (t, bits) in cases {
        let obj = env.alloc(t, bits)?;
        ensure!(identify(obj.cptr) == Some(t), "type {} retyped into {:?}", t, identify(obj.cptr));
    }
    let big =
        userlib::bootinfo::untypeds(env.bi).any(|(_, d)| d.is_device == 0 && d.size_bits as usize > o::GIGA_PAGE_BITS);
    if big {
        let g = env.alloc(o::GIGA_PAGE, 0)?;
        ensure!(identify(g.cptr) == Some(o::GIGA_PAGE), "giga page is {:?}", identify(g.cptr));
    }
    // Several objects in one call, into consecutive slots.
    let u = env.alloc(o::UNTYPED, 12)?.cptr;
    let s = env.slots(4)?;
    ok!(untyped::retype(u, o::ENDPOINT, 0, CNODE, 0, 0, s, 4));
    for i in 0..4 {
        ensure!(identify(s + i) == Some(o::ENDPOINT), "object {} of 4 is {:?}", i, identify(s + i));
    }
    // Into another CNode, named by node_index/node_depth from the root.
    let c = env.alloc(o::CNODE, 4)?.cptr;
    ok!(untyped::retype(u, o::NOTIFICATION, 0, CNODE, c, ROOT_DEPTH, 3, 2));
    let out = env.slot()?;
    ok!(cnode::copy(CNODE, out, ROOT_DEPTH, c, 4, 4, rights::ALL));
    ensure!(identify(out) == Some(o::NOTIFICATION), "retype into a sub-CNode: slot 4 holds {:?}", identify(out));
    Ok(())
}

pub fn retype_errors(env: &mut Env) -> TResult {
    let u = env.alloc(o::UNTYPED, 16)?.cptr;
    let s = env.slot()?;
    let err = expect_err!(untyped::retype(u, o::ASID_POOL, 0, CNODE, 0, 0, s, 1), e::INVALID_ARGUMENT);
    ensure_eq!(err.mrs[0], 0, "InvalidArgument number for a bad type");
    expect_err!(untyped::retype(u, 50, 0, CNODE, 0, 0, s, 1), e::INVALID_ARGUMENT);
    expect_err!(untyped::retype(u, o::CNODE, 0, CNODE, 0, 0, s, 1), e::INVALID_ARGUMENT);
    expect_err!(untyped::retype(u, o::UNTYPED, 3, CNODE, 0, 0, s, 1), e::INVALID_ARGUMENT);
    expect_err!(untyped::retype(u, o::UNTYPED, 64, CNODE, 0, 0, s, 1), e::RANGE_ERROR);
    let err = expect_err!(untyped::retype(u, o::ENDPOINT, 0, CNODE, 0, 0, s, 0), e::RANGE_ERROR);
    ensure_eq!(err.mrs[0], 1, "RangeError min for num_objects");
    expect_err!(untyped::retype(u, o::ENDPOINT, 0, CNODE, 0, 0, s, 257), e::RANGE_ERROR);
    let slots = 1usize << abi::init_cap::ROOT_CNODE_BITS;
    expect_err!(untyped::retype(u, o::ENDPOINT, 0, CNODE, 0, 0, slots, 1), e::RANGE_ERROR);
    expect_err!(untyped::retype(u, o::ENDPOINT, 0, CNODE, 0, 0, slots - 1, 2), e::RANGE_ERROR);
    // Occupied destination.
    expect_err!(untyped::retype(u, o::ENDPOINT, 0, CNODE, 0, 0, abi::init_cap::TCB, 1), e::DELETE_FIRST);
    // The destination CNode is not a CNode: the untyped itself, at depth 0 and through a lookup.
    expect_err!(untyped::retype(u, o::ENDPOINT, 0, u, 0, 0, s, 1), e::FAILED_LOOKUP);
    expect_err!(untyped::retype(u, o::ENDPOINT, 0, CNODE, u, ROOT_DEPTH, 0, 1), e::FAILED_LOOKUP);
    // A depth that ends inside the root's guard.
    let err = expect_err!(untyped::retype(u, o::ENDPOINT, 0, CNODE, s, 12, 0, 1), e::FAILED_LOOKUP);
    ensure_eq!(err.mrs[1], userlib::invoke::lookup_failure::DEPTH_MISMATCH, "lookup failure type (+1)");
    // Wrong invocations on an Untyped, and Retype on a non-Untyped.
    expect_err!(invoke0(u, label::CNODE_COPY, &[0, 0, 0, 0, 0], &[CNODE]), e::ILLEGAL_OPERATION);
    expect_err!(
        invoke0(abi::init_cap::TCB, label::UNTYPED_RETYPE, &[2, 0, 0, 0, s, 1], &[CNODE]),
        e::ILLEGAL_OPERATION
    );
    // Too short a message.
    expect_err!(invoke0(u, label::UNTYPED_RETYPE, &[o::ENDPOINT, 0, 0], &[CNODE]), e::TRUNCATED_MESSAGE);
    expect_err!(invoke0(u, label::UNTYPED_RETYPE, &[o::ENDPOINT, 0, 0, 0, s, 1], &[]), e::TRUNCATED_MESSAGE);
    ensure!(identify(s).is_none(), "a failed retype filled the slot");
    // None of the failures used memory: the whole untyped is still there.
    let many = env.slots(16)?;
    ok!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, many, 16));
    Ok(())
}

pub fn not_enough_memory(env: &mut Env) -> TResult {
    let u = env.alloc(o::UNTYPED, 12)?.cptr;
    let s = env.slots(2)?;
    let err = expect_err!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, s, 2), e::NOT_ENOUGH_MEMORY);
    ensure_eq!(err.mrs[0], 4096, "bytes left reported");
    expect_err!(untyped::retype(u, o::UNTYPED, 13, CNODE, 0, 0, s, 1), e::NOT_ENOUGH_MEMORY);
    ok!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, s, 1));
    let err = expect_err!(untyped::retype(u, o::ENDPOINT, 0, CNODE, 0, 0, s + 1, 1), e::NOT_ENOUGH_MEMORY);
    ensure_eq!(err.mrs[0], 0, "bytes left after filling");
    Ok(())
}

pub fn watermark_and_reuse(env: &mut Env) -> TResult {
    let u = env.alloc(o::UNTYPED, 16)?.cptr;
    let before = object_bytes();
    let s = env.slots(8)?;
    ok!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, s, 4));
    let p0 = ok!(vspace::page_get_address(s));
    for i in 1..4 {
        ensure_eq!(ok!(vspace::page_get_address(s + i)), p0 + i * 4096, "page address");
    }
    ok!(untyped::retype(u, o::TCB, 0, CNODE, 0, 0, s + 4, 1)); // at 0x4000..0x4800
    ok!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, s + 5, 1)); // aligned up to 0x5000
    ensure_eq!(ok!(vspace::page_get_address(s + 5)), p0 + 0x5000, "page after a TCB (watermark aligned up)");
    ok!(untyped::retype(u, o::ENDPOINT, 0, CNODE, 0, 0, s + 6, 1)); // 0x6000
    ok!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, s + 7, 1)); // 0x7000
    ensure_eq!(ok!(vspace::page_get_address(s + 7)), p0 + 0x7000, "page after an endpoint");
    let used = 6 * 4096 + (1 << o::TCB_BITS) + (1 << o::ENDPOINT_BITS);
    ensure_eq!(object_bytes() - before, used, "OBJECT_BYTES growth");
    let whole = env.slot()?;
    let err = expect_err!(untyped::retype(u, o::UNTYPED, 16, CNODE, 0, 0, whole, 1), e::NOT_ENOUGH_MEMORY);
    ensure_eq!(err.mrs[0], 0x8000, "bytes left at the watermark");
    // Revoke: every child goes, the memory comes back.
    ok!(cnode::revoke(CNODE, u, ROOT_DEPTH));
    for i in 0..8 {
        ensure!(identify(s + i).is_none(), "child {} survived the revoke", i);
    }
    ensure_eq!(object_bytes(), before, "OBJECT_BYTES after revoke");
    ok!(untyped::retype(u, o::UNTYPED, 16, CNODE, 0, 0, whole, 1));
    ensure!(identify(whole) == Some(o::UNTYPED), "whole-size child is {:?}", identify(whole));
    // A child Untyped of the same size takes everything: nothing more fits.
    let more = env.slot()?;
    expect_err!(untyped::retype(u, o::ENDPOINT, 0, CNODE, 0, 0, more, 1), e::NOT_ENOUGH_MEMORY);
    ok!(cnode::revoke(CNODE, u, ROOT_DEPTH));
    ensure!(identify(whole).is_none(), "child untyped survived the revoke");
    let pages = env.slots(16)?;
    ok!(untyped::retype(u, o::PAGE_4K, 0, CNODE, 0, 0, pages, 16));
    ensure_eq!(ok!(vspace::page_get_address(pages)), p0, "first page after reuse");
    ensure_eq!(ok!(vspace::page_get_address(pages + 15)), p0 + 15 * 4096, "last page after reuse");
    ok!(cnode::revoke(CNODE, u, ROOT_DEPTH));
    ensure_eq!(object_bytes(), before, "OBJECT_BYTES after the second revoke");
    Ok(())
}

pub fn device_only_frames(env: &mut Env) -> TResult {
    let Some((dev, _)) = userlib::bootinfo::untypeds(env.bi).find(|(_, d)| d.is_device != 0 && d.size_bits >= 12)
    else {
        return Ok(()); // no device memory on this machine
    };
    let s = env.slot()?;
    expect_err!(untyped::retype(dev, o::TCB, 0, CNODE, 0, 0, s, 1), e::INVALID_ARGUMENT);
    expect_err!(untyped::retype(dev, o::CNODE, 2, CNODE, 0, 0, s, 1), e::INVALID_ARGUMENT);
    ensure!(identify(s).is_none(), "device retype filled the slot");
    Ok(())
}

pub fn revoke_reclaims(env: &mut Env) -> TResult {
    let u = env.alloc(o::UNTYPED, 16)?.cptr;
    let before = object_bytes();
    let types =
        [(o::TCB, 0), (o::CNODE, 4), (o::ENDPOINT, 0), (o::NOTIFICATION, 0), (o::PAGE_4K, 0), (o::PAGE_TABLE, 0)];
    let s = env.slots(types.len())?;
    let mut total = 0;
    for (i, (t, bits)) in types.iter().enumerate() {
        ok!(untyped::retype(u, *t, *bits, CNODE, 0, 0, s + i, 1));
        total += 1 << obj_bits(*t, *bits);
    }
    ensure_eq!(object_bytes() - before, total, "OBJECT_BYTES after creating objects");
    // Deleting the only cap of an object destroys it.
    ok!(cnode::delete(CNODE, s, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, s + 1, ROOT_DEPTH));
    let freed = (1 << o::TCB_BITS) + (1 << (4 + o::SLOT_BITS));
    ensure_eq!(object_bytes() - before, total - freed, "OBJECT_BYTES after deleting two objects");
    // A copy keeps the object alive until the last cap goes.
    let copy = env.copy(s + 2)?;
    ok!(cnode::delete(CNODE, s + 2, ROOT_DEPTH));
    ensure_eq!(object_bytes() - before, total - freed, "endpoint freed while a copy remains");
    ok!(cnode::delete(CNODE, copy, ROOT_DEPTH));
    ensure_eq!(object_bytes() - before, total - freed - (1 << o::ENDPOINT_BITS), "endpoint kept after its last cap");
    ok!(cnode::revoke(CNODE, u, ROOT_DEPTH));
    ensure_eq!(object_bytes(), before, "OBJECT_BYTES after revoking the rest");
    // With no children left, seL4 starts the Untyped over from its base.
    let whole = env.slot()?;
    ok!(untyped::retype(u, o::UNTYPED, 16, CNODE, 0, 0, whole, 1));
    Ok(())
}
