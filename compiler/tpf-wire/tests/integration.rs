//! The integration tests of tpf-wire, in one binary: each file of this folder is a module here,
//! so the crate's dependencies are linked once rather than once per file. A test's path
//! starts with its file's name: `cargo test -p tpf-wire --test integration <file>::`.
//! A new file is declared below (the docs drift test fails on a file left out).

mod defined_once;
mod gateway_any_input;
