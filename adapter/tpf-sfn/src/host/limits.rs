//! What the host accepts, checked before any store is touched, so the in-memory store and
//! DynamoDB refuse the same requests with the same coded 4xx. DynamoDB's own limits (400 KB an
//! item, 2,048 bytes a partition key) would otherwise surface as a store failure, and the
//! in-memory store has none.

use std::time::Duration;

use super::handlers::ApiError;

/// The largest request body. Payloads are stored inline in the execution row (TPF's chunked
/// payload table is not used), which holds the input and later the result next to each other:
/// two 128 KiB payloads and the record's other attributes stay well under DynamoDB's 400 KB
/// item limit.
pub const MAX_BODY_BYTES: usize = 128 * 1024;

/// The longest id or key a request may carry (`idempotencyKey`, `tenantId`, `executionId`, …).
/// TPF's key rows join the tenant, the pipeline and release ids and the key into one partition
/// key of at most 2,048 bytes; 1,024 bytes for the caller's part leaves room for the rest.
pub const MAX_KEY_BYTES: usize = 1024;

/// The longest request target (path and query).
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// The largest header section (names, values and their separators).
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// How long a client may take to send its request's headers before the connection is closed,
/// so half-open requests cannot hold connections.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client may take to send its whole body once its headers are in: a client with the
/// token that trickles its body would otherwise hold its connection and handler for ever.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request waits for the coordinator another request holds before it is answered
/// `503 HOST_BUSY`: above one store call's default bound, so a healthy store never trips it.
pub const LOCK_WAIT: Duration = Duration::from_secs(25);

/// The HTTP layer's own ceiling on a header section, above [`MAX_HEADER_BYTES`] so that the
/// host's coded 431 answers first; beyond it the HTTP layer closes the connection itself.
pub const HTTP_MAX_HEADER_BYTES: usize = 256 * 1024;

/// `KEY_TOO_LONG` (400) when `value` is longer than [`MAX_KEY_BYTES`].
pub fn check_key(field: &str, value: &str) -> Result<(), ApiError> {
    if value.len() > MAX_KEY_BYTES {
        return Err(ApiError::new(
            400,
            "KEY_TOO_LONG",
            format!(
                "{field} is {} bytes; at most {MAX_KEY_BYTES} are accepted",
                value.len()
            ),
        ));
    }
    Ok(())
}
