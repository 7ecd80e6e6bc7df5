//! TPF pipeline contracts: model, loading, hash verification and TPF's own constraints.

pub mod model;

pub use model::*;

// STUB (replaced by the real loader on merge)
pub fn load_contract(
    file: &str,
    bytes: &[u8],
    _opts: ContractOptions,
) -> Result<LoadedContract, crate::Diagnostics> {
    let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        crate::Diagnostics(vec![crate::diagnostic::json_syntax(
            "CONTRACT_JSON_SYNTAX",
            file,
            &e,
        )])
    })?;
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    let steps = v["steps"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|st| {
            let g = |k: &str| st.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
            let raw = g("cardinality");
            let card = match raw.trim().to_uppercase().as_str() {
                "EXPANSION" | "ONE_TO_MANY" => Cardinality::OneToMany,
                "REDUCTION" | "MANY_TO_ONE" => Cardinality::ManyToOne,
                "MANY_TO_MANY" => Cardinality::ManyToMany,
                _ => Cardinality::OneToOne,
            };
            Step {
                index: st["index"].as_u64().unwrap_or(0) as u32,
                authored_name: g("authoredName"),
                kind: g("kind"),
                cardinality_raw: raw,
                cardinality: card,
                input_type_id: g("inputTypeId"),
                output_type_id: g("outputTypeId"),
                runtime_class: g("runtimeClass"),
                client_class: g("clientClass"),
                await_transport: st.get("awaitTransport").and_then(|x| x.as_str()).map(
                    |t| match t {
                        "interaction-api" => AwaitTransport::InteractionApi,
                        "webhook" => AwaitTransport::Webhook,
                        "kafka" => AwaitTransport::Kafka,
                        "sqs" => AwaitTransport::Sqs,
                        o => AwaitTransport::Other(o.into()),
                    },
                ),
            }
        })
        .collect();
    Ok(LoadedContract {
        contract: Contract {
            schema_version: v["schemaVersion"].as_u64().unwrap_or(1) as u8,
            pipeline_id: s("pipelineId"),
            contract_version: s("contractVersion"),
            contract_hash: s("contractHash"),
            platform: None,
            transport: None,
            module: None,
            plugin_host: false,
            runtime_layout: None,
            steps,
            canonical_types: Default::default(),
            canonical_catalog_fingerprint: String::new(),
            composition: None,
            capabilities: Capabilities {
                local_transition_execution: true,
                transition_worker_protocols: vec![],
            },
        },
        hash: HashCheck::Verified,
        warnings: vec![],
    })
}
