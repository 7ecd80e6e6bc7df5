//! The bearer token the functions send to TPF's Action API.
//!
//! Deployed, it lives in an SSM SecureString parameter whose name the function's environment
//! holds (`TPF_SFN_ACTION_TOKEN_PARAMETER`, checked to be a full path): the function reads it at
//! run time (`GetParameter` WithDecryption), keeps it for [`CACHE_FOR`], and reads it once more
//! when TPF refuses it (401 or 403) before giving up on the call. A rotated token therefore
//! reaches a running function within the cache window, or at its first refused call, without
//! a new release: a published version freezes its environment, which holds only the name.
//!
//! Locally (`tpf-sfn relay --token`, a bootstrap started by hand or by the tests) the token is
//! a fixed value ([`ActionToken::Local`]); no exported stack sets one.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tpf_sfn_compiler::lowering::action_token::check_name;
pub use tpf_sfn_wakeup::relay::{Reply, Unreachable};

use crate::error::Error;

/// How long a read token is used before it is read again.
pub const CACHE_FOR: Duration = Duration::from_secs(300);

/// Where "now" comes from: the system's monotonic clock, or the tests' own.
pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
}

/// The system's monotonic clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// Where a call's bearer token comes from.
#[derive(Clone, Default)]
pub enum ActionToken {
    /// No `Authorization` header.
    #[default]
    None,
    /// A fixed token: local runs only.
    Local(Arc<str>),
    /// The deployed functions': read from SSM at run time.
    Parameter(Arc<ParameterToken>),
}

impl std::fmt::Debug for ActionToken {
    // Never the token itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActionToken::None => f.write_str("ActionToken::None"),
            ActionToken::Local(_) => f.write_str("ActionToken::Local(..)"),
            ActionToken::Parameter(p) => write!(f, "ActionToken::Parameter({})", p.name),
        }
    }
}

impl From<Option<String>> for ActionToken {
    fn from(token: Option<String>) -> Self {
        match token {
            Some(t) => ActionToken::Local(t.into()),
            None => ActionToken::None,
        }
    }
}

/// TPF refused the token: the Action API's answer to a missing or wrong bearer token.
pub fn is_auth_failure(status: u16) -> bool {
    matches!(status, 401 | 403)
}

impl ActionToken {
    /// The token to send now (`None`: no header).
    pub async fn current(&self) -> Result<Option<Arc<str>>, Error> {
        match self {
            ActionToken::None => Ok(None),
            ActionToken::Local(t) => Ok(Some(t.clone())),
            ActionToken::Parameter(p) => p.get().await.map(Some),
        }
    }

    /// One call with the current token; when TPF refuses it and the token comes from SSM, one
    /// more read, and the call again if the parameter now holds another token. A failed read
    /// is a transport failure: the caller's retries apply.
    pub async fn authorized<F, Fut>(&self, send: F) -> Result<Reply, Unreachable>
    where
        F: Fn(Option<Arc<str>>) -> Fut,
        Fut: Future<Output = Result<Reply, Unreachable>>,
    {
        let unreadable = |e: Error| Unreachable(e.report().to_string());
        let token = self.current().await.map_err(unreadable)?;
        let reply = send(token.clone()).await?;
        let (ActionToken::Parameter(p), Some(refused)) = (self, token) else {
            return Ok(reply);
        };
        if !is_auth_failure(reply.status) {
            return Ok(reply);
        }
        match p.after_refusal(&refused).await.map_err(unreadable)? {
            Some(fresh) => send(Some(fresh)).await,
            None => Ok(reply),
        }
    }
}

struct Cached {
    value: Arc<str>,
    read_at: Instant,
}

/// The token of one SSM SecureString parameter, cached for a bounded time.
pub struct ParameterToken {
    client: aws_sdk_ssm::Client,
    name: String,
    cache_for: Duration,
    clock: Arc<dyn Clock>,
    cached: tokio::sync::Mutex<Option<Cached>>,
    reads: AtomicU64,
}

impl ParameterToken {
    /// `ACTION_TOKEN_PARAMETER` when `name` is not a full parameter path.
    pub fn new(client: aws_sdk_ssm::Client, name: &str) -> Result<Self, Error> {
        check_name(name).map_err(|e| {
            Error::new(
                "ACTION_TOKEN_PARAMETER",
                format!("the Action API token's parameter name: {e}"),
            )
            .with_hint("name the SSM SecureString parameter by its full path, e.g. /tpf/action-token (docs/operator-guide.md)")
            .with_source(e)
        })?;
        Ok(ParameterToken {
            client,
            name: name.to_owned(),
            cache_for: CACHE_FOR,
            clock: Arc::new(SystemClock),
            cached: tokio::sync::Mutex::new(None),
            reads: AtomicU64::new(0),
        })
    }

    /// Over an SSM client of `config` (the function's role, region and endpoint).
    pub fn from_config(config: &aws_config::SdkConfig, name: &str) -> Result<Self, Error> {
        Self::new(aws_sdk_ssm::Client::new(config), name)
    }

    /// The same, on another clock and cache window (the tests' virtual time).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>, cache_for: Duration) -> Self {
        self.clock = clock;
        self.cache_for = cache_for;
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many times the parameter was read.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// The cached token while it is younger than the window, otherwise a fresh read. Callers
    /// that arrive during a read wait for it rather than read again.
    pub async fn get(&self) -> Result<Arc<str>, Error> {
        let mut cached = self.cached.lock().await;
        let now = self.clock.now();
        if let Some(c) = cached.as_ref() {
            if now.saturating_duration_since(c.read_at) < self.cache_for {
                return Ok(c.value.clone());
            }
        }
        let value = self.read().await?;
        *cached = Some(Cached {
            value: value.clone(),
            read_at: now,
        });
        Ok(value)
    }

    /// TPF refused `refused`: the token another caller already read in its place, or one read
    /// now. `None` when the parameter still holds the refused token.
    pub async fn after_refusal(&self, refused: &str) -> Result<Option<Arc<str>>, Error> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref() {
            if &*c.value != refused {
                return Ok(Some(c.value.clone()));
            }
        }
        let now = self.clock.now();
        let value = self.read().await?;
        *cached = Some(Cached {
            value: value.clone(),
            read_at: now,
        });
        Ok((&*value != refused).then_some(value))
    }

    async fn read(&self) -> Result<Arc<str>, Error> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        let out = self
            .client
            .get_parameter()
            .name(&self.name)
            .with_decryption(true)
            .send()
            .await
            .map_err(|e| {
                use aws_sdk_ssm::error::ProvideErrorMetadata;
                let hint = match e.code() {
                    Some("AccessDeniedException") => "the function's role needs ssm:GetParameter on the parameter's ARN (and, for a customer managed key, kms:Decrypt through Parameter Store): the exported stacks grant both",
                    Some("ParameterNotFound") => "create the SecureString parameter (docs/operator-guide.md)",
                    _ => "SSM could not be asked; the call is retried",
                };
                Error::new(
                    "ACTION_TOKEN_READ",
                    format!(
                        "cannot read the Action API token from SSM parameter {}",
                        self.name
                    ),
                )
                .with_hint(hint)
                .with_detail(aws_sdk_ssm::error::DisplayErrorContext(&e).to_string())
                .with_source(e)
            })?;
        let parameter = out.parameter.ok_or_else(|| {
            Error::new(
                "ACTION_TOKEN_READ",
                format!("SSM returned no parameter for {}", self.name),
            )
            .with_hint("create the SecureString parameter (docs/operator-guide.md)")
        })?;
        // A plain String parameter shows the token to whoever may describe parameters.
        if parameter.r#type != Some(aws_sdk_ssm::types::ParameterType::SecureString) {
            return Err(Error::new(
                "ACTION_TOKEN_READ",
                format!(
                    "SSM parameter {} is not a SecureString: the token would be stored in plain text",
                    self.name
                ),
            )
            .with_hint("put it again with --type SecureString (docs/operator-guide.md)"));
        }
        match parameter.value {
            Some(v) if !v.is_empty() => Ok(v.into()),
            _ => Err(Error::new(
                "ACTION_TOKEN_READ",
                format!("SSM parameter {} holds an empty token", self.name),
            )
            .with_hint("put the Action API token into it (docs/operator-guide.md)")),
        }
    }
}
