//! The gateway world's scenarios, named by TPF's conformance ids (`tpf-01-…` to `tpf-22-…`,
//! TPF's titles verbatim) plus the cases TPF's production plan adds, each with what it injects
//! and what it asserts. Where a scenario needs what neither the world nor an engine can do, it
//! says so in [`ScenarioInfo::gap`] and does not run.

/// One scenario of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScenarioInfo {
    pub name: &'static str,
    /// TPF's conformance scenarios it covers (1–22).
    pub tpf: &'static [u8],
    /// TPF's title, verbatim, or the plan's case.
    pub title: &'static str,
    pub injects: &'static str,
    pub asserts: &'static str,
    /// What the scenario cannot do here, and why; `Some` without a run means it does not run.
    pub gap: Option<&'static str>,
    pub runs: bool,
}

const fn s(
    name: &'static str,
    tpf: &'static [u8],
    title: &'static str,
    injects: &'static str,
    asserts: &'static str,
    gap: Option<&'static str>,
) -> ScenarioInfo {
    ScenarioInfo {
        name,
        tpf,
        title,
        injects,
        asserts,
        gap,
        runs: true,
    }
}

use super::checks::GatewayCheck;

pub const CATALOGUE: &[ScenarioInfo] = &[
    s("tpf-01-lost-ingress-response", &[1], "lost ingress response after AWS accepted the start",
      "ingress-after-provider-start: the engine accepted the start and the answer is lost; the application starts again",
      "the second start answers the same durable name (202, the name already started); one TPF execution; one generation-1 driver, SUCCEEDED after the completion", None),
    s("tpf-02-replay-before-submit", &[2], "Durable replay before TPF submit",
      "submit-before-tpf-commit: the first SUBMIT fails before TPF commits",
      "the driver's submit step runs again; one TPF execution; the driver SUCCEEDED", None),
    s("tpf-03-submit-committed-before-checkpoint", &[3], "TPF submit committed before Durable checkpoint",
      "submit-after-tpf-commit: the first SUBMIT commits and its answer fails",
      "the retried SUBMIT is TPF's duplicate (`duplicate: true`, the same execution); one TPF execution; SUCCEEDED", None),
    s("tpf-04-work-failure-before-admission", &[4], "work Lambda failure before action admission",
      "work-before-action twice: the work function fails before the action and the message is delivered again",
      "one await interaction; the execution and its driver SUCCEEDED", None),
    s("tpf-05-work-committed-before-ack", &[5], "work action committed before SQS acknowledgement",
      "work-after-action: the action commits and the message is delivered again",
      "the redelivered item's claim is refused; one await interaction; SUCCEEDED", None),
    s("tpf-06-transition-response-before-ack", &[6], "transition response published before acknowledgement",
      "the pipeline's steps on TPF's SQS transition worker; its mapping off while the first request is sent twice more; transition-after-action: a delivery runs, publishes its response and fails before its acknowledgement, so it is delivered again",
      "the work function takes the one response carrying its request id and commits it; the others (the duplicates', the redelivery's) stay on the response queue, never committed: the execution parks once; one await interaction; SUCCEEDED", None),
    s("tpf-07-duplicate-transition-delivery", &[7], "duplicate transition delivery preserves uncertain-outcome semantics",
      "as tpf-06 with transition-before-action: a delivery fails before the action and is delivered again; the duplicates run",
      "one await interaction; the execution parks once and is never REMOTE_OUTCOME_UNKNOWN (a duplicate's answer is a response like any other, and only the claim's commit writes the record); SUCCEEDED", None),
    s("tpf-08-submitter-failure-before-binding", &[8], "callback submitter failure before binding",
      "bind-before-provider-binding: the first REGISTER_CALLBACK fails before the row is written",
      "the driver registers again; BINDING GEN#…01 is written; SUCCEEDED", None),
    s("tpf-09-binding-before-submitter-checkpoint", &[9], "binding committed before submitter checkpoint",
      "bind-after-provider-binding: the first REGISTER_CALLBACK writes its row and its answer fails",
      "the retried registration answers `bindingCreated: false`, never a conflict; SUCCEEDED", None),
    s("tpf-10-completion-before-binding", &[10], "Await completion before callback binding",
      "the completion is admitted just before the driver's REGISTER_CALLBACK is applied",
      "BINDING GEN#…01; the driver is woken once; SUCCEEDED", None),
    s("tpf-11-completion-after-binding", &[11], "Await completion after callback binding",
      "the completion after the driver parked and its registration bound the await",
      "one signal, DELIVERED#1 CALLBACK_ACCEPTED; SUCCEEDED",
      Some("TPF runs it with both stream mappings off and a scanning reconciler invoked with `{}`; here the streams are on, and the streams-off recovery is tpf-19")),
    s("tpf-12-duplicate-stream-delivery", &[12], "duplicate DynamoDB Stream delivery",
      "after SUCCEEDED, one batch: the delivered BINDING's image again and a BINDING with only `record_type`",
      "both records acknowledged (TPF's production processor; TPF's proof handler failed the bare one); no second send", None),
    s("tpf-13-callback-accepted-before-response-loss", &[13], "callback accepted before API response loss",
      "wakeup-before-provider-callback, then wakeup-after-provider-callback: the provider accepts the send and the answer is lost",
      "the retried send is refused as gone, the history says it succeeded: DELIVERED#1 PROVIDER_STATE_SUCCEEDED; one signal; SUCCEEDED", None),
    s("tpf-14-closed-callback-next-generation", &[14], "closed callback reconstructs as the next generation",
      "the provider closes the parked driver's callback with a failure (the driver fails); its status change reaches the reconciler",
      "generation 2, named from (tenant, executionId, 2), registers, binds GEN#…02 and SUCCEEDED",
      Some("TPF's proof closed the callback with a 20 s callback timeout; a gateway driver's park timeout routes to SWEEP instead of failing, so the close is a callback failure")),
    s("tpf-15-generation-race", &[15], "old and replacement driver generations race",
      "generation 2 starts with TPF's replacement input while generation 1 is parked and bound; generation 1's registration record is delivered again after the completion",
      "BINDING GEN#…02; only generation 2 is signalled (the replayed generation 1 is fenced off); generation 2 SUCCEEDED; generation 1 still parked, then stopped", None),
    s("tpf-16-stopped-execution-reconstructs", &[16], "stopped Durable execution reconstructs from TPF state",
      "the parked driver is stopped; the completion; the reconciler on the stop",
      "one generation 2 (the wake-up's and the reconciler's starts are one name); generation 2 SUCCEEDED", None),
    s("tpf-17-alias-rollout", &[17], "alias rollout preserves a parked numbered version",
      "while the driver is parked a new release is activated for new submissions",
      "the parked execution registers and ends on its own release; a new submission runs on the new one",
      Some("the alias move itself is an engine property the engine trait does not model: drivers start on the release's own numbered version or machine, never through an alias")),
    s("tpf-18-stream-failure-retained", &[18], "stream failure reaches retained failure records",
      "a malformed BINDING row on the binding table's stream; an await row whose execution never registers",
      "the malformed row is acknowledged (TPF's production processor); the unregistered await row is retried and, after its last retry, reaches the stream's failure destination", None),
    s("tpf-19-missed-stream-record", &[19], "missed stream record is recovered by reconciliation",
      "both stream mappings off for the whole run; the completion",
      "no signal is ever sent, and the driver's park timeout (the await's deadline + 1 s) sweeps, sees the progress and SUCCEEDED",
      Some("recovered by the driver's own park timeout, not by TPF's proof reconciler scanning open bindings (TPF's production reconciler answers status changes only)")),
    s("tpf-20-callback-throttled", &[20], "Durable callback API throttling is retried",
      "callback-api-throttled on the first send",
      "the record is retried; one signal; DELIVERED#1; SUCCEEDED", None),
    s("tpf-21-retry-exhaustion-redrive", &[21], "TPF retry exhaustion retains DLQ and re-drive authority",
      "pipeline-transition PERSISTENT: the first step fails on every attempt; then the fault is cleared, REDRIVE(version), generation 2 started with `resumeExecutionId`",
      "TPF FAILED with its dead-letter envelope; generation 1 FAILED with TPF.ExecutionEnded; REDRIVE answers QUEUED; generation 2 (another name) SUCCEEDED",
      Some("TPF's proof also counts its work queue's DLQ; here TPF's own dead-letter envelope is asserted, since the model's work function acknowledges a step failure it recorded")),
    s("tpf-22-await-deadline", &[22], "AWS schedules Await deadline and TPF admits timeout",
      "an await nobody completes",
      "the driver's park times out at the await's deadline + 1 s, sweeps, and TPF times the await out: TPF FAILED and the driver FAILED with TPF.ExecutionEnded, within the grace", None),
    s("second-await", &[], "a second await in one generation",
      "a pipeline with two awaits; each completed once its driver parked",
      "generation 1 parks once and hands over to generation 2 at the second await (no second registration in a generation, no conflict); generation 2 SUCCEEDED with TPF's result", None),
    s("sequential-awaits", &[], "sequential awaits",
      "a pipeline with three awaits in a row",
      "three generations, one registration each, the last SUCCEEDED with TPF's result", None),
    s("concurrent-awaits", &[], "concurrent awaits",
      "an itemized await of three items, completed one a minute",
      "every item completes, no registration conflict, at most one generation per item plus one, SUCCEEDED",
      None),
    s("missing-registration", &[], "missing registration",
      "the await completes after TPF parked and before its driver registered",
      "the completion's record is retried (no registration) and never dropped silently; the driver's polling sees the progress; SUCCEEDED", None),
    s("index-lag", &[], "GSI lag",
      "the provider-ARN index shows a registration 10 minutes late; the parked driver is stopped at once",
      "the reconciler does not drop the event: it finds the execution by the driver's own input, and generation 2 SUCCEEDED", None),
    s("provider-loss-before-registration", &[], "pre-registration provider loss",
      "generation 1 is stopped before its first registration",
      "the reconciler resubmits generation 1's input (TPF answers the execution it admitted) and starts generation 2; one TPF execution; SUCCEEDED", None),
    s("registration-refused-until-deadline", &[], "a registration TPF refuses until the await's deadline",
      "bind-before-provider-binding PERSISTENT: TPF's gateway refuses every REGISTER_CALLBACK with its exception (no transport error), and nobody completes the await",
      "no registration is written; each generation hands over after its refused registration, waiting TPF's ladder at its generation first (5 s for generation 1, then 8, 11, …, 300 s), never more than a minute beyond; the first SWEEP after the await's deadline applies TPF's timeout: TPF FAILED and the last generation FAILED with TPF.ExecutionEnded", None),
    s("suspended-timeout", &[22], "suspended timeout",
      "the await's deadline passes while the driver is parked; a completion arrives after it",
      "TPF refuses the late completion and FAILED; the driver FAILED with TPF.ExecutionEnded", None),
    s("provider-history-loss", &[16], "provider history loss",
      "the parked driver is stopped; provider-history-unavailable on the history read after the refused send; the completion",
      "the unreadable history counts as closed (TPF's rule) and generation 2 starts; one TPF execution; SUCCEEDED (TPF's `provider-history-loss-recovery` evidence group)", None),
    s("lost-answer-and-history-loss", &[], "a lost answer and an unreadable history",
      "wakeup-after-provider-callback and provider-history-unavailable: the provider accepts the send, the answer is lost, and the history read after the retried send fails",
      "one signal with its DELIVERED#1 row, and no second generation",
      Some("TPF's rule fails it today: an unreadable history counts as closed, so the wake-up starts generation 2 while generation 1 holds the signal, and writes no DELIVERED#1 (both generations end with TPF's result)")),
    s("transition-timeout", &[7], "a transition response later than the caller's request timeout",
      "the pipeline's steps on TPF's SQS transition worker; its mapping off until the work function's call passed its request timeout (30 s) and the retry sent a second request",
      "the call fails with TPF's retryable TransitionWorkerFailureException (WAIT_RETRY, never REMOTE_OUTCOME_UNKNOWN: the SQS worker's timeout is not an uncertain outcome to TPF); the retry's request is answered and committed; the first request, run late, answers no one and its response stays on the queue; one await interaction; SUCCEEDED", None),
    s("admission-declines-without-claiming", &[], "admission declines without claiming",
      "TPF's work function meets a saturated executor on its first two deliveries and the tenant's transition quota (4) on its third",
      "each declined delivery claims and writes nothing (the record's version unchanged) and comes back as a new message after TPF's saturated delay (1 s); the execution then runs, parks once and SUCCEEDED", None),
    s("new-release-mid-flight", &[17], "a replacement generation keeps its release",
      "the parked driver's release is replaced as active by another; the driver is stopped; the reconciler starts generation 2",
      "generation 2 starts and registers under the execution's own release; SUCCEEDED", None),
];

/// A scenario the gateway protocol fails today (its `gap` says why): a finding kept visible
/// until the protocol is fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    pub scenario: &'static str,
    /// Words of the scenario's own failed assertion.
    pub fails_with: &'static str,
    /// The checks it breaks too.
    pub breaks: &'static [GatewayCheck],
}

pub const FINDINGS: &[Finding] = &[Finding {
    scenario: "lost-answer-and-history-loss",
    fails_with: "a redundant generation",
    breaks: &[
        GatewayCheck::DeliveryEvidence,
        GatewayCheck::SingleLiveGeneration,
    ],
}];

/// The catalogue's scenario of that name.
pub fn scenario(name: &str) -> Option<&'static ScenarioInfo> {
    CATALOGUE.iter().find(|s| s.name == name)
}

/// TPF's 22 titles, by id.
pub fn tpf_title(id: u8) -> Option<&'static str> {
    CATALOGUE
        .iter()
        .find(|s| s.tpf.first() == Some(&id) && s.name.starts_with("tpf-"))
        .map(|s| s.title)
}

/// For each of TPF's 22 scenarios, the catalogue's scenarios that run and cover it.
pub fn conformance() -> Vec<(u8, &'static str, Vec<&'static str>)> {
    (1..=22)
        .map(|id| {
            let own = CATALOGUE
                .iter()
                .find(|s| s.tpf.first() == Some(&id) && s.name.starts_with("tpf-"))
                .map(|s| s.name)
                .unwrap_or_default();
            let covering = CATALOGUE
                .iter()
                .filter(|s| s.runs && s.tpf.contains(&id))
                .map(|s| s.name)
                .collect();
            (id, own, covering)
        })
        .collect()
}

/// `mapping-test`'s `tpfConformance`: for each of TPF's 22 scenarios, its id, the catalogue's
/// scenario named for it, TPF's title, the catalogue's scenarios that run and cover it, and
/// what the world cannot do for it (`null` when nothing).
pub fn conformance_json() -> serde_json::Value {
    conformance()
        .into_iter()
        .map(|(id, own, covered_by)| {
            serde_json::json!({
                "id": id,
                "scenario": own,
                "title": tpf_title(id),
                "coveredBy": covered_by,
                "gap": scenario(own).and_then(|s| s.gap),
            })
        })
        .collect()
}
