//! What the benchmark's processes share: the protocol between the root task, the client and
//! the servers (`proto`), the server's work per request (`work`) and the build's choice of
//! points (`points`). See README.md.
#![cfg_attr(not(test), no_std)]

pub mod points;
pub mod proto;
pub mod work;
