//! Faults and hostile input at the command line: a store that stalls, empty endpoints, loops
//! and blocking files, absurd numbers. Each answer is a coded error or a bounded 503, never a
//! hang or a panic (exit 101).

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use support::cli;
use support::http::request;

const TOKEN: &str = "t";

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn restaurant() -> String {
    examples()
        .join("contracts/restaurant-approval.pipeline-contract.json")
        .display()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    cli()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run tpf-sfn")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2 with `error[CODE]` on stderr, and no panic.
fn assert_refused(what: &str, o: &Output, code: &str) {
    let err = stderr(o);
    assert_ne!(o.status.code(), Some(101), "{what} panicked: {err}");
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert!(err.contains(&format!("error[{code}]")), "{what}: {err}");
}

/// A loopback endpoint that accepts nothing: a command refused before its first call never
/// connects to it, which [`Untouched::assert`] checks.
struct Untouched {
    listener: std::net::TcpListener,
    endpoint: String,
}

impl Untouched {
    fn new() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        Self { listener, endpoint }
    }

    fn assert(&self, what: &str) {
        assert!(
            matches!(self.listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{what} reached the endpoint"
        );
    }
}

/// `deploy --dry-run` of the release in `out` against `endpoint`.
fn deploy_dry_run(out: &Path, endpoint: &str) -> Output {
    run(&[
        "deploy",
        "--out",
        out.to_str().unwrap(),
        "--dry-run",
        "--endpoint-url",
        endpoint,
    ])
}

/// A loopback listener that accepts connections and never answers: a frozen DynamoDB.
fn frozen_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    format!("http://{addr}")
}

/// `serve` as a child; killed when dropped.
struct Served {
    child: Child,
    addr: std::net::SocketAddr,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(extra: &[&str]) -> Served {
    let contract = restaurant();
    let mut child = cli()
        .args([
            "serve",
            "--pipeline-contract",
            &contract,
            "--listen",
            "127.0.0.1:0",
            "--token",
            TOKEN,
        ])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("serve said where it listens")
            .expect("line");
        if let Some(at) = line.split("on http://").nth(1) {
            break at.trim().parse().expect("address");
        }
    };
    // Keep draining so the child never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Served { child, addr }
}

/// A frozen store: a submit and a second request behind it are both answered 503 with a coded
/// body, and a route that needs no store answers at once; nothing hangs. (Without bounds on the
/// store's calls and on the wait for the coordinator, every one of these requests would wait
/// for ever; the 120 s guard only keeps a regression from hanging the suite.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_store_is_answered_503_and_does_not_hold_the_host() {
    let endpoint = frozen_endpoint();
    let host = serve(&[
        "--store",
        "dynamodb",
        "--endpoint-url",
        &endpoint,
        "--aws-timeout-seconds",
        "1",
    ]);
    let addr = host.addr;
    let submit = json!({"pipelineId": "x", "inputShape": "UNI", "inputPayload": {}}).to_string();
    let submit = tokio::spawn(async move {
        request(
            addr,
            "POST",
            "/tpf/control-plane/tenants/t1/executions",
            Some(TOKEN),
            Some(&submit),
        )
        .await
    });
    let status = tokio::spawn(async move {
        request(
            addr,
            "GET",
            "/tpf/control-plane/tenants/t1/executions/e1",
            Some(TOKEN),
            None,
        )
        .await
    });
    let no_route = request(addr, "GET", "/nowhere", Some(TOKEN), None).await;
    assert_eq!(no_route.status, 404, "{}", no_route.raw);
    let guard = Duration::from_secs(120);
    for (what, task) in [("submit", submit), ("status", status)] {
        let r = tokio::time::timeout(guard, task)
            .await
            .unwrap_or_else(|_| panic!("{what} hung on a frozen store"))
            .expect("request task");
        assert_eq!(r.status, 503, "{what}: {}", r.raw);
        let code = r.body["code"].as_str().unwrap_or_default();
        assert!(
            ["STORE_UNAVAILABLE", "HOST_BUSY"].contains(&code),
            "{what}: {}",
            r.raw
        );
    }
}

/// A client that sends its headers and then trickles its body is answered 408 once the body
/// read times out, not held for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_never_arrives_is_a_coded_408() {
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tpf_model::{Coordinator, InMemoryStore};
    use tpf_sfn::host::{system_clock, HostState};

    let hosted = support::host::restaurant();
    let coordinator = Coordinator::new(InMemoryStore::new(), hosted.pipeline, hosted.worker);
    let state = HostState::new(coordinator, TOKEN.into(), system_clock)
        .with_body_read_timeout(Duration::from_millis(300));
    let addr = support::spawn_host(Arc::new(state)).await;
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "POST /tpf/control-plane/tenants/t1/executions HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 100\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(120), stream.read_to_end(&mut out))
        .await
        .expect("the slow body was never timed out")
        .expect("read");
    let r = support::http::parse(String::from_utf8_lossy(&out).into_owned());
    assert_eq!(r.status, 408, "{}", r.raw);
    assert_eq!(r.body["code"], "BODY_TIMEOUT", "{}", r.raw);
}

/// A compiled release to point the AWS commands at, so each reaches its connection.
fn compiled(dir: &Path) -> String {
    let out = dir.join("out");
    let o = run(&["compile", &restaurant(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    out.display().to_string()
}

/// Every command that talks to AWS, with inputs valid up to its connection.
fn aws_commands(out: &str, dev_out: &str, contract: &str) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        s(&["tables", "create"]),
        s(&[
            "serve",
            "--pipeline-contract",
            contract,
            "--store",
            "dynamodb",
            "--token",
            "t",
        ]),
        s(&[
            "relay",
            "--queue-url",
            "http://127.0.0.1:9/q",
            "--action-url",
            "http://127.0.0.1:9/",
            "--token",
            "t",
            "--once",
        ]),
        s(&["deploy", "--out", out, "--dry-run"]),
        s(&["status", "--out", out, "--tenant", "t", "--execution", "e"]),
        s(&["releases"]),
        s(&["prune"]),
        s(&["dev", "--out", dev_out, "--token", "t"]),
    ]
}

/// An empty `--endpoint-url`, or an empty `AWS_ENDPOINT_URL`, is `ENDPOINT_INVALID` on every AWS
/// command, where the SDK used to panic.
#[test]
fn an_empty_endpoint_is_a_coded_error_on_every_aws_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = compiled(dir.path());
    let dev_out = dir.path().join("dev").display().to_string();
    for args in aws_commands(&out, &dev_out, &restaurant()) {
        let what = args.join(" ");
        let mut flagged = args.clone();
        flagged.extend(["--endpoint-url".to_string(), String::new()]);
        let o = cli().args(&flagged).stdin(Stdio::null()).output().unwrap();
        assert_refused(&format!("{what} --endpoint-url ''"), &o, "ENDPOINT_INVALID");
        let o = cli()
            .args(&args)
            .env("AWS_ENDPOINT_URL", "")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_refused(&format!("AWS_ENDPOINT_URL= {what}"), &o, "ENDPOINT_INVALID");
    }
}

/// `validate` on a directory holding two links to itself ends (links to directories are not
/// followed) and finds the one ASL file once.
#[cfg(unix)]
#[test]
fn validate_ends_on_a_directory_that_links_to_itself() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("m.asl.json"),
        r#"{"StartAt":"S","States":{"S":{"Type":"Succeed"}}}"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(d, d.join("loop1")).unwrap();
    std::os::unix::fs::symlink(".", d.join("loop2")).unwrap();
    let o = run(&["validate", d.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        report["files"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
}

/// A FIFO named `*.asl.json` inside a directory is skipped without being opened for a blocking
/// read (given by name, it is refused), and a tree past the walk's bound is a coded refusal
/// rather than a walk of everything.
#[cfg(unix)]
#[test]
fn validate_does_not_block_on_a_fifo_and_bounds_its_walk() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("p.asl.json");
    mkfifo(&fifo);
    let o = run(&["validate", dir.path().to_str().unwrap()]);
    assert_refused("a FIFO in the tree", &o, "VALIDATE_NOTHING");
    let o = run(&["validate", fifo.to_str().unwrap()]);
    assert_refused("a FIFO by name", &o, "INPUT_NOT_FILE");

    let wide = tempfile::tempdir().unwrap();
    let limit = tpf_sfn::cmd::validate::MAX_WALK_ENTRIES;
    for i in 0..=limit / 1000 {
        let sub = wide.path().join(format!("d{i}"));
        std::fs::create_dir(&sub).unwrap();
        for j in 0..1000 {
            std::fs::File::create(sub.join(format!("f{j}"))).unwrap();
        }
    }
    let o = run(&["validate", wide.path().to_str().unwrap()]);
    assert_refused("a tree past the bound", &o, "VALIDATE_TOO_MANY");
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// `init FIFO --force` refuses the FIFO at once instead of waiting for a reader.
#[cfg(unix)]
#[test]
fn init_force_refuses_a_fifo_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("tpf-sfn.toml");
    mkfifo(&fifo);
    let o = run(&["init", fifo.to_str().unwrap(), "--force"]);
    assert_refused("init FIFO --force", &o, "INIT_NOT_FILE");
    let o = run(&["init", "/dev/null", "--force"]);
    assert_refused("init /dev/null --force", &o, "INIT_NOT_FILE");
}

/// Numbers out of range are refused where they enter: an await timeout that overflowed the
/// expiry, a NaN or infinite retry multiplier, an AWS timeout of zero.
#[test]
fn absurd_numbers_are_refused() {
    let contract = restaurant();
    for (flag, value) in [
        ("--await-timeout-seconds", "18446744073709551615"),
        ("--await-timeout-seconds", "31536001"),
        ("--retry-multiplier", "NaN"),
        ("--retry-multiplier", "inf"),
        ("--retry-multiplier", "0.5"),
        ("--retry-delay-ms", "-1"),
        ("--aws-timeout-seconds", "0"),
    ] {
        let o = run(&[
            "serve",
            "--pipeline-contract",
            &contract,
            "--token",
            "t",
            "--listen",
            "127.0.0.1:0",
            &format!("{flag}={value}"),
        ]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{flag} {value}: {}", stderr(&o));
    }
}

/// Table names DynamoDB would refuse are refused before any call.
#[test]
fn invalid_table_names_are_refused_before_any_call() {
    for args in [
        vec!["tables", "create", "--table", "execution-table=ab"],
        vec![
            "tables",
            "create",
            "--table",
            "callback-binding-table=has space",
        ],
        vec!["tables", "create", "--prefix", "bad/"],
    ] {
        let o = run(&[&args[..], &["--endpoint-url", "http://127.0.0.1:9"]].concat());
        assert_refused(&args.join(" "), &o, "TABLE_NAME_INVALID");
    }
}

/// Action API v1's wakeup table and releases are refused by code before any call: `--table
/// wakeup-table=...` in either command that names tables, and `status` of a release whose
/// manifest names a v1 binding (on either backend).
#[test]
fn action_api_v1_tables_and_releases_are_refused_before_any_call() {
    let untouched = Untouched::new();
    let endpoint = untouched.endpoint.clone();
    let dir = tempfile::tempdir().unwrap();
    let out = compiled(dir.path());
    let status = ["status", "--out", &out, "--tenant", "t", "--execution", "e"];
    for args in [
        vec!["tables", "create", "--table", "wakeup-table=tpf_sfn_wakeup"],
        [&status[..], &["--table", "wakeup-table=tpf_sfn_wakeup"]].concat(),
    ] {
        let o = run(&[
            &args[..],
            &["--endpoint-url", &endpoint, "--region", "us-east-1"],
        ]
        .concat());
        assert_refused(&args.join(" "), &o, "ACTION_API_V1_RETIRED");
        assert!(
            stderr(&o).contains("callback-binding-table"),
            "{}",
            stderr(&o)
        );
    }
    let manifest = PathBuf::from(&out).join("manifest.json");
    let good: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    for (backend, kind) in [(None, "http"), (Some("lambda-durable"), "queue")] {
        let mut m = good.clone();
        m["binding"]["kind"] = json!(kind);
        if let Some(b) = backend {
            m["backend"] = json!(b);
            m["function"] = json!({"name": "tpf-p-durable"});
        }
        std::fs::write(&manifest, serde_json::to_vec(&m).unwrap()).unwrap();
        let o = run(&[
            &status[..],
            &["--endpoint-url", &endpoint, "--region", "us-east-1"],
        ]
        .concat());
        assert_refused(kind, &o, "ACTION_API_V1_RETIRED");
        assert!(stderr(&o).contains("/binding/kind"), "{}", stderr(&o));
    }
    untouched.assert("a refused command");
}

/// A durable release compiled before Action API v1's spec fields went (`wakeup`,
/// `transportRetry`, `operationBudget`, `maxIterations`) is refused by `deploy` from its spec,
/// naming the field, before any call: the function would refuse that spec at start.
#[test]
fn deploy_refuses_a_durable_spec_with_action_api_v1_fields_before_any_call() {
    let untouched = Untouched::new();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        "compile",
        &restaurant(),
        "--backend",
        "lambda-durable",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let spec = out.join("driver.durable.json");
    let good: Value = serde_json::from_slice(&std::fs::read(&spec).unwrap()).unwrap();
    for (field, value) in [
        ("wakeup", json!({"tableName": "tpf_sfn_wakeup"})),
        ("transportRetry", json!({"maxAttempts": 6})),
        ("operationBudget", json!(2000)),
        ("maxIterations", json!(117)),
    ] {
        let mut v1 = good.clone();
        v1[field] = value;
        std::fs::write(&spec, serde_json::to_vec(&v1).unwrap()).unwrap();
        let o = deploy_dry_run(&out, &untouched.endpoint);
        assert_refused(field, &o, "RELEASE_DEFINITION_INVALID");
        assert!(stderr(&o).contains(field), "{field}: {}", stderr(&o));
    }
    untouched.assert("deploy of a v1 durable spec");
}

/// Runs `dev` in `dir` against a loopback endpoint with `extra` arguments and checks that it
/// is refused with `code` before its first write: the endpoint never sees a connection and no
/// release is written. Returns its stderr.
fn dev_refused_before_its_first_write(dir: &std::path::Path, extra: &[&str], code: &str) -> String {
    dev_refused_before_its_first_write_with(dir, extra, &[], code)
}

/// The same, with `env` set for dev.
fn dev_refused_before_its_first_write_with(
    dir: &std::path::Path,
    extra: &[&str],
    env: &[(&str, &str)],
    code: &str,
) -> String {
    let untouched = Untouched::new();
    let endpoint = untouched.endpoint.clone();
    let what = format!("dev {}", extra.join(" "));
    let o = cli()
        .args([
            "dev",
            "--out",
            "dev-out",
            "--token",
            "t",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--endpoint-url", &endpoint, "--aws-timeout-seconds", "1"])
        .args(extra)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run tpf-sfn");
    assert_refused(&what, &o, code);
    untouched.assert(&format!("{what}, before refusing,"));
    assert!(
        !dir.join("dev-out").exists(),
        "{what} wrote its release before refusing"
    );
    stderr(&o)
}

const BAD_SCRIPT: &str = "[[steps]]\nstep = \"No Such Step\"\noutcomes = [\"complete\"]\n";

/// `dev --script` with a script that names no step is refused before anything is created.
#[test]
fn dev_refuses_a_bad_script_before_its_first_write() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), BAD_SCRIPT).unwrap();
    dev_refused_before_its_first_write(dir.path(), &["--script", "bad.toml"], "SCRIPT_INVALID");
}

/// `dev` reads `./tpf-sfn.toml` when `--config` is not given, as `compile` does: a broken one
/// in the working directory is refused, naming the file, before anything is created; with
/// `--config` the working directory's file is not read.
#[test]
fn dev_reads_the_working_directory_s_config_unless_config_is_given() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tpf-sfn.toml"), "name-prefix = [unclosed\n").unwrap();
    let err = dev_refused_before_its_first_write(dir.path(), &[], "CONFIG_SYNTAX");
    assert!(err.contains("tpf-sfn.toml"), "{err}");

    // `--config` wins: the broken file is not read, so the next refusal is the script's.
    std::fs::write(dir.path().join("good.toml"), "").unwrap();
    std::fs::write(dir.path().join("bad.toml"), BAD_SCRIPT).unwrap();
    dev_refused_before_its_first_write(
        dir.path(),
        &["--config", "good.toml", "--script", "bad.toml"],
        "SCRIPT_INVALID",
    );
}

/// `dev --backend lambda-durable` without the durable execution emulator installed says which
/// script installs it, with its code, before anything is created or reached.
#[test]
fn dev_on_the_durable_backend_without_the_emulator_names_the_script_that_installs_it() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("no-tools");
    std::fs::create_dir(&empty).unwrap();
    let err = dev_refused_before_its_first_write_with(
        dir.path(),
        &["--backend", "lambda-durable"],
        &[("TPF_SFN_DEX_TOOLS", empty.to_str().unwrap())],
        "EMULATOR_MISSING",
    );
    assert!(err.contains("dex-local-runner"), "{err}");
    assert!(err.contains("`scripts/dex.sh install`"), "{err}");
}

/// The in-process host on the memory store with the restaurant release active for `tenants`.
async fn memory_host(tenants: &[&str]) -> (std::net::SocketAddr, String) {
    use std::sync::Arc;
    use tpf_model::coordinator::local_release;
    use tpf_model::{Coordinator, InMemoryStore};
    use tpf_sfn::host::{system_clock, HostState};

    let hosted = support::host::restaurant();
    let id = hosted.identity.clone();
    let mut coordinator = Coordinator::new(InMemoryStore::new(), hosted.pipeline, hosted.worker);
    let now = system_clock();
    for tenant in tenants {
        coordinator
            .register_release(&local_release(tenant, &id, now))
            .expect("register");
        coordinator
            .activate_release(tenant, &id.pipeline_id, &id.release_version, now)
            .expect("activate");
    }
    let state = HostState::new(coordinator, TOKEN.into(), system_clock);
    (support::spawn_host(Arc::new(state)).await, id.pipeline_id)
}

/// `statusUrl` encodes each id as one path segment, so it leads back to the execution even for
/// a tenant holding `/` and a space.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_url_is_percent_encoded_and_leads_back() {
    let (addr, pipeline) = memory_host(&["a/b c"]).await;
    let body = json!({"pipelineId": pipeline, "inputShape": "UNI", "inputPayload": {"n": 1}});
    let r = request(
        addr,
        "POST",
        "/tpf/control-plane/tenants/a%2Fb%20c/executions",
        Some(TOKEN),
        Some(&body.to_string()),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.raw);
    let url = r.body["statusUrl"].as_str().expect("statusUrl").to_owned();
    assert!(
        url.starts_with("/tpf/control-plane/tenants/a%2Fb%20c/executions/"),
        "{url}"
    );
    let status = request(addr, "GET", &url, Some(TOKEN), None).await;
    assert_eq!(status.status, 200, "{}", status.raw);
    assert_eq!(status.body["executionId"], r.body["executionId"]);
}

/// A tenant with surrounding whitespace is refused alike on submit and on every later route
/// (TPF trims a submitted tenant but not the one a lookup is given, so ` t` would submit and
/// then never be found).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_with_surrounding_whitespace_is_refused_on_every_route() {
    let (addr, pipeline) = memory_host(&["t"]).await;
    let body = json!({"pipelineId": pipeline, "inputShape": "UNI", "inputPayload": {}}).to_string();
    for (method, path, body) in [
        (
            "POST",
            "/tpf/control-plane/tenants/%20t/executions",
            Some(body.as_str()),
        ),
        ("GET", "/tpf/control-plane/tenants/%20t/executions/e1", None),
        (
            "GET",
            "/tpf/control-plane/tenants/t%20/interactions/pending",
            None,
        ),
    ] {
        let r = request(addr, method, path, Some(TOKEN), body).await;
        assert_eq!(r.status, 400, "{path}: {}", r.raw);
        assert_eq!(r.body["code"], "BAD_REQUEST", "{path}: {}", r.raw);
    }
}

/// Every coded error in shipped code says what to do about it: each `Error::new("CODE", …)`
/// expression carries a `.with_hint(…)` before it ends. (The scan follows the expression's
/// parentheses, so a `;` or `)` inside a message does not end it.)
#[test]
fn every_coded_error_has_a_hint() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let shipped = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (at, _) in shipped.match_indices("Error::new(\"") {
                // `StoreError::new(…)` and the like are other layers' errors, without codes.
                let before = shipped[..at].chars().next_back().unwrap_or(' ');
                if before.is_alphanumeric() || before == '_' {
                    continue;
                }
                let expr = expression(&shipped[at..]);
                if !expr.contains(".with_hint(") {
                    let line = shipped[..at].lines().count();
                    let code = expr.split('"').nth(1).unwrap_or_default();
                    missing.push(format!(
                        "{}:{line} {code}",
                        path.strip_prefix(&root).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "coded errors without a hint:\n{}",
        missing.join("\n")
    );
}

/// The text of the expression starting at `text`: its calls, strings and method chain, up to the
/// first `;`, `,`, `}` or closing `)` outside any bracket or string.
fn expression(text: &str) -> &str {
    let mut depth = 0i32;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return &text[..i],
            ')' | ']' | '}' => depth -= 1,
            ';' | ',' if depth == 0 => return &text[..i],
            _ => {}
        }
    }
    text
}

/// `deploy --dry-run` refuses a manifest with junk where the compiler always writes sane values
/// (a blank identity, a machine name Step Functions would refuse) before it builds a single AWS
/// call.
#[test]
fn deploy_refuses_a_junk_manifest_before_any_call() {
    let untouched = Untouched::new();
    let endpoint = untouched.endpoint.clone();
    let dir = tempfile::tempdir().unwrap();
    let out = PathBuf::from(compiled(dir.path()));
    let manifest = out.join("manifest.json");
    let good: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let junk: [(&str, &str, Value); 4] = [
        ("/identity/pipelineId", "blank pipeline", json!("")),
        ("/identity/releaseVersion", "blank release", json!("  ")),
        ("/machines/driver/name", "empty name", json!("")),
        ("/machines/driver/name", "long name", json!("x".repeat(81))),
    ];
    for (pointer, what, value) in junk {
        let mut m = good.clone();
        *m.pointer_mut(pointer).expect(pointer) = value;
        std::fs::write(&manifest, serde_json::to_vec(&m).unwrap()).unwrap();
        let o = deploy_dry_run(&out, &endpoint);
        assert_refused(what, &o, "RELEASE_MANIFEST_INVALID");
    }
    untouched.assert("deploy with a junk manifest");
}

use tpf_sfn_test_support::contracts as long_contract;

/// A 20,000-step contract (the shape TPF generates, its hash verified) gets a verdict from
/// `simulate`, not a stack overflow (exit 134) or a panic.
#[test]
fn a_twenty_thousand_step_contract_gets_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let contract = dir.path().join("long.pipeline-contract.json");
    std::fs::write(&contract, long_contract::long_contract(20_000)).unwrap();
    // The gateway world: the driver follows TPF's gateway whatever the length.
    let o = run(&["simulate", contract.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("  ok    tpf-11-completion-after-binding"),
        "{out}"
    );
}
