//! The Map and Parallel fan-out and join: a join per fan-out state, its branches or items as
//! child threads (at most `MaxConcurrency` at a time), and the join's end when they are done,
//! one fails, or the state is aborted.

use std::sync::Arc;

use asl_model::State;
use serde_json::{json, Value};

use super::{ctx, next_of};
use crate::context::eval_template;
use crate::engine::{Engine, ExecutionStatus, Join, JoinKind, Step, Thread, TokenState};
use crate::error::StateError;
use crate::history::details;
use crate::program::Program;

impl Engine {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new_join(
        &mut self,
        e: usize,
        parent: usize,
        kind: JoinKind,
        items: Vec<Value>,
        n: usize,
        max: usize,
        processor: usize,
        selector_input: Value,
    ) -> usize {
        let x = &mut self.execs[e];
        let j = x.joins.len();
        x.joins.push(Join {
            kind,
            parent,
            items,
            next_item: 0,
            results: vec![Value::Null; n],
            done: 0,
            active: Vec::new(),
            max_concurrency: max,
            processor,
            selector_input,
            finished: false,
        });
        let th = &mut x.threads[parent];
        th.step = Step::Joining(j);
        th.epoch += 1;
        j
    }

    pub(super) fn spawn(
        &mut self,
        e: usize,
        scope: usize,
        prog: &Arc<Program>,
        input: Value,
        parent: (usize, usize),
    ) -> usize {
        let now = self.now_ms();
        let x = &mut self.execs[e];
        let c = x.threads.len();
        x.threads.push(Thread {
            scope,
            state: prog.scopes[scope].start,
            input: Arc::new(input),
            entered_ms: now,
            entered_event: 0,
            retry_counts: Vec::new(),
            retry_total: 0,
            step: Step::Enter,
            parent: Some(parent),
            epoch: 0,
            token: None,
        });
        self.enqueue(e, c);
        c
    }

    /// Starts Map iterations while the concurrency limit allows, in item order.
    pub(super) fn launch_items(&mut self, e: usize, j: usize, prog: &Arc<Program>) {
        loop {
            let join = &self.execs[e].joins[j];
            if join.finished
                || join.active.len() >= join.max_concurrency
                || join.next_item >= join.items.len()
            {
                return;
            }
            let i = join.next_item;
            let p = join.parent;
            let (scope, idx) = self.names(e, p);
            let name = prog.scopes[scope].names[idx].as_str();
            let State::Map(ms) = &prog.scopes[scope].states[idx] else {
                return;
            };
            let selector = ms.item_selector.as_ref().or(ms.parameters.as_ref());
            let x = &self.execs[e];
            let join = &x.joins[j];
            let item = &join.items[i];
            let r = match selector {
                Some(sel) => {
                    let m = &self.machines[x.machine];
                    let cx = ctx(x, &x.threads[p], m, name, None, Some((i, item)));
                    eval_template(sel, &join.selector_input, &cx, &mut self.rng)
                }
                None => Ok(item.clone()),
            };
            let processor = join.processor;
            let input = match r {
                Ok(v) => v,
                Err(err) => {
                    self.abort_join(e, j, prog);
                    self.emit(
                        e,
                        "MapStateFailed",
                        Some(name),
                        Value::Object(err.event_details()),
                    );
                    return self.state_failed(e, p, prog, err);
                }
            };
            self.execs[e].joins[j].next_item += 1;
            self.emit(
                e,
                "MapIterationStarted",
                Some(name),
                json!({"name": name, "index": i}),
            );
            let c = self.spawn(e, processor, prog, input, (j, i));
            self.execs[e].joins[j].active.push(c);
        }
    }

    /// Stops every running iteration/branch of a join (and their own children).
    pub(super) fn abort_join(&mut self, e: usize, j: usize, prog: &Arc<Program>) {
        let join = &mut self.execs[e].joins[j];
        join.finished = true;
        let kind = join.kind;
        let active = std::mem::take(&mut join.active);
        let parent = join.parent;
        let (scope, idx) = self.names(e, parent);
        let name = prog.scopes[scope].names[idx].as_str();
        for c in active {
            if kind == JoinKind::Map {
                let slot = self.execs[e].threads[c].parent.map(|p| p.1).unwrap_or(0);
                self.emit(
                    e,
                    "MapIterationAborted",
                    Some(name),
                    json!({"name": name, "index": slot}),
                );
            }
            self.kill(e, c);
        }
    }

    pub(super) fn kill(&mut self, e: usize, t: usize) {
        let th = &mut self.execs[e].threads[t];
        th.epoch += 1;
        let step = std::mem::replace(&mut th.step, Step::Done);
        if let Some(tok) = th.token.take() {
            if let Some(entry) = self.tokens.get_mut(&tok) {
                entry.state = TokenState::Closed;
            }
        }
        if let Step::Joining(j) = step {
            let join = &mut self.execs[e].joins[j];
            join.finished = true;
            for c in std::mem::take(&mut join.active) {
                self.kill(e, c);
            }
        }
    }

    /// A thread reached `End` or a Succeed state (`Ok`) or failed without a catcher (`Err`).
    pub(super) fn finish_thread(
        &mut self,
        e: usize,
        t: usize,
        prog: &Arc<Program>,
        r: Result<Value, StateError>,
    ) {
        let th = &mut self.execs[e].threads[t];
        th.step = Step::Done;
        th.epoch += 1;
        match (th.parent, r) {
            (None, Ok(out)) => {
                let d = if self.record_payloads {
                    details([("output", out.clone())])
                } else {
                    json!({})
                };
                self.emit(e, "ExecutionSucceeded", None, d);
                self.close(e, ExecutionStatus::Succeeded, None, None, Some(out));
            }
            (None, Err(err)) => self.fail_execution(e, err),
            (Some((j, slot)), r) => self.child_done(e, j, slot, t, r, prog),
        }
    }

    pub(super) fn fail_thread(&mut self, e: usize, t: usize, prog: &Arc<Program>, err: StateError) {
        let err = self.locate(e, t, prog, err);
        self.finish_thread(e, t, prog, Err(err));
    }

    /// Names the state a runtime error happened in, as AWS's causes do.
    pub(super) fn locate(
        &self,
        e: usize,
        t: usize,
        prog: &Arc<Program>,
        err: StateError,
    ) -> StateError {
        let th = &self.execs[e].threads[t];
        let name = prog.scopes[th.scope].names[th.state].as_str();
        err.locate(name, th.entered_event)
    }

    pub(super) fn child_done(
        &mut self,
        e: usize,
        j: usize,
        slot: usize,
        child: usize,
        r: Result<Value, StateError>,
        prog: &Arc<Program>,
    ) {
        let join = &mut self.execs[e].joins[j];
        if join.finished {
            return;
        }
        join.active.retain(|&c| c != child);
        let kind = join.kind;
        let p = join.parent;
        let (scope, idx) = self.names(e, p);
        let name = prog.scopes[scope].names[idx].as_str();
        match r {
            Ok(v) => {
                let join = &mut self.execs[e].joins[j];
                join.results[slot] = v;
                join.done += 1;
                let all = join.done == join.results.len();
                if kind == JoinKind::Map {
                    self.emit(
                        e,
                        "MapIterationSucceeded",
                        Some(name),
                        json!({"name": name, "index": slot}),
                    );
                }
                if all {
                    self.join_succeeded(e, j, prog);
                } else if kind == JoinKind::Map {
                    self.launch_items(e, j, prog);
                }
            }
            Err(err) => {
                if kind == JoinKind::Map {
                    self.emit(e, "MapIterationFailed", Some(name), {
                        let mut d = serde_json::Map::new();
                        d.insert("name".into(), json!(name));
                        d.insert("index".into(), json!(slot));
                        d.extend(err.event_details());
                        Value::Object(d)
                    });
                }
                self.abort_join(e, j, prog);
                let ty = if kind == JoinKind::Map {
                    "MapStateFailed"
                } else {
                    "ParallelStateFailed"
                };
                self.emit(e, ty, Some(name), Value::Object(err.event_details()));
                self.state_failed(e, p, prog, err);
            }
        }
    }

    pub(super) fn join_succeeded(&mut self, e: usize, j: usize, prog: &Arc<Program>) {
        let join = &mut self.execs[e].joins[j];
        join.finished = true;
        let results = std::mem::take(&mut join.results);
        let kind = join.kind;
        let p = join.parent;
        let (scope, idx) = self.names(e, p);
        let st = &prog.scopes[scope].states[idx];
        let name = prog.scopes[scope].names[idx].as_str();
        let ty = if kind == JoinKind::Map {
            "MapStateSucceeded"
        } else {
            "ParallelStateSucceeded"
        };
        self.emit(e, ty, Some(name), json!({}));
        let r = self.post_process(e, p, st, name, Value::Array(results), true);
        self.finish_state(e, p, prog, r, next_of(st));
    }
}
