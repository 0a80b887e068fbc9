//! Endpoint IPC in the libsel4 style (MRs staged with `ipc::set_mr`). Thin names over
//! [`crate::ipc`]; the register-only forms are in [`crate::syscall`].
pub use crate::ipc::{call, nb_recv, nb_send, recv, reply, reply_recv, send};
use abi::MessageInfo;

/// Send `mrs` (any length up to 120) with `caps` as extra caps.
pub fn send_msg(ep: usize, label: usize, mrs: &[usize], caps: &[usize]) {
    let info = stage(label, mrs, caps);
    crate::ipc::send(ep, info);
}

/// Call with `mrs` and `caps`; returns (badge, reply info); reply MRs via `ipc::get_mr`.
pub fn call_msg(ep: usize, label: usize, mrs: &[usize], caps: &[usize]) -> (usize, MessageInfo) {
    let info = stage(label, mrs, caps);
    crate::ipc::call(ep, info)
}

/// Stage a message in this thread's IPC buffer and build its info.
pub fn stage(label: usize, mrs: &[usize], caps: &[usize]) -> MessageInfo {
    crate::ipc::with_buffer(|b| {
        crate::ipc::stage(b, mrs);
        let n = crate::ipc::stage_caps(b, caps);
        MessageInfo::new(label, 0, n, mrs.len())
    })
}
