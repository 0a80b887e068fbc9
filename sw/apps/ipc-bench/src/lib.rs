//! What the benchmark's processes share: the protocol between the root task, the client and
//! the servers (`proto`), and the server's work per request (`work`). See README.md.
#![no_std]

pub mod proto;
pub mod work;
