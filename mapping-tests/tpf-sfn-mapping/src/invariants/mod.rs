//! Named invariant checks, one family per invariant the drivers must preserve, evaluated over
//! every scenario run. Each returns the violations it found with a trace excerpt a person can
//! act on. `docs/mapping.md` lists them with the tests that prove each can fail.

mod checks;
pub(crate) mod common;
mod pacing;

use std::fmt;

use serde::Serialize;

use crate::scenario::Run;

pub use checks::{static_violations, Proven, CHECKS};

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

/// One named check.
pub struct Check {
    pub name: &'static str,
    /// The invariant it proves.
    pub invariant: &'static str,
    pub run: fn(&Run) -> Vec<Violation>,
}

/// Evaluates every check over a run.
pub fn evaluate(run: &Run) -> Vec<Violation> {
    CHECKS.iter().flat_map(|c| (c.run)(run)).collect()
}
