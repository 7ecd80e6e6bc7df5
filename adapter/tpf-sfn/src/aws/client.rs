//! Building SDK clients. Every command that touches AWS takes the same connection flags.

use aws_config::{BehaviorVersion, Region};

/// `--endpoint-url`, `--region`, `--profile`: overrides on top of the standard config chain.
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
}

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

    /// Loads the SDK configuration: the default chain, then these overrides.
    pub async fn load(&self) -> aws_config::SdkConfig {
        let mut loader = aws_config::defaults(BehaviorVersion::latest());
        if let Some(url) = &self.endpoint_url {
            loader = loader.endpoint_url(url);
        }
        if let Some(region) = &self.region {
            loader = loader.region(Region::new(region.clone()));
        }
        if let Some(profile) = &self.profile {
            loader = loader.profile_name(profile);
        }
        loader.load().await
    }
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
    use super::is_loopback_url;

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
