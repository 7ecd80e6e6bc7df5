//! TPF's replacement generation (`AwsDurableReplacementService`): the next driver generation of
//! an execution whose callback closed, started from TPF's semantic checkpoint, never from the
//! provider's history.

use tpf_wire::gateway::binding::CallbackBinding;
use tpf_wire::gateway::start::{ExecutionInput, ReleaseIdentity};

use crate::view::HostView;

/// Why a replacement cannot start yet; the caller retries (TPF's `startReplacement` answers
/// `false`, and the wake-up and reconciler then retry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unresolved {
    /// TPF has no semantic checkpoint of the binding's interaction.
    CheckpointMissing,
    /// The checkpoint names another execution or correlation than the binding.
    CheckpointMismatch,
    /// The resume input breaks a record rule (a generation at the end of `long`).
    InputRefused,
}

/// The start input of the generation after the binding's: the binding's interaction is
/// re-read, its execution and correlation must be the binding's, and the release is the
/// semantic checkpoint's. The start is named by [`ExecutionInput::durable_execution_name`];
/// a name that already started is a start (TPF's starter answers 202 for it).
pub fn replacement<V: HostView>(
    binding: &CallbackBinding,
    view: &V,
) -> Result<Result<ExecutionInput, Unresolved>, V::Error> {
    let identity = &binding.await_identity;
    let Some(semantic) = view.await_checkpoint(identity)? else {
        return Ok(Err(Unresolved::CheckpointMissing));
    };
    if semantic.execution_id != identity.execution_id
        || semantic.correlation_id != identity.correlation_id
    {
        return Ok(Err(Unresolved::CheckpointMismatch));
    }
    let release = ReleaseIdentity {
        pipeline_id: Some(&semantic.pipeline_id),
        contract_version: Some(&semantic.contract_version),
        release_version: Some(&semantic.release_version),
    };
    Ok(ExecutionInput::resume(identity, release).map_err(|_| Unresolved::InputRefused))
}
