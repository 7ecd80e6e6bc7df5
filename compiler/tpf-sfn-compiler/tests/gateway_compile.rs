//! The gateway binding on Step Functions: today's and August 2026's Restaurant Approval compile
//! to the gateway protocol's driver on both transports (snapshotted), with least privilege on
//! the numbered version, no sweeper, and `GATEWAY_UNQUALIFIED` for anything but a version.

use tpf_sfn_compiler::bundled;
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::sfn::{Compiled, StepFunctions};

const GATEWAY: &str = "arn:aws:lambda:eu-west-1:210987654321:function:tpf-action-gateway:7";
const STARTER: &str = "arn:aws:lambda:eu-west-1:210987654321:function:tpf-sfn-starter";

fn config(transport: &str, function_arn: &str) -> String {
    format!(
        "[binding]\nkind = \"gateway\"\n[binding.gateway]\nfunction-arn = \"{function_arn}\"\n\
         transport = \"{transport}\"\nqueue-url = \"https://sqs.eu-west-1.amazonaws.com/210987654321/tpf-gateway\"\n\
         starter-function-arn = \"{STARTER}\"\n"
    )
}

fn compile_with(input: Input<'_>, toml: &str) -> Result<Compiled, tpf_sfn_compiler::Diagnostics> {
    compile(
        &Input {
            config: Some(("tpf-sfn.toml", toml)),
            ..input
        },
        StepFunctions,
    )
}

fn file<'a>(out: &'a Compiled, name: &str) -> &'a str {
    out.files
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, t)| t.as_str())
        .unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn both_samples_compile_on_both_transports() {
    for (sample, input) in [
        ("current", bundled::restaurant_input()),
        ("august", bundled::august_restaurant_input()),
    ] {
        for transport in ["lambda", "queue"] {
            let out = compile_with(input.clone(), &config(transport, GATEWAY))
                .unwrap_or_else(|e| panic!("{sample}/{transport}: {e:?}"));
            let names: Vec<&str> = out.files.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(
                names,
                [
                    "driver.asl.json",
                    "driver.iam-policy.json",
                    "driver.mmd",
                    "manifest.json"
                ]
            );
            assert!(
                out.warnings.iter().all(|w| w.code != "CONFIG_PLACEHOLDER"),
                "{:?}",
                out.warnings
            );
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_path("snapshots/gateway");
            settings.set_prepend_module_to_snapshot(false);
            settings.bind(|| {
                for name in ["driver.asl.json", "driver.iam-policy.json", "manifest.json"] {
                    insta::assert_snapshot!(
                        format!("{sample}.{transport}.{name}"),
                        file(&out, name)
                    );
                }
            });
        }
    }
}

#[test]
fn the_driver_may_invoke_exactly_the_version_and_the_starter() {
    let out = compile_with(bundled::restaurant_input(), &config("lambda", GATEWAY)).unwrap();
    let policy: serde_json::Value =
        serde_json::from_str(file(&out, "driver.iam-policy.json")).unwrap();
    let statements = policy["Statement"].as_array().unwrap();
    let invoke: Vec<(&str, Vec<&str>)> = statements
        .iter()
        .map(|s| {
            (
                s["Sid"].as_str().unwrap(),
                s["Resource"]
                    .as_array()
                    .map(|r| r.iter().map(|v| v.as_str().unwrap()).collect())
                    .unwrap_or_else(|| vec![s["Resource"].as_str().unwrap()]),
            )
        })
        .collect();
    assert_eq!(
        invoke,
        [
            ("InvokeTpfActionGateway", vec![GATEWAY]),
            ("StartNextGeneration", vec![STARTER]),
        ]
    );
    let queue = compile_with(bundled::restaurant_input(), &config("queue", GATEWAY)).unwrap();
    let policy = file(&queue, "driver.iam-policy.json");
    assert!(policy.contains("sqs:SendMessage"), "{policy}");
    assert!(
        policy.contains("arn:aws:sqs:eu-west-1:210987654321:tpf-gateway"),
        "{policy}"
    );
    assert!(
        !policy.contains(GATEWAY),
        "queue transport never invokes the gateway itself"
    );
}

#[test]
fn an_unqualified_or_aliased_gateway_is_refused_with_its_code() {
    let unqualified = "arn:aws:lambda:eu-west-1:210987654321:function:tpf-action-gateway";
    for (arn, what) in [
        (unqualified.to_string(), "is unqualified"),
        (format!("{unqualified}:live"), "`live`"),
        (format!("{unqualified}:$LATEST"), "`$LATEST`"),
    ] {
        let e = compile_with(bundled::restaurant_input(), &config("lambda", &arn)).unwrap_err();
        let d =
            e.0.iter()
                .find(|d| d.code == "GATEWAY_UNQUALIFIED")
                .unwrap_or_else(|| panic!("{arn}: {e:?}"));
        assert!(d.message.contains(what), "{}", d.message);
        assert_eq!(
            d.location.pointer.as_deref(),
            Some("binding.gateway.function-arn")
        );
        assert!(d.hint.contains("publish-version"), "{}", d.hint);
    }
    // The rule only concerns the gateway's function: the starter may be unqualified.
    assert!(!STARTER.ends_with(":7"));
    assert!(compile_with(bundled::restaurant_input(), &config("lambda", GATEWAY)).is_ok());
}

#[test]
fn the_park_lasts_the_longest_await_timeout_plus_a_second() {
    // Today's sample carries its await's timeout (PT30M); August's leaves it to the config.
    let park = |out: &Compiled| -> u64 {
        let d: serde_json::Value = serde_json::from_str(file(out, "driver.asl.json")).unwrap();
        d["States"]["Park until TPF's await completes"]["TimeoutSeconds"]
            .as_u64()
            .unwrap()
    };
    let today = compile_with(bundled::restaurant_input(), &config("lambda", GATEWAY)).unwrap();
    assert_eq!(park(&today), 1801);
    let august = compile_with(
        bundled::august_restaurant_input(),
        &format!("{}await-timeout-seconds = 600\n", config("lambda", GATEWAY)),
    )
    .unwrap();
    assert_eq!(park(&august), 601);
}

/// `tpf-sfn validate` on the deployed file (profile auto) proves the same bound; a wake that
/// does not count, or a park that is not TPF's callback registration, is refused by name.
#[test]
fn the_validator_proves_the_gateway_driver_and_refuses_its_mutants() {
    use tpf_sfn_compiler::sfn::asl::State;
    use tpf_sfn_compiler::sfn::validate::{validate, Profile, ValidateOptions};
    let auto = ValidateOptions {
        profile: Profile::Auto,
        ..ValidateOptions::default()
    };
    let refused = |machine: &tpf_sfn_compiler::sfn::asl::StateMachine, code: &str| {
        let report = validate("d.json", machine, &auto);
        let codes: Vec<_> = report.diagnostics.iter().map(|d| d.code).collect();
        assert!(codes.contains(&code), "{code}: {codes:?}");
    };
    for transport in ["lambda", "queue"] {
        let out = compile_with(bundled::restaurant_input(), &config(transport, GATEWAY)).unwrap();
        let report = validate("driver.asl.json", &out.driver, &auto);
        assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
        assert_eq!(
            report.history.max_events,
            out.manifest.machines.driver.max_history_events
        );
        assert!(report.history.max_events.unwrap() <= 20_000);
        let guard = report.history.loop_guard.as_ref().expect("a counted loop");
        assert_eq!(guard.state, "Route on TPF status");
        assert_eq!(guard.counter_path, "$.loop.iteration");
        assert_eq!(guard.limit, u64::from(out.sfn.budget.max_iterations));

        // Without its `"ResultPath": null`, SWEEP's answer replaces the whole state, counter
        // included: the loop has no bound.
        let mut clobbering = out.driver.clone();
        let Some(State::Task(t)) = clobbering.states.get_mut("Sweep TPF") else {
            panic!("no sweep state");
        };
        t.result_path = None;
        refused(&clobbering, "ASL_HISTORY_UNBOUNDED");

        // Polling again without the wait: every gateway call is answered at once, on the queue
        // transport too (its relay answers the token as soon as the gateway answers), so the
        // way back costs no time.
        let mut hasty = out.driver.clone();
        for rung in ["Poll again: next wait", "Poll again: longest wait"] {
            let Some(State::Pass(p)) = hasty.states.get_mut(rung) else {
                panic!("no {rung}");
            };
            p.next = Some("Sweep TPF".into());
        }
        hasty.states.shift_remove("Wait before polling");
        refused(&hasty, "ASL_LOOP_UNPACED");

        // The wake writes the counter without raising it: the loop has no bound.
        let mut uncounted = out.driver.clone();
        let Some(State::Pass(p)) = uncounted.states.get_mut("Woken: poll at once") else {
            panic!("no wake state");
        };
        let params = p.parameters.as_mut().unwrap();
        params.as_object_mut().unwrap().remove("iteration.$");
        params["iteration"] = serde_json::json!(0);
        refused(&uncounted, "ASL_HISTORY_UNBOUNDED");

        // The park no longer hands its token to TPF: nothing outside answers it, and the way
        // back through it costs no time.
        let mut unparked = out.driver.clone();
        let Some(State::Task(t)) = unparked.states.get_mut("Park until TPF's await completes")
        else {
            panic!("no park state");
        };
        let request = match transport {
            "lambda" => "/Payload",
            _ => "/MessageBody/gatewayRequest",
        };
        let req = t
            .parameters
            .as_mut()
            .unwrap()
            .pointer_mut(request)
            .unwrap()
            .as_object_mut()
            .unwrap();
        req.remove("providerCallbackId.$");
        req.insert("providerCallbackId".into(), serde_json::Value::Null);
        refused(&unparked, "ASL_LOOP_UNPACED");
    }
}
