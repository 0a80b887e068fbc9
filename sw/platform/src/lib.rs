//! Platform constants shared by hardware and software (memory map, CSR numbers, UINTC layout).
//! The values live in `platform/platform.toml`; see `platform/README.md`.
#![no_std]
include!(concat!(env!("OUT_DIR"), "/platform.rs"));
