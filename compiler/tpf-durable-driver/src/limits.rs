//! The Lambda durable functions limits the driver is written against.
//!
//! The service stops an execution at 3,000 checkpointed operations and at 100 MiB of written
//! state. The compiler caps a generation's operations well below the first, and that cap times
//! [`MAX_CHECKPOINT_BYTES`] below the second (`tpf_sfn_compiler::durable::budget` checks the
//! product).

/// Checkpointed operations after which the service stops an execution.
pub const SERVICE_OPERATIONS: u64 = 3_000;

/// Bytes of written state (checkpointed results, errors, callback results) after which the
/// service stops an execution: 100 MiB.
pub const SERVICE_WRITTEN_STATE_BYTES: u64 = 100 * 1024 * 1024;

/// The most one checkpointed operation is budgeted to write.
pub const MAX_CHECKPOINT_BYTES: u64 = 48 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proven_budget_times_the_bound_fits_the_written_state() {
        // 2,000 operations (the compiler's ceiling) of at most 48 KiB each: 93.75 MiB.
        const { assert!(2_000 * MAX_CHECKPOINT_BYTES <= SERVICE_WRITTEN_STATE_BYTES) };
        const { assert!(2_200 * MAX_CHECKPOINT_BYTES > SERVICE_WRITTEN_STATE_BYTES) };
    }
}
