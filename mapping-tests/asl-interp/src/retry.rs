//! Error matching for Retry/Catch and retry delays.

use asl_model::Retrier;

use super::error::{StateError, ALL, HEARTBEAT_TIMEOUT, TASK_FAILED, TIMEOUT};
use super::rng::Rng;

/// Whether `ErrorEquals` matches `err` (AWS "Error handling in Step Functions"):
/// `States.ALL` matches everything except the terminal error (`States.Runtime`); `States.TaskFailed` matches
/// everything except timeouts; `States.HeartbeatTimeout` also matches a missed heartbeat,
/// which is reported as `States.Timeout`.
pub fn matches(error_equals: &[String], err: &StateError) -> bool {
    if err.is_terminal() {
        return false;
    }
    error_equals.iter().any(|e| {
        e == &err.error
            || e == ALL
            || (e == TASK_FAILED && err.error != TIMEOUT && !err.heartbeat)
            || (e == HEARTBEAT_TIMEOUT && err.heartbeat)
    })
}

/// Delay before retry number `attempt` (0-based) of this retrier, in milliseconds:
/// `IntervalSeconds × BackoffRate^attempt`, capped at `MaxDelaySeconds`, then with FULL jitter
/// a uniform draw in [0, delay].
pub fn delay_ms(r: &Retrier, attempt: u32, rng: &mut Rng) -> i64 {
    let base = r.interval() as f64 * r.backoff().powi(attempt.min(1_000) as i32);
    let mut secs = if base.is_finite() { base } else { f64::MAX };
    if let Some(max) = r.max_delay_seconds {
        secs = secs.min(max as f64);
    }
    // A year is the longest an execution can live; anything longer never fires anyway.
    secs = secs.min(366.0 * 86_400.0);
    if r.jitter_strategy.as_deref() == Some("FULL") {
        secs *= rng.next_f64();
    }
    (secs * 1000.0).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(name: &str) -> StateError {
        StateError::new(name, "")
    }

    #[test]
    fn matching() {
        let all = vec![ALL.to_string()];
        assert!(matches(&all, &e("Custom")));
        assert!(!matches(&all, &e("States.Runtime")));
        // Caught on AWS by States.ALL and by name (recorded), whatever its docs say.
        assert!(matches(&all, &e("States.DataLimitExceeded")));
        assert!(matches(
            &["States.DataLimitExceeded".to_string()],
            &e("States.DataLimitExceeded")
        ));
        let tf = vec![TASK_FAILED.to_string()];
        assert!(matches(&tf, &e("Lambda.Boom")));
        assert!(!matches(&tf, &e(TIMEOUT)));
        let mut hb = e(TIMEOUT);
        hb.heartbeat = true;
        assert!(matches(&[HEARTBEAT_TIMEOUT.to_string()], &hb));
        assert!(matches(&[TIMEOUT.to_string()], &hb));
        assert!(!matches(&[HEARTBEAT_TIMEOUT.to_string()], &e(TIMEOUT)));
    }
}
