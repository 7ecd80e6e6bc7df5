//! `tpf-sfn bridge`: the wakeup bridge, polling until interrupted (or one pass with `--once`).

use crate::stdio::errln;
use std::time::Duration;

use crate::bridge::{Bridge, DurableFunctions, Machines};
use crate::cli::BridgeArgs;
use crate::cmd::idle::Idle;
use crate::cmd::tables::{runtime, table_names};
use crate::exit::CmdResult;

pub fn run(args: &BridgeArgs) -> CmdResult {
    let names = table_names(&args.tables)?;
    let durable = match &args.durable_functions {
        Some(json) => DurableFunctions::parse(json)?,
        None => DurableFunctions::default(),
    };
    if let Some(url) = &args.lambda_endpoint_url {
        crate::aws::client::check_endpoint("--lambda-endpoint-url", url)?;
    }
    let rt = runtime()?;
    rt.block_on(async {
        let config = args.connection.load().await?;
        let bridge = Bridge::new(
            &config,
            names,
            Machines {
                arn_prefix: args.machine_arn_prefix.clone(),
                name_prefix: args.name_prefix.clone(),
            },
        )
        .with_durable(
            lambda_client(&config, args.lambda_endpoint_url.as_deref()),
            durable,
        );
        let interval = Duration::from_millis(args.interval_ms);
        let mut idle = Idle::new(
            interval,
            Duration::from_millis(args.idle_interval_ms.unwrap_or(args.interval_ms)),
        );
        loop {
            let pause = match bridge.poll_once().await {
                Ok(report) => {
                    for refused in &report.refused {
                        errln!("bridge: driver start refused for {refused}");
                    }
                    if report.records > 0 || args.once {
                        errln!(
                            "bridge: {} records, {} drivers started, {} woken, {} already done",
                            report.records,
                            report.started,
                            report.woken,
                            report.already_done
                        );
                    }
                    if report.records > 0 {
                        idle.busy()
                    } else {
                        idle.idle()
                    }
                }
                // A failed pass leaves its checkpoints where they were; the next pass retries.
                Err(e) if !args.once => {
                    errln!("{}", e.report());
                    idle.busy()
                }
                Err(e) => return Err(e.into()),
            };
            if args.once {
                return Ok(());
            }
            tokio::time::sleep(pause).await;
        }
    })
}

/// Lambda's client: the shared connection, or its own endpoint when one is given.
pub fn lambda_client(
    config: &aws_config::SdkConfig,
    endpoint: Option<&str>,
) -> aws_sdk_lambda::Client {
    let mut builder = aws_sdk_lambda::config::Builder::from(config);
    if let Some(url) = endpoint {
        builder = builder.endpoint_url(url);
    }
    aws_sdk_lambda::Client::from_conf(builder.build())
}
