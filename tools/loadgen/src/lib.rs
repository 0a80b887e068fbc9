//! The PC load client for the TCP server (README.md): N connections to any address, each sending
//! fixed-size requests in closed loop or on an open-loop schedule (`--rate`), up to `--pipeline`
//! in flight, with a warm-up, a live progress line, requests/s and HdrHistogram latency
//! percentiles, JSON, CSV and `.hgrm` output; a dead connection is reported and the others keep
//! measuring.
pub mod config;
pub mod report;
pub mod run;
pub mod schedule;
pub mod stats;

pub use config::{parse, Config, Stop};
pub use report::Report;
pub use run::run;
