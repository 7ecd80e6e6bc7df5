//! The route table: one list builds the router and is what `docs/openapi.json` is checked
//! against, so the documentation cannot drift from the server.

use tpf_wire::gateway::invoke;

/// Which handler a route runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteId {
    Submit,
    Status,
    Result,
    PendingInteractions,
    CompleteInteraction,
    Redrive,
    RegisterRelease,
    ActivateRelease,
    ActiveRelease,
    GetRelease,
    GatewayInvoke,
}

/// (HTTP method, path in OpenAPI/axum `{param}` syntax, handler).
pub const ROUTES: &[(&str, &str, RouteId)] = &[
    ("POST", invoke::PATH, RouteId::GatewayInvoke),
    (
        "POST",
        "/tpf/control-plane/tenants/{tenantId}/executions",
        RouteId::Submit,
    ),
    (
        "GET",
        "/tpf/control-plane/tenants/{tenantId}/executions/{executionId}",
        RouteId::Status,
    ),
    (
        "GET",
        "/tpf/control-plane/tenants/{tenantId}/executions/{executionId}/result",
        RouteId::Result,
    ),
    (
        "GET",
        "/tpf/control-plane/tenants/{tenantId}/interactions/pending",
        RouteId::PendingInteractions,
    ),
    (
        "POST",
        "/tpf/control-plane/tenants/{tenantId}/interactions/complete",
        RouteId::CompleteInteraction,
    ),
    (
        "POST",
        "/tpf/admin/tenants/{tenantId}/executions/{executionId}/redrive",
        RouteId::Redrive,
    ),
    (
        "POST",
        "/tpf/admin/tenants/{tenantId}/pipelines/{pipelineId}/releases/register",
        RouteId::RegisterRelease,
    ),
    (
        "POST",
        "/tpf/admin/tenants/{tenantId}/pipelines/{pipelineId}/releases/{releaseVersion}/activate",
        RouteId::ActivateRelease,
    ),
    (
        "GET",
        "/tpf/admin/tenants/{tenantId}/pipelines/{pipelineId}/releases/active",
        RouteId::ActiveRelease,
    ),
    (
        "GET",
        "/tpf/admin/tenants/{tenantId}/pipelines/{pipelineId}/releases/{releaseVersion}",
        RouteId::GetRelease,
    ),
];
