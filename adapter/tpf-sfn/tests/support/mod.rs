//! Shared by the emulator-backed tests: the moto endpoint and SDK config for it.
#![allow(dead_code)]

use std::process::Command;

use aws_config::{BehaviorVersion, Region};
use aws_sdk_sfn::config::Credentials;

/// The moto endpoint: `TPF_SFN_MOTO_ENDPOINT` from scripts/test.sh, or one this test starts with
/// the same script. A test never skips because the emulator is missing: it starts it or fails.
pub fn moto_endpoint() -> String {
    if let Ok(url) = std::env::var("TPF_SFN_MOTO_ENDPOINT") {
        return url;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("bash")
        .arg(root.join("scripts/moto.sh"))
        .arg("start")
        .output()
        .expect("run scripts/moto.sh");
    assert!(
        out.status.success(),
        "could not start moto: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// SDK config for moto: explicit endpoint, region and static credentials, never the default
/// chain (which could reach instance metadata). Nothing here sets a variable of this process:
/// every test of the binary shares its environment.
pub async fn moto_config() -> aws_config::SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(moto_endpoint())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("testing", "testing", None, None, "static"))
        .load()
        .await
}

/// A name unique to this test run, for machines and tables in a shared emulator.
pub fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// `tpf-sfn` as a test runs it: static credentials, an explicit region, never instance metadata
/// or the user's profiles or endpoint, and no token from the caller's environment.
pub fn cli() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tpf-sfn"));
    c.env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("AWS_CONFIG_FILE", "/dev/null")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("TPF_SFN_TOKEN")
        .env_remove("TPF_SFN_ACTION_TOKEN");
    c
}

/// Serves the reference action host on an ephemeral loopback port, in this runtime.
pub async fn spawn_host<S: tpf_sfn::host::HostStore>(
    state: std::sync::Arc<tpf_sfn::host::HostState<S>>,
) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = tpf_sfn::host::serve(listener, tpf_sfn::host::router(state)).await;
    });
    addr
}

/// A child process killed and reaped when dropped, also on panic.
pub struct Reaped(pub std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback port (bound, then released) for a server a test starts.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("ephemeral port")
        .port()
}

/// Runs `dev` (a `tpf-sfn dev … --format json` command, its logs to `log`) and returns it
/// with its one-line summary.
pub fn start_dev(mut dev: Command, log: &std::path::Path) -> (Reaped, serde_json::Value) {
    use std::io::BufRead;
    let mut child = dev
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(log).expect("log"))
        .spawn()
        .expect("spawn tpf-sfn dev");
    let stdout = child.stdout.take().expect("stdout");
    let child = Reaped(child);
    let mut line = String::new();
    let read = std::io::BufReader::new(stdout).read_line(&mut line);
    if read.map_or(true, |n| n == 0) {
        panic!(
            "dev printed no summary:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
    }
    let summary = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    (child, summary)
}

/// The row `(pk, sk)` of the callback-binding table under `prefix`, if it is there.
pub async fn binding_row(
    config: &aws_config::SdkConfig,
    prefix: &str,
    pk: String,
    sk: String,
) -> Option<std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>> {
    use aws_sdk_dynamodb::types::AttributeValue;
    let names = tpf_sfn::aws::tables::TableNames::with_prefix(prefix);
    aws_sdk_dynamodb::Client::new(config)
        .get_item()
        .table_name(&names.callback_binding)
        .key("pk", AttributeValue::S(pk))
        .key("sk", AttributeValue::S(sk))
        .consistent_read(true)
        .send()
        .await
        .expect("GetItem on the binding table")
        .item()
        .cloned()
}

/// The DELIVERED row of `interaction`'s `generation` (the wake-up's evidence that it woke the
/// driver), if it is there.
pub async fn delivered_row(
    config: &aws_config::SdkConfig,
    prefix: &str,
    tenant: &str,
    interaction: &str,
    generation: i64,
) -> Option<std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>> {
    use tpf_wire::gateway::names::{binding_partition_key, delivered_sort_key};
    let pk = binding_partition_key(tenant, interaction);
    binding_row(config, prefix, pk, delivered_sort_key(generation)).await
}

pub mod gateway_loop;
pub mod host;
pub mod http;
pub mod proxy;
pub mod streams;
