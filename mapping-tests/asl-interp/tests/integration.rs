//! The integration tests of asl-interp, in one binary: each file of this folder is a module here,
//! so the crate's dependencies are linked once rather than once per file. A test's path
//! starts with its file's name: `cargo test -p asl-interp --test integration <file>::`.
//! A new file is declared below (the docs drift test fails on a file left out).

mod common;

mod aws_recorded;
mod interp_data;
mod interp_exec;
mod interp_shared;
mod interp_time;
