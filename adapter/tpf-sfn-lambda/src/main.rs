//! The Lambda functions' `bootstrap`: one binary, five handlers (the function's `Handler`
//! setting, or `TPF_SFN_HANDLER`, picks `relay`, `durable-driver`, or the gateway host's
//! `gateway-wakeup`, `gateway-reconciler` and `gateway-starter`), on Lambda's runtime API through `lambda_runtime` (the durable driver
//! through the durable execution SDK's wrapper of it).

// The handlers' futures nest deeply inside `main`'s (the AWS SDK's and the durable SDK's); the
// compiler's default limit stops short of laying them out.
#![recursion_limit = "256"]

use aws_lambda_events::event::dynamodb::Event;
use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{service_fn, LambdaEvent};
use serde_json::Value;
use tpf_sfn_lambda::config::{Env, Handler};
use tpf_sfn_lambda::durable::Driver;
use tpf_sfn_wakepath::gateway::reconciler::Reconciler;
use tpf_sfn_wakepath::relay::gateway::{GatewayRelay, LambdaGateway};

type Error = lambda_runtime::Error;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let env = Env(|name: &str| std::env::var(name).ok());
    let handler = env.handler()?;
    // The function's role, region and endpoint come from Lambda's environment.
    let config = aws_config::load_from_env().await;
    match handler {
        Handler::DurableDriver => {
            let driver = std::sync::Arc::new(Driver::new(&env, &config)?);
            aws_durable_execution_sdk::run(move |input: Value, ctx| {
                tpf_sfn_lambda::durable::handle(driver.clone(), input, ctx)
            })
            .await
        }
        Handler::GatewayWakeup => {
            let (host, starter) = tpf_sfn_lambda::gateway::pieces(&env.gateway_host()?, &config)
                .map_err(|e| e.report().to_string())?;
            let wakeup = tpf_sfn_lambda::gateway::wakeup(host, starter);
            let wakeup = &wakeup;
            lambda_runtime::run(service_fn(move |event: LambdaEvent<Event>| async move {
                let b = tpf_sfn_lambda::gateway::wakeup_batch(wakeup, &event.payload).await;
                eprintln!(
                    "gateway-wakeup: {} acknowledged, {} bound, {} delivered, {} replaced, {} retried",
                    b.acknowledged,
                    b.bound,
                    b.delivered,
                    b.replaced,
                    b.retried.len()
                );
                for r in &b.retried {
                    eprintln!("gateway-wakeup: retried {r}");
                }
                Ok::<_, Error>(b.response)
            }))
            .await
        }
        Handler::GatewayReconciler => {
            let (host, starter) = tpf_sfn_lambda::gateway::pieces(&env.gateway_host()?, &config)
                .map_err(|e| e.report().to_string())?;
            let reconciler = Reconciler { host, starter };
            let reconciler = &reconciler;
            lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
                let done = tpf_sfn_lambda::gateway::reconcile(reconciler, &event.payload)
                    .await
                    .map_err(|e| e.report().to_string())?;
                eprintln!("gateway-reconciler: {done:?}");
                Ok::<_, Error>(Value::Null)
            }))
            .await
        }
        Handler::GatewayStarter => {
            let starter = tpf_sfn_lambda::gateway::starter(&env.drivers()?, &config);
            let starter = &starter;
            lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
                let started = tpf_sfn_lambda::gateway::start(starter, &event.payload)
                    .await
                    .map_err(|e| e.report().to_string())?;
                Ok::<_, Error>(started)
            }))
            .await
        }
        Handler::Relay => {
            // The gateway binding's queue transport: invoke the gateway function.
            let sfn = aws_sdk_sfn::Client::new(&config);
            let lambda = LambdaGateway::new(
                aws_sdk_lambda::Client::new(&config),
                env.gateway_function()?,
            );
            relay(GatewayRelay::new(sfn, lambda)).await
        }
    }
}

/// Runs the relay handler over the gateway relay's messages.
async fn relay<H: tpf_sfn_wakepath::relay::MessageHandler + Sync>(handler: H) -> Result<(), Error> {
    let relay = &handler;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        let batch = tpf_sfn_lambda::relay::handle(relay, &event.payload).await;
        let r = &batch.report;
        eprintln!(
            "relay: {} messages, {} succeeded, {} failed, {} already done, {} malformed, {} retried",
            r.received,
            r.succeeded,
            r.failed,
            r.already_done,
            r.malformed.len(),
            r.retained.len()
        );
        for m in r.malformed.iter().chain(&r.retained) {
            eprintln!("relay: {m}");
        }
        for f in &r.failures {
            eprintln!("relay: failed {f}");
        }
        Ok::<_, Error>(batch.response)
    }))
    .await
}
