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
