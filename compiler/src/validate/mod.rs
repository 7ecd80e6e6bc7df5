// STUB
use crate::asl::StateMachine;
use crate::Diagnostic;
use std::collections::BTreeMap;
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Generic,
    TpfDriver,
}
#[derive(Debug, Clone)]
pub struct ValidateOptions {
    pub event_limit: u64,
    pub map_item_bounds: BTreeMap<String, u64>,
    pub profile: Profile,
}
#[derive(Debug, Clone, Default)]
pub struct HistoryAnalysis {
    pub max_events: Option<u64>,
    pub per_iteration: Option<u64>,
    pub fixed: u64,
}
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub diagnostics: Vec<Diagnostic>,
    pub history: HistoryAnalysis,
}
pub fn validate(_f: &str, m: &StateMachine, o: &ValidateOptions) -> Report {
    Report {
        diagnostics: vec![],
        history: analyze_history(m, o),
    }
}
pub fn validate_bytes(f: &str, b: &[u8], o: &ValidateOptions) -> Report {
    match crate::asl::parse(f, b) {
        Ok(m) => validate(f, &m, o),
        Err(d) => Report {
            diagnostics: vec![d],
            history: Default::default(),
        },
    }
}
pub fn analyze_history(m: &StateMachine, _o: &ValidateOptions) -> HistoryAnalysis {
    let n = m
        .states
        .get("Route on TPF status")
        .and_then(|s| {
            if let crate::asl::State::Choice(c) = s {
                c.choices
                    .get(2)
                    .and_then(|r| r.comparison.get("NumericGreaterThanEquals"))
                    .and_then(|v| v.as_u64())
            } else {
                None
            }
        })
        .unwrap_or(0);
    HistoryAnalysis {
        max_events: Some(30 + (n + 1) * 40),
        per_iteration: Some(40),
        fixed: 30,
    }
}
