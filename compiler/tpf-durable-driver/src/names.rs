//! Operation names, as the console lists them.

pub const GENERIC_AWAIT: &str = "Park on an await";

/// A park's name: the await step it parks on, when TPF names one.
pub fn park(step_name: Option<&str>) -> String {
    match step_name {
        Some(s) => format!("Park on '{s}'"),
        None => GENERIC_AWAIT.to_string(),
    }
}
