//! What a harness reads of an execution: its description, status, output, metrics, history,
//! the threads' positions, its open tokens, and the events since a cursor.

use serde_json::Value;

use crate::error::SfnError;
use crate::history::HistoryEvent;

use super::{
    Engine, ExecutionDescription, ExecutionMetrics, ExecutionStatus, Step, ThreadPosition, Waiting,
};

impl Engine {
    pub fn describe_execution(&self, arn: &str) -> Result<ExecutionDescription, SfnError> {
        let x = &self.execs[self.exec_idx(arn)?];
        Ok(ExecutionDescription {
            execution_arn: x.arn.clone(),
            state_machine_arn: self.machines[x.machine].arn.clone(),
            name: x.name.clone(),
            status: x.status,
            start_ms: x.start_ms,
            stop_ms: x.stop_ms,
            input: x.input.clone(),
            output: x.output.clone(),
            error: x.error.clone(),
            cause: x.cause.clone(),
            redrive_count: x.redrive_count,
            redrive_ms: x.redrive_ms,
            metrics: ExecutionMetrics {
                state_transitions: x.transitions,
                history_events: x.history.len(),
            },
        })
    }

    /// An execution's start instant and input, read in place: callers that look for one member
    /// of the input would otherwise copy the whole description, payloads included.
    pub fn started(&self, arn: &str) -> Option<(i64, &Value)> {
        let x = &self.execs[*self.exec_index.get(arn)?];
        Some((x.start_ms, &x.input))
    }

    pub fn status(&self, arn: &str) -> Option<ExecutionStatus> {
        self.exec_index.get(arn).map(|&e| self.execs[e].status)
    }

    pub fn output(&self, arn: &str) -> Option<&Value> {
        self.exec_index
            .get(arn)
            .and_then(|&e| self.execs[e].output.as_ref())
    }

    pub fn metrics(&self, arn: &str) -> Option<ExecutionMetrics> {
        self.exec_index.get(arn).map(|&e| ExecutionMetrics {
            state_transitions: self.execs[e].transitions,
            history_events: self.execs[e].history.len(),
        })
    }

    /// The execution's history (empty for an unknown ARN).
    pub fn history(&self, arn: &str) -> &[HistoryEvent] {
        match self.exec_index.get(arn) {
            Some(&e) => &self.execs[e].history,
            None => &[],
        }
    }

    /// Execution ARNs of a machine, oldest first.
    pub fn list_executions(&self, machine_arn: &str) -> Vec<&str> {
        match self.machine_index.get(machine_arn) {
            Some(&m) => self.machines[m]
                .executions
                .iter()
                .map(|&e| self.execs[e].arn.as_str())
                .collect(),
            None => Vec::new(),
        }
    }

    /// ARNs of every RUNNING execution, oldest first.
    pub fn open_executions(&self) -> Vec<&str> {
        self.execs
            .iter()
            .filter(|x| x.status == ExecutionStatus::Running)
            .map(|x| x.arn.as_str())
            .collect()
    }

    /// Every live thread of an execution: the top level first, then branches/iterations in
    /// creation order.
    pub fn positions(&self, arn: &str) -> Vec<ThreadPosition> {
        let Some(&e) = self.exec_index.get(arn) else {
            return Vec::new();
        };
        let x = &self.execs[e];
        if x.status != ExecutionStatus::Running {
            return Vec::new();
        }
        x.threads
            .iter()
            .filter(|t| t.step != Step::Done)
            .map(|t| ThreadPosition {
                state_name: x.program.scopes[t.scope].names[t.state].clone(),
                waiting: match t.step {
                    Step::Sleeping(at) => Waiting::Timer(at),
                    Step::Task => match &t.token {
                        Some(tok) => Waiting::Token(tok.clone()),
                        None => Waiting::Runnable,
                    },
                    Step::Joining(_) => Waiting::Children,
                    _ => Waiting::Runnable,
                },
            })
            .collect()
    }

    /// The top-level state an execution is in.
    pub fn current_state(&self, arn: &str) -> Option<&str> {
        let &e = self.exec_index.get(arn)?;
        let x = &self.execs[e];
        let t = &x.threads[0];
        (x.status == ExecutionStatus::Running)
            .then(|| x.program.scopes[t.scope].names[t.state].as_str())
    }

    /// Open task tokens of an execution (tasks parked on a callback or still in flight).
    pub fn open_tokens(&self, arn: &str) -> Vec<&str> {
        let Some(&e) = self.exec_index.get(arn) else {
            return Vec::new();
        };
        self.execs[e]
            .threads
            .iter()
            .filter(|t| t.step == Step::Task)
            .filter_map(|t| t.token.as_deref())
            .collect()
    }

    /// Events appended (across all executions) since `cursor`, with the new cursor. Start
    /// from 0.
    pub fn events_since(&self, cursor: usize) -> (Vec<(&str, &HistoryEvent)>, usize) {
        let from = cursor.min(self.trace.len());
        let out = self.trace[from..]
            .iter()
            .map(|&(e, i)| {
                let x = &self.execs[e as usize];
                (x.arn.as_str(), &x.history[i as usize])
            })
            .collect();
        (out, self.trace.len())
    }
}
