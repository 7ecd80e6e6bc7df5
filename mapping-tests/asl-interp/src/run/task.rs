//! A Task state's call: the integrations the engine plays itself, the handler's for the rest
//! (with the callback pattern's token), the timeout and heartbeat timers, and the call's
//! completion.

use std::sync::Arc;

use asl_model::{State, TaskState};
use serde_json::{json, Value};

use super::{data_limit, next_of, seconds_at, split_resource, task_label};
use crate::builtins;
use crate::engine::{Engine, ExecutionStatus, Step, TimerKind, TokenEntry, TokenState};
use crate::error::{StateError, DATA_LIMIT, TIMEOUT};
use crate::handler::{TaskCall, TaskHandler, TaskOutcome};
use crate::history::{details, Payload};
use crate::paths::{json_size, MAX_PAYLOAD_BYTES};
use crate::program::Program;

impl Engine {
    pub(super) fn attempt_task(
        &mut self,
        e: usize,
        t: usize,
        prog: &Arc<Program>,
        ts: &TaskState,
        name: &str,
        handler: &mut dyn TaskHandler,
    ) {
        let now = self.now_ms();
        let callback = ts.resource.ends_with(".waitForTaskToken");
        let token = format!("tok-{:08}-{}", self.tokens.len(), e);
        let eff = self.effective_input(
            e,
            t,
            name,
            ts.input_path.as_ref(),
            ts.parameters.as_ref(),
            // `$$.Task.Token` exists for every Task on AWS, not only `.waitForTaskToken`
            // ones: a `.sync` StartExecution passes it to its child (recorded).
            Some(token.as_str()),
        );
        // TimeoutSecondsPath/HeartbeatSecondsPath read the state input (before InputPath).
        let th = &self.execs[e].threads[t];
        let limits = eff.and_then(|eff| {
            let timeout = match (&ts.timeout_seconds, &ts.timeout_seconds_path) {
                (Some(s), _) => Some(*s),
                (None, Some(p)) => Some(seconds_at(p, &th.input, "TimeoutSecondsPath")?),
                (None, None) => None,
            };
            let hb = match (&ts.heartbeat_seconds, &ts.heartbeat_seconds_path) {
                (Some(s), _) => Some(*s),
                (None, Some(p)) => Some(seconds_at(p, &th.input, "HeartbeatSecondsPath")?),
                (None, None) => None,
            };
            Ok((eff, timeout, hb))
        });
        let (eff, timeout, hb) = match limits {
            Ok(v) => v,
            Err(err) => return self.state_failed(e, t, prog, err),
        };
        if json_size(&eff) > MAX_PAYLOAD_BYTES {
            let err = StateError::new(
                DATA_LIMIT,
                "The task input exceeds the 262144-byte payload quota",
            );
            return self.fail_thread(e, t, prog, err);
        }
        let (rtype, rname) = split_resource(&ts.resource);
        let mut d =
            json!({"resourceType": rtype, "resource": rname, "region": crate::engine::REGION});
        let eff = Arc::new(eff);
        let payload = self
            .record_payloads
            .then(|| Payload::new("parameters", 3, &eff));
        if let Value::Object(o) = &mut d {
            if let Some(s) = timeout {
                o.insert("timeoutInSeconds".into(), json!(s));
            }
            if let Some(s) = hb {
                o.insert("heartbeatInSeconds".into(), json!(s));
            }
        }
        self.emit_with(e, "TaskScheduled", Some(name), d, payload);
        self.emit(
            e,
            "TaskStarted",
            Some(name),
            json!({"resourceType": rtype, "resource": rname}),
        );
        let ms = |s: u64| now.saturating_add((s.min(i64::MAX as u64 / 1000) as i64) * 1000);
        self.tokens.insert(
            token.clone(),
            TokenEntry {
                exec: e,
                thread: t,
                state: TokenState::Open,
                heartbeat_ms: hb.map(|s| ms(s) - now),
                heartbeat_epoch: 0,
            },
        );
        let th = &mut self.execs[e].threads[t];
        th.token = Some(token.clone());
        th.step = Step::Task;
        th.epoch += 1;
        if let Some(s) = timeout {
            self.push_timer(
                ms(s),
                TimerKind::TaskTimeout {
                    token: token.clone(),
                },
            );
        }
        if let Some(s) = hb {
            self.push_timer(
                ms(s),
                TimerKind::Heartbeat {
                    token: token.clone(),
                    epoch: 0,
                },
            );
        }
        let base = ts
            .resource
            .strip_suffix(".waitForTaskToken")
            .unwrap_or(&ts.resource);
        let outcome = if self.builtin_integrations && builtins::is_builtin(base) {
            self.builtin(base, &eff)
        } else {
            let x = &self.execs[e];
            let th = &x.threads[t];
            let call = TaskCall {
                now_ms: now,
                execution_arn: &x.arn,
                execution_name: &x.name,
                state_machine_arn: &self.machines[x.machine].arn,
                state_name: name,
                resource: &ts.resource,
                input: &eff,
                task_token: callback.then_some(token.as_str()),
                token: &token,
                retry_count: th.retry_total,
                timeout_seconds: timeout,
                heartbeat_seconds: hb,
            };
            let o = handler.invoke(&call);
            self.drain_deferred(handler);
            o
        };
        // The call may have closed this very task (a built-in answering its own token).
        if self
            .tokens
            .get(&token)
            .is_none_or(|t| t.state != TokenState::Open)
        {
            return;
        }
        match outcome {
            TaskOutcome::Succeeded(v) if callback => {
                let d = if self.record_payloads {
                    details([
                        ("resourceType", json!(rtype)),
                        ("resource", json!(rname)),
                        ("output", v),
                    ])
                } else {
                    json!({"resourceType": rtype, "resource": rname})
                };
                self.emit(e, "TaskSubmitted", Some(name), d);
            }
            TaskOutcome::Pending if callback => {
                self.emit(
                    e,
                    "TaskSubmitted",
                    Some(name),
                    json!({"resourceType": rtype, "resource": rname}),
                );
            }
            TaskOutcome::Pending => {}
            TaskOutcome::Succeeded(v) => {
                let _ = self.take_token(&token);
                self.complete_task(e, t, Ok(v));
            }
            TaskOutcome::Failed { error, cause } => {
                let _ = self.take_token(&token);
                self.complete_task(e, t, Err(StateError::reported(error, cause)));
            }
        }
    }

    /// A task attempt ended: with its result, or with an error (including timeouts).
    pub(crate) fn complete_task(&mut self, e: usize, t: usize, r: Result<Value, StateError>) {
        let x = &self.execs[e];
        if x.status != ExecutionStatus::Running || x.threads[t].step != Step::Task {
            return;
        }
        let prog = x.program.clone();
        let (scope, idx) = self.names(e, t);
        let st = &prog.scopes[scope].states[idx];
        let name = prog.scopes[scope].names[idx].as_str();
        let State::Task(ts) = st else { return };
        let th = &mut self.execs[e].threads[t];
        th.token = None;
        th.epoch += 1;
        let (rtype, rname) = split_resource(&ts.resource);
        let r = r.and_then(|v| {
            if json_size(&v) > MAX_PAYLOAD_BYTES {
                Err(data_limit(task_label(&ts.resource)))
            } else {
                Ok(v)
            }
        });
        match r {
            Ok(v) => {
                let d = if self.record_payloads {
                    details([
                        ("resourceType", json!(rtype)),
                        ("resource", json!(rname)),
                        ("output", v.clone()),
                    ])
                } else {
                    json!({"resourceType": rtype, "resource": rname})
                };
                self.emit(e, "TaskSucceeded", Some(name), d);
                let r = self.post_process(e, t, st, name, v, true);
                self.finish_state(e, t, &prog, r, next_of(st));
            }
            Err(err) => {
                let ty = if err.error == TIMEOUT {
                    "TaskTimedOut"
                } else {
                    "TaskFailed"
                };
                self.emit(e, ty, Some(name), {
                    let mut d = serde_json::Map::new();
                    d.insert("resourceType".into(), json!(rtype));
                    d.insert("resource".into(), json!(rname));
                    d.extend(err.event_details());
                    Value::Object(d)
                });
                self.state_failed(e, t, &prog, err);
            }
        }
    }
}
