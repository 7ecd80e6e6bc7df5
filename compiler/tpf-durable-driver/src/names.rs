//! Operation names, as the console lists them. Readable, and fixed per position in the loop:
//! a replay checks each checkpoint's name against the operation the code asks for.

pub const REGISTER: &str = "Register this generation";
pub const HAND_OVER: &str = "Hand over to the next generation";
pub const WAIT_DUE: &str = "Wait until TPF's due time";
pub const WAIT_LEASE: &str = "Wait for TPF's lease";
pub const RECHECK: &str = "Re-check after a failed registration";
pub const LATE: &str = "Re-ask after the missed deadline";
pub const GENERIC_AWAIT: &str = "Park on an await";

pub fn ask(iteration: u64) -> String {
    format!("Ask TPF #{iteration}")
}

pub fn transport_retry(iteration: u64, attempt: u64) -> String {
    format!("Retry the call #{iteration} after a transport error ({attempt})")
}

/// A park's name: the await step it parks on, when TPF names one.
pub fn park(step_name: Option<&str>) -> String {
    match step_name {
        Some(s) => format!("Park on '{s}'"),
        None => GENERIC_AWAIT.to_string(),
    }
}
