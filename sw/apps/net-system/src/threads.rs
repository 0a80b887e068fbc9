//! More threads in a process the root task loaded (the sync TCP server's, one per connection):
//! each gets its own TCB in the process's CSpace and VSpace, on its hart and priority, with the
//! process's fault endpoint, a stack below a guard page and an IPC buffer; it enters the program
//! at its entry point with a0 = its number (1..=n; the first thread gets its ProcessInfo
//! address, which is far above), left suspended until [`resume`].
use abi::bootinfo::process::FIRST_GIVEN;
use abi::{error, init_cap as ic, object};
use userlib::invoke::{cnode_cap_data, rights, vm_attr};
use userlib::process::system::{Member, RootAlloc};
use userlib::process::{Error, NO_FAULT};
use userlib::tcb::{self, UserContext};
use userlib::vspace;

const PAGE: usize = 4096;

/// Where thread `i`'s stack and IPC buffer go: stacks of `stack_pages` pages, each above a
/// guard page, from `stacks` on, `stride` apart; IPC buffers one page each from `ipc`.
#[derive(Clone, Copy)]
pub struct Layout {
    pub stacks: usize,
    pub stride: usize,
    pub stack_pages: usize,
    pub ipc: usize,
}

impl Layout {
    pub fn stack_top(&self, i: usize) -> usize {
        self.stacks + i * self.stride
    }

    pub fn ipc_buffer(&self, i: usize) -> usize {
        self.ipc + i * PAGE
    }
}

/// Map `frame` at `va` of the process's VSpace `vs`, making the page tables it lacks.
fn map_into(alloc: &mut RootAlloc, frame: usize, vs: usize, va: usize) -> Result<(), Error> {
    for _ in 0..3 {
        match vspace::page_map(frame, vs, va, rights::READ_WRITE, vm_attr::EXECUTE_NEVER) {
            Err(e) if e.code == error::FAILED_LOOKUP => {
                let pt = alloc.object(object::PAGE_TABLE, 0)?;
                vspace::page_table_map(pt, vs, va, vm_attr::DEFAULT).map_err(|e| Error::Kernel("PageTable_Map", e))?;
            }
            r => return r.map_err(|e| Error::Kernel("Page_Map", e)),
        }
    }
    Err(Error::Kernel("Page_Map", userlib::Error { code: error::FAILED_LOOKUP, mrs: [0; 4] }))
}

/// Make threads 1..=tcbs.len() of `m` (suspended); their TCB caps (ours) go into `tcbs`.
pub fn make(alloc: &mut RootAlloc, m: &Member, tcbs: &mut [usize], l: &Layout) -> Result<(), Error> {
    let kernel = |what: &'static str| move |e: userlib::Error| Error::Kernel(what, e);
    let (vs, cn) = (m.process.vspace, m.process.cnode);
    // As the loader made it: a slot number of the process is a cptr.
    let guard = cnode_cap_data(0, 64 - m.record.cnode_bits as usize);
    let fault = if m.record.fault == NO_FAULT { 0 } else { FIRST_GIVEN + m.record.fault as usize };
    let prio = m.record.priority as usize;
    for (k, slot) in tcbs.iter_mut().enumerate() {
        let i = k + 1;
        let t = alloc.object(object::TCB, 0)?;
        *slot = t;
        for p in 1..=l.stack_pages {
            let f = alloc.object(object::PAGE_4K, 0)?;
            map_into(alloc, f, vs, l.stack_top(i) - p * PAGE)?;
        }
        let ipc = alloc.object(object::PAGE_4K, 0)?;
        map_into(alloc, ipc, vs, l.ipc_buffer(i))?;
        tcb::configure(t, fault, cn, guard, vs, 0, l.ipc_buffer(i), ipc).map_err(kernel("TCB_Configure"))?;
        tcb::set_sched_params(t, ic::TCB, prio, prio).map_err(kernel("TCB_SetSchedParams"))?;
        tcb::set_affinity(t, m.hart).map_err(kernel("TCB_SetAffinity"))?;
        let mut ctx = UserContext::default();
        ctx.regs[UserContext::PC] = m.process.entry;
        ctx.regs[UserContext::SP] = l.stack_top(i);
        ctx.regs[UserContext::TP] = l.ipc_buffer(i); // where userlib keeps the IPC buffer
        ctx.set_a(0, i);
        tcb::write_registers(t, false, 0, abi::regs::COUNT, &ctx).map_err(kernel("TCB_WriteRegisters"))?;
    }
    Ok(())
}

pub fn resume(tcbs: &[usize]) -> Result<(), Error> {
    for &t in tcbs {
        tcb::resume(t).map_err(|e| Error::Kernel("TCB_Resume", e))?;
    }
    Ok(())
}
