//! Why a scenario's own assertions failed ([`ScenarioFailure`]): what the scenario expected and
//! what the world showed, or the error of the world, the gateway, the provider or TPF that
//! stopped it. Its text is what `mapping-test` prints as a scenario's assertion.

use std::borrow::Cow;

use tpf_wire::gateway::FunctionError;
use tpf_wire::java_error::JavaError;

use super::checks::Violation;
use super::engine::ProviderRefusal;
use super::world::{CompletionError, WorldError};

/// A scenario's own verdict when it did not hold.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioFailure {
    /// A condition the scenario asserts did not hold: what it expected, and what the world
    /// showed instead.
    #[error("{shown}; expected {expected}")]
    Unmet {
        expected: Cow<'static, str>,
        shown: String,
    },
    /// Something the scenario waits for did not happen within its patience.
    #[error("{what}: not within {minutes} min")]
    NotWithin { what: String, minutes: i64 },
    /// Something the scenario reads is not in the world at all.
    #[error("no {0}")]
    Missing(String),
    /// The world stopped (its engine failed, or it ran out of steps at one instant).
    #[error("{0}")]
    World(#[from] WorldError),
    /// TPF refused an await completion the scenario made.
    #[error("{0}")]
    Completion(#[from] CompletionError),
    /// A call to TPF's gateway or starter answered a Lambda function error (the document is
    /// the whole cause: it wraps no error of ours).
    #[error("{call}: {} ({})", .error.error_message, .error.error_type)]
    Gateway {
        call: &'static str,
        error: FunctionError,
    },
    /// The provider refused a call the scenario made (a stop, a callback's close).
    #[error("{call}: {source}")]
    Provider {
        call: &'static str,
        #[source]
        source: ProviderRefusal,
    },
    /// TPF's own rules refused a key or an input the scenario built.
    #[error("{what}: {source}")]
    Key {
        what: &'static str,
        #[source]
        source: JavaError,
    },
    /// The catalogue's scenario has no run in this world.
    #[error("{scenario} does not run here: {gap}")]
    NotRunnable {
        scenario: &'static str,
        gap: &'static str,
    },
}

/// `Ok` when `ok`, else [`ScenarioFailure::Unmet`] with what was `expected` and what `shown`
/// says the world showed.
pub fn ensure(
    ok: bool,
    expected: &'static str,
    shown: impl FnOnce() -> String,
) -> Result<(), ScenarioFailure> {
    if ok {
        Ok(())
    } else {
        Err(ScenarioFailure::Unmet {
            expected: expected.into(),
            shown: shown(),
        })
    }
}

/// A run that was to fail by a check and did not: what it found instead (a test's verdict on
/// a mutant).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{scenario} did not fail {check}: {outcome:?} {violations:?}")]
pub struct NotFailedBy {
    pub scenario: &'static str,
    pub check: &'static str,
    pub outcome: Result<(), ScenarioFailure>,
    pub violations: Vec<Violation>,
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;
    use crate::gateway::engine::EngineError;

    #[test]
    fn an_unmet_condition_says_what_the_world_showed_and_what_was_expected() {
        assert_eq!(ensure(true, "one signal", || unreachable!()), Ok(()));
        let e = ensure(false, "one signal", || "2 signals".to_owned()).unwrap_err();
        assert_eq!(
            e,
            ScenarioFailure::Unmet {
                expected: "one signal".into(),
                shown: "2 signals".to_owned(),
            }
        );
        assert_eq!(e.to_string(), "2 signals; expected one signal");
    }

    #[test]
    fn a_wrapped_error_stays_the_failures_source() {
        let refusal = ProviderRefusal {
            code: "ExecutionDoesNotExist".to_owned(),
            message: "gone".to_owned(),
        };
        let e = ScenarioFailure::Provider {
            call: "StopExecution",
            source: refusal.clone(),
        };
        assert_eq!(e.to_string(), "StopExecution: ExecutionDoesNotExist: gone");
        let source = e.source().and_then(|s| s.downcast_ref::<ProviderRefusal>());
        assert_eq!(source, Some(&refusal));

        let engine = EngineError("no such state".to_owned());
        let stopped = WorldError::from(engine.clone());
        let e: ScenarioFailure = stopped.clone().into();
        let source = e.source().and_then(|s| s.downcast_ref::<WorldError>());
        assert_eq!(source, Some(&stopped));
        let root = source.and_then(|s| s.source()?.downcast_ref::<EngineError>());
        assert_eq!(root, Some(&engine));
        assert_eq!(e.to_string(), "engine: no such state");
    }
}
