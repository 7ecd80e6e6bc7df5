//! `tpf-sfn relay`: the gateway binding's queue transport, long-polling until interrupted (or
//! one pass with `--once`).

use crate::stdio::errln;
use std::time::Duration;

use crate::cli::{RelayArgs, RelayProtocol};
use crate::cmd::idle::Idle;
use crate::cmd::tables::runtime;
use crate::error::Error;
use crate::exit::CmdResult;
use crate::relay::gateway::{GatewayRelay, LambdaGateway};
use crate::relay::http::HttpActionHost;
use crate::relay::{MessageHandler, Relay};

pub fn run(args: &RelayArgs) -> CmdResult {
    if args.protocol == RelayProtocol::ActionApi {
        return Err(Error::new(
            "ACTION_API_V1_RETIRED",
            "`relay --protocol action-api` is retired: TPF does not serve Action API v1, and no \
             driver tpf-sfn deploys calls it",
        )
        .with_location("--protocol")
        .with_hint(
            "compile the driver with the gateway binding's queue transport (`[binding] kind = \
             \"gateway\"`, `transport = \"queue\"`) and run `relay --protocol gateway`",
        )
        .into());
    }
    let token = args
        .token
        .clone()
        .or_else(|| std::env::var("TPF_SFN_TOKEN").ok())
        .filter(|t| !t.is_empty());
    let host = HttpActionHost::new(
        &args.action_url,
        token,
        Duration::from_secs(args.action_timeout_seconds),
    )?;
    let rt = runtime()?;
    rt.block_on(async {
        let config = args.connection.load().await?;
        let sqs = aws_sdk_sqs::Client::new(&config);
        let sfn = aws_sdk_sfn::Client::new(&config);
        match &args.gateway_function_arn {
            None => {
                let handler = GatewayRelay::new(sfn, host);
                poll(
                    args,
                    Relay::with_handler(sqs, args.queue_url.clone(), handler),
                )
                .await
            }
            Some(arn) => {
                let lambda = LambdaGateway::new(aws_sdk_lambda::Client::new(&config), arn);
                let handler = GatewayRelay::new(sfn, lambda);
                poll(
                    args,
                    Relay::with_handler(sqs, args.queue_url.clone(), handler),
                )
                .await
            }
        }
    })
}

async fn poll<H: MessageHandler + Sync>(args: &RelayArgs, mut relay: Relay<H>) -> CmdResult {
    {
        relay.wait_seconds = args.wait_seconds;
        relay.concurrency = usize::from(args.concurrency);
        let mut idle = Idle::new(Duration::ZERO, Duration::from_millis(args.idle_interval_ms));
        loop {
            match relay.poll_once().await {
                Ok(report) => {
                    let pause = if report.received > 0 {
                        idle.busy()
                    } else {
                        idle.idle()
                    };
                    if !pause.is_zero() && !args.once {
                        tokio::time::sleep(pause).await;
                    }
                    for m in &report.malformed {
                        errln!("relay: deleted malformed message {m}");
                    }
                    for r in &report.retained {
                        errln!("relay: left for redelivery {r}");
                    }
                    for f in &report.failures {
                        errln!("relay: failed {f}");
                    }
                    if report.received > 0 || args.once {
                        errln!(
                            "relay: {} messages, {} succeeded, {} failed, {} already done",
                            report.received,
                            report.succeeded,
                            report.failed,
                            report.already_done
                        );
                    }
                }
                Err(e) if !args.once => {
                    errln!("{}", e.report());
                    // Back off so an unreachable queue does not spin the loop.
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Err(e) => return Err(e.into()),
            }
            if args.once {
                return Ok(());
            }
        }
    }
}
