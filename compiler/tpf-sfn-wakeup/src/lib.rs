//! The wake path's decisions, one copy each, run by the real bridge and relay (processes and
//! Lambda handlers) and by the mapping proof:
//!
//! - [`bridge`]: a change to a TPF execution record or a wakeup-table row in, the driver starts
//!   and wakeups to perform out;
//! - [`relay`]: an Action API reply in, the answer to the driver's task token out;
//! - [`sweeper`]: a due execution TPF's sweep listed in, whether to wake its parked driver or
//!   start a recovery lineage out (the sweeper state machine's choices, for a sweeper function).
//!
//! Pure functions: no I/O, no clock.

pub mod bridge;
pub mod relay;
pub mod sweeper;
