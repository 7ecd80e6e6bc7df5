//! The Lambda durable functions lowering over every example contract, on the gateway binding: the spec the function
//! reads, the manifest that fingerprints it, the release stack that publishes it, and the
//! inputs it refuses with a code.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tpf_durable_driver::DurableSpec;
use tpf_sfn_compiler::compile::{compile as compile_for, Input};
use tpf_sfn_compiler::durable::{self, cloudformation, Compiled, LambdaDurable};
use tpf_sfn_compiler::sfn::StepFunctions;

fn contracts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/contracts");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".pipeline-contract.json"))
        .collect();
    paths.sort();
    paths
}

const REAL_GATEWAY: &str = "[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"arn:aws:lambda:eu-west-1:210987654321:function:tpf-action:3\"\nstarter-function-arn = \"arn:aws:lambda:eu-west-1:210987654321:function:tpf-gateway-starter\"\n";

fn compile(
    contract: &Path,
    config: Option<&str>,
) -> Result<Compiled, tpf_sfn_compiler::Diagnostics> {
    let bytes = std::fs::read(contract).unwrap();
    let file = contract.file_name().unwrap().to_string_lossy().to_string();
    compile_for(
        &Input {
            contract_file: &file,
            contract: &bytes,
            config: config.map(|c| ("tpf-sfn.toml", c)),
            allow_unverified_hash: true,
            ..Input::default()
        },
        LambdaDurable,
    )
}

fn restaurant() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/contracts/restaurant-approval.pipeline-contract.json")
}

#[test]
fn every_example_compiles_to_a_spec_the_function_reads_back() {
    for path in contracts() {
        {
            let config = REAL_GATEWAY;
            let c = match compile(&path, Some(config)) {
                Ok(c) => c,
                Err(d) => {
                    // A contract the compiler rejects is rejected whatever the backend, for the
                    // same reasons.
                    let bytes = std::fs::read(&path).unwrap();
                    let file = path.file_name().unwrap().to_string_lossy().to_string();
                    let sfn = compile_for(
                        &Input {
                            contract_file: &file,
                            contract: &bytes,
                            config: Some(("tpf-sfn.toml", config)),
                            allow_unverified_hash: true,
                            ..Input::default()
                        },
                        StepFunctions,
                    )
                    .unwrap_err();
                    let codes = |d: &tpf_sfn_compiler::Diagnostics| {
                        d.0.iter().map(|x| x.code).collect::<Vec<_>>()
                    };
                    assert_eq!(codes(&d), codes(&sfn), "{}", path.display());
                    continue;
                }
            };
            let spec = &c.durable.spec;
            let (_, text) = c
                .files
                .iter()
                .find(|(n, _)| n == durable::SPEC_FILE)
                .unwrap();
            let back: DurableSpec = serde_json::from_str(text).unwrap();
            assert_eq!(&back, spec, "{}", path.display());
            let compact: DurableSpec = serde_json::from_str(&c.durable.spec_text).unwrap();
            assert_eq!(&compact, spec);
            assert_eq!(spec.identity, c.plan.identity);
            assert_eq!(spec.awaits.len(), c.plan.awaits.len());
            // A durable driver has no states: its manifest names none for an await.
            assert!(
                c.manifest
                    .contract
                    .await_steps
                    .iter()
                    .all(|a| a.state_name.is_none()),
                "{}",
                path.display()
            );
            let sha = hex::encode(Sha256::digest(c.durable.spec_text.as_bytes()));
            assert_eq!(c.manifest.function.spec_sha256, sha);
            assert!(
                c.manifest.function.name.len() <= 64,
                "{}",
                c.manifest.function.name
            );
        }
    }
}

#[test]
fn the_release_stack_publishes_one_version_and_carries_the_spec() {
    let c = compile(&restaurant(), Some(REAL_GATEWAY)).unwrap();
    let stack = cloudformation::release(&c).unwrap();
    let r = &stack["Resources"];
    let f = &r["Driver"]["Properties"];
    assert_eq!(f["FunctionName"], c.manifest.function.name.as_str());
    assert_eq!(
        f["Environment"]["Variables"][cloudformation::env::SPEC],
        c.durable.spec_text.as_str()
    );
    assert_eq!(
        f["Environment"]["Variables"][cloudformation::env::HANDLER],
        "durable-driver"
    );
    assert!(f["DurableConfig"]["ExecutionTimeout"].as_u64().unwrap() <= 31_622_400);
    assert_eq!(r["DriverVersion"]["Type"], "AWS::Lambda::Version");
    assert_eq!(
        stack["Outputs"]["DriverVersionArn"]["Value"]["Ref"],
        "DriverVersion"
    );
    let text = stack.to_string();
    assert!(
        !text.contains("$LATEST"),
        "a release stack never points at $LATEST"
    );
    // The gateway is invoked with the role: no Action API token anywhere.
    assert!(stack["Parameters"].get("ActionToken").is_none());
    assert!(stack["Parameters"].get("ActionTokenParameter").is_none());
}

#[test]
fn two_releases_are_two_functions() {
    let a = compile(&restaurant(), Some(REAL_GATEWAY)).unwrap();
    let release = serde_json::json!({
        "schemaVersion": 1,
        "pipelineId": a.plan.identity.pipeline_id,
        "contractVersion": a.plan.identity.contract_version,
        "releaseVersion": "2026.12.2",
        "artifacts": [{ "artifactId": "next", "kind": "container-image", "uri": "oci://next", "digest": "sha256:00" }]
    })
    .to_string();
    let bytes = std::fs::read(restaurant()).unwrap();
    let b = compile_for(
        &Input {
            contract_file: "restaurant-approval.pipeline-contract.json",
            contract: &bytes,
            release: Some(("next.pipeline-release.json", release.as_bytes())),
            config: Some(("tpf-sfn.toml", REAL_GATEWAY)),
            ..Input::default()
        },
        LambdaDurable,
    )
    .unwrap();
    assert_ne!(a.manifest.function.name, b.manifest.function.name);
    assert_eq!(b.durable.spec.identity.release_version, "2026.12.2");
}

#[test]
fn refusals_are_coded() {
    let queue = format!("{REAL_GATEWAY}transport = \"queue\"\n");
    let queue = compile(&restaurant(), Some(&queue)).unwrap_err();
    assert_eq!(queue.0[0].code, "DURABLE_BINDING_UNSUPPORTED");
    assert!(queue.0[0].hint.contains("transport = \"lambda\""));

    // Action API v1's bindings are refused before any lowering.
    let v1 = compile(&restaurant(), Some("[binding]\nkind = \"http\"\n")).unwrap_err();
    assert_eq!(v1.0[0].code, "ACTION_API_V1_RETIRED");

    // The embedded default's endpoint is a placeholder: compiling warns, exporting refuses.
    let c = compile(&restaurant(), None).unwrap();
    assert!(c.warnings.iter().any(|w| w.code == "CONFIG_PLACEHOLDER"));
    let refused = cloudformation::release(&c).unwrap_err();
    assert!(refused.0.iter().all(|d| d.code == "EXPORT_PLACEHOLDER"));
    assert!(!refused.0.is_empty());
}

#[test]
fn restaurant_outputs() {
    let gateway = compile(&restaurant(), Some(REAL_GATEWAY)).unwrap();
    for (name, text) in &gateway.files {
        insta::assert_snapshot!(format!("durable-restaurant-{name}"), text);
    }
    let stack = cloudformation::render(&cloudformation::release(&gateway).unwrap());
    insta::assert_snapshot!("durable-restaurant-gateway-cloudformation.json", stack);
}
