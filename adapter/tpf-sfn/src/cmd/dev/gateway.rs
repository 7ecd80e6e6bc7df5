//! The gateway protocol's wake path in `dev`: the gateway wake-up on the streams of TPF's
//! await-interaction table and of the callback-binding table, and the reconciler on the
//! driver's ended executions, each running the deployed functions' own per-event work
//! (`tpf_sfn_wakepath::gateway`) against `serve`'s gateway route. On AWS, Lambda's event source
//! mappings and EventBridge deliver those events; here one thread polls for them.

use crate::stdio::errln;
use std::time::Duration;

use tpf_sfn_wakepath::drivers::{DurableFunctions, Machines};
use tpf_sfn_wakepath::gateway::bindings::BindingTable;
use tpf_sfn_wakepath::gateway::invoke::HttpInvoker;
use tpf_sfn_wakepath::gateway::local::{StatusChanges, StreamMapping};
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
    /// The driver machine whose ended executions reach the reconciler.
    pub(super) driver_arn: String,
    pub(super) idle_interval_ms: u64,
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
            lambda: aws_sdk_lambda::Client::new(config),
        },
    })
}

pub(super) fn run(w: &GatewayWake) -> CmdResult {
    let rt = runtime()?;
    rt.block_on(async {
        let config = w.connection.load().await?;
        let starter = || Starter {
            sfn: aws_sdk_sfn::Client::new(&config),
            lambda: aws_sdk_lambda::Client::new(&config),
            machines: w.machines.clone(),
            durable: DurableFunctions::default(),
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
        let mut changes = StatusChanges::new(&config, vec![w.driver_arn.clone()]);
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
            match changes.poll_once(&reconciler).await {
                Ok(handled) => {
                    for (arn, result) in handled {
                        busy = true;
                        match result {
                            Ok(Reconciled::Started(name)) => {
                                errln!("reconciler: {arn} ended; started {name}")
                            }
                            Ok(other) => errln!("reconciler: {arn} ended; {other:?}"),
                            Err(e) => errln!("reconciler: {arn}: {}", e.report()),
                        }
                    }
                }
                Err(e) => errln!("{}", e.report()),
            }
            let pause = if busy { idle.busy() } else { idle.idle() };
            tokio::time::sleep(pause).await;
        }
    })
}
