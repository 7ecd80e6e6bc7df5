//! The integration tests of tpf-sfn-mapping, in one binary: each file of this folder is a module here,
//! so the crate's dependencies are linked once rather than once per file. A test's path
//! starts with its file's name: `cargo test -p tpf-sfn-mapping --test integration <file>::`.
//! A new file is declared below (the docs drift test fails on a file left out).

mod durable_gateway;
mod gateway_driver_requests;
mod gateway_world;
mod gateway_world_durable;
mod gateway_world_sfn;
mod tpf_vectors;
