//! IRQ control and handler invocations.
use crate::invoke::{invoke0, Result};
use abi::label;

/// seL4_IRQControl_Get: a handler cap for `irq` into `index`/`depth` of `root`.
pub fn control_get(service: usize, irq: usize, root: usize, index: usize, depth: usize) -> Result<()> {
    invoke0(service, label::IRQ_ISSUE_IRQ_HANDLER, &[irq, index, depth], &[root])
}

pub fn handler_ack(service: usize) -> Result<()> {
    invoke0(service, label::IRQ_ACK_IRQ, &[], &[])
}

pub fn handler_set_notification(service: usize, notification: usize) -> Result<()> {
    invoke0(service, label::IRQ_SET_IRQ_HANDLER, &[], &[notification])
}

pub fn handler_clear(service: usize) -> Result<()> {
    invoke0(service, label::IRQ_CLEAR_IRQ_HANDLER, &[], &[])
}
