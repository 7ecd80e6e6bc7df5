//! What the wake path needs of AWS beyond its SDK clients: failures classified into the
//! adapter's codes, and TPF's table layout. The table names stand apart from the SDK, so that
//! the command line takes `--table KEY=NAME` the same way in every build.

#[cfg(feature = "aws")]
pub mod errors;
#[cfg(feature = "aws")]
pub mod item;
pub mod table_names;
#[cfg(feature = "aws")]
pub mod tables;
