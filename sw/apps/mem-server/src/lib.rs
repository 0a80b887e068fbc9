//! The memory-allocator server's shared parts: the protocol between the root task, the server
//! and the client (`proto`), the server's bookkeeping of frames and client pages (`pool`) and
//! its record of the requests whose system calls are in the kernel (`flights`), both
//! host-tested. See README.md.
#![cfg_attr(not(test), no_std)]

pub mod flights;
pub mod pool;
pub mod proto;
