//! The integration tests of tpf-sfn, in one binary: each file of this folder is a module here,
//! so the crate's dependencies are linked once rather than once per file. A test's path
//! starts with its file's name: `cargo test -p tpf-sfn --test integration <file>::`.
//! A new file is declared below (the docs drift test fails on a file left out).

mod support;

mod bad_input_sweep;
mod cli;
mod cli_golden;
mod cli_runtime;
mod deploy_mock;
mod deploy_moto;
mod docs_drift;
mod dynamo_store;
mod e2e_durable;
mod export;
mod faults;
mod gateway_e2e_durable;
mod gateway_e2e_moto;
mod gateway_moto;
mod relay_gateway;
mod relay_mock;
mod releases_mock;
mod serve;
mod serve_edges;
mod serve_gateway;
mod status_mock;
mod stdio;
mod store_races;
mod test_binaries;
