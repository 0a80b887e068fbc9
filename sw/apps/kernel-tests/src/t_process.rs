//! Processes started from boot modules (`userlib::process`): the demo `hello-proc` from the
//! image manifest runs on another hart in its own VSpace and CSpace, talks over the endpoint
//! it is given, cannot read the root task's memory, and is torn down with every object byte
//! back; malformed modules are refused before anything is made.
use crate::env::{fail, Env, TResult, CNODE, PAGE, ROOT_DEPTH, ROOT_TCB, VSPACE};
use abi::bootinfo::SlotRegion;
use abi::{fault, init_cap as ic, object as o, stat, MessageInfo};
use userlib::process::{self, elf::ElfError, BootModule, Give, Resources, Spec, CAP_ENDPOINT, MAX_CAPS, NO_FAULT};
use userlib::{cnode, syscall};

const NAME: &str = "hello-proc";
/// Room for the demo's objects (it needs about 60 KiB) and the caps to them.
const UNTYPED_BITS: usize = 20;
const SLOTS: usize = 64;
/// hello-proc's message labels (sw/apps/hello-proc/src/main.rs).
const HELLO: usize = 1;
const ANSWER: usize = 2;
const READ_ROOT_MEMORY: usize = 3;

fn bytes() -> usize {
    syscall::debug_stat(stat::OBJECT_BYTES)
}

/// The module, and the boot info's list agrees with the table about it.
fn module(env: &Env) -> Result<BootModule, crate::env::Fail> {
    let m = process::boot_module(env.bi, NAME).ok_or_else(|| fail(format_args!("no boot module '{}'", NAME)))?;
    let mods = &env.bi.modules;
    let listed = mods.list[..mods.count.min(mods.list.len())].iter().find(|d| d.name() == NAME);
    let Some(d) = listed else { return Err(fail(format_args!("BootInfo.modules does not list '{}'", NAME))) };
    ensure_eq!(d.vaddr, m.bytes.as_ptr() as usize, "module address in BootInfo");
    ensure_eq!(d.size, m.bytes.len(), "module size in BootInfo");
    ensure_eq!(d.frames.end - d.frames.start, m.bytes.len().div_ceil(PAGE), "module frame caps");
    ensure!(syscall::debug_cap_identify(d.frames.start) == Some(o::PAGE_4K), "module frame cap is not a frame");
    Ok(m)
}

/// Caller-side resources for one process: a fresh Untyped, slots and a scratch address.
fn resources(env: &mut Env, bits: usize) -> Result<Resources, crate::env::Fail> {
    let ut = env.alloc(o::UNTYPED, bits)?.cptr;
    let first = env.slots(SLOTS)?;
    Ok(Resources {
        untyped: ut,
        slots: SlotRegion { start: first, end: first + SLOTS },
        cnode: CNODE,
        vspace: VSPACE,
        asid_pool: ic::ASID_POOL,
        authority: ROOT_TCB,
        // Its own 2 MiB region: the page table the loader adds for it belongs to the process.
        scratch: env.va_region(1),
    })
}

fn delete(cap: usize) -> TResult {
    cnode::delete(CNODE, cap, ROOT_DEPTH).map_err(|e| fail(format_args!("CNode_Delete({}): {}", cap, e)))
}

/// The first message on either endpoint (their badges tell them apart), polling for a while.
fn recv_either(a: usize, b: usize) -> Result<syscall::SysRet, crate::env::Fail> {
    for _ in 0..1_000_000 {
        for ep in [a, b] {
            let r = syscall::nb_recv(ep);
            if r.0 != 0 || r.1.label != 0 {
                return Ok(r);
            }
        }
        syscall::yield_now();
    }
    Err(fail(format_args!("no message from the process")))
}

/// The suite's one entry: malformed modules first (any machine), then the demo (two harts).
pub fn start_from_module(env: &mut Env) -> TResult {
    malformed_module_refused(env)?;
    start_hello(env)
}

fn start_hello(env: &mut Env) -> TResult {
    let other = env.need_other_hart()?;
    let m = module(env)?;
    let rec = m.record;
    ensure!(rec.fault != NO_FAULT, "the manifest gives hello-proc no fault endpoint");
    // Memory of ours it must not reach: a page with a secret, mapped only here.
    let probe = env.new_pages(1)?;
    // SAFETY: mapped just above.
    unsafe { core::ptr::write_volatile(probe as *mut usize, 0x5ec2e7) };

    let before = bytes();
    // The system's named objects its record mentions (endpoints here), one each.
    let mut objects = [0usize; MAX_CAPS];
    for c in rec.caps() {
        ensure!(c.kind == CAP_ENDPOINT && (c.object as usize) < MAX_CAPS, "unexpected cap in the manifest: {:?}", c);
        if objects[c.object as usize] == 0 {
            objects[c.object as usize] = env.alloc_cap(o::ENDPOINT)?;
        }
    }
    let mut give = [Give::default(); MAX_CAPS];
    let n = process::given_caps(&rec, &objects, &mut give).map_err(|e| fail(format_args!("{:?}", e)))?;
    let (hello_ep, hello_badge) = (objects[rec.caps()[0].object as usize], rec.caps()[0].badge as usize);
    let fault_spec = rec.caps()[rec.fault as usize];
    let (fault_ep, fault_badge) = (objects[fault_spec.object as usize], fault_spec.badge as usize);
    // The manifest's hart, unless that is ours (the test wants another one).
    let harts = userlib::bootinfo::harts(env.bi);
    let hart =
        if (rec.hart as usize) < harts && rec.hart as usize != env.bi.node_id { rec.hart as usize } else { other };
    let spec = Spec {
        name: m.name,
        hart,
        priority: rec.priority as usize,
        stack_pages: rec.stack_pages as usize,
        cnode_bits: rec.cnode_bits as usize,
        caps: &give[..n],
        fault: Some(rec.fault as usize),
        shared: &[],
    };
    let res = resources(env, UNTYPED_BITS)?;
    let p = process::start(m.bytes, &spec, &res).map_err(|e| fail(format_args!("process::start: {:?}", e)))?;
    ensure!(bytes() > before, "starting a process made no objects");

    // HELLO: it runs on the chosen hart with its ProcessInfo.
    let (badge, info, mrs) = syscall::recv(hello_ep);
    ensure_eq!(info.label, HELLO, "first message label");
    ensure_eq!(badge, hello_badge, "badge of the endpoint the manifest gave it");
    ensure_eq!(mrs[0], env.bi.hart_ids[hart], "hart id it runs on");
    ensure_eq!(mrs[1], hart, "hart index in its ProcessInfo");
    ensure_eq!(mrs[2], spec.priority, "priority in its ProcessInfo");
    ensure_eq!(mrs[3], 1, "ProcessInfo magic");
    let challenge = 0x1234_5678 ^ before;
    syscall::reply(MessageInfo::new(0, 0, 0, 2), [challenge, probe, 0, 0]);
    let (_, info, mrs) = syscall::recv(hello_ep);
    ensure_eq!(info.label, ANSWER, "second message label");
    ensure_eq!(mrs[0], challenge + 1, "answer to the challenge");
    syscall::reply(MessageInfo::new(0, 0, 0, 0), [0; 4]);

    // Its read of our page faults: the page is not in its VSpace. (Both endpoints are polled:
    // a read that worked would come as a message, and must fail the test, not hang it.)
    let (badge, info, mrs) = recv_either(hello_ep, fault_ep)?;
    ensure!(info.label != READ_ROOT_MEMORY, "it read the root's memory: {:#x}", mrs[0]);
    ensure_eq!(badge, fault_badge, "fault endpoint badge");
    ensure_eq!(info.label, fault::VM_FAULT, "fault label");
    ensure_eq!(mrs[1], probe, "fault address");

    // Tear down: every object goes, its slots are empty again, the bytes are back.
    let used = p.used;
    p.destroy().map_err(|e| fail(format_args!("destroy: {:?}", e)))?;
    for s in used.start..used.end {
        ensure!(syscall::debug_cap_identify(s).is_none(), "slot {} still holds a cap after destroy", s);
    }
    delete(res.untyped)?;
    for &ep in objects.iter().filter(|&&c| c != 0) {
        delete(ep)?;
    }
    ensure_eq!(bytes(), before, "object bytes after tearing the process down");
    Ok(())
}

fn malformed_module_refused(env: &mut Env) -> TResult {
    let m = module(env)?;
    let res = resources(env, 16)?;
    // 8 KiB: a VSpace and a CNode fit, the TCB does not.
    let small = resources(env, 13)?;
    let before = bytes();
    let spec = Spec {
        name: "bad",
        hart: env.bi.node_id,
        priority: 10,
        stack_pages: 1,
        cnode_bits: 6,
        caps: &[],
        fault: None,
        shared: &[],
    };
    let cases: [(&str, &[u8], ElfError); 4] = [
        ("empty", &[], ElfError::Truncated),
        ("truncated header", &m.bytes[..40], ElfError::Truncated),
        ("no program headers", &m.bytes[..64], ElfError::Truncated),
        ("last segment past the module end", &m.bytes[..m.bytes.len() - 1], ElfError::SegmentPastEnd(0)),
    ];
    for (what, bytes_, want) in cases {
        match process::start(bytes_, &spec, &res) {
            Err(process::Error::Elf(e))
                if e == want || matches!((e, want), (ElfError::SegmentPastEnd(_), ElfError::SegmentPastEnd(_))) => {}
            Err(e) => return Err(fail(format_args!("{}: {:?}, expected {:?}", what, e, want))),
            Ok(_) => return Err(fail(format_args!("{}: a malformed module was started", what))),
        }
    }
    // A record that names a fault endpoint it does not give.
    let bad = Spec { fault: Some(0), ..spec };
    ensure!(
        matches!(process::start(m.bytes, &bad, &res), Err(process::Error::BadSpec(_))),
        "fault index past the caps accepted"
    );
    // A good module that does not fit its Untyped fails half-way: what was made goes again.
    let spec_ok = Spec { name: NAME, ..spec };
    match process::start(m.bytes, &spec_ok, &small) {
        Err(process::Error::OutOfMemory) => {}
        Err(e) => return Err(fail(format_args!("8 KiB for a process: {:?}, expected OutOfMemory", e))),
        Ok(_) => return Err(fail(format_args!("a process started from 8 KiB"))),
    }
    ensure_eq!(bytes(), before, "object bytes after refused starts");
    for s in (res.slots.start..res.slots.end).chain(small.slots.start..small.slots.end) {
        ensure!(syscall::debug_cap_identify(s).is_none(), "slot {} used by a refused start", s);
    }
    delete(small.untyped)?;
    delete(res.untyped)
}
