//! The integration tests of tpf-sfn-wakeup, in one binary: each file of this folder is a module here,
//! so the crate's dependencies are linked once rather than once per file. A test's path
//! starts with its file's name: `cargo test -p tpf-sfn-wakeup --test integration <file>::`.
//! A new file is declared below (the docs drift test fails on a file left out).

mod host;

mod any_input;
mod rules;
mod tpf_scenarios;
