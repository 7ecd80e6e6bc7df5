//! The functions' zip links only what they run: neither the command line (`tpf-sfn`), nor the
//! mapping proof, nor the interpreters, nor the executable model of TPF. The check reads the
//! workspace's manifests (`cargo metadata --no-deps`) and follows every normal and build
//! dependency between the workspace's crates from `tpf-sfn-lambda`.

use std::collections::{BTreeMap, BTreeSet};

/// The crates the Lambda bootstrap must not reach.
const FORBIDDEN: &[&str] = &[
    "tpf-sfn",
    "tpf-sfn-mapping",
    "asl-interp",
    "durable-interp",
    "tpf-model",
    "tpf-sfn-test-support",
];

/// Workspace crate → the workspace crates it depends on (dev-dependencies aside: tests are not
/// shipped).
type Graph = BTreeMap<String, Vec<String>>;

/// Every crate `root` reaches, itself excluded.
fn closure(graph: &Graph, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![root.to_owned()];
    while let Some(name) = todo.pop() {
        for dep in graph.get(&name).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                todo.push(dep.clone());
            }
        }
    }
    seen
}

/// The forbidden crates `root` reaches, each with one path to it.
fn violations(graph: &Graph, root: &str) -> Vec<String> {
    let reached = closure(graph, root);
    FORBIDDEN
        .iter()
        .filter(|f| reached.contains(**f))
        .map(|f| format!("{} → {f}", path_to(graph, root, f).join(" → ")))
        .collect()
}

/// A shortest path from `from` to `to`'s dependent (breadth first), for the message.
fn path_to(graph: &Graph, from: &str, to: &str) -> Vec<String> {
    let mut parent: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from.to_owned()]);
    while let Some(name) = queue.pop_front() {
        for dep in graph.get(&name).into_iter().flatten() {
            if dep == to {
                let mut path = vec![name.clone()];
                while let Some(p) = parent.get(path.last().expect("non-empty")) {
                    path.push(p.clone());
                }
                path.reverse();
                return path;
            }
            if dep != from && !parent.contains_key(dep) {
                parent.insert(dep.clone(), name.clone());
                queue.push_back(dep.clone());
            }
        }
    }
    vec![from.to_owned()]
}

/// The workspace's graph from `cargo metadata --format-version 1 --no-deps`.
fn workspace_graph() -> Graph {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let members: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .filter_map(|d| d["name"].as_str())
                .filter(|name| members.contains(name))
                .map(str::to_owned)
                .collect();
            (p["name"].as_str().expect("name").to_owned(), deps)
        })
        .collect()
}

/// The test-support crate is a dev-dependency only: no crate of the workspace ships it.
#[test]
fn no_crate_links_the_test_support_crate() {
    let graph = workspace_graph();
    assert!(graph.contains_key("tpf-sfn-test-support"), "{graph:?}");
    let linking: Vec<&String> = graph
        .iter()
        .filter(|(_, deps)| deps.iter().any(|d| d == "tpf-sfn-test-support"))
        .map(|(name, _)| name)
        .collect();
    assert!(
        linking.is_empty(),
        "shipped crates link the test support: {linking:?}"
    );
    // The check sees a normal dependency when one exists.
    let mut broken = graph.clone();
    broken
        .get_mut("tpf-sfn")
        .expect("tpf-sfn")
        .push("tpf-sfn-test-support".to_owned());
    assert!(closure(&broken, "tpf-sfn").contains("tpf-sfn-test-support"));
}

#[test]
fn the_lambda_bootstrap_links_neither_the_cli_nor_the_proof_nor_the_interpreters() {
    let graph = workspace_graph();
    let reached = closure(&graph, "tpf-sfn-lambda");
    // The check sees the graph: the functions do reach the wake path and the driver program.
    for needed in ["tpf-sfn-wakepath", "tpf-durable-driver", "tpf-wire"] {
        assert!(reached.contains(needed), "{needed} not in {reached:?}");
    }
    assert_eq!(violations(&graph, "tpf-sfn-lambda"), Vec::<String>::new());
}

#[test]
fn a_path_to_a_forbidden_crate_is_found_and_named() {
    // The graph before the cut: the bootstrap linked the command line, which links the proof.
    let graph: Graph = [
        ("tpf-sfn-lambda", vec!["tpf-sfn", "tpf-wire"]),
        ("tpf-sfn", vec!["tpf-sfn-mapping", "tpf-wire"]),
        ("tpf-sfn-mapping", vec!["asl-interp", "tpf-model"]),
        ("asl-interp", vec!["tpf-sfn-compiler"]),
        ("tpf-model", vec!["tpf-wire"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(
        violations(&graph, "tpf-sfn-lambda"),
        vec![
            "tpf-sfn-lambda → tpf-sfn",
            "tpf-sfn-lambda → tpf-sfn → tpf-sfn-mapping",
            "tpf-sfn-lambda → tpf-sfn → tpf-sfn-mapping → asl-interp",
            "tpf-sfn-lambda → tpf-sfn → tpf-sfn-mapping → tpf-model",
        ]
    );
    // One edge less and nothing is reached.
    let mut cut = graph.clone();
    cut.insert("tpf-sfn-lambda".into(), vec!["tpf-wire".into()]);
    assert!(violations(&cut, "tpf-sfn-lambda").is_empty());
}
