//! The PC load client for the TCP server (README.md): N connections over loopback, each sending
//! fixed-size requests and waiting for each response, with a warm-up, a live progress line,
//! requests/s and latency percentiles, JSON and CSV output; a dead connection is reported and
//! the others keep measuring.
pub mod config;
pub mod report;
pub mod run;
pub mod stats;

pub use config::{parse, Config, Stop};
pub use report::Report;
pub use run::run;
