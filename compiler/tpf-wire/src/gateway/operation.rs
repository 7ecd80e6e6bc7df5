//! `AwsDurableOperation`: the gateway's ten operations, in TPF's declaration order. Names are
//! case-sensitive on the wire (Jackson reads enum values exactly even where it reads key names
//! case-insensitively).

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Operation {
    Submit,
    Status,
    Result,
    Redrive,
    Sweep,
    QueryPendingAwait,
    ReadAwaitCheckpoint,
    ReadExecutionAwaits,
    RegisterCallback,
    BindCallback,
}

impl Operation {
    /// Every operation in TPF's declaration order (the index is Java's `ordinal()`).
    pub const ALL: [Operation; 10] = [
        Self::Submit,
        Self::Status,
        Self::Result,
        Self::Redrive,
        Self::Sweep,
        Self::QueryPendingAwait,
        Self::ReadAwaitCheckpoint,
        Self::ReadExecutionAwaits,
        Self::RegisterCallback,
        Self::BindCallback,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Submit => "SUBMIT",
            Self::Status => "STATUS",
            Self::Result => "RESULT",
            Self::Redrive => "REDRIVE",
            Self::Sweep => "SWEEP",
            Self::QueryPendingAwait => "QUERY_PENDING_AWAIT",
            Self::ReadAwaitCheckpoint => "READ_AWAIT_CHECKPOINT",
            Self::ReadExecutionAwaits => "READ_EXECUTION_AWAITS",
            Self::RegisterCallback => "REGISTER_CALLBACK",
            Self::BindCallback => "BIND_CALLBACK",
        }
    }

    /// `valueOf`: the exact name, nothing else.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == name)
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_exact_and_round_trip() {
        for op in Operation::ALL {
            assert_eq!(Operation::parse(op.as_str()), Some(op));
            assert_eq!(
                serde_json::to_string(&op).unwrap(),
                format!("\"{}\"", op.as_str())
            );
        }
        assert_eq!(Operation::parse("status"), None);
        assert_eq!(Operation::parse("PROCESS_WORK_ITEM"), None);
    }
}
