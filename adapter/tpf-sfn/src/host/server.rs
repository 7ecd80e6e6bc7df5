//! The connection loop: the router over HTTP/1.1 with a header-read timeout, which
//! `axum::serve` does not set (a client that opens a request and never finishes its headers
//! would hold its connection for ever).

use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::limits::{HEADER_READ_TIMEOUT, HTTP_MAX_HEADER_BYTES};

/// Serves `router` on `listener` until accepting fails for good.
pub async fn serve(listener: TcpListener, router: Router) -> std::io::Result<()> {
    serve_with(listener, router, HEADER_READ_TIMEOUT).await
}

/// [`serve`] with another header-read timeout (tests use a short one).
pub async fn serve_with(
    listener: TcpListener,
    router: Router,
    header_read_timeout: Duration,
) -> std::io::Result<()> {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .max_header_size(HTTP_MAX_HEADER_BYTES)
        .max_buf_size(HTTP_MAX_HEADER_BYTES + 64 * 1024);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of descriptors or a connection reset before accept: the listener is still
            // good, so wait a moment and accept again rather than stop serving.
            Err(e) if is_transient(&e) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let conn = http.serve_connection(
            TokioIo::new(stream),
            TowerToHyperService::new(router.clone()),
        );
        tokio::spawn(async move {
            // A client that goes away or times out ends only its own connection.
            let _ = conn.await;
        });
    }
}

fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    ) || out_of_descriptors(e)
}

#[cfg(unix)]
fn out_of_descriptors(e: &std::io::Error) -> bool {
    e.raw_os_error()
        .is_some_and(|c| c == libc::EMFILE || c == libc::ENFILE)
}

#[cfg(not(unix))]
fn out_of_descriptors(_: &std::io::Error) -> bool {
    false
}
