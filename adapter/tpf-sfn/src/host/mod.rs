//! `tpf-sfn serve`: a reference action host. It serves TPF's action gateway (the Lambda's
//! request and response, over HTTP), Action API v1 and TPF's control-plane and admin routes over
//! the reference coordinator with a scripted transition worker, on the in-memory store or on
//! TPF's DynamoDB tables, and runs TPF's work function in process ([`work`]). It is for demos and
//! end-to-end tests of the drivers, not a TPF replacement.
//!
//! The coordinator is synchronous; each request runs it in `spawn_blocking` behind one mutex,
//! which also serialises requests the way a single TPF coordinator instance would. The mutex
//! guards the coordinator's own state (its reply cache, call log and the scripted worker's
//! attempt counts), not only the store, so it cannot be narrowed to the store's calls. Instead
//! both waits are bounded: every store call by the SDK's timeouts, and the wait for the mutex by
//! [`HostState::with_lock_wait`], past which a request is answered `503 HOST_BUSY` rather than
//! queued behind a stalled one.

pub mod auth;
pub mod edge;
pub mod handlers;
pub mod limits;
pub mod path;
pub mod pipeline;
pub mod routes;
pub mod server;
pub mod work;

pub use server::serve;

use std::sync::Arc;
use std::time::Duration;

use axum::middleware::from_fn_with_state;
use axum::routing::{on, MethodFilter};
use axum::Router;
use tpf_model::coordinator::{LocalControlPlane, WorkQueue};
use tpf_model::gateway::{BindingStore, Gateway, InMemoryBindings};
use tpf_model::{AwaitStore, Coordinator, ExecutionStore, ReleaseRegistry};
use tpf_sfn_compiler::contract::Contract;

use limits::{BODY_READ_TIMEOUT, LOCK_WAIT};
use routes::{RouteId, ROUTES};

/// A store the host can run on.
pub trait HostStore: ExecutionStore + AwaitStore + ReleaseRegistry + Send + 'static {}
impl<T: ExecutionStore + AwaitStore + ReleaseRegistry + Send + 'static> HostStore for T {}

/// A callback-binding table the host can run on.
pub type HostBindings = Box<dyn BindingStore + Send>;

/// What the host's lock guards: the coordinator, TPF's work queue and the callback-binding
/// table. The gateway and the work function borrow the coordinator as
/// TPF's control plane, so every route sees one coordinator.
pub struct Hosted<S> {
    pub coordinator: Coordinator<S>,
    work: WorkQueue,
    bindings: HostBindings,
}

impl<S: HostStore> Hosted<S> {
    /// The action gateway over this host's coordinator, queue and table for one call; the
    /// queue is handed back when `f` returns.
    pub fn gateway<R>(
        &mut self,
        f: impl FnOnce(
            &mut Gateway<LocalControlPlane<S, &mut Coordinator<S>>, &mut dyn BindingStore>,
        ) -> R,
    ) -> R {
        let queue = std::mem::take(&mut self.work);
        let plane = LocalControlPlane::with_queue(&mut self.coordinator, queue);
        let mut gateway = Gateway::new(plane, &mut *self.bindings as &mut dyn BindingStore);
        let out = f(&mut gateway);
        self.work = gateway.plane.into_queue();
        out
    }

    /// The work items waiting for the work function.
    pub fn queued(&self) -> usize {
        self.work.len()
    }
}

/// Shared by every request.
pub struct HostState<S> {
    // A panic in one request must not take the host down: tokio's mutex is released on unwind
    // and never poisoned, and the model's writes are single store calls, so the state behind
    // it is still coherent.
    hosted: Arc<tokio::sync::Mutex<Hosted<S>>>,
    token: String,
    clock: fn() -> i64,
    lock_wait: Duration,
    body_read_timeout: Duration,
    /// The hosted contract: a release of today's form registered for it is checked against it.
    contract: Option<Arc<Contract>>,
}

impl<S: HostStore> HostState<S> {
    /// A host whose callback-binding table is in memory.
    pub fn new(coordinator: Coordinator<S>, token: String, clock: fn() -> i64) -> Self {
        Self::with_bindings(coordinator, Box::new(InMemoryBindings::new()), token, clock)
    }

    /// A host on the given callback-binding table (`--store dynamodb`: TPF's table).
    pub fn with_bindings(
        coordinator: Coordinator<S>,
        bindings: HostBindings,
        token: String,
        clock: fn() -> i64,
    ) -> Self {
        let hosted = Hosted {
            coordinator,
            work: WorkQueue::default(),
            bindings,
        };
        Self {
            hosted: Arc::new(tokio::sync::Mutex::new(hosted)),
            token,
            clock,
            lock_wait: LOCK_WAIT,
            body_read_timeout: BODY_READ_TIMEOUT,
            contract: None,
        }
    }

    /// Checks releases registered for `contract`'s version against it, as TPF's registrar checks
    /// a release against the contract in its artifact.
    pub fn with_contract(mut self, contract: Contract) -> Self {
        self.contract = Some(Arc::new(contract));
        self
    }

    pub(crate) fn contract(&self) -> Option<Arc<Contract>> {
        self.contract.clone()
    }

    /// How long a request waits for the coordinator before it is answered `503 HOST_BUSY`.
    pub fn with_lock_wait(mut self, wait: Duration) -> Self {
        self.lock_wait = wait;
        self
    }

    /// How long a client may take to send its body before it is answered `408`.
    pub fn with_body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// The coordinator, once no other request holds it, or `None` after the lock wait.
    async fn lock(&self) -> Option<tokio::sync::OwnedMutexGuard<Hosted<S>>> {
        tokio::time::timeout(self.lock_wait, self.hosted.clone().lock_owned())
            .await
            .ok()
    }

    pub(crate) fn body_read_timeout(&self) -> Duration {
        self.body_read_timeout
    }

    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    pub(crate) fn now_ms(&self) -> i64 {
        (self.clock)()
    }
}

/// Wall-clock milliseconds since the epoch.
pub fn system_clock() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The router, built from [`ROUTES`].
pub fn router<S: HostStore>(state: Arc<HostState<S>>) -> Router {
    let mut router = Router::new();
    for (method, path, id) in ROUTES {
        let filter = if *method == "GET" {
            MethodFilter::GET
        } else {
            MethodFilter::POST
        };
        let route = match id {
            RouteId::Submit => on(filter, handlers::submit::<S>),
            RouteId::Status => on(filter, handlers::status::<S>),
            RouteId::Result => on(filter, handlers::result::<S>),
            RouteId::PendingInteractions => on(filter, handlers::pending::<S>),
            RouteId::CompleteInteraction => on(filter, handlers::complete::<S>),
            RouteId::Redrive => on(filter, handlers::redrive::<S>),
            RouteId::RegisterRelease => on(filter, handlers::register_release::<S>),
            RouteId::ActivateRelease => on(filter, handlers::activate_release::<S>),
            RouteId::ActiveRelease => on(filter, handlers::active_release::<S>),
            RouteId::GetRelease => on(filter, handlers::get_release::<S>),
            RouteId::GatewayInvoke => on(filter, handlers::invoke::<S>),
        };
        router = router.route(path, route);
    }
    // `layer` last, so it wraps every route and both fallbacks: nothing answers before it.
    router
        .fallback(edge::no_route)
        .method_not_allowed_fallback(edge::method_not_allowed)
        .layer(from_fn_with_state(state.clone(), edge::guard::<S>))
        .with_state(state)
}
