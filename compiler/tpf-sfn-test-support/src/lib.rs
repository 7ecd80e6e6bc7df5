//! What the workspace's tests and benches share, in one crate instead of `#[path]` includes
//! across crates: [`snapshot_set`] (snapshot directories in which every distinct text is stored
//! once, and a snapshot no test produces fails), [`contracts`] (contracts of any length in the
//! shape TPF generates, their hashes verified by the loader).
//!
//! A dev-dependency only: no shipped crate links it.

pub mod contracts;
pub mod snapshot_set;
