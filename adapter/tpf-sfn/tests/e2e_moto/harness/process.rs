//! Child processes and ports: running `tpf-sfn`, reaping what a test started.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crate::support;

use super::*;

pub fn tpf_sfn() -> Command {
    let mut c = support::cli();
    c.env("TPF_SFN_TOKEN", TOKEN);
    c
}

pub(super) fn run(args: &[&str]) -> Output {
    let o = tpf_sfn().args(args).output().expect("run tpf-sfn");
    assert!(
        o.status.success(),
        "tpf-sfn {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

pub use crate::support::free_port;

pub fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Polls `probe` every 100 ms, at most `tries` times; `None` when it never answered.
pub async fn poll<T, F, Fut>(tries: u32, mut probe: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..tries {
        if let Some(v) = probe().await {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// A background task that ends with the test.
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
