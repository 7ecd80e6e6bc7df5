//! The Action API token read from SSM at run time, on moto's Parameter Store with the real SDK
//! client: the read, a rotation picked up when the cache window ends (on a clock the test
//! moves, never a sleep), and one more read when TPF refuses the token.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_ssm::types::ParameterType;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tpf_sfn_wakepath::action_token::{ActionToken, Clock, ParameterToken, CACHE_FOR};
use tpf_sfn_wakepath::relay::http::{ActionHost, HttpActionHost};

/// A clock that moves only when the test says so.
struct ManualClock(Mutex<Instant>);

impl ManualClock {
    fn new() -> Arc<Self> {
        Arc::new(ManualClock(Mutex::new(Instant::now())))
    }
    fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        *self.0.lock().unwrap()
    }
}

async fn ssm() -> aws_sdk_ssm::Client {
    aws_sdk_ssm::Client::new(&support::moto_config().await)
}

async fn put(ssm: &aws_sdk_ssm::Client, name: &str, value: &str, kind: ParameterType) {
    ssm.put_parameter()
        .name(name)
        .value(value)
        .r#type(kind)
        .overwrite(true)
        .send()
        .await
        .expect("put parameter");
}

fn name() -> String {
    format!("/{}/action-token", support::unique("tpf"))
}

#[tokio::test]
async fn the_token_is_read_cached_and_a_rotation_is_picked_up_after_the_window() {
    let ssm = ssm().await;
    let name = name();
    put(&ssm, &name, "first", ParameterType::SecureString).await;
    let clock = ManualClock::new();
    let token = ParameterToken::new(ssm.clone(), &name)
        .unwrap()
        .with_clock(clock.clone(), CACHE_FOR);
    assert_eq!(&*token.get().await.unwrap(), "first");
    assert_eq!(token.reads(), 1);

    put(&ssm, &name, "second", ParameterType::SecureString).await;
    clock.advance(CACHE_FOR - Duration::from_secs(1));
    assert_eq!(
        &*token.get().await.unwrap(),
        "first",
        "inside the window the cached token is used"
    );
    assert_eq!(token.reads(), 1, "no read inside the window");
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        &*token.get().await.unwrap(),
        "second",
        "the rotation is picked up when the window ends"
    );
    assert_eq!(token.reads(), 2);
}

#[tokio::test]
async fn a_parameter_that_is_missing_or_not_secure_is_a_coded_error() {
    let ssm = ssm().await;
    let missing = ParameterToken::new(ssm.clone(), &name()).unwrap();
    let e = missing.get().await.unwrap_err();
    assert_eq!(e.code(), "ACTION_TOKEN_READ", "{}", e.report());
    assert!(
        e.report().to_string().contains("create the SecureString"),
        "{}",
        e.report()
    );

    let name = name();
    put(&ssm, &name, "plain", ParameterType::String).await;
    let e = ParameterToken::new(ssm.clone(), &name)
        .unwrap()
        .get()
        .await
        .unwrap_err();
    assert_eq!(e.code(), "ACTION_TOKEN_READ");
    assert!(
        e.report().to_string().contains("not a SecureString"),
        "{}",
        e.report()
    );

    let e = ParameterToken::new(ssm, "tpf/action-token").err().unwrap();
    assert_eq!(e.code(), "ACTION_TOKEN_PARAMETER");
}

/// An action host that answers 200 to `Bearer <accepted>` and 401 to anything else, counting
/// requests.
async fn host(accepted: Arc<Mutex<String>>, requests: Arc<AtomicUsize>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let accepted = accepted.clone();
            let requests = requests.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut got = Vec::new();
                // Headers and the small body arrive together; read until the blank line.
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                requests.fetch_add(1, Ordering::SeqCst);
                let text = String::from_utf8_lossy(&got).to_lowercase();
                let want = format!("authorization: bearer {}", accepted.lock().unwrap());
                let status = if text.contains(&want) {
                    "200 OK"
                } else {
                    "401 Unauthorized"
                };
                let _ = s
                    .write_all(
                        format!("HTTP/1.1 {status}\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}")
                            .as_bytes(),
                    )
                    .await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_refused_token_is_read_again_once_and_the_call_repeated_with_the_new_one() {
    let ssm = ssm().await;
    let name = name();
    put(&ssm, &name, "old", ParameterType::SecureString).await;
    let clock = ManualClock::new();
    let token = Arc::new(
        ParameterToken::new(ssm.clone(), &name)
            .unwrap()
            .with_clock(clock, CACHE_FOR),
    );
    let accepted = Arc::new(Mutex::new("old".to_owned()));
    let requests = Arc::new(AtomicUsize::new(0));
    let url = host(accepted.clone(), requests.clone()).await;
    let tpf = HttpActionHost::new(
        &url,
        ActionToken::Parameter(token.clone()),
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(tpf.post("/x", "{}").await.unwrap().status, 200);
    assert_eq!((token.reads(), requests.load(Ordering::SeqCst)), (1, 1));

    // Rotated: TPF takes only the new token, the cache still holds the old one.
    put(&ssm, &name, "new", ParameterType::SecureString).await;
    *accepted.lock().unwrap() = "new".to_owned();
    assert_eq!(tpf.post("/x", "{}").await.unwrap().status, 200);
    assert_eq!(
        (token.reads(), requests.load(Ordering::SeqCst)),
        (2, 3),
        "one refused call, one more read, the call again"
    );
    assert_eq!(tpf.post("/x", "{}").await.unwrap().status, 200);
    assert_eq!(
        (token.reads(), requests.load(Ordering::SeqCst)),
        (2, 4),
        "the fresh token is cached"
    );

    // TPF refuses a token the parameter still holds: one more read, no second call, the
    // refusal is the answer.
    *accepted.lock().unwrap() = "something else".to_owned();
    assert_eq!(tpf.post("/x", "{}").await.unwrap().status, 401);
    assert_eq!((token.reads(), requests.load(Ordering::SeqCst)), (3, 5));
}
