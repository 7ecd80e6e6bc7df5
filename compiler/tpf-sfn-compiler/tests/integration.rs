//! The integration tests of tpf-sfn-compiler, in one binary: each file of this folder is a module here,
//! so the crate's dependencies are linked once rather than once per file. A test's path
//! starts with its file's name: `cargo test -p tpf-sfn-compiler --test integration <file>::`.
//! A new file is declared below (the docs drift test fails on a file left out).

mod compile_snapshots;
mod driver_shape;
mod durable_compile;
mod gateway_compile;
mod history_soundness;
mod inputs;
mod no_panic_compile;
mod no_panic_inputs;
mod validator_proptest;
mod validator_rules;
