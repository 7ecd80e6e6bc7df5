//! Virtual time. Nothing in the interpreter reads the wall clock: every timestamp comes from
//! here, so a run is a pure function of its inputs and the seed.

use chrono::{DateTime, SecondsFormat, Utc};

/// Epoch milliseconds, moved only by the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    now_ms: i64,
}

impl Clock {
    pub fn new(start_ms: i64) -> Self {
        Clock { now_ms: start_ms }
    }

    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// Time never goes backwards: a target in the past leaves the clock where it is.
    pub fn advance_to(&mut self, t_ms: i64) {
        if t_ms > self.now_ms {
            self.now_ms = t_ms;
        }
    }
}

/// RFC 3339 with millisecond precision and `Z`, the shape Step Functions uses for
/// `$$.Execution.StartTime` and `$$.State.EnteredTime`.
pub fn format_rfc3339(ms: i64) -> String {
    match DateTime::<Utc>::from_timestamp_millis(ms) {
        Some(t) => t.to_rfc3339_opts(SecondsFormat::Millis, true),
        None => String::from("invalid-time"),
    }
}

/// Parses an RFC 3339 timestamp into epoch milliseconds (sub-millisecond digits truncated).
/// ASL requires an uppercase `T` separator and an explicit offset, which RFC 3339 also does.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    // RFC 3339 also allows a space or a lowercase `t` there; AWS refuses both (recorded:
    // "2016-12-05 21:29:29Z" fails a Wait's TimestampPath).
    if s.as_bytes().get(10) != Some(&b'T') {
        return None;
    }
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc).timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let t = parse_rfc3339("2026-01-01T00:00:00Z").unwrap();
        assert_eq!(format_rfc3339(t), "2026-01-01T00:00:00.000Z");
        assert_eq!(parse_rfc3339("2026-01-01T01:00:00+01:00"), Some(t));
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("2026-01-01 00:00:00Z"), None);
        assert_eq!(parse_rfc3339("2026-01-01t00:00:00Z"), None);
        let mut c = Clock::new(t);
        c.advance_to(t - 5);
        assert_eq!(c.now_ms(), t);
    }
}
