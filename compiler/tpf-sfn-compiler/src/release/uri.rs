//! Where a release artifact lives, as today's TPF reads it (`PipelineReleaseArtifactUri`): a
//! canonical absolute `file:` URI (local releases only), opaque `maven:` coordinates, or an
//! `oci://registry/repository@sha256:<hex>` image reference. Each refusal carries TPF's own
//! message, so a user sees the words TPF's registrar would print.

use std::fmt;

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// A parsed artifact location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactUri {
    /// An absolute, normalised path on the machine that registers the release.
    File {
        path: String,
    },
    Maven(MavenCoordinates),
    /// The image's digest, taken from the reference.
    Oci {
        digest: String,
    },
}

/// `maven:groupId:artifactId[:extension[:classifier]]:version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MavenCoordinates {
    pub group_id: String,
    pub artifact_id: String,
    pub extension: String,
    /// Empty when the URI names none.
    pub classifier: String,
    pub version: String,
}

impl MavenCoordinates {
    /// The artifact's path inside a Maven repository.
    pub fn repository_path(&self) -> String {
        let classifier = if self.classifier.is_empty() {
            String::new()
        } else {
            format!("-{}", self.classifier)
        };
        format!(
            "{}/{}/{}/{}-{}{classifier}.{}",
            self.group_id.replace('.', "/"),
            self.artifact_id,
            self.version,
            self.artifact_id,
            self.version,
            self.extension
        )
    }

    /// The one spelling TPF accepts: `jar` without a classifier is implied, not written.
    fn canonical(&self) -> String {
        let (g, a, v) = (&self.group_id, &self.artifact_id, &self.version);
        match (self.extension.as_str(), self.classifier.as_str()) {
            ("jar", "") => format!("maven:{g}:{a}:{v}"),
            (e, "") => format!("maven:{g}:{a}:{e}:{v}"),
            (e, c) => format!("maven:{g}:{a}:{e}:{c}:{v}"),
        }
    }
}

/// Why TPF refuses a URI, in TPF's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriError(pub String);

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UriError {}

fn refuse<T>(message: impl Into<String>) -> Result<T, UriError> {
    Err(UriError(message.into()))
}

impl ArtifactUri {
    pub fn parse(value: &str) -> Result<Self, UriError> {
        if value.trim().is_empty() {
            return refuse("Release artifact uri is required");
        }
        if value.starts_with("file:") {
            parse_file(value)
        } else if value.starts_with("maven:") {
            parse_maven(value)
        } else if value.starts_with("oci:") {
            parse_oci(value)
        } else {
            refuse(format!("Unsupported release artifact URI scheme: {value}"))
        }
    }

    /// TPF's scheme name (`FILE`, `MAVEN`, `OCI`).
    pub fn scheme(&self) -> &'static str {
        match self {
            ArtifactUri::File { .. } => "FILE",
            ArtifactUri::Maven(_) => "MAVEN",
            ArtifactUri::Oci { .. } => "OCI",
        }
    }

    /// Only `maven:` and `oci:` artifacts can be promoted beyond the machine that built them.
    pub fn promotable(&self) -> bool {
        !matches!(self, ArtifactUri::File { .. })
    }

    pub fn is_oci(&self) -> bool {
        matches!(self, ArtifactUri::Oci { .. })
    }
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn is_version(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '~' | '-'))
}

/// `sha256:` and exactly 64 lowercase hex digits.
pub fn is_sha256(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

fn parse_maven(value: &str) -> Result<ArtifactUri, UriError> {
    if value.starts_with("maven://") {
        return refuse("Canonical Maven artifact URIs are opaque maven: coordinates");
    }
    let parts: Vec<&str> = value["maven:".len()..].split(':').collect();
    let (g, a, e, c, v) = match parts.as_slice() {
        [g, a, v] => (*g, *a, "jar", "", *v),
        [g, a, e, v] => (*g, *a, *e, "", *v),
        [g, a, e, c, v] => (*g, *a, *e, *c, *v),
        _ => return refuse(
            "Maven artifact URI must be maven:groupId:artifactId[:extension[:classifier]]:version",
        ),
    };
    // Java's `String.split("\\.")` drops trailing empty parts, so `org.example.` passes and
    // `org..example` does not; the check follows it.
    let mut group_parts: Vec<&str> = g.split('.').collect();
    while group_parts.last() == Some(&"") {
        group_parts.pop();
    }
    if g.trim().is_empty() || group_parts.iter().any(|p| !is_token(p)) {
        return refuse("Invalid Maven groupId in release artifact URI");
    }
    for (name, part) in [("artifactId", a), ("extension", e)] {
        if !is_token(part) {
            return refuse(format!("Invalid Maven {name} in release artifact URI"));
        }
    }
    if !c.is_empty() && !is_token(c) {
        return refuse("Invalid Maven classifier in release artifact URI");
    }
    if !is_version(v) {
        return refuse("Invalid Maven version in release artifact URI");
    }
    let coordinates = MavenCoordinates {
        group_id: g.to_owned(),
        artifact_id: a.to_owned(),
        extension: e.to_owned(),
        classifier: c.to_owned(),
        version: v.to_owned(),
    };
    let canonical = coordinates.canonical();
    if canonical != value {
        return refuse(format!("Release Maven URI must be canonical: {canonical}"));
    }
    Ok(ArtifactUri::Maven(coordinates))
}

fn parse_oci(value: &str) -> Result<ArtifactUri, UriError> {
    let refused =
        || refuse("OCI artifact URI must be oci://registry/repository@sha256:<lowercase-hex>");
    let Some(rest) = value.strip_prefix("oci://") else {
        return refused();
    };
    let Some((registry, rest)) = rest.split_once('/') else {
        return refused();
    };
    let Some((repository, digest)) = rest.split_once('@') else {
        return refused();
    };
    let registry_ok = !registry.is_empty()
        && registry
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    let repository_ok = !repository.is_empty()
        && repository
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '/' | '-'));
    if !(registry_ok && repository_ok && is_sha256(digest)) {
        return refused();
    }
    Ok(ArtifactUri::Oci {
        digest: digest.to_owned(),
    })
}

/// The characters a Unix path keeps unescaped in the URI Java's `Path.toUri` writes: letters,
/// digits, `-_.!~*'()` and `:@&=+$,;/`. Everything else is written as `%XX` of its UTF-8 bytes.
const PATH_KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b':')
    .remove(b'@')
    .remove(b'&')
    .remove(b'=')
    .remove(b'+')
    .remove(b'$')
    .remove(b',')
    .remove(b';')
    .remove(b'/');

/// Characters `java.net.URI` accepts in a path as they stand (besides `%XX` escapes and
/// non-ASCII): the unreserved and reserved sets of RFC 2396.
fn uri_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || "-_.!~*'();/?:@&=+$,[]".contains(c)
        || (!c.is_ascii() && !c.is_control() && !c.is_whitespace())
}

/// A canonical `file:` URI: `file://` + the absolute, normalised path, escaped as Java writes
/// it. Whether the path is a directory (Java then appends `/`) is not asked: the path names a
/// file on the machine that registers the release, not on this one.
fn parse_file(value: &str) -> Result<ArtifactUri, UriError> {
    if let Some((i, _)) = value
        .char_indices()
        .find(|&(_, c)| !uri_path_char(c) && c != '%' && c != '#')
    {
        return refuse(format!(
            "Illegal character in path at index {}: {value}",
            value[..i].encode_utf16().count()
        ));
    }
    let bytes = value.as_bytes();
    if let Some(i) = (0..bytes.len()).find(|&i| {
        bytes[i] == b'%'
            && !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
    }) {
        return refuse(format!("Malformed escape pair at index {i}: {value}"));
    }
    if value.contains('?') || value.contains('#') {
        return refuse("Release file URI must be an absolute canonical file: URI");
    }
    let rest = &value["file:".len()..];
    let raw_path = if let Some(after) = rest.strip_prefix("//") {
        let (authority, path) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        if !authority.is_empty() {
            return refuse("URI has an authority component");
        }
        path
    } else if rest.starts_with('/') {
        rest
    } else {
        return refuse("URI is not hierarchical");
    };
    if raw_path.is_empty() {
        return refuse("URI path component is empty");
    }
    let decoded = percent_decode_str(raw_path)
        .decode_utf8()
        .map_err(|_| UriError(format!("Invalid release file URI: {value}")))?;
    if decoded.contains('\0') {
        return refuse("Nul character not allowed");
    }
    let path = normalize(&decoded);
    let canonical = format!("file://{}", utf8_percent_encode(&path, PATH_KEEP));
    if canonical != value {
        return refuse(format!("Release file URI must be canonical: {canonical}"));
    }
    Ok(ArtifactUri::File { path })
}

/// `Path.normalize` of an absolute Unix path: no empty, `.` or `..` segments, no trailing `/`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(value: &str) -> String {
        ArtifactUri::parse(value)
            .err()
            .map(|e| e.0)
            .unwrap_or_default()
    }

    #[test]
    fn file_uris_must_be_canonical() {
        assert_eq!(
            ArtifactUri::parse("file:///opt/a%20b.jar"),
            Ok(ArtifactUri::File {
                path: "/opt/a b.jar".into()
            })
        );
        assert_eq!(
            err("file:/opt/a.jar"),
            "Release file URI must be canonical: file:///opt/a.jar"
        );
        assert_eq!(
            err("file:///opt/./x/../a.jar"),
            "Release file URI must be canonical: file:///opt/a.jar"
        );
        assert_eq!(
            err("file:///opt/%c3%a9.jar"),
            "Release file URI must be canonical: file:///opt/%C3%A9.jar"
        );
        assert_eq!(err("file://host/a.jar"), "URI has an authority component");
        assert_eq!(err("file:a.jar"), "URI is not hierarchical");
        assert_eq!(
            err("file:///a.jar?x=1"),
            "Release file URI must be an absolute canonical file: URI"
        );
        assert_eq!(
            err("file:///a b.jar"),
            "Illegal character in path at index 9: file:///a b.jar"
        );
        assert_eq!(
            err("file:///a%2"),
            "Malformed escape pair at index 9: file:///a%2"
        );
    }

    #[test]
    fn maven_group_ids_split_as_java_does() {
        assert!(ArtifactUri::parse("maven:org.example.:a:1").is_ok());
        assert_eq!(
            err("maven:org..example:a:1"),
            "Invalid Maven groupId in release artifact URI"
        );
        assert_eq!(
            err("maven:g:a:jar::1"),
            "Release Maven URI must be canonical: maven:g:a:1"
        );
        assert_eq!(
            err("maven://g:a:1"),
            "Canonical Maven artifact URIs are opaque maven: coordinates"
        );
    }

    #[test]
    fn oci_references_carry_a_lowercase_sha256() {
        let digest = format!("sha256:{}", "a".repeat(64));
        assert_eq!(
            ArtifactUri::parse(&format!("oci://r.example:5000/team/app@{digest}")),
            Ok(ArtifactUri::Oci {
                digest: digest.clone()
            })
        );
        assert!(ArtifactUri::parse(&format!("oci://r/app@{}", digest.to_uppercase())).is_err());
        assert!(ArtifactUri::parse(&format!("oci://r@{digest}")).is_err());
    }
}
