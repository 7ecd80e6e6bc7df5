//! What a relay message that can never succeed is ([`Malformed`]).

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed message: {0}")]
pub struct Malformed(pub String);
