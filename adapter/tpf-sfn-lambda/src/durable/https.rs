//! The Action API over HTTPS, for the durable driver: the compiled spec's `apiBaseUrl` is an
//! `https://` URL (the compiler refuses any other for the HTTP binding). The relay's client
//! (`tpf_sfn_wakepath::relay::http::HttpActionHost`) stays plain HTTP; the function uses it only for an
//! `http://` base, which is what a local run points at.

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tpf_sfn_wakepath::action_token::ActionToken;
use tpf_sfn_wakepath::relay::http::{within, ActionHost, Reply, Unreachable};

/// `https://host[:port][/base]` with an optional bearer token (fixed, or read from SSM); roots
/// from the system store.
pub struct HttpsActionHost {
    base: String,
    token: ActionToken,
    timeout: Duration,
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

/// Why an action URL cannot be called over HTTPS: the function cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HttpsSetupError {
    #[error("`{0}` is not an https:// URL")]
    NotHttps(String),
    #[error("`{0}` has no host")]
    NoHost(String),
    #[error("the system's root certificates could not be read: {0}")]
    Roots(#[source] std::io::Error),
}

impl HttpsActionHost {
    pub fn new(
        url: &str,
        token: impl Into<ActionToken>,
        timeout: Duration,
    ) -> Result<Self, HttpsSetupError> {
        let rest = url
            .strip_prefix("https://")
            .ok_or_else(|| HttpsSetupError::NotHttps(url.to_owned()))?;
        if rest.split('/').next().unwrap_or("").is_empty() {
            return Err(HttpsSetupError::NoHost(url.to_owned()));
        }
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(rustls::crypto::aws_lc_rs::default_provider())
            .map_err(HttpsSetupError::Roots)?
            .https_only()
            .enable_http1()
            .build();
        Ok(HttpsActionHost {
            base: url.trim_end_matches('/').to_owned(),
            token: token.into(),
            timeout,
            client: Client::builder(TokioExecutor::new()).build(connector),
        })
    }

    async fn send(
        &self,
        path: &str,
        body: &str,
        token: Option<&str>,
    ) -> Result<Reply, Unreachable> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            Unreachable(format!("{what} {}: {e}", self.base))
        };
        let mut request = hyper::Request::post(format!("{}{path}", self.base))
            .header(hyper::header::CONTENT_TYPE, "application/json");
        if let Some(token) = token {
            request = request.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_owned())))
            .map_err(|e| fail("build request for", &e))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| fail("request to", &e))?;
        let status = response.status().as_u16();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| fail("read response from", &e))?
            .to_bytes();
        Ok(Reply {
            status,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}

impl ActionHost for HttpsActionHost {
    async fn post(&self, path: &str, body: &str) -> Result<Reply, Unreachable> {
        self.token
            .authorized(|token| async move {
                let token = token.as_deref();
                within(self.timeout, &self.base, self.send(path, body, token)).await
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_https_urls_with_a_host() {
        assert!(
            HttpsActionHost::new("https://tpf.internal/api", None, Duration::from_secs(1)).is_ok()
        );
        assert!(HttpsActionHost::new("http://tpf.internal", None, Duration::from_secs(1)).is_err());
        assert!(HttpsActionHost::new("https:///x", None, Duration::from_secs(1)).is_err());
    }

    #[tokio::test]
    async fn a_plain_http_server_is_a_transport_error_not_an_answer() {
        // A TLS client against a plain listener: the handshake fails, the driver retries.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                use tokio::io::AsyncWriteExt;
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                    .await;
            }
        });
        let host =
            HttpsActionHost::new(&format!("https://{addr}"), None, Duration::from_secs(5)).unwrap();
        assert!(host.post("/x", "{}").await.is_err());
    }
}
