//! The blocking facade: a call for ordinary, non-async code.
use super::{ChanError, Client, Msg};
use crate::task::Handle;

/// Send `msg` and return its reply, blocking the caller (not the thread's other coroutines,
/// which `block_on` keeps running meanwhile; the thread sleeps in its park hook only when
/// nothing can run). Must not be called from inside a task (`block_on` panics there).
pub fn call_blocking<const C: usize, const N: usize, const S: usize>(
    rt: &Handle<N, S>,
    client: &'static Client<C>,
    msg: Msg,
) -> Result<Msg, ChanError> {
    rt.block_on(client.call(msg))
}
