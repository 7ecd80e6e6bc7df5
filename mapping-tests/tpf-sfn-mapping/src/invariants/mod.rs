//! Named invariant checks, one family per invariant the drivers must preserve, evaluated over
//! every scenario run. Each returns the violations it found with a trace excerpt a person can
//! act on. `docs/mapping.md` lists them with the tests that prove each can fail.
//!
//! - `table`: the one table of check names every backend proves;
//! - `common`: the checks that read only the trace and TPF, for every backend, each told what a
//!   backend's events mean by its [`common::Reading`].
//!
//! A backend's reading of the table is its own: `crate::sfn::checks`.

pub(crate) mod common;
mod table;

use std::fmt;

use serde::Serialize;

use crate::harness::trace::Trace;

pub use table::{Check, CheckId, CHECKS};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub invariant: &'static str,
    pub detail: String,
    /// The trace lines around the violation, rendered.
    pub excerpt: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invariant {} violated: {}", self.invariant, self.detail)?;
        if !self.excerpt.is_empty() {
            write!(f, "\n{}", self.excerpt)?;
        }
        Ok(())
    }
}

/// Evaluates every check of the table over a run, with a backend's reading of each.
pub fn evaluate<R: ?Sized>(run: &R, reading: fn(CheckId, &R) -> Vec<Violation>) -> Vec<Violation> {
    CHECKS.iter().flat_map(|c| reading(c.id, run)).collect()
}

pub(crate) fn v(invariant: &'static str, detail: String, excerpt: String) -> Violation {
    Violation {
        invariant,
        detail,
        excerpt,
    }
}

/// Rendered trace lines around entry `i`.
pub(crate) fn excerpt(trace: &Trace, i: usize) -> String {
    let from = i.saturating_sub(6);
    let to = (i + 4).min(trace.entries.len());
    let slice = Trace {
        start_ms: trace.start_ms,
        entries: trace.entries[from..to].to_vec(),
    };
    slice
        .render()
        .lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
