//! The verdict on one TPF execution and its drivers: pure, from what `status` read. Phrased as
//! what the driver should be doing given TPF's record, with a fix that never edits the record.

use tpf_wire::records::ExecutionStatus;

use super::{Generation, GenerationNames, Query, RecordView, Verdict};
use crate::aws::release::Identity;

/// The verdict: pure, from what was read.
pub fn verdict(
    release: &Identity,
    record: Option<&RecordView>,
    machine_deployed: bool,
    gens: &[Generation],
    names: &GenerationNames,
    q: &Query<'_>,
) -> Verdict {
    let stop = q.target.stop_call();
    let diverged = |code, summary: String, fix: String| Verdict {
        diverged: true,
        code,
        summary,
        fix: Some(fix),
    };
    let Some(r) = record else {
        return diverged(
            "STATUS_NO_TPF_RECORD",
            format!(
                "TPF has no record of {}/{} in {}",
                q.tenant, q.execution, q.execution_table
            ),
            if gens.iter().any(Generation::live) {
                format!("check --tenant and --execution; a driver without a TPF record does nothing useful: stop it ({stop})")
            } else {
                "check --tenant, --execution and the execution table (--prefix, --table execution-table=NAME); the record may also have expired by TTL".to_string()
            },
        );
    };
    if &r.identity != release {
        return diverged(
            "STATUS_RELEASE_MISMATCH",
            format!(
                "the record is pinned to {} but --out holds {}",
                r.identity, release
            ),
            format!(
                "run status with the output directory of release {} (its driver machine is the one that serves this execution)",
                r.identity.release_version
            ),
        );
    }
    if !machine_deployed {
        return diverged(
            "STATUS_MACHINE_MISSING",
            format!(
                "the {} {} of release {} is not deployed",
                q.target.driver_kind(),
                q.target.driver,
                release.release_version
            ),
            "run `tpf-sfn deploy --out DIR --role-arn ...` for this release, then start the execution's next generation (run status again for its name)".to_string(),
        );
    }
    let live: Vec<&Generation> = gens.iter().filter(|g| g.live()).collect();
    if live.len() > 1 {
        let live_names: Vec<&str> = live.iter().map(|g| g.name.as_str()).collect();
        return diverged(
            "STATUS_TWO_LIVE_GENERATIONS",
            format!(
                "{} driver generations are running: {}",
                live.len(),
                live_names.join(", ")
            ),
            format!(
                "stop all but the newest ({}) with {stop}; TPF's version checks make the duplicates harmless but they double the action calls",
                live_names.last().copied().unwrap_or_default()
            ),
        );
    }
    if r.status == ExecutionStatus::RemoteOutcomeUnknown.as_str() {
        // Not terminal for TPF, but nothing will move it: not claimable, not due, and every
        // driver stops on it. Only an operator's re-drive does, after reconciling.
        return diverged(
            "STATUS_REMOTE_OUTCOME_UNKNOWN",
            format!(
                "TPF is {}{}: a remote transition passed its deadline without a confirmed outcome, and nothing retries it{}",
                r.status,
                r.error_code
                    .as_deref()
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default(),
                live.first()
                    .map(|g| format!("; driver {} stops when it next asks", g.name))
                    .unwrap_or_default()
            ),
            format!(
                "find out from the remote worker whether step {} took effect, then re-drive with allowFailed \
                 (POST /tpf/admin/tenants/{}/executions/{}/redrive {{\"allowFailed\":true,\"expectedVersion\":{}}}); \
                 TPF queues it again; a running driver polls it on, else start the next generation",
                r.current_step_index,
                q.tenant,
                q.execution,
                r.version,
            ),
        );
    }
    if r.terminal {
        if let Some(g) = live.first() {
            return diverged(
                "STATUS_DRIVER_AFTER_TERMINAL",
                format!("TPF is {} but driver {} is still running", r.status, g.name),
                format!(
                    "stop {} ({stop}); TPF's outcome is final and the driver has nothing left to wake",
                    g.name
                ),
            );
        }
        return Verdict {
            diverged: false,
            code: "STATUS_OK",
            summary: format!("TPF is {} and no driver is running", r.status),
            fix: None,
        };
    }
    match live.first() {
        Some(g) => Verdict {
            diverged: false,
            code: "STATUS_OK",
            summary: format!(
                "TPF is {}; driver {} is running{}",
                r.status,
                g.name,
                g.current_state
                    .as_deref()
                    .map(|s| format!(" at \"{s}\""))
                    .unwrap_or_default()
            ),
            fix: None,
        },
        None => {
            let next = names.gateway_names().nth(gens.len());
            diverged(
                "STATUS_NO_LIVE_DRIVER",
                match gens.last() {
                    None => format!("TPF is {} but no driver generation was ever started", r.status),
                    Some(last) => format!(
                        "TPF is {} but the last driver {} ended {}",
                        r.status, last.name, last.status
                    ),
                },
                match next {
                    Some(name) => format!(
                        "the reconciler starts generation {} (`{name}`) when a driver ends while TPF's record is open; if it did not, check its event rule and dead-letter queue, or start `{name}` through the starter function with TPF's start input (generation {}, resumeExecutionId {})",
                        gens.len() + 1,
                        gens.len() + 1,
                        q.execution
                    ),
                    None => "TPF's record holds no client key to name the next generation by; re-drive through TPF's gateway (REDRIVE)".to_string(),
                },
            )
        }
    }
}
