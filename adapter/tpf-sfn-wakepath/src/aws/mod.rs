//! What the wake path needs of AWS beyond its SDK clients: failures classified into the
//! adapter's codes, and TPF's table layout.

pub mod errors;
pub mod item;
pub mod tables;
