//! Schema-3 `composition` blocks: reading and TPF's graph rules.
//!
//! TPF validates the graph when it builds it; a contract edited by hand or by another tool can
//! still break those rules, and a driver compiled from a broken graph would loop or strand
//! executions, so the same rules are enforced here.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};

use super::hash::fingerprint;
use super::model::{Composition, CompositionContinuation, CompositionDefinition, CompositionNode};
use crate::json_fields::{child, item, FieldReader};

const COMPOSITION_KEYS: &[&str] = &["rootDefinitionId", "definitions"];
const DEFINITION_KEYS: &[&str] = &[
    "definitionId",
    "definitionFingerprint",
    "inputContractId",
    "outputContractId",
    "nodes",
    "continuations",
];
const NODE_KEYS: &[&str] = &[
    "index",
    "nodeId",
    "kind",
    "inputContractId",
    "outputContractId",
    "cardinality",
    "targetDefinitionId",
    "acceptedContractIds",
    "terminal",
];
const CONTINUATION_KEYS: &[&str] = &["nodeId", "kind", "nextNodeId"];

pub(crate) const PTR: &str = "/composition";

/// Reads the block; shape errors go to `r`, and unreadable parts are left out so the graph rules
/// can still run on the rest.
pub(crate) fn read(r: &mut FieldReader<'_>, obj: &Map<String, Value>) -> Composition {
    r.reject_unknown(obj, PTR, COMPOSITION_KEYS, "composition");
    let root_definition_id = r.str_req(obj, PTR, "rootDefinitionId").unwrap_or_default();
    let mut definitions = Vec::new();
    let defs_ptr = child(PTR, "definitions");
    for (i, v) in r
        .array_opt(obj, PTR, "definitions")
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = item(&defs_ptr, i);
        let Some(d) = r.element_object(v, &p, "composition definition") else {
            continue;
        };
        definitions.push(read_definition(r, d, &p));
    }
    Composition {
        root_definition_id,
        definitions,
    }
}

fn read_definition(
    r: &mut FieldReader<'_>,
    d: &Map<String, Value>,
    p: &str,
) -> CompositionDefinition {
    r.reject_unknown(d, p, DEFINITION_KEYS, "composition definition");
    let mut nodes = Vec::new();
    let nodes_ptr = child(p, "nodes");
    for (j, v) in r.array_opt(d, p, "nodes").into_iter().flatten().enumerate() {
        let np = item(&nodes_ptr, j);
        let Some(n) = r.element_object(v, &np, "composition node") else {
            continue;
        };
        r.reject_unknown(n, &np, NODE_KEYS, "composition node");
        let index = r.int_req(n, &np, "index").unwrap_or(-1);
        nodes.push(CompositionNode {
            index: u32::try_from(index).unwrap_or(u32::MAX),
            node_id: r.str_req(n, &np, "nodeId").unwrap_or_default(),
            kind: r.str_req(n, &np, "kind").unwrap_or_default(),
            input_contract_id: r.str_opt(n, &np, "inputContractId").unwrap_or_default(),
            output_contract_id: r.str_opt(n, &np, "outputContractId").unwrap_or_default(),
            cardinality: r.str_opt(n, &np, "cardinality").unwrap_or_default(),
            target_definition_id: r.str_opt(n, &np, "targetDefinitionId").unwrap_or_default(),
            accepted_contract_ids: r
                .str_array_opt(n, &np, "acceptedContractIds")
                .unwrap_or_default(),
            terminal: r.bool_opt(n, &np, "terminal").unwrap_or(false),
        });
    }
    let mut continuations = Vec::new();
    let cont_ptr = child(p, "continuations");
    for (j, v) in r
        .array_opt(d, p, "continuations")
        .into_iter()
        .flatten()
        .enumerate()
    {
        let cp = item(&cont_ptr, j);
        let Some(c) = r.element_object(v, &cp, "composition continuation") else {
            continue;
        };
        r.reject_unknown(c, &cp, CONTINUATION_KEYS, "composition continuation");
        continuations.push(CompositionContinuation {
            node_id: r.str_req(c, &cp, "nodeId").unwrap_or_default(),
            kind: r.str_req(c, &cp, "kind").unwrap_or_default(),
            next_node_id: r.str_opt(c, &cp, "nextNodeId").unwrap_or_default(),
        });
    }
    let definition_fingerprint = r.str_opt(d, p, "definitionFingerprint").unwrap_or_default();
    let definition = CompositionDefinition {
        definition_id: r.str_req(d, p, "definitionId").unwrap_or_default(),
        definition_fingerprint,
        input_contract_id: r.str_opt(d, p, "inputContractId").unwrap_or_default(),
        output_contract_id: r.str_opt(d, p, "outputContractId").unwrap_or_default(),
        nodes,
        continuations,
    };
    check_fingerprint(r, d, p, &definition.definition_fingerprint);
    definition
}

/// A composition definition's fingerprint: TPF's covers
/// `{definitionId,inputContractId,outputContractId,nodes,continuations}` in that order.
pub fn definition_fingerprint(d: &Map<String, Value>) -> String {
    let mut basis = Map::new();
    for key in [
        "definitionId",
        "inputContractId",
        "outputContractId",
        "nodes",
        "continuations",
    ] {
        if let Some(v) = d.get(key) {
            basis.insert(key.to_string(), v.clone());
        }
    }
    fingerprint(&Value::Object(basis))
}

/// A stale fingerprint does not change what runs, so it is only a warning.
fn check_fingerprint(r: &mut FieldReader<'_>, d: &Map<String, Value>, p: &str, declared: &str) {
    let computed = definition_fingerprint(d);
    if declared != computed {
        r.warning(
            "CONTRACT_FINGERPRINT",
            &child(p, "definitionFingerprint"),
            format!("definitionFingerprint is `{declared}` but the definition hashes to `{computed}`"),
            "regenerate the contract with TPF's build; a hand-edited composition keeps its old fingerprint",
        );
    }
}

fn defs_ptr(i: usize) -> String {
    item(&child(PTR, "definitions"), i)
}

/// TPF's graph rules. Codes: `CONTRACT_COMPOSITION_{ROOT,DUPLICATE,INDEX,EMPTY,KIND,CONTINUATION,
/// TERMINAL,TARGET,UNREACHABLE,CYCLE}`.
pub(crate) fn validate(r: &mut FieldReader<'_>, c: &Composition) {
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (i, d) in c.definitions.iter().enumerate() {
        if by_id.insert(d.definition_id.as_str(), i).is_some() {
            r.error(
                "CONTRACT_COMPOSITION_DUPLICATE",
                &child(&defs_ptr(i), "definitionId"),
                format!(
                    "definition `{}` is declared more than once",
                    d.definition_id
                ),
                "give every composition definition a unique definitionId",
            );
        }
    }
    let Some(&root) = by_id.get(c.root_definition_id.as_str()) else {
        r.error(
            "CONTRACT_COMPOSITION_ROOT",
            &child(PTR, "rootDefinitionId"),
            format!(
                "rootDefinitionId `{}` names no definition",
                c.root_definition_id
            ),
            "set rootDefinitionId to the definitionId of the top-level pipeline",
        );
        return;
    };
    for (i, d) in c.definitions.iter().enumerate() {
        validate_definition(r, d, i, i == root, &by_id);
    }
    validate_definition_graph(r, c, root, &by_id);
}

fn validate_definition(
    r: &mut FieldReader<'_>,
    d: &CompositionDefinition,
    di: usize,
    is_root: bool,
    by_id: &HashMap<&str, usize>,
) {
    let dp = defs_ptr(di);
    let id = &d.definition_id;
    if d.nodes.is_empty() {
        r.error(
            "CONTRACT_COMPOSITION_EMPTY",
            &child(&dp, "nodes"),
            format!("definition `{id}` has no nodes"),
            "a composition definition needs at least one node",
        );
        return;
    }
    let node_ptr = |j: usize| item(&child(&dp, "nodes"), j);
    let mut node_ids: HashMap<&str, usize> = HashMap::new();
    for (j, n) in d.nodes.iter().enumerate() {
        if usize::try_from(n.index).ok() != Some(j) {
            r.error(
                "CONTRACT_COMPOSITION_INDEX",
                &child(&node_ptr(j), "index"),
                format!("node at position {j} of `{id}` has index {}", n.index),
                "node indexes must be contiguous from 0 in array order",
            );
        }
        if node_ids.insert(n.node_id.as_str(), j).is_some() {
            r.error(
                "CONTRACT_COMPOSITION_DUPLICATE",
                &child(&node_ptr(j), "nodeId"),
                format!("node `{}` appears more than once in `{id}`", n.node_id),
                "node ids must be unique within a definition",
            );
        }
        match n.kind.as_str() {
            "direct" => {}
            "pipeline" => {
                if !by_id.contains_key(n.target_definition_id.as_str()) {
                    r.error(
                        "CONTRACT_COMPOSITION_TARGET",
                        &child(&node_ptr(j), "targetDefinitionId"),
                        format!("node `{}` calls definition `{}`, which does not exist", n.node_id, n.target_definition_id),
                        "point targetDefinitionId at a definitionId of this composition",
                    );
                }
            }
            other => r.error(
                "CONTRACT_COMPOSITION_KIND",
                &child(&node_ptr(j), "kind"),
                format!("node kind `{other}` is neither `direct` nor `pipeline`"),
                "TPF knows two node kinds: `direct` (a step) and `pipeline` (a call into another definition)",
            ),
        }
    }

    // One continuation per node says where control goes after it.
    let mut next: HashMap<usize, usize> = HashMap::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut kind_of: HashMap<&str, &str> = HashMap::new();
    for (k, cont) in d.continuations.iter().enumerate() {
        let cp = item(&child(&dp, "continuations"), k);
        let Some(&from) = node_ids.get(cont.node_id.as_str()) else {
            r.error(
                "CONTRACT_COMPOSITION_CONTINUATION",
                &child(&cp, "nodeId"),
                format!(
                    "continuation for `{}`, which is not a node of `{id}`",
                    cont.node_id
                ),
                "every continuation must belong to a node of its definition",
            );
            continue;
        };
        if !seen.insert(cont.node_id.as_str()) {
            r.error(
                "CONTRACT_COMPOSITION_CONTINUATION",
                &child(&cp, "nodeId"),
                format!("node `{}` has more than one continuation", cont.node_id),
                "give every node exactly one continuation",
            );
            continue;
        }
        kind_of.insert(cont.node_id.as_str(), cont.kind.as_str());
        match cont.kind.as_str() {
            "NEXT_LOCAL" => match node_ids.get(cont.next_node_id.as_str()) {
                Some(&to) => {
                    next.insert(from, to);
                }
                None => r.error(
                    "CONTRACT_COMPOSITION_TARGET",
                    &child(&cp, "nextNodeId"),
                    format!(
                        "continuation of `{}` goes to `{}`, which is not a node of `{id}`",
                        cont.node_id, cont.next_node_id
                    ),
                    "NEXT_LOCAL continuations must name a node of the same definition",
                ),
            },
            "RETURN" | "ROOT_TERMINAL" => {
                if !cont.next_node_id.is_empty() {
                    r.error(
                        "CONTRACT_COMPOSITION_CONTINUATION",
                        &child(&cp, "nextNodeId"),
                        format!(
                            "{} continuation of `{}` names a next node",
                            cont.kind, cont.node_id
                        ),
                        "nextNodeId must be \"\" unless the continuation is NEXT_LOCAL",
                    );
                }
            }
            other => r.error(
                "CONTRACT_COMPOSITION_CONTINUATION",
                &child(&cp, "kind"),
                format!("continuation kind `{other}` is unknown"),
                "use NEXT_LOCAL, RETURN or ROOT_TERMINAL",
            ),
        }
    }
    for (j, n) in d.nodes.iter().enumerate() {
        if !seen.contains(n.node_id.as_str()) {
            r.error(
                "CONTRACT_COMPOSITION_CONTINUATION",
                &node_ptr(j),
                format!("node `{}` of `{id}` has no continuation", n.node_id),
                "add a continuation for the node (NEXT_LOCAL, RETURN or ROOT_TERMINAL)",
            );
        }
    }

    if let Some(last) = d.nodes.last() {
        let want = if is_root { "ROOT_TERMINAL" } else { "RETURN" };
        let got = kind_of
            .get(last.node_id.as_str())
            .copied()
            .unwrap_or("none");
        if got != want {
            r.error(
                "CONTRACT_COMPOSITION_TERMINAL",
                &item(&child(&dp, "nodes"), d.nodes.len() - 1),
                format!(
                    "last node `{}` of `{id}` continues with {got}, expected {want}",
                    last.node_id
                ),
                if is_root {
                    "the root definition must end in ROOT_TERMINAL"
                } else {
                    "a called definition must end in RETURN so control goes back to its caller"
                },
            );
        }
    }

    // Follow NEXT_LOCAL from the first node: every node must be on the walk, and the walk must
    // not come back to a node it already visited.
    let mut visited = BTreeSet::new();
    let mut at = 0usize;
    loop {
        if !visited.insert(at) {
            r.error(
                "CONTRACT_COMPOSITION_CYCLE",
                &item(&child(&dp, "nodes"), at),
                format!("NEXT_LOCAL continuations of `{id}` loop back to node `{}`", node_name(d, at)),
                "continuations must move forward; only a direct self-call of a definition may recurse",
            );
            break;
        }
        match next.get(&at) {
            Some(&to) => at = to,
            None => break,
        }
    }
    for (j, n) in d.nodes.iter().enumerate() {
        if !visited.contains(&j) {
            r.error(
                "CONTRACT_COMPOSITION_UNREACHABLE",
                &node_ptr(j),
                format!(
                    "node `{}` of `{id}` is not reachable from its first node",
                    n.node_id
                ),
                "link the node from its predecessor with a NEXT_LOCAL continuation, or remove it",
            );
        }
    }
}

fn node_name(d: &CompositionDefinition, j: usize) -> &str {
    d.nodes.get(j).map(|n| n.node_id.as_str()).unwrap_or("?")
}

/// Definitions must be reachable from the root through `pipeline` nodes, and calls must not form
/// cycles other than a definition calling itself (bounded at runtime by
/// `pipeline.max-recursive-depth`).
fn validate_definition_graph(
    r: &mut FieldReader<'_>,
    c: &Composition,
    root: usize,
    by_id: &HashMap<&str, usize>,
) {
    let calls: Vec<BTreeSet<usize>> = c
        .definitions
        .iter()
        .enumerate()
        .map(|(i, d)| {
            d.nodes
                .iter()
                .filter(|n| n.kind == "pipeline")
                .filter_map(|n| by_id.get(n.target_definition_id.as_str()).copied())
                .filter(|&t| t != i)
                .collect()
        })
        .collect();

    let mut reached = BTreeSet::from([root]);
    let mut stack = vec![root];
    while let Some(i) = stack.pop() {
        for &t in calls.get(i).into_iter().flatten() {
            if reached.insert(t) {
                stack.push(t);
            }
        }
    }
    for (i, d) in c.definitions.iter().enumerate() {
        if !reached.contains(&i) {
            r.error(
                "CONTRACT_COMPOSITION_UNREACHABLE",
                &defs_ptr(i),
                format!(
                    "definition `{}` is never called from the root `{}`",
                    d.definition_id, c.root_definition_id
                ),
                "call the definition from a `pipeline` node, or remove it",
            );
        }
    }

    // Colour-marking DFS; iterative so a deep graph cannot overflow the stack.
    let n = c.definitions.len();
    let mut colour = vec![0u8; n];
    let mut reported = BTreeSet::new();
    for start in 0..n {
        if colour.get(start).copied() != Some(0) {
            continue;
        }
        let mut path: Vec<(usize, Vec<usize>)> = vec![(
            start,
            calls.get(start).into_iter().flatten().copied().collect(),
        )];
        if let Some(s) = colour.get_mut(start) {
            *s = 1;
        }
        while let Some((node, pending)) = path.last_mut() {
            let node = *node;
            match pending.pop() {
                Some(t) => match colour.get(t).copied() {
                    Some(0) => {
                        if let Some(s) = colour.get_mut(t) {
                            *s = 1;
                        }
                        path.push((t, calls.get(t).into_iter().flatten().copied().collect()));
                    }
                    Some(1) if reported.insert(t) => {
                        let name = c
                            .definitions
                            .get(t)
                            .map(|d| d.definition_id.as_str())
                            .unwrap_or("?");
                        r.error(
                            "CONTRACT_COMPOSITION_CYCLE",
                            &defs_ptr(node),
                            format!("definitions call each other in a cycle through `{name}`"),
                            "only direct self-recursion is allowed; break the mutual calls",
                        );
                    }
                    _ => {}
                },
                None => {
                    if let Some(s) = colour.get_mut(node) {
                        *s = 2;
                    }
                    path.pop();
                }
            }
        }
    }
}
