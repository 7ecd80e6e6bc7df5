//! The harness: runs compiled drivers and sweepers in the interpreter against the TPF model,
//! with the wakeup bridge between them.

pub mod actors;
pub mod bindings;
pub mod faults;
pub mod trace;
pub mod wakeup;
pub mod world;
