//! Virtual memory: frames, page tables, ASID pools, a second address space.
use crate::env::{identify, sget, sset, Env, TResult, ThreadCfg, CNODE, PAGE, ROOT_DEPTH, VSPACE};
use abi::{error as e, init_cap as ic, label, object as o, MessageInfo};
use userlib::invoke::{invoke0, rights, vm_attr};
use userlib::{cnode, syscall, untyped, vspace};

fn write_words(va: usize, seed: usize, words: usize) {
    for i in 0..words {
        // SAFETY: `va` is a page this test mapped read-write.
        unsafe { core::ptr::write_volatile((va as *mut usize).add(i), seed ^ (i * 0x9e37_79b9)) };
    }
}

fn check_words(va: usize, seed: usize, words: usize) -> TResult {
    for i in 0..words {
        // SAFETY: `va` is a page this test mapped.
        let v = unsafe { core::ptr::read_volatile((va as *const usize).add(i)) };
        ensure_eq!(v, seed ^ (i * 0x9e37_79b9), "word read back through the mapping");
    }
    Ok(())
}

fn read_word(va: usize) -> usize {
    // SAFETY: the caller maps `va`.
    unsafe { core::ptr::read_volatile(va as *const usize) }
}

pub fn map_read_write(env: &mut Env) -> TResult {
    let va = env.va(1);
    let f = env.new_page_at(VSPACE, va)?;
    check_words(va, 0, 0)?;
    ensure_eq!(read_word(va), 0, "a new frame is zeroed");
    write_words(va, 0x1234, PAGE / 8);
    check_words(va, 0x1234, PAGE / 8)?;
    // A copy of the cap maps the same memory elsewhere.
    let alias = env.copy(f.cptr)?;
    let va2 = env.va(1);
    env.map_frame(alias, VSPACE, va2, rights::READ)?;
    check_words(va2, 0x1234, PAGE / 8)?;
    write_words(va, 0x5678, 16);
    check_words(va2, 0x5678, 16)?;
    ok!(vspace::page_unmap(alias));
    ok!(vspace::page_unmap(alias)); // unmapping an unmapped frame: nothing to do
                                    // A 2 MiB page.
    let region = env.va_region(512);
    let m = env.alloc(o::MEGA_PAGE, 0)?;
    env.map_frame(m.cptr, VSPACE, region, rights::READ_WRITE)?;
    let last = region + (1 << o::MEGA_PAGE_BITS) - 8;
    // SAFETY: inside the mega page just mapped.
    unsafe { core::ptr::write_volatile(last as *mut usize, 0xfeed) };
    ensure_eq!(read_word(last), 0xfeed, "last word of a mega page");
    Ok(())
}

pub fn get_address(env: &mut Env) -> TResult {
    let f = env.alloc(o::PAGE_4K, 0)?;
    ensure_eq!(ok!(vspace::page_get_address(f.cptr)), f.paddr, "GetAddress of an unmapped frame vs its Untyped");
    let va = env.va(1);
    env.map_frame(f.cptr, VSPACE, va, rights::READ_WRITE)?;
    ensure_eq!(ok!(vspace::page_get_address(f.cptr)), f.paddr, "GetAddress of the mapped frame");
    let m = env.alloc(o::MEGA_PAGE, 0)?;
    let pa = ok!(vspace::page_get_address(m.cptr));
    ensure_eq!(pa, m.paddr, "GetAddress of a mega page");
    ensure_eq!(pa & ((1 << o::MEGA_PAGE_BITS) - 1), 0, "mega page alignment");
    // A frame carved from a known Untyped sits at its base.
    let u = env.alloc(o::UNTYPED, 12)?;
    let s = env.slot()?;
    ok!(untyped::retype(u.cptr, o::PAGE_4K, 0, CNODE, 0, 0, s, 1));
    ensure_eq!(ok!(vspace::page_get_address(s)), u.paddr, "frame at the base of its Untyped");
    expect_err!(vspace::page_get_address(u.cptr), e::ILLEGAL_OPERATION);
    Ok(())
}

pub fn map_errors(env: &mut Env) -> TResult {
    let f = env.alloc_cap(o::PAGE_4K)?;
    let va = env.va(1);
    expect_err!(vspace::page_map(f, VSPACE, va + 8, rights::READ_WRITE, 0), e::ALIGNMENT_ERROR);
    expect_err!(vspace::page_map(f, VSPACE, abi::layout::USER_TOP, rights::READ_WRITE, 0), e::INVALID_ARGUMENT);
    let ep = env.alloc_cap(o::ENDPOINT)?;
    expect_err!(vspace::page_map(f, ep, va, rights::READ_WRITE, 0), e::INVALID_CAPABILITY);
    let no_asid = env.alloc_cap(o::PAGE_TABLE)?;
    expect_err!(vspace::page_map(f, no_asid, va, rights::READ_WRITE, 0), e::INVALID_CAPABILITY);
    expect_err!(invoke0(f, label::RISCV_PAGE_MAP, &[va, rights::READ_WRITE, 0], &[]), e::TRUNCATED_MESSAGE);
    env.map_frame(f, VSPACE, va, rights::READ_WRITE)?;
    // Remapping at the same address (new rights) is allowed; elsewhere it is not.
    ok!(vspace::page_map(f, VSPACE, va, rights::READ, vm_attr::EXECUTE_NEVER));
    // (va2 gets its page tables from a frame mapped there first and removed again.)
    let va2 = env.va(1);
    let tmp = env.alloc_cap(o::PAGE_4K)?;
    env.map_frame(tmp, VSPACE, va2, rights::READ_WRITE)?;
    ok!(vspace::page_unmap(tmp));
    expect_err!(vspace::page_map(f, VSPACE, va2, rights::READ_WRITE, 0), e::INVALID_ARGUMENT);
    // Another frame onto an occupied address.
    let g = env.alloc_cap(o::PAGE_4K)?;
    expect_err!(vspace::page_map(g, VSPACE, va, rights::READ_WRITE, 0), e::DELETE_FIRST);
    // No page table for a fresh 2 MiB region.
    let region = env.va_region(1);
    expect_err!(vspace::page_map(g, VSPACE, region, rights::READ_WRITE, 0), e::FAILED_LOOKUP);
    // Page-table errors.
    let pt = env.alloc_cap(o::PAGE_TABLE)?;
    expect_err!(vspace::page_table_map(pt, VSPACE, abi::layout::USER_TOP, 0), e::INVALID_ARGUMENT);
    expect_err!(vspace::page_table_map(pt, VSPACE, va, 0), e::DELETE_FIRST);
    expect_err!(vspace::page_table_map(pt, ep, region, 0), e::INVALID_CAPABILITY);
    ok!(vspace::page_table_map(pt, VSPACE, region, 0));
    let region2 = env.va_region(1);
    expect_err!(vspace::page_table_map(pt, VSPACE, region2, 0), e::INVALID_CAPABILITY);
    expect_err!(invoke0(f, label::RISCV_PAGE_TABLE_MAP, &[region2, 0], &[VSPACE]), e::ILLEGAL_OPERATION);
    Ok(())
}

pub fn page_table_map_unmap(env: &mut Env) -> TResult {
    // Make sure the 1 GiB table above our regions exists, then use a fresh 2 MiB region.
    let _ = env.new_pages(1)?;
    let region = env.va_region(2);
    let f = env.alloc_cap(o::PAGE_4K)?;
    expect_err!(vspace::page_map(f, VSPACE, region, rights::READ_WRITE, 0), e::FAILED_LOOKUP);
    let pt = env.alloc_cap(o::PAGE_TABLE)?;
    ok!(vspace::page_table_map(pt, VSPACE, region, 0));
    ok!(vspace::page_map(f, VSPACE, region, rights::READ_WRITE, 0));
    write_words(region, 0xabc, 64);
    check_words(region, 0xabc, 64)?;
    let pt2 = env.alloc_cap(o::PAGE_TABLE)?;
    expect_err!(vspace::page_table_map(pt2, VSPACE, region, 0), e::DELETE_FIRST);
    ok!(vspace::page_table_unmap(pt));
    let f2 = env.alloc_cap(o::PAGE_4K)?;
    expect_err!(vspace::page_map(f2, VSPACE, region + PAGE, rights::READ_WRITE, 0), e::FAILED_LOOKUP);
    ok!(vspace::page_table_unmap(pt)); // unmapped already: nothing to do
    ok!(vspace::page_table_map(pt, VSPACE, region, 0));
    ok!(vspace::page_map(f2, VSPACE, region + PAGE, rights::READ_WRITE, 0));
    write_words(region + PAGE, 0xdef, 64);
    check_words(region + PAGE, 0xdef, 64)?;
    ensure!(identify(pt) == Some(o::PAGE_TABLE), "page table cap is {:?}", identify(pt));
    Ok(())
}

pub fn asid_pool(env: &mut Env) -> TResult {
    let u = env.alloc(o::UNTYPED, o::ASID_POOL_BITS)?.cptr;
    let p = env.slot()?;
    ok!(vspace::asid_control_make_pool(ic::ASID_CONTROL, u, CNODE, p, ROOT_DEPTH));
    ensure!(identify(p) == Some(o::ASID_POOL), "new pool is {:?}", identify(p));
    let p2 = env.slot()?;
    expect_err!(vspace::asid_control_make_pool(ic::ASID_CONTROL, u, CNODE, p2, ROOT_DEPTH), e::REVOKE_FIRST);
    let big = env.alloc(o::UNTYPED, o::ASID_POOL_BITS + 1)?.cptr;
    expect_err!(vspace::asid_control_make_pool(ic::ASID_CONTROL, big, CNODE, p2, ROOT_DEPTH), e::INVALID_CAPABILITY);
    let u3 = env.alloc(o::UNTYPED, o::ASID_POOL_BITS)?.cptr;
    expect_err!(vspace::asid_control_make_pool(ic::ASID_CONTROL, u3, CNODE, p, ROOT_DEPTH), e::DELETE_FIRST);
    let ep = env.alloc_cap(o::ENDPOINT)?;
    expect_err!(vspace::asid_control_make_pool(ic::ASID_CONTROL, ep, CNODE, p2, ROOT_DEPTH), e::INVALID_CAPABILITY);
    // Assign a new top-level table and use it.
    let vs = env.alloc_cap(o::PAGE_TABLE)?;
    ok!(vspace::asid_pool_assign(p, vs));
    expect_err!(vspace::asid_pool_assign(p, vs), e::INVALID_CAPABILITY);
    expect_err!(vspace::asid_pool_assign(p, ep), e::INVALID_CAPABILITY);
    let f = env.alloc_cap(o::PAGE_4K)?;
    let va = env.va(1);
    env.map_frame(f, vs, va, rights::READ_WRITE)?;
    ensure!(ok!(vspace::page_get_address(f)) != 0, "frame mapped in the new VSpace");
    // Mapped in one VSpace, it cannot be mapped into another.
    expect_err!(vspace::page_map(f, VSPACE, va, rights::READ_WRITE, 0), e::INVALID_CAPABILITY);
    Ok(())
}

/// In the other address space: answers each call with [the word at shared[1]'s address,
/// MR0 + 1, its hart], and counts calls in shared[2] (the image's data is shared memory).
extern "C" fn other_space_server(ep: usize) -> ! {
    let (_, _, mut mrs) = syscall::recv(ep);
    loop {
        let v = read_word(sget(1));
        crate::env::sadd(2, 1);
        (_, _, mrs) = syscall::reply_recv(ep, MessageInfo::new(0, 0, 0, 3), [v, mrs[0] + 1, crate::env::hart(), 0]);
    }
}

/// A second VSpace running the same image: the image frames (copies of the caps) at the
/// same addresses, its own stack and IPC buffer, and a page that differs from ours at one
/// address.
pub fn new_address_space(env: &mut Env) -> TResult {
    let vs = env.image_vspace()?;
    // Address x: frame A in our space, frame B in the new one.
    let x = env.va(1);
    env.new_page_at(VSPACE, x)?;
    // SAFETY: mapped just above.
    unsafe { core::ptr::write_volatile(x as *mut usize, 0xaaaa) };
    let b = env.alloc_cap(o::PAGE_4K)?;
    let b_here = env.copy(b)?;
    let xb = env.va(1);
    env.map_frame(b_here, VSPACE, xb, rights::READ_WRITE)?;
    // SAFETY: mapped just above.
    unsafe { core::ptr::write_volatile(xb as *mut usize, 0xbbbb) };
    env.map_frame(b, vs, x, rights::READ_WRITE)?;
    sset(1, x);
    sset(2, 0);
    let ep = env.alloc_cap(o::ENDPOINT)?;
    let mut affinities = [env.bi.node_id, usize::MAX];
    if let Some(o) = env.other_hart() {
        affinities[1] = o;
    }
    for a in affinities.into_iter().filter(|a| *a != usize::MAX) {
        let cfg = ThreadCfg { vspace: vs, affinity: Some(a), ..ThreadCfg::default() };
        let t = env.spawn_cfg(other_space_server as *const () as usize, ep, cfg)?;
        for i in 0..5 {
            let (_, info, mrs) = syscall::call(ep, MessageInfo::new(0, 0, 0, 1), [i, 0, 0, 0]);
            ensure_eq!(info.length, 3, "reply length from the other address space");
            ensure_eq!(mrs[0], 0xbbbb, "word at x in the other address space");
            ensure_eq!(mrs[1], i + 1, "reply MR1");
            ensure_eq!(mrs[2], env.bi.hart_ids[a], "hart of the other-space server");
        }
        ok!(userlib::tcb::suspend(t.tcb));
    }
    ensure_eq!(read_word(x), 0xaaaa, "word at x in our address space");
    ensure!(sget(2) >= 5, "calls counted through shared image memory: {}", sget(2));
    Ok(())
}

// The thread of `asid_reuse`'s spaces: the whole program is this page, so a space needs only
// it, the page after it (where the thread reads), a stack and an IPC buffer. It answers each
// call on the endpoint in a0 with the word at the start of the next page.
core::arch::global_asm!(
    ".pushsection .text.kt_asid_probe, \"ax\", @progbits",
    ".balign 4096",
    ".globl kt_asid_probe",
    "kt_asid_probe:",
    "   auipc t1, 1",
    "   mv t0, a0",
    "   li a7, {recv}",
    "   ecall",
    "1: ld a2, 0(t1)",
    "   mv a0, t0",
    "   li a1, 1",
    "   li a7, {reply_recv}",
    "   ecall",
    "   j 1b",
    ".popsection",
    recv = const abi::syscall::RECV,
    reply_recv = const abi::syscall::REPLY_RECV,
);

extern "C" {
    fn kt_asid_probe();
}

/// An ASID freed by deleting its VSpace and given to the next one: the new space sees its own
/// page at an address where the old one had another, on our hart and on a second one. With
/// hardware ASIDs a TLB entry of the old space carries the tag the new space runs under, so only
/// the kernel's flush keeps it out (QEMU's TLB ignores ASIDs: this bites on the RTL). All three
/// spaces come from a fresh pool, so each gets the same ASID, the pool's first free one. A
/// frame cap still recording the deleted space's mapping must not unmap the new space's page.
/// The spaces hold a few pages each (not the image), so this stays short on the RTL.
pub fn asid_reuse(env: &mut Env) -> TResult {
    const SEEDS: [usize; 3] = [0xaaaa, 0xbbbb, 0xcccc];
    let code = kt_asid_probe as *const () as usize;
    ensure!(code.is_multiple_of(PAGE), "kt_asid_probe at {:#x} is not page-aligned", code);
    let x = code + PAGE;
    let u = env.alloc(o::UNTYPED, o::ASID_POOL_BITS)?.cptr;
    let pool = env.slot()?;
    ok!(vspace::asid_control_make_pool(ic::ASID_CONTROL, u, CNODE, pool, ROOT_DEPTH));
    let ep = env.alloc_cap(o::ENDPOINT)?;
    // Each space's page at x, written through our own mapping of it.
    let mut pages = [0; SEEDS.len()];
    for (p, seed) in pages.iter_mut().zip(SEEDS) {
        *p = env.alloc_cap(o::PAGE_4K)?;
        let here = env.copy(*p)?;
        let va = env.va(1);
        env.map_frame(here, VSPACE, va, rights::READ_WRITE)?;
        // SAFETY: mapped just above.
        unsafe { core::ptr::write_volatile(va as *mut usize, seed) };
    }
    let harts = [Some(env.bi.node_id), env.other_hart()];
    for (round, seed) in SEEDS.into_iter().enumerate() {
        // Everything of this round goes at its end, and its slots with it.
        let first = env.slots(0)?;
        let vs = env.alloc_cap(o::PAGE_TABLE)?;
        ok!(vspace::asid_pool_assign(pool, vs));
        let text = env.image_frame(code)?;
        env.map_frame(text, vs, code, rights::READ)?;
        env.map_frame(pages[round], vs, x, rights::READ_WRITE)?;
        for a in harts.into_iter().flatten() {
            let cfg = ThreadCfg { vspace: vs, affinity: Some(a), ..ThreadCfg::default() };
            let t = env.spawn_cfg(code, ep, cfg)?;
            for i in 0..3 {
                let (_, info, mrs) = syscall::call(ep, MessageInfo::new(0, 0, 0, 1), [i, 0, 0, 0]);
                ensure!(info.length == 1, "reply length {} from space {}", info.length, round);
                ensure!(
                    mrs[0] == seed,
                    "word at x in space {} on hart {}: {:#x}, expected {:#x} (an old space's translation?)",
                    round,
                    a,
                    mrs[0],
                    seed
                );
            }
            // The deleted space's page still says it is mapped at x under this ASID:
            // unmapping it leaves the new space's page where it is.
            if round > 0 && a == env.bi.node_id {
                ok!(vspace::page_unmap(pages[round - 1]));
                let (_, _, mrs) = syscall::call(ep, MessageInfo::new(0, 0, 0, 1), [0, 0, 0, 0]);
                ensure!(mrs[0] == seed, "word at x in space {} after a stale unmap: {:#x}", round, mrs[0]);
            }
            ok!(userlib::tcb::suspend(t.tcb));
        }
        // Delete the space (its copies in the threads go with the revoke; the last cap frees
        // the ASID), then the rest of the round.
        ok!(cnode::revoke(CNODE, vs, ROOT_DEPTH));
        let last = env.slots(0)?;
        for s in first..last {
            ok!(cnode::delete(CNODE, s, ROOT_DEPTH));
        }
        env.release_slots(first, last - first)?;
    }
    // The pool's ASID is free again: a page table can take it.
    let vs = env.alloc_cap(o::PAGE_TABLE)?;
    ok!(vspace::asid_pool_assign(pool, vs));
    Ok(())
}
