//! The memory-allocator server's shared parts: the protocol between the root task, the server
//! and the client (`proto`), and the server's bookkeeping of frames and client pages (`pool`,
//! host-tested). See README.md.
#![cfg_attr(not(test), no_std)]

pub mod pool;
pub mod proto;
