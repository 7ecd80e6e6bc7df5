//! The integration tests of tpf-model, in one binary: each file of this folder is a module here,
//! so the crate's dependencies are linked once rather than once per file. A test's path
//! starts with its file's name: `cargo test -p tpf-model --test integration <file>::`.
//! A new file is declared below (the docs drift test fails on a file left out).

mod tpf_support;

mod tpf_awaits;
mod tpf_failures;
mod tpf_gateway;
mod tpf_restaurant;
mod tpf_store;
