//! The harness: where an engine and the TPF model meet, with the wakeup bridge between them —
//! what people do to TPF (`actors`), injected faults, the wakeup table, traces, the world loop
//! every engine runs in (`world`), and the Task handler the Step Functions drivers call
//! (`bindings`, whose action calls and hooks the durable steps reuse).

pub mod actors;
pub mod bindings;
pub mod faults;
pub mod trace;
pub mod wakeup;
pub mod world;
