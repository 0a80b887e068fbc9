//! The atomics the ring is built from: `core`'s on the target and in plain tests, loom's
//! model-checked ones under `--cfg loom` (README.md). Only relaxed/acquire/release accesses and
//! `SeqCst` *fences* are used, because loom models exactly those (it treats `SeqCst` accesses as
//! `AcqRel`, which would hide store-buffering bugs).
#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{fence, AtomicU32, AtomicU64};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64};

pub(crate) use core::sync::atomic::Ordering;
