//! The gateway protocol's wake path in `dev`: the gateway wake-up on the streams of TPF's
//! await-interaction table and of the callback-binding table, and the reconciler on the
//! driver's ended executions, each running the deployed functions' own per-event work
//! (`tpf_sfn_wakepath::gateway`) against `serve`'s gateway route. On AWS, Lambda's event source
//! mappings and EventBridge deliver those events; here one thread polls for them. On the
//! durable backend the wake-up sends its callbacks, and starts generations, through the local
//! Lambda endpoint in front of the emulator.

use crate::stdio::errln;
use std::time::Duration;

use tpf_sfn_wakepath::drivers::{DurableFunctions, Machines};
use tpf_sfn_wakepath::gateway::bindings::BindingTable;
use tpf_sfn_wakepath::gateway::invoke::HttpInvoker;
use tpf_sfn_wakepath::gateway::local::{Handled, StatusChanges, StreamMapping};
use tpf_sfn_wakepath::gateway::provider::Providers;
use tpf_sfn_wakepath::gateway::reads::AwsHost;
use tpf_sfn_wakepath::gateway::reconciler::{Reconciled, Reconciler};
use tpf_sfn_wakepath::gateway::starter::Starter;
use tpf_sfn_wakepath::gateway::wakeup::{system_now_ms, Wakeup};

use crate::aws::client::Connection;
use crate::aws::tables::TableNames;
use crate::cmd::idle::Idle;
use crate::cmd::tables::runtime;
use crate::exit::CmdResult;

/// How long one call to `serve`'s gateway route may take.
const GATEWAY_TIMEOUT: Duration = Duration::from_secs(30);

/// What the wake path needs to know of the loop.
pub(super) struct GatewayWake {
    pub(super) connection: Connection,
    pub(super) names: TableNames,
    /// `serve`'s base URL and token.
    pub(super) host: String,
    pub(super) token: String,
    /// Where the release drivers live (the starter names them as `deploy` did).
    pub(super) machines: Machines,
    /// The releases' durable driver functions (none on Step Functions).
    pub(super) durable: DurableFunctions,
    /// The Lambda endpoint (the local one in front of the emulator); the connection's when
    /// `None`.
    pub(super) lambda_endpoint: Option<String>,
    /// The driver machines whose ended executions reach the reconciler.
    pub(super) driver_machines: Vec<String>,
    /// The durable driver functions whose ended executions reach the reconciler.
    pub(super) driver_functions: Vec<String>,
    pub(super) idle_interval_ms: u64,
}

impl GatewayWake {
    fn lambda(&self, config: &aws_config::SdkConfig) -> aws_sdk_lambda::Client {
        let mut lambda = aws_sdk_lambda::config::Builder::from(config);
        if let Some(url) = &self.lambda_endpoint {
            lambda = lambda.endpoint_url(url);
        }
        aws_sdk_lambda::Client::from_conf(lambda.build())
    }
}

fn host(
    config: &aws_config::SdkConfig,
    w: &GatewayWake,
) -> Result<AwsHost<HttpInvoker>, crate::error::Error> {
    Ok(AwsHost {
        gateway: HttpInvoker::with_token(&w.host, Some(w.token.clone()), GATEWAY_TIMEOUT)?,
        bindings: BindingTable::new(
            aws_sdk_dynamodb::Client::new(config),
            &w.names.callback_binding,
        ),
        providers: Providers {
            sfn: aws_sdk_sfn::Client::new(config),
            lambda: w.lambda(config),
        },
    })
}

pub(super) fn run(w: &GatewayWake) -> CmdResult {
    let rt = runtime()?;
    rt.block_on(async {
        let config = w.connection.load().await?;
        let starter = || Starter {
            sfn: aws_sdk_sfn::Client::new(&config),
            lambda: w.lambda(&config),
            machines: w.machines.clone(),
            durable: w.durable.clone(),
        };
        let wakeup = Wakeup {
            host: host(&config, w)?,
            starter: starter(),
            now_ms: system_now_ms,
        };
        let reconciler = Reconciler {
            host: host(&config, w)?,
            starter: starter(),
        };
        let mut streams = StreamMapping::new(
            &config,
            vec![
                w.names.await_interaction.clone(),
                w.names.callback_binding.clone(),
            ],
        );
        let mut changes = StatusChanges::new(&config, w.driver_machines.clone());
        let mut durable_changes =
            StatusChanges::durable(w.lambda(&config), w.driver_functions.clone());
        let mut idle = Idle::new(
            Duration::from_millis(250),
            Duration::from_millis(w.idle_interval_ms),
        );
        loop {
            let mut busy = false;
            match streams.poll_once(&wakeup).await {
                Ok(pass) => {
                    busy |= pass.records > 0;
                    for r in &pass.retried {
                        errln!("wake-up: left for a retry {r}");
                    }
                    for r in &pass.passed_over {
                        errln!("wake-up: passed over after its last retry {r}");
                    }
                    if pass.bound + pass.delivered + pass.replaced > 0 {
                        errln!(
                            "wake-up: {} records, {} bound, {} delivered, {} replaced",
                            pass.records,
                            pass.bound,
                            pass.delivered,
                            pass.replaced
                        );
                    }
                }
                Err(e) => errln!("{}", e.report()),
            }
            busy |= reconciled(changes.poll_once(&reconciler).await);
            busy |= reconciled(durable_changes.poll_once(&reconciler).await);
            let pause = if busy { idle.busy() } else { idle.idle() };
            tokio::time::sleep(pause).await;
        }
    })
}

/// Says what the reconciler did with each ended driver; whether there was any.
fn reconciled(handled: Result<Handled, crate::error::Error>) -> bool {
    match handled {
        Ok(handled) => {
            for (arn, result) in &handled {
                match result {
                    Ok(Reconciled::Started(name)) => {
                        errln!("reconciler: {arn} ended; started {name}")
                    }
                    Ok(other) => errln!("reconciler: {arn} ended; {other:?}"),
                    Err(e) => errln!("reconciler: {arn}: {}", e.report()),
                }
            }
            !handled.is_empty()
        }
        Err(e) => {
            errln!("{}", e.report());
            false
        }
    }
}
