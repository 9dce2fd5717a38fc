//! The origin of a preview (is it trusted here?), what refreshing it would run, and
//! `git astedit trust`'s report. Computed by `ops::trust`.

use schemars::JsonSchema;
use serde::Serialize;

use super::Version;

/// What refreshing a preview would run: empty for every recipe but a command
/// preview's and one staged with `--fmt`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Runs {
    /// A command preview's program and arguments, exactly as a refresh runs them (no
    /// shell); `null`: it runs no command.
    pub argv: Option<Vec<String>>,
    /// The folder the command runs in, as recorded (a repository path, `""`: the top).
    pub folder: Option<String>,
    /// The formatters a refresh runs on each re-derived file (`language: command`, as
    /// recorded in `details.fmt`).
    pub formatters: Vec<String>,
}

impl Runs {
    /// Whether a refresh runs nothing.
    pub fn is_empty(&self) -> bool {
        self.argv.is_none() && self.formatters.is_empty()
    }
}

/// Whether a preview's origin is trusted here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OriginKind {
    /// Staged (or refreshed, or split) by this repository: in the local trust record.
    MadeHere,
    /// Vouched for by the user here (`git astedit trust ID`).
    Trusted,
    /// Signed by an allowed signer (`gpg.ssh.allowedSignersFile`), verified by git.
    Signed,
    /// None of these: a fetched preview. It may be listed, shown, applied as staged,
    /// discarded, and refreshed when that runs nothing.
    Untrusted,
}

impl OriginKind {
    /// The word `--json` uses.
    pub fn word(self) -> &'static str {
        match self {
            OriginKind::MadeHere => "made-here",
            OriginKind::Trusted => "trusted",
            OriginKind::Signed => "signed",
            OriginKind::Untrusted => "untrusted",
        }
    }

    /// Whether a refresh of such a preview may run what it records.
    pub fn is_trusted(self) -> bool {
        self != OriginKind::Untrusted
    }
}

/// A preview's origin: the verdict, who vouches for it, and why not when it is
/// untrusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Origin {
    pub origin: OriginKind,
    /// Who vouches: the git identity that staged or trusted it here (`Name <email>`), or
    /// the signer; `null` when untrusted.
    pub vouched_by: Option<String>,
    /// Untrusted: why (no local record, and no signature from an allowed signer).
    pub origin_why: Option<String>,
}

/// `git astedit trust ID`: what the preview runs, and that it is trusted now.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TrustReport {
    pub schema_version: Version,
    pub id: String,
    /// The preview commit (the record's key: a re-forged preview has another).
    pub commit: String,
    /// What a refresh of it runs (what the user vouched for).
    pub runs: Runs,
    /// `sha256:` of what it runs, kept in the record.
    pub digest: String,
    /// Its origin before (`trusted` when it already was and nothing was recorded).
    pub was: OriginKind,
    /// Whether this call wrote the record (`false`: it was trusted already).
    pub recorded: bool,
}

impl TrustReport {
    pub fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Ok
    }
}
