//! The mapping proof: runs compiled drivers in a deterministic, virtual-time ASL interpreter
//! against an executable reference model of TPF's coordinator, and checks named invariants over
//! every trace.
pub mod interp;
