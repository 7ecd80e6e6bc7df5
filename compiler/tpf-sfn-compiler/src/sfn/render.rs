//! Renders a [`DriverPlan`] into the gateway driver's ASL text with the handlebars templates in
//! `templates/`.
//!
//! Templates are compiled into the binary, so a compile needs no files beside the contract.
//! HTML escaping is off and every interpolated value goes through the `json` helper, which emits
//! a JSON literal: a template can produce broken layout, but never an injection through a step
//! name or a URL. The output is text; `compile` parses it into the typed model.

use handlebars::{
    no_escape, Context, Handlebars, Helper, HelperResult, Output, RenderContext, RenderErrorReason,
};
use serde_json::Value;

use crate::diagnostic::{Diagnostic, Location};
use crate::plan::{DriverPlan, GatewayPlan};
use crate::sfn::SfnPlan;

const TEMPLATES: &[(&str, &str)] = &[
    (
        "gateway-driver",
        include_str!("../../../../templates/gateway-driver.asl.json.hbs"),
    ),
    (
        "gateway-call",
        include_str!("../../../../templates/partials/gateway-call.hbs"),
    ),
];

/// How a compiled driver's top-level `Comment` starts; `validate` recognises the tool's own
/// output by it.
pub const DRIVER_COMMENT_PREFIX: &str = "tpf-sfn wakeup driver for TPF pipeline ";

pub struct Renderer {
    hb: Handlebars<'static>,
}

impl Renderer {
    /// The process-wide renderer. Compiling the templates costs far more than rendering them, so
    /// it happens once.
    pub fn shared() -> Result<&'static Renderer, Diagnostic> {
        static SHARED: std::sync::OnceLock<Result<Renderer, Diagnostic>> =
            std::sync::OnceLock::new();
        SHARED
            .get_or_init(Renderer::new)
            .as_ref()
            .map_err(Clone::clone)
    }

    pub fn new() -> Result<Renderer, Diagnostic> {
        let mut hb = Handlebars::new();
        hb.set_strict_mode(true);
        hb.register_escape_fn(no_escape);
        hb.register_helper("json", Box::new(json_helper));
        for (name, text) in TEMPLATES {
            hb.register_template_string(name, *text).map_err(|e| {
                Diagnostic::error(
                    "TEMPLATE_SYNTAX",
                    Location::file(format!("templates/{name}")),
                    e.to_string(),
                )
                .with_hint("the bundled templates are broken; this is a tpf-sfn bug")
            })?;
        }
        Ok(Renderer { hb })
    }

    /// The gateway protocol's driver (`crate::sfn::gateway`).
    pub fn gateway_driver(
        &self,
        plan: &DriverPlan,
        sfn: &SfnPlan,
        gateway: &GatewayPlan,
    ) -> Result<String, Diagnostic> {
        self.render(
            "gateway-driver",
            &crate::sfn::gateway::context(plan, sfn, gateway),
        )
    }

    fn render(&self, name: &str, ctx: &Value) -> Result<String, Diagnostic> {
        self.hb.render(name, ctx).map_err(|e| {
            Diagnostic::error(
                "TEMPLATE_RENDER",
                Location::file(format!("templates/{name}")),
                e.to_string(),
            )
            .with_hint("the bundled templates do not fit the driver plan; this is a tpf-sfn bug")
        })
    }
}

fn json_helper(
    h: &Helper,
    _: &Handlebars,
    _: &Context,
    _: &mut RenderContext,
    out: &mut dyn Output,
) -> HelperResult {
    let param = h
        .param(0)
        .ok_or(RenderErrorReason::ParamNotFoundForIndex("json", 0))?;
    let text = serde_json::to_string(param.value())
        .map_err(|e| RenderErrorReason::Other(e.to_string()))?;
    out.write(&text)?;
    Ok(())
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Renderer")
    }
}
