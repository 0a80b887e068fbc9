//! Notifications: Signal = Send, Wait = Recv, Poll = NBRecv (badge returned in a0).
pub use crate::syscall::{poll, signal, wait};
