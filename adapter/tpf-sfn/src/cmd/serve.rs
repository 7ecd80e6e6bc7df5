//! `tpf-sfn serve`: the reference action host on a socket.

use crate::stdio::errln;
use std::sync::Arc;

use tpf_model::coordinator::local_release;
use tpf_model::coordinator::CoordinatorConfig;
use tpf_model::gateway::{InMemoryBindings, Table};
use tpf_model::{Coordinator, InMemoryStore};

use crate::aws::dynamo_store::{DynamoRows, DynamoStore};
use crate::cli::{ServeArgs, StoreKind};
use crate::cmd::tables::{runtime, table_names};
use crate::error::Error;
use crate::exit::{CmdResult, Failure};
use crate::host::pipeline::{self, HostedPipeline};
use crate::host::{router, system_clock, HostBindings, HostState, HostStore};
use crate::input::read;

pub fn run(args: &ServeArgs) -> CmdResult {
    let token = args
        .token
        .clone()
        .or_else(|| std::env::var("TPF_SFN_TOKEN").ok())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            Error::new(
                "NO_TOKEN",
                "no bearer token: the host never runs unauthenticated",
            )
            .with_hint("pass --token or set TPF_SFN_TOKEN")
        })?;
    let contract = read(&args.pipeline_contract)?;
    let script = match &args.script {
        Some(path) => Some(String::from_utf8_lossy(&read(path)?).into_owned()),
        None => None,
    };
    // The flag's range keeps this far from overflow, and an expiry added to now from wrapping.
    let timeout_ms = i64::try_from(args.coordinator.await_timeout_seconds)
        .unwrap_or(i64::MAX)
        .saturating_mul(1000);
    let releases = args
        .releases
        .iter()
        .map(|p| Ok((p.display().to_string(), read(p)?)))
        .collect::<Result<Vec<_>, Failure>>()?;
    let releases: Vec<(&str, &[u8])> = releases
        .iter()
        .map(|(f, b)| (f.as_str(), b.as_slice()))
        .collect();
    let hosted = pipeline::load(
        &args.pipeline_contract.display().to_string(),
        &contract,
        &releases,
        script.as_deref(),
        timeout_ms,
    )?;
    let rt = runtime()?;
    match args.store {
        StoreKind::Memory => {
            let bindings = Box::new(InMemoryBindings::new());
            serve(&rt, args, token, hosted, InMemoryStore::new(), bindings)
        }
        StoreKind::Dynamodb => {
            let names = table_names(&args.tables)?;
            // TPF's callback-binding table, named as `--prefix` and `--table` name the others.
            let table = names.callback_binding.clone();
            let config = rt.block_on(args.connection.load())?;
            let client = aws_sdk_dynamodb::Client::new(&config);
            let store = DynamoStore::new(client, names, rt.handle().clone());
            let bindings = Box::new(Table(DynamoRows::new(store.clone(), table)));
            serve(&rt, args, token, hosted, store, bindings)
        }
    }
}

fn serve<S: HostStore>(
    rt: &tokio::runtime::Runtime,
    args: &ServeArgs,
    token: String,
    hosted: HostedPipeline,
    store: S,
    bindings: HostBindings,
) -> CmdResult {
    let config = CoordinatorConfig {
        max_retries: args.coordinator.max_retries,
        retry_delay_ms: args.coordinator.retry_delay_ms.max(0),
        retry_multiplier: args.coordinator.retry_multiplier,
        // The host takes submissions without a key (it derives one); TPF's strict queue mode
        // refuses that default policy, so the host runs with strict startup off.
        strict_startup: false,
        ..CoordinatorConfig::default()
    };
    let mut coordinator = Coordinator::with_config(store, hosted.pipeline, hosted.worker, config);
    let contract = hosted.contract;
    let now = system_clock();
    // Store calls block on the runtime: do this before entering it.
    for tenant in &args.activate_tenants {
        coordinator
            .register_release(&local_release(tenant, &hosted.identity, now))
            .and_then(|_| {
                coordinator.activate_release(
                    tenant,
                    &hosted.identity.pipeline_id,
                    &hosted.identity.release_version,
                    now,
                )
            })
            .map_err(|e| {
                Error::new(
                    "ACTIVATE",
                    format!("cannot activate the release for tenant {tenant}"),
                )
                .with_source(e)
                .with_hint(
                    "check the store is reachable and its tables exist (`tpf-sfn tables create`)",
                )
            })?;
    }
    // A request waits for the coordinator at most as long as one store call may take.
    let state = Arc::new(
        HostState::with_bindings(coordinator, bindings, token, system_clock)
            .with_lock_wait(args.connection.timeout())
            .with_contract(contract),
    );
    rt.block_on(async {
        // Ends with the runtime, when the host stops.
        crate::host::work::spawn(state.clone(), crate::host::work::WORK_PERIOD);
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .map_err(|e| listen_error(&args.listen, e))?;
        let local = listener
            .local_addr()
            .map_err(|e| listen_error(&args.listen, e))?;
        errln!(
            "tpf-sfn serve: {} release {} on http://{local}",
            hosted.identity.pipeline_id,
            hosted.identity.release_version
        );
        if let Some(warning) = exposure_warning(&local) {
            errln!("tpf-sfn serve: warning: {warning}");
        }
        crate::host::serve(listener, router(state))
            .await
            .map_err(|e| {
                Error::new("SERVE", "the action host stopped")
                    .with_source(e)
                    .with_hint("its cause is above; start it again")
                    .into()
            })
    })
}

/// `LISTEN`: the address is taken or not ours to bind.
pub(crate) fn listen_error(listen: &str, e: std::io::Error) -> Error {
    Error::new("LISTEN", format!("cannot listen on {listen}"))
        .with_source(e)
        .with_hint("pick another --listen")
}

/// A warning when the host listens beyond this machine: it speaks plain http with one shared
/// token, which is fine on loopback and nowhere else without TLS in front.
pub(crate) fn exposure_warning(local: &std::net::SocketAddr) -> Option<String> {
    (!local.ip().is_loopback()).then(|| {
        format!(
            "listening on {local}, reachable from other machines: the reference host speaks plain \
             http with one bearer token; keep it on 127.0.0.1, or put TLS and a firewall in front"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_non_loopback_address_is_warned_about() {
        for quiet in ["127.0.0.1:8080", "[::1]:8080"] {
            assert_eq!(exposure_warning(&quiet.parse().unwrap()), None, "{quiet}");
        }
        for loud in ["0.0.0.0:8080", "[::]:8080", "192.168.1.5:80"] {
            let w = exposure_warning(&loud.parse().unwrap()).expect(loud);
            assert!(w.contains("reachable from other machines"), "{w}");
        }
    }
}
