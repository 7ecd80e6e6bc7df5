//! The relay's HTTP/1.1 client for `serve`'s gateway route, on the hyper the AWS SDK already
//! links.
//!
//! Plain `http://` only: the action host is TPF itself, next to the relay (sidecar or same VPC);
//! TLS termination, if any, is the load balancer's job.

use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::error::Error;

pub use tpf_sfn_wakeup::relay::Unreachable;

/// `http://host:port[/base]` with an optional bearer token.
#[derive(Clone)]
pub struct HttpActionHost {
    authority: String,
    base_path: String,
    token: Option<String>,
    timeout: Duration,
}

impl std::fmt::Debug for HttpActionHost {
    // Never the token itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpActionHost")
            .field("authority", &self.authority)
            .field("base_path", &self.base_path)
            .field("token", &self.token.as_ref().map(|_| ".."))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl HttpActionHost {
    pub fn new(url: &str, token: Option<String>, timeout: Duration) -> Result<Self, Error> {
        let bad = |message: String| {
            Error::new("ACTION_URL", message)
                .with_hint("give --action-url as http://host:port[/base]")
        };
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| bad(format!("action URL `{url}` must start with http://")))?;
        let (authority, base) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if authority.is_empty() {
            return Err(bad(format!("action URL `{url}` has no host")));
        }
        let authority = if authority.contains(':') && !authority.ends_with(']') {
            authority.to_owned()
        } else {
            format!("{authority}:80")
        };
        Ok(HttpActionHost {
            authority,
            base_path: base.to_owned(),
            token,
            timeout,
        })
    }

    /// One POST within the timeout, keeping the value of the response header `header` (the
    /// gateway's route names a function error in one, as Lambda's Invoke does).
    pub async fn exchange(
        &self,
        path: &str,
        body: &str,
        header: &str,
    ) -> Result<Exchange, Unreachable> {
        let attempt = self.exchange_once(path, body, Some(header), self.token.as_deref());
        match tokio::time::timeout(self.timeout, attempt).await {
            Ok(result) => result,
            Err(_) => Err(self.late()),
        }
    }

    fn late(&self) -> Unreachable {
        Unreachable(format!(
            "no answer from {} within {:?}",
            self.authority, self.timeout
        ))
    }

    async fn exchange_once(
        &self,
        path: &str,
        body: &str,
        header: Option<&str>,
        token: Option<&str>,
    ) -> Result<Exchange, Unreachable> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            Unreachable(format!("{what} {}: {e}", self.authority))
        };
        let stream = TcpStream::connect(&self.authority)
            .await
            .map_err(|e| fail("connect", &e))?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| fail("handshake with", &e))?;
        // The connection task ends when the request is done; one connection per call keeps the
        // relay stateless (a call is milliseconds next to a Step Functions transition).
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut request = hyper::Request::post(format!("{}{path}", self.base_path))
            .header(hyper::header::HOST, &self.authority)
            .header(hyper::header::CONTENT_TYPE, "application/json");
        if let Some(token) = token {
            request = request.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_owned())))
            .map_err(|e| fail("build request for", &e))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| fail("request to", &e))?;
        let status = response.status().as_u16();
        let header = header
            .and_then(|h| response.headers().get(h))
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| fail("read response from", &e))?
            .to_bytes();
        Ok(Exchange {
            status,
            header,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}

/// An HTTP answer with the one header the caller asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    pub status: u16,
    pub header: Option<String>,
    pub body: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls() {
        let h =
            HttpActionHost::new("http://127.0.0.1:8080/", None, Duration::from_secs(1)).unwrap();
        assert_eq!(
            (h.authority.as_str(), h.base_path.as_str()),
            ("127.0.0.1:8080", "")
        );
        let h = HttpActionHost::new("http://tpf/api", None, Duration::from_secs(1)).unwrap();
        assert_eq!(
            (h.authority.as_str(), h.base_path.as_str()),
            ("tpf:80", "/api")
        );
        assert!(HttpActionHost::new("https://x", None, Duration::from_secs(1)).is_err());
        assert!(HttpActionHost::new("http:///x", None, Duration::from_secs(1)).is_err());
    }
}
