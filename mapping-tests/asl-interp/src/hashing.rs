//! The hasher of the interpreter's own lookup tables (state names, executions, tokens, parsed
//! paths and intrinsics). They are looked up on every state transition with keys the
//! interpreter wrote itself, so SipHash's resistance to chosen keys buys nothing there and
//! cost a visible share of a run. Nothing iterates these tables where order could show.

pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
