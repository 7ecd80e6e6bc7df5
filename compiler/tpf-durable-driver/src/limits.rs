//! The Lambda durable functions limits the driver is written against, and the bound that keeps
//! each checkpoint small enough for the written-state limit to be proven, not hoped for.
//!
//! The service stops an execution at 3,000 checkpointed operations and at 100 MiB of written
//! state. The compiler caps a generation's operations well below the first; this module makes
//! every operation's checkpoint at most [`MAX_CHECKPOINT_BYTES`], so that cap times this bound is
//! below the second (`tpf_sfn_compiler::durable::budget` checks the product).

use crate::ops::CallOutcome;

/// Checkpointed operations after which the service stops an execution.
pub const SERVICE_OPERATIONS: u64 = 3_000;

/// Bytes of written state (checkpointed results, errors, callback results) after which the
/// service stops an execution: 100 MiB.
pub const SERVICE_WRITTEN_STATE_BYTES: u64 = 100 * 1024 * 1024;

/// The most one checkpointed operation writes: a `process-work-item` answer is a few hundred
/// bytes; anything near this bound is not an answer the driver can act on.
pub const MAX_CHECKPOINT_BYTES: u64 = 48 * 1024;

/// The most of a refusal's or transport failure's message a checkpoint keeps.
const MAX_MESSAGE_CHARS: usize = 1_024;

/// The code an answer too large to checkpoint is refused with; the driver, which knows no such
/// code from TPF, fails the generation as an unexpected outcome instead of storing it.
pub const ANSWER_TOO_LARGE: &str = "TPF_SFN.ANSWER_TOO_LARGE";

fn cut(message: String) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((at, _)) => format!("{}… (cut)", &message[..at]),
        None => message,
    }
}

/// What a call step checkpoints: the outcome itself when it fits [`MAX_CHECKPOINT_BYTES`],
/// messages cut to a kilobyte, and an over-large answer replaced by a refusal that says so.
/// Both engines' steps (the deployed function's and the proof's) pass their outcome through
/// this, so the bound holds for every checkpoint the driver makes.
pub fn bounded(outcome: CallOutcome) -> CallOutcome {
    let outcome = match outcome {
        CallOutcome::Refused { code, message } => CallOutcome::Refused {
            code,
            message: cut(message),
        },
        CallOutcome::Transport { message } => CallOutcome::Transport {
            message: cut(message),
        },
        answer => answer,
    };
    let size = serde_json::to_vec(&outcome).map_or(u64::MAX, |b| b.len() as u64);
    if size <= MAX_CHECKPOINT_BYTES {
        return outcome;
    }
    CallOutcome::Refused {
        code: ANSWER_TOO_LARGE.to_owned(),
        message: format!(
            "TPF's answer is {size} bytes as a checkpoint, over the {MAX_CHECKPOINT_BYTES} one durable step may write"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_and_the_checkpoint_stays_under_the_bound() {
        let long = "é".repeat(100_000);
        let CallOutcome::Transport { message } = bounded(CallOutcome::Transport {
            message: long.clone(),
        }) else {
            panic!("a transport failure stays one");
        };
        assert_eq!(
            message.chars().count(),
            MAX_MESSAGE_CHARS + "… (cut)".chars().count()
        );
        let code = "C".repeat(60_000);
        let CallOutcome::Refused { code, .. } = bounded(CallOutcome::Refused {
            code,
            message: long,
        }) else {
            panic!("a refusal stays one");
        };
        assert_eq!(code, ANSWER_TOO_LARGE);
    }

    #[test]
    fn the_proven_budget_times_the_bound_fits_the_written_state() {
        // 2,000 operations (the compiler's ceiling) of at most 48 KiB each: 93.75 MiB.
        const { assert!(2_000 * MAX_CHECKPOINT_BYTES <= SERVICE_WRITTEN_STATE_BYTES) };
        const { assert!(2_200 * MAX_CHECKPOINT_BYTES > SERVICE_WRITTEN_STATE_BYTES) };
    }
}
