//! The (sub-)machines of a definition: the top level, every Parallel branch and every Map item
//! processor, each with the JSON pointer of the object that holds its `StartAt` and `States`.

use indexmap::IndexMap;

use crate::diagnostic::pointer_token;
use crate::sfn::asl::{State, StateMachine};

pub(crate) struct Scope<'a> {
    /// Pointer of the object holding `StartAt`/`States` ("" for the top level).
    pub pointer: String,
    pub start_at: &'a str,
    pub states: &'a IndexMap<String, State>,
}

impl Scope<'_> {
    pub fn state_pointer(&self, name: &str) -> String {
        state_pointer(&self.pointer, name)
    }
}

pub(crate) fn state_pointer(scope_pointer: &str, name: &str) -> String {
    format!("{scope_pointer}/States/{}", pointer_token(name))
}

/// Every scope, top level first, nested ones in document order. A work list rather than
/// recursion keeps deep nesting from exhausting the stack.
pub(crate) fn scopes(machine: &StateMachine) -> Vec<Scope<'_>> {
    let mut out = vec![Scope {
        pointer: String::new(),
        start_at: &machine.start_at,
        states: &machine.states,
    }];
    let mut i = 0;
    while i < out.len() {
        let mut nested = Vec::new();
        let (parent_pointer, states) = match out.get(i) {
            Some(s) => (s.pointer.clone(), s.states),
            None => break,
        };
        for (name, state) in states {
            let sp = state_pointer(&parent_pointer, name);
            match state {
                State::Map(m) => {
                    if let Some(p) = &m.item_processor {
                        nested.push(Scope {
                            pointer: format!("{sp}/ItemProcessor"),
                            start_at: &p.start_at,
                            states: &p.states,
                        });
                    }
                    if let Some(p) = &m.iterator {
                        nested.push(Scope {
                            pointer: format!("{sp}/Iterator"),
                            start_at: &p.start_at,
                            states: &p.states,
                        });
                    }
                }
                State::Parallel(p) => {
                    for (b, branch) in p.branches.iter().enumerate() {
                        nested.push(Scope {
                            pointer: format!("{sp}/Branches/{b}"),
                            start_at: &branch.start_at,
                            states: &branch.states,
                        });
                    }
                }
                _ => {}
            }
        }
        out.extend(nested);
        i += 1;
    }
    out
}
