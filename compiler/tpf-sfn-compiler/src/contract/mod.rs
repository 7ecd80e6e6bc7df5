//! TPF pipeline contracts: model, loading, hash verification and TPF's own constraints.

pub mod cardinality;
pub mod composition;
pub mod duration;
pub mod hash;
pub mod identity;
pub mod load;
pub mod model;

pub use hash::{
    contract_hash, contract_version, fingerprint, gson_compact, GsonFormatter, GsonText,
};
pub use identity::check_pinnable;
pub use load::{default_capabilities, deferred_fingerprint, load_contract};
pub use model::*;
