//! Retry and Catch: `States.ALL` placement, empty or misspelt error names, retrier ranges, and
//! the timeout/heartbeat pair.

use crate::sfn::asl::State;
use crate::sfn::validate::scope::Scope;
use crate::sfn::validate::Ctx;

const STATES_ALL: &str = "States.ALL";

/// Predefined error names (`States.` is reserved; anything else under it never matches).
const PREDEFINED_ERRORS: &[&str] = &[
    "States.ALL",
    "States.BranchFailed",
    "States.DataLimitExceeded",
    "States.ExceedToleratedFailureThreshold",
    "States.HeartbeatTimeout",
    "States.Http.Socket",
    "States.IntrinsicFailure",
    "States.ItemReaderFailed",
    "States.NoChoiceMatched",
    "States.ParameterPathFailure",
    "States.Permissions",
    "States.QueryEvaluationError",
    "States.ResultPathMatchFailure",
    "States.ResultWriterFailed",
    "States.Runtime",
    "States.TaskFailed",
    "States.Timeout",
];

/// Step Functions' upper bound for second counts and retry attempts.
const MAX_SECONDS: u64 = 99_999_999;
/// `MaxDelaySeconds` may not exceed one year plus a day.
const MAX_DELAY_SECONDS: u64 = 31_622_400;

pub(crate) fn check(ctx: &mut Ctx<'_>, scopes: &[Scope<'_>]) {
    for scope in scopes {
        for (name, state) in scope.states {
            let ptr = scope.state_pointer(name);
            let retry: Vec<&[String]> = state
                .retriers()
                .iter()
                .map(|r| r.error_equals.as_slice())
                .collect();
            let catch: Vec<&[String]> = state
                .catchers()
                .iter()
                .map(|c| c.error_equals.as_slice())
                .collect();
            error_lists(ctx, &ptr, "Retry", &retry);
            error_lists(ctx, &ptr, "Catch", &catch);
            retriers(ctx, &ptr, state);
            if let State::Task(t) = state {
                timeouts(ctx, &ptr, t);
            }
        }
    }
}

fn error_lists(ctx: &mut Ctx<'_>, ptr: &str, field: &str, lists: &[&[String]]) {
    let last = lists.len().saturating_sub(1);
    for (i, names) in lists.iter().enumerate() {
        let base = format!("{ptr}/{field}/{i}/ErrorEquals");
        if names.is_empty() {
            ctx.error(
                "ASL_EMPTY_ERROR_EQUALS",
                base.clone(),
                format!("{field}[{i}] has an empty ErrorEquals, so it matches nothing"),
                "list the error names to match, or \"States.ALL\" for any error",
            );
        }
        for (j, err) in names.iter().enumerate() {
            let at = format!("{base}/{j}");
            if err == STATES_ALL {
                if names.len() > 1 {
                    ctx.error(
                        "ASL_STATES_ALL_NOT_ALONE",
                        at.clone(),
                        format!("\"States.ALL\" shares {field}[{i}].ErrorEquals with other names"),
                        "make \"States.ALL\" the only name in its ErrorEquals; move the other names to an earlier entry",
                    );
                }
                if i != last {
                    ctx.error(
                        "ASL_STATES_ALL_NOT_LAST",
                        at,
                        format!("\"States.ALL\" is in {field}[{i}] but {field} has {} entries; it must be in the last one", lists.len()),
                        format!("move this entry to the end of {field}: entries after a catch-all can never match"),
                    );
                }
            } else if err.starts_with("States.")
                && !PREDEFINED_ERRORS.contains(&err.as_str())
                && !err.starts_with("States.Http.StatusCode.")
            {
                ctx.warning(
                    "ASL_UNKNOWN_STATES_ERROR",
                    at,
                    format!("{err:?} is not a predefined error; the `States.` prefix is reserved, so it never matches"),
                    "check the spelling against the predefined names (States.TaskFailed, States.Timeout, ...)",
                );
            }
        }
    }
}

fn retriers(ctx: &mut Ctx<'_>, ptr: &str, state: &State) {
    for (i, r) in state.retriers().iter().enumerate() {
        let base = format!("{ptr}/Retry/{i}");
        let mut bad = |field: &str, message: String| {
            ctx.error(
                "ASL_RETRIER_INVALID",
                format!("{base}/{field}"),
                message,
                "use a value within the documented range",
            );
        };
        if let Some(rate) = r.backoff_rate {
            if rate.is_nan() || rate < 1.0 {
                bad(
                    "BackoffRate",
                    format!("BackoffRate {rate} is below 1.0; intervals would shrink"),
                );
            }
        }
        if let Some(n) = r.max_attempts {
            if n > MAX_SECONDS {
                bad(
                    "MaxAttempts",
                    format!("MaxAttempts {n} exceeds {MAX_SECONDS}"),
                );
            }
        }
        if let Some(n) = r.interval_seconds {
            if n == 0 || n > MAX_SECONDS {
                bad(
                    "IntervalSeconds",
                    format!("IntervalSeconds {n} must be 1..={MAX_SECONDS}"),
                );
            }
        }
        if let Some(n) = r.max_delay_seconds {
            if n == 0 || n > MAX_DELAY_SECONDS {
                bad(
                    "MaxDelaySeconds",
                    format!("MaxDelaySeconds {n} must be 1..={MAX_DELAY_SECONDS}"),
                );
            }
        }
        if let Some(j) = &r.jitter_strategy {
            if j != "FULL" && j != "NONE" {
                bad(
                    "JitterStrategy",
                    format!("JitterStrategy {j:?} must be \"FULL\" or \"NONE\""),
                );
            }
        }
    }
}

fn timeouts(ctx: &mut Ctx<'_>, ptr: &str, t: &crate::sfn::asl::TaskState) {
    if t.timeout_seconds.is_some() && t.timeout_seconds_path.is_some() {
        ctx.error(
            "ASL_TIMEOUT_AND_PATH",
            format!("{ptr}/TimeoutSecondsPath"),
            "TimeoutSeconds and TimeoutSecondsPath are both set",
            "keep exactly one of them",
        );
    }
    if t.heartbeat_seconds.is_some() && t.heartbeat_seconds_path.is_some() {
        ctx.error(
            "ASL_TIMEOUT_AND_PATH",
            format!("{ptr}/HeartbeatSecondsPath"),
            "HeartbeatSeconds and HeartbeatSecondsPath are both set",
            "keep exactly one of them",
        );
    }
    for (field, value) in [
        ("TimeoutSeconds", t.timeout_seconds),
        ("HeartbeatSeconds", t.heartbeat_seconds),
    ] {
        if let Some(v) = value {
            if v == 0 || v > MAX_SECONDS {
                ctx.error(
                    "ASL_TIMEOUT_RANGE",
                    format!("{ptr}/{field}"),
                    format!("{field} {v} must be 1..={MAX_SECONDS}"),
                    "use a positive number of seconds",
                );
            }
        }
    }
    if let (Some(hb), Some(to)) = (t.heartbeat_seconds, t.timeout_seconds) {
        if hb >= to {
            ctx.error(
                "ASL_HEARTBEAT_NOT_LESS_THAN_TIMEOUT",
                format!("{ptr}/HeartbeatSeconds"),
                format!("HeartbeatSeconds ({hb}) must be smaller than TimeoutSeconds ({to})"),
                "lower HeartbeatSeconds below TimeoutSeconds (Step Functions rejects the definition otherwise), or drop it",
            );
        }
    }
}
