//! Building SDK clients. Every command that touches AWS takes the same connection flags.

use std::time::Duration;

#[cfg(feature = "aws")]
use aws_config::timeout::TimeoutConfig;
#[cfg(feature = "aws")]
use aws_config::{BehaviorVersion, Region};

use crate::error::Error;

/// The longest `--aws-timeout-seconds`: an hour is far beyond any single AWS call.
pub const MAX_AWS_TIMEOUT_SECONDS: u64 = 3600;

/// How long connecting may take at most; a refused or unreachable endpoint answers far sooner.
#[cfg(feature = "aws")]
const CONNECT_TIMEOUT: Duration = Duration::from_millis(3100);

/// `--endpoint-url`, `--region`, `--profile`, `--aws-timeout-seconds`: overrides on top of the
/// standard config chain.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Connection {
    /// Endpoint for every AWS service (e.g. a local emulator); `AWS_ENDPOINT_URL` also works.
    #[arg(long)]
    pub endpoint_url: Option<String>,
    /// AWS region; otherwise the config chain's (`AWS_REGION`, profile).
    #[arg(long)]
    pub region: Option<String>,
    /// Named profile from the shared AWS config files.
    #[arg(long)]
    pub profile: Option<String>,
    /// The longest one AWS call may take, its retries included (1 to 3600; default 20, and 300
    /// for `deploy`'s upload of a durable driver's code). Without a bound a stalled service would
    /// hold the command, or every request of `serve`, for ever.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_AWS_TIMEOUT_SECONDS))]
    pub aws_timeout_seconds: Option<u64>,
}

/// The bound on one AWS call unless `--aws-timeout-seconds` says otherwise.
pub const DEFAULT_AWS_TIMEOUT: Duration = Duration::from_secs(20);

/// The default bound for a call that uploads a function's code (up to 50 MiB in the request).
pub const DEFAULT_UPLOAD_TIMEOUT: Duration = Duration::from_secs(300);

impl Connection {
    /// The endpoint Step Functions calls go to when it is a local emulator (a loopback host):
    /// `--endpoint-url`, else `AWS_ENDPOINT_URL_SFN`, else `AWS_ENDPOINT_URL`, as the SDK
    /// picks them. `None` means AWS itself, where placeholders are refused.
    pub fn emulator_endpoint(&self) -> Option<String> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let ignore_env = env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let url = self.endpoint_url.clone().or_else(|| {
            if ignore_env {
                None
            } else {
                env("AWS_ENDPOINT_URL_SFN").or_else(|| env("AWS_ENDPOINT_URL"))
            }
        })?;
        is_loopback_url(&url).then_some(url)
    }

    /// `ENDPOINT_INVALID` when `--endpoint-url` or an `AWS_ENDPOINT_URL*` variable is empty or
    /// malformed (the SDK would panic on it).
    pub fn check(&self) -> Result<(), Error> {
        check_endpoints(self.endpoint_url.as_deref())
    }

    /// The bound on one AWS call, retries included.
    pub fn timeout(&self) -> Duration {
        self.timeout_or(DEFAULT_AWS_TIMEOUT)
    }

    /// `--aws-timeout-seconds`, or `default` when it is not given.
    pub fn timeout_or(&self, default: Duration) -> Duration {
        self.aws_timeout_seconds.map_or(default, |s| {
            Duration::from_secs(s.clamp(1, MAX_AWS_TIMEOUT_SECONDS))
        })
    }

    /// The SDK's timeouts for calls bounded by `timeout`.
    #[cfg(feature = "aws")]
    pub fn timeouts(timeout: Duration) -> TimeoutConfig {
        TimeoutConfig::builder()
            .connect_timeout(CONNECT_TIMEOUT.min(timeout))
            .operation_attempt_timeout(timeout)
            .operation_timeout(timeout)
            .build()
    }

    /// Loads the SDK configuration: the default chain, then these overrides, with every call
    /// bounded by [`Connection::timeout`]. An empty or malformed endpoint, given or in the
    /// environment, is `ENDPOINT_INVALID` here rather than a panic inside the SDK.
    #[cfg(feature = "aws")]
    pub async fn load(&self) -> Result<aws_config::SdkConfig, Error> {
        self.check()?;
        let timeout = self.timeout();
        let mut loader =
            aws_config::defaults(BehaviorVersion::latest()).timeout_config(Self::timeouts(timeout));
        if let Some(url) = &self.endpoint_url {
            loader = loader.endpoint_url(url);
        }
        if let Some(region) = &self.region {
            loader = loader.region(Region::new(region.clone()));
        }
        if let Some(profile) = &self.profile {
            loader = loader.profile_name(profile);
        }
        Ok(loader.load().await)
    }
}

/// `--endpoint-url` and every `AWS_ENDPOINT_URL*` variable the SDK would read must be an
/// absolute `http(s)://host…` URL.
fn check_endpoints(flag: Option<&str>) -> Result<(), Error> {
    if let Some(url) = flag {
        check_endpoint("--endpoint-url", url)?;
    }
    for (name, value) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("AWS_ENDPOINT_URL") {
            check_endpoint(name, &value.to_string_lossy())?;
        }
    }
    Ok(())
}

/// `ENDPOINT_INVALID` unless `url` is `http://` or `https://` followed by a host.
pub fn check_endpoint(source: &str, url: &str) -> Result<(), Error> {
    let host = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .map(|rest| rest.split(['/', '?', '#']).next().unwrap_or(""));
    let valid = host.is_some_and(|h| {
        !h.is_empty() && !h.starts_with(':') && !h.chars().any(|c| c.is_whitespace() || c == '@')
    });
    if valid {
        return Ok(());
    }
    Err(Error::new(
        "ENDPOINT_INVALID",
        format!("{source} is `{url}`, not an http(s) URL with a host"),
    )
    .with_hint(
        "give a URL such as http://127.0.0.1:5000, or leave the endpoint unset to reach AWS",
    ))
}

/// `http(s)://127.x.x.x`, `localhost` or `[::1]`, with any port and path.
pub fn is_loopback_url(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::{check_endpoint, is_loopback_url};

    #[test]
    fn an_endpoint_is_an_http_url_with_a_host() {
        for good in [
            "http://127.0.0.1:5000",
            "https://dynamodb.us-east-1.amazonaws.com/",
        ] {
            assert!(check_endpoint("--endpoint-url", good).is_ok(), "{good}");
        }
        for bad in [
            "",
            " ",
            "127.0.0.1:5000",
            "http://",
            "https://:80",
            "ftp://h",
            "http:// h",
        ] {
            let e = check_endpoint("--endpoint-url", bad).unwrap_err();
            assert_eq!(e.code(), "ENDPOINT_INVALID", "{bad}");
        }
    }

    #[test]
    fn loopback_urls_are_emulators_everything_else_is_aws() {
        for url in [
            "http://127.0.0.1:5000",
            "http://localhost:4566/",
            "http://[::1]:9000",
            "http://127.1.2.3",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "https://states.eu-west-1.amazonaws.com",
            "http://10.0.0.5:5000",
            "127.0.0.1:5000",
            "http://127.0.0.1.nip.io",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }
}
