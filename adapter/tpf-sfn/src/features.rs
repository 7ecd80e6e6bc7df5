//! What this build of tpf-sfn was made with. The `aws` feature (on by default) brings every
//! command that talks to AWS or serves TPF's coordination API; without it the offline commands
//! (`simulate`, `mapping-test`, `compile`, `validate`, `graph`, `init`) build without the AWS SDK,
//! and the others still parse and refuse with [`aws_off`] rather than vanish.

use crate::error::Error;

/// `FEATURE_AWS_OFF`: `tpf-sfn COMMAND` needs the `aws` feature this build was made without.
pub fn aws_off(command: &str) -> Error {
    Error::new(
        "FEATURE_AWS_OFF",
        format!(
            "`tpf-sfn {command}` talks to AWS, and this tpf-sfn was built without the `aws` feature"
        ),
    )
    .with_location(command.to_owned())
    .with_hint(format!(
        "build tpf-sfn with its default features (`cargo install --path adapter/tpf-sfn`), or run \
         `cargo run -p tpf-sfn -- {command} …` without `--no-default-features`"
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_refusal_names_the_command_and_the_feature() {
        let e = super::aws_off("deploy");
        assert_eq!(e.code(), "FEATURE_AWS_OFF");
        let report = e.report().to_string();
        assert!(report.contains("`tpf-sfn deploy`"), "{report}");
        assert!(report.contains("`aws` feature"), "{report}");
        assert!(e
            .hint()
            .is_some_and(|h| h.contains("--no-default-features")));
    }
}
