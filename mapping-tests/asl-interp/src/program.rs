//! A registered definition flattened into scopes (the top level, each Parallel branch, each
//! Map item processor) so a running thread addresses its state by two indices.

use super::hashing::FastMap;
use std::cell::RefCell;
use std::sync::Arc;

use asl_model::{State, StateMachine, SubMachine, Transition};

use super::error::SfnError;

pub type ScopeId = usize;

#[derive(Debug)]
pub struct Scope {
    pub start: usize,
    pub names: Vec<String>,
    pub states: Vec<State>,
    pub index: FastMap<String, usize>,
    /// For Map/Parallel states (by index): the child scopes (branches, or the one processor).
    pub children: FastMap<usize, Vec<ScopeId>>,
}

#[derive(Debug)]
pub struct Program {
    pub scopes: Vec<Scope>,
    pub timeout_seconds: Option<u64>,
}

impl Program {
    pub fn compile(sm: &StateMachine) -> Result<Program, SfnError> {
        if let Some(q) = &sm.query_language {
            if q != "JSONPath" {
                return Err(SfnError::InvalidDefinition(format!(
                    "QueryLanguage {q} is not supported by this interpreter"
                )));
            }
        }
        let mut p = Program {
            scopes: Vec::new(),
            timeout_seconds: sm.timeout_seconds,
        };
        p.add_scope(&sm.start_at, &sm.states, 0)?;
        Ok(p)
    }

    fn add_scope(
        &mut self,
        start_at: &str,
        states: &indexmap::IndexMap<String, State>,
        depth: usize,
    ) -> Result<ScopeId, SfnError> {
        if depth > 32 {
            return Err(SfnError::InvalidDefinition(
                "definition nested too deeply".into(),
            ));
        }
        let id = self.scopes.len();
        let index: FastMap<String, usize> = states
            .keys()
            .enumerate()
            .map(|(i, k)| (k.clone(), i))
            .collect();
        let Some(&start) = index.get(start_at) else {
            return Err(SfnError::InvalidDefinition(format!(
                "StartAt '{start_at}' names no state"
            )));
        };
        self.scopes.push(Scope {
            start,
            names: states.keys().cloned().collect(),
            states: states.values().cloned().collect(),
            index,
            children: FastMap::default(),
        });
        let check = |target: &str, from: &str| -> Result<(), SfnError> {
            if states.contains_key(target) {
                Ok(())
            } else {
                Err(SfnError::InvalidDefinition(format!(
                    "state '{from}' transitions to unknown state '{target}'"
                )))
            }
        };
        for (i, (name, st)) in states.iter().enumerate() {
            for (_, target) in st.successors() {
                check(target, name)?;
            }
            if matches!(st.transition(), Some(Transition::Missing)) {
                return Err(SfnError::InvalidDefinition(format!(
                    "state '{name}' needs exactly one of Next or End"
                )));
            }
            if let State::Task(t) = st {
                // AWS rejects the definition: HeartbeatSeconds must be below TimeoutSeconds.
                if let (Some(h), Some(to)) = (t.heartbeat_seconds, t.timeout_seconds) {
                    if h >= to {
                        return Err(SfnError::InvalidDefinition(format!(
                            "state '{name}': HeartbeatSeconds ({h}) must be smaller than TimeoutSeconds ({to})"
                        )));
                    }
                }
            }
            if let State::Choice(c) = st {
                if c.choices.is_empty() || c.choices.iter().any(|r| r.next.is_none()) {
                    return Err(SfnError::InvalidDefinition(format!(
                        "Choice state '{name}' needs Choices, each with Next"
                    )));
                }
            }
            let subs: Vec<&SubMachine> = match st {
                State::Map(m) => match m.processor() {
                    Some(p) => vec![p],
                    None => {
                        return Err(SfnError::InvalidDefinition(format!(
                            "Map state '{name}' has no ItemProcessor"
                        )))
                    }
                },
                State::Parallel(p) => p.branches.iter().collect(),
                _ => continue,
            };
            let mut ids = Vec::with_capacity(subs.len());
            for sub in subs {
                ids.push(self.add_scope(&sub.start_at, &sub.states, depth + 1)?);
            }
            self.scopes[id].children.insert(i, ids);
        }
        Ok(id)
    }
}

/// Definitions compiled on this thread, most recently used first. A few suffice: a scenario
/// matrix deploys the same two or four machines into every fresh engine.
const SHARED_CAPACITY: usize = 8;

thread_local! {
    static SHARED: RefCell<Vec<(Arc<StateMachine>, Arc<Program>)>> = const { RefCell::new(Vec::new()) };
}

thread_local! {
    static PINNED: RefCell<Vec<Pin>> = const { RefCell::new(Vec::new()) };
}

/// A definition held borrowed by a [`Pinned`] guard, found by its address.
struct Pin {
    at: *const StateMachine,
    definition: Arc<StateMachine>,
    program: Arc<Program>,
}

/// Keeps a definition's compiled program at hand, by address, for as long as the definition is
/// borrowed: a proof deploying the same driver into hundreds of fresh engines then skips the
/// deep comparison the cache would make at every deploy. The borrow is what makes the address
/// a sound key: the definition can be neither changed nor freed while the guard lives.
pub struct Pinned<'a> {
    at: *const StateMachine,
    _borrow: std::marker::PhantomData<&'a StateMachine>,
}

/// Pins `sm` on this thread until the guard drops (see [`Pinned`]). A definition that does not
/// compile is not pinned; its deploys answer the compile error as before.
pub fn pin(sm: &StateMachine) -> Pinned<'_> {
    let at: *const StateMachine = sm;
    if let Ok((program, definition)) = shared(sm) {
        PINNED.with(|p| {
            p.borrow_mut().push(Pin {
                at,
                definition,
                program,
            })
        });
    }
    Pinned {
        at,
        _borrow: std::marker::PhantomData,
    }
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        PINNED.with(|p| {
            let mut p = p.borrow_mut();
            if let Some(i) = p.iter().rposition(|pin| pin.at == self.at) {
                p.remove(i);
            }
        });
    }
}

/// The compiled program and a shared copy of `sm`: the pinned one when `sm` is pinned, else
/// from this thread's cache when an equal definition was compiled before. Compiling is deterministic, so the cached program is the one
/// `Program::compile` would build; definitions that fail to compile are not kept.
pub fn shared(sm: &StateMachine) -> Result<(Arc<Program>, Arc<StateMachine>), SfnError> {
    let at: *const StateMachine = sm;
    let pinned = PINNED.with(|p| {
        p.borrow()
            .iter()
            .rfind(|pin| pin.at == at)
            .map(|pin| (pin.program.clone(), pin.definition.clone()))
    });
    if let Some(hit) = pinned {
        return Ok(hit);
    }
    SHARED.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(i) = cache.iter().position(|(d, _)| **d == *sm) {
            let hit = cache.remove(i);
            cache.insert(0, hit.clone());
            return Ok((hit.1, hit.0));
        }
        let program = Arc::new(Program::compile(sm)?);
        let definition = Arc::new(sm.clone());
        cache.insert(0, (definition.clone(), program.clone()));
        cache.truncate(SHARED_CAPACITY);
        Ok((program, definition))
    })
}
