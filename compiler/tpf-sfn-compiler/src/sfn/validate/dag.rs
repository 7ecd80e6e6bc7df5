//! The transition graph of one scope and the few graph algorithms the rules need. All of them
//! are iterative so that a definition with thousands of states cannot exhaust the stack.

use indexmap::IndexMap;

use crate::sfn::asl::{State, Transition};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Edge {
    pub to: usize,
    /// `Some(i)` when the edge is `Catch[i].Next`: the state failed and catcher `i` handled it.
    pub catcher: Option<usize>,
}

/// Nodes are state indexes in document order; edges to unknown states are dropped (the graph
/// rule reports them). Every node id, including every `Edge::to`, is below `len()`: the
/// algorithms below index their per-node vectors with them directly.
pub(crate) struct Graph {
    pub edges: Vec<Vec<Edge>>,
}

impl Graph {
    pub fn new(states: &IndexMap<String, State>) -> Self {
        let edges = states
            .values()
            .map(|state| {
                let mut out = Vec::new();
                let mut push = |name: &str, catcher| {
                    if let Some(to) = states.get_index_of(name) {
                        out.push(Edge { to, catcher });
                    }
                };
                if let Some(Transition::Next(n)) = state.transition() {
                    push(n, None);
                }
                if let State::Choice(c) = state {
                    for rule in &c.choices {
                        if let Some(n) = &rule.next {
                            push(n, None);
                        }
                    }
                    if let Some(d) = &c.default {
                        push(d, None);
                    }
                }
                for (i, c) in state.catchers().iter().enumerate() {
                    push(&c.next, Some(i));
                }
                out
            })
            .collect();
        Graph { edges }
    }

    pub fn len(&self) -> usize {
        self.edges.len()
    }

    fn succ(&self, n: usize) -> &[Edge] {
        self.edges.get(n).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Nodes reachable from `from` (inclusive), not entering or leaving `blocked` nodes.
    pub fn reachable(&self, from: usize, blocked: &dyn Fn(usize) -> bool) -> Vec<bool> {
        let mut seen = vec![false; self.len()];
        if from >= self.len() || blocked(from) {
            return seen;
        }
        let mut stack = vec![from];
        seen[from] = true;
        while let Some(n) = stack.pop() {
            for e in self.succ(n) {
                if !blocked(e.to) && !seen[e.to] {
                    seen[e.to] = true;
                    stack.push(e.to);
                }
            }
        }
        seen
    }

    /// Strongly connected components that contain a cycle (more than one node, or a self-loop),
    /// restricted to `alive` nodes. Iterative Tarjan.
    pub fn cyclic_components(&self, alive: &[bool]) -> Vec<Vec<usize>> {
        let n = self.len();
        let is_alive = |v: usize| alive.get(v).copied().unwrap_or(false);
        let mut index = vec![usize::MAX; n];
        let mut low = vec![0usize; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut next_index = 0;
        let mut out = Vec::new();
        for root in 0..n {
            if !is_alive(root) || index[root] != usize::MAX {
                continue;
            }
            // (node, position in its edge list)
            let mut work = vec![(root, 0usize)];
            index[root] = next_index;
            low[root] = next_index;
            next_index += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (v, ref mut pos)) = work.last_mut() {
                let edges = self.succ(v);
                if let Some(e) = edges.get(*pos) {
                    *pos += 1;
                    let w = e.to;
                    if !is_alive(w) {
                        continue;
                    }
                    if index[w] == usize::MAX {
                        index[w] = next_index;
                        low[w] = next_index;
                        next_index += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        work.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    let self_loop = self.succ(v).iter().any(|e| e.to == v);
                    if comp.len() > 1 || self_loop {
                        comp.sort_unstable();
                        out.push(comp);
                    }
                }
            }
        }
        out.sort();
        out
    }

    /// A topological order of the `alive` nodes using only edges `keep` accepts, or `None`
    /// when those edges still form a cycle.
    pub fn topo_order(
        &self,
        alive: &[bool],
        keep: &dyn Fn(usize, &Edge) -> bool,
    ) -> Option<Vec<usize>> {
        let n = self.len();
        let is_alive = |v: usize| alive.get(v).copied().unwrap_or(false);
        let mut indegree = vec![0usize; n];
        for v in (0..n).filter(|&v| is_alive(v)) {
            for e in self.succ(v) {
                if is_alive(e.to) && keep(v, e) {
                    indegree[e.to] += 1;
                }
            }
        }
        let mut ready: Vec<usize> = (0..n)
            .filter(|&v| is_alive(v) && indegree[v] == 0)
            .collect();
        ready.reverse();
        let mut order = Vec::new();
        while let Some(v) = ready.pop() {
            order.push(v);
            for e in self.succ(v) {
                if is_alive(e.to) && keep(v, e) {
                    indegree[e.to] -= 1;
                    if indegree[e.to] == 0 {
                        ready.push(e.to);
                    }
                }
            }
        }
        let alive_count = (0..n).filter(|&v| is_alive(v)).count();
        (order.len() == alive_count).then_some(order)
    }

    /// The heaviest path weight from each node to the end of the (sub-)machine, over the
    /// `alive` nodes and `keep` edges, which must be acyclic. A node's own weight is included;
    /// a node with no kept successor ends a path.
    pub fn longest_from(
        &self,
        alive: &[bool],
        keep: &dyn Fn(usize, &Edge) -> bool,
        weight: &dyn Fn(usize) -> u64,
    ) -> Option<Vec<u64>> {
        let order = self.topo_order(alive, keep)?;
        let mut best = vec![0u64; self.len()];
        for &v in order.iter().rev() {
            let tail = self
                .succ(v)
                .iter()
                .filter(|e| alive.get(e.to).copied().unwrap_or(false) && keep(v, e))
                .map(|e| best[e.to])
                .max()
                .unwrap_or(0);
            best[v] = weight(v).saturating_add(tail);
        }
        Some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sfn::asl::State;

    fn graph(json: &str) -> (IndexMap<String, State>, Graph) {
        let states: IndexMap<String, State> = serde_json::from_str(json).unwrap();
        let g = Graph::new(&states);
        (states, g)
    }

    const LOOP: &str = r#"{
        "A": {"Type": "Pass", "Next": "B"},
        "B": {"Type": "Choice", "Choices": [{"Variable": "$.x", "IsPresent": true, "Next": "D"}], "Default": "C"},
        "C": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Next": "B",
              "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "D"}]},
        "D": {"Type": "Succeed"},
        "E": {"Type": "Pass", "Next": "Nowhere"}
    }"#;

    #[test]
    fn edges_reachability_and_cycles() {
        let (_, g) = graph(LOOP);
        assert_eq!(
            g.edges[2],
            vec![
                Edge {
                    to: 1,
                    catcher: None
                },
                Edge {
                    to: 3,
                    catcher: Some(0)
                }
            ]
        );
        assert!(g.edges[4].is_empty(), "unknown targets are dropped");
        let alive = g.reachable(0, &|_| false);
        assert_eq!(alive, vec![true, true, true, true, false]);
        assert_eq!(g.cyclic_components(&alive), vec![vec![1, 2]]);
        assert!(g.topo_order(&alive, &|_, _| true).is_none());
        let cut = g.topo_order(&alive, &|u, _| u != 2).unwrap();
        assert_eq!(cut.len(), 4);
    }

    #[test]
    fn longest_path_counts_every_node_as_a_possible_end() {
        let (_, g) = graph(LOOP);
        let alive = g.reachable(0, &|_| false);
        let best = g
            .longest_from(&alive, &|u, e| !(u == 2 && e.to == 1), &|v| {
                [1, 10, 100, 1000, 0][v]
            })
            .unwrap();
        // A → B → C → D = 1 + 10 + 100 + 1000.
        assert_eq!(best[0], 1111);
    }

    #[test]
    fn self_loop_is_a_cycle() {
        let (_, g) = graph(r#"{"A": {"Type": "Wait", "Seconds": 1, "Next": "A"}}"#);
        assert_eq!(g.cyclic_components(&[true]), vec![vec![0]]);
    }
}
