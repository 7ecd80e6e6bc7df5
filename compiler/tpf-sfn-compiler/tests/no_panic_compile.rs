//! The whole compile never panics: arbitrary bytes, and the restaurant contract with its steps
//! mutated (names of any length and alphabet, kinds, cardinalities, transports), go through
//! planning, rendering, validation and the outputs on every backend, and either compile or fail
//! with codes.

use proptest::prelude::*;
use serde_json::{json, Value};
use tpf_sfn_compiler::compile::{compile, Input};
use tpf_sfn_compiler::Backend;

const RESTAURANT: &str =
    include_str!("../../../examples/contracts/restaurant-approval.pipeline-contract.json");

/// `transport` is the gateway binding's, prepended to `config`.
fn run(bytes: &[u8], transport: &str, config: Option<&str>) {
    let config = format!(
        "{}[binding.gateway]\ntransport = \"{transport}\"\n",
        config.unwrap_or_default()
    );
    let input = Input {
        contract_file: "fuzz.json",
        contract: bytes,
        config: Some(("fuzz.toml", &config)),
        allow_unverified_hash: true,
        ..Input::default()
    };
    for backend in Backend::ALL {
        match compile(&input, backend) {
            // Step Functions: the driver, its policy, the graph and the manifest; Lambda
            // durable functions: the spec and the manifest.
            Ok(out) => assert!(
                out.files().len()
                    >= match backend {
                        Backend::StepFunctions => 4,
                        Backend::LambdaDurable => 2,
                    }
            ),
            Err(d) => assert!(
                d.0.iter()
                    .all(|x| !x.code.is_empty() && !x.message.is_empty()),
                "{d}"
            ),
        }
    }
}

fn transport() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("lambda"), Just("queue")]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512), b in transport()) {
        run(&bytes, b, None);
    }

    #[test]
    fn mutated_steps_never_panic(
        names in proptest::collection::vec(".{0,120}", 1..6),
        kinds in proptest::collection::vec(prop_oneof![Just("await"), Just("internal"), Just(" AWAIT "), Just("query"), Just("")], 1..6),
        cards in proptest::collection::vec(prop_oneof![Just("ONE_TO_ONE"), Just("expansion"), Just("REDUCTION"), Just("MANY_TO_MANY"), Just("bogus")], 1..6),
        transports in proptest::collection::vec(prop_oneof![Just(Some("interaction-api")), Just(Some("kafka")), Just(Some("carrier-pigeon")), Just(None)], 1..6),
        b in transport(),
    ) {
        let mut doc: Value = serde_json::from_str(RESTAURANT).unwrap();
        let template = doc["steps"][0].clone();
        let steps: Vec<Value> = names.iter().enumerate().map(|(i, n)| {
            let mut s = template.clone();
            s["index"] = json!(i);
            s["authoredName"] = json!(n);
            s["kind"] = json!(kinds[i % kinds.len()]);
            s["cardinality"] = json!(cards[i % cards.len()]);
            if let Some(t) = transports[i % transports.len()] {
                s["awaitTransport"] = json!(t);
            }
            s
        }).collect();
        doc["steps"] = Value::Array(steps);
        run(&serde_json::to_vec(&doc).unwrap(), b, None);
    }

    #[test]
    fn odd_configs_never_panic(budget in 0u32..30_000, call in 0u64..100_000, b in transport()) {
        let config = format!(
            "[history]\nevent-budget = {budget}\n[timeouts]\naction-call-seconds = {call}\n"
        );
        run(RESTAURANT.as_bytes(), b, Some(&config));
    }
}
