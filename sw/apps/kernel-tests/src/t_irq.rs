//! IRQControl and IRQHandler.
use crate::env::{identify, Env, TResult, CNODE, ROOT_DEPTH};
use abi::{error as e, init_cap as ic, object as o};
use userlib::{cnode, irq};

/// An interrupt line nothing in the kernel uses on QEMU virt (virtio-mmio slot 7); on a machine
/// with fewer lines the highest one RangeError reports.
const IRQ: usize = 7;

pub fn control_and_handler(env: &mut Env) -> TResult {
    let s = env.slot()?;
    let err = expect_err!(irq::control_get(ic::IRQ_CONTROL, 1 << 20, CNODE, s, ROOT_DEPTH), e::RANGE_ERROR);
    let max = err.mrs[1];
    ensure!(max > 0 && max < 1 << 20, "RangeError max {:#x}", max);
    let line = IRQ.min(max);
    ok!(irq::control_get(ic::IRQ_CONTROL, line, CNODE, s, ROOT_DEPTH));
    ensure!(identify(s) == Some(o::IRQ_HANDLER), "handler slot holds {:?}", identify(s));
    let s2 = env.slot()?;
    expect_err!(irq::control_get(ic::IRQ_CONTROL, line, CNODE, s2, ROOT_DEPTH), e::REVOKE_FIRST);
    let other = if line > 1 { line - 1 } else { line + 1 };
    expect_err!(irq::control_get(ic::IRQ_CONTROL, other, CNODE, s, ROOT_DEPTH), e::DELETE_FIRST);
    let n = env.alloc_cap(o::NOTIFICATION)?;
    let ep = env.alloc_cap(o::ENDPOINT)?;
    expect_any_err!(irq::handler_set_notification(s, ep), e::INVALID_CAPABILITY, e::ILLEGAL_OPERATION);
    ok!(irq::handler_set_notification(s, n));
    ok!(irq::handler_ack(s));
    ok!(irq::handler_clear(s));
    // Copies of the handler cap work too; deleting every copy frees the line.
    let c = env.copy(s)?;
    ok!(irq::handler_set_notification(c, n));
    ok!(cnode::delete(CNODE, c, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, s, ROOT_DEPTH));
    ok!(irq::control_get(ic::IRQ_CONTROL, line, CNODE, s2, ROOT_DEPTH));
    ok!(cnode::delete(CNODE, s2, ROOT_DEPTH));
    Ok(())
}
