//! `allow --json`: the commands a repository's files name, and the user's consent.

use schemars::JsonSchema;
use serde::Serialize;

use super::Version;

/// `allow --json`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AllowReport {
    pub schema_version: Version,
    /// Every command the repository's files name now (`[fmt]` of astedit.toml, the
    /// libraries of sgconfig.yml's customLanguages), with its digest and whether it
    /// is allowed (after this run).
    pub commands: Vec<NamedCommand>,
    /// The digests this run recorded (or, with `--revoke`, removed); empty when
    /// nothing changed.
    pub changed: Vec<String>,
    /// The run removed consents (`--revoke`).
    pub revoked: bool,
    /// The consent store (under the common git dir; no fetch carries it).
    pub store: String,
}

/// A command (or library) a repository's files name.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NamedCommand {
    pub kind: NamedKind,
    /// Where it is named: `astedit.toml [fmt] python`, `sgconfig.yml customLanguages
    /// mylang`.
    pub source: String,
    /// The command line as written (a library: its path as written).
    pub command: String,
    /// Repository files whose bytes the digest covers (a script the command names, a
    /// library).
    pub files: Vec<String>,
    /// `sha256:` and 64 hex digits: what a consent is keyed by.
    pub digest: String,
    pub allowed: bool,
}

/// What kind of command a consent is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NamedKind {
    /// A formatter of `[fmt]`.
    Fmt,
    /// A tree-sitter library of `customLanguages`.
    CustomLanguage,
    /// A digest allowed by itself (`git astedit allow sha256:…`).
    Digest,
}

impl NamedKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NamedKind::Fmt => "fmt",
            NamedKind::CustomLanguage => "custom-language",
            NamedKind::Digest => "digest",
        }
    }
}
