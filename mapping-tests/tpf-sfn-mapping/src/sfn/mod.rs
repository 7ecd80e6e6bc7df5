//! The mapping proof on AWS Step Functions: the compiled gateway driver on the ASL interpreter
//! (`asl-interp`), in the gateway world.
//!
//! - `gateway`: the driver's states and data as the world reads them;
//! - `gateway_engine`: the interpreter as the gateway world's engine;
//! - `gateway_proof`: the proof's entry points for both backends (the subject, the run of
//!   TPF's catalogue, the verdict).

pub mod gateway;
pub mod gateway_engine;
pub mod gateway_proof;

/// A driver definition the user brings instead of the compiled one: its file name (for
/// diagnostics) and bytes.
#[derive(Debug, Clone)]
pub struct DriverFile {
    pub file: String,
    pub bytes: Vec<u8>,
}
