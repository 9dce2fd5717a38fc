//! The reports the façade returns: plain data of its own, each with the JSON the CLI's
//! `--json` prints for the same result (its schema is `git astedit schema`).

/// What [`Repository::stage`](crate::Repository::stage) staged.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Staged {
    /// The preview's id; `None` when nothing would change (nothing was staged).
    pub id: Option<String>,
    /// One line, e.g. `3 replacements in 2 files`.
    pub summary: String,
    /// Changes in all: replacements, patch chunks, or fixes.
    pub changes: usize,
    /// The repository paths the preview touches.
    pub files: Vec<String>,
    /// The unified diff (git style) of the whole preview.
    pub diff: String,
    /// The report as the CLI's `--json` prints it.
    pub json: String,
}

/// What an apply, undo or discard did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Resolved {
    /// The preview's id.
    pub id: String,
    /// What was done.
    pub action: Action,
    /// Paths written (created or replaced).
    pub written: Vec<String>,
    /// Paths deleted.
    pub deleted: Vec<String>,
    /// The paths the preview touches.
    pub files: Vec<String>,
    /// The commit an apply made ([`ApplyOptions::commit`](crate::ApplyOptions)).
    pub commit: Option<String>,
    /// The reason recorded in the journal.
    pub reason: Option<String>,
    /// The report as the CLI's `--json` prints it.
    pub json: String,
}

/// What happened to a preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// Written to the work tree.
    Applied,
    /// An apply reverted; the preview is pending again.
    Undone,
    /// Dropped unapplied.
    Discarded,
}

/// A pending preview, as [`Repository::list`](crate::Repository::list) shows it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Preview {
    /// The preview's id.
    pub id: String,
    /// The preview commit (under `refs/astedit/<id>`).
    pub commit: String,
    /// When it was staged (RFC 3339).
    pub time: String,
    /// What made it: `edit`, `patch`, `scan`, `write`, `replace`, …
    pub kind: String,
    /// One line, e.g. `3 replacements in 2 files`.
    pub summary: String,
    /// Why, as recorded.
    pub reason: Option<String>,
    /// The identity that staged it (see [`Identity`](crate::Identity)).
    pub agent: Option<String>,
    /// The repository paths it touches.
    pub files: Vec<String>,
    /// Whether its origin is trusted here.
    pub origin: Origin,
    /// The row as the CLI's `list --json` prints it.
    pub json: String,
}

/// Where a preview comes from, as verified here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// Staged in this repository (a local record says so).
    MadeHere,
    /// Fetched, and trusted by the user here (`git astedit trust`).
    Trusted,
    /// Signed by a key the user's git allows.
    Signed,
    /// Neither: what it records is not run, and its paths are checked.
    Untrusted,
}

/// One journal event, newest first from [`Repository::journal`](crate::Repository::journal).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Event {
    /// `staged`, `applied`, `discarded`, `undone`, `recovered`, `expired`, …
    pub event: String,
    /// The preview's id.
    pub id: String,
    /// When (RFC 3339).
    pub time: String,
    /// The git identity, `Name <email>`.
    pub who: String,
    /// The [`Identity`](crate::Identity) acting, when one was given.
    pub agent: Option<String>,
    /// Why, as recorded.
    pub reason: Option<String>,
    /// The paths touched.
    pub files: Vec<String>,
    /// The event as the CLI's `log --json` prints it.
    pub json: String,
}

/// Conversions from the operations' reports, through their JSON: the façade reads
/// the same stable fields the CLI's `--json` users read.
pub(crate) mod from_json {
    use serde_json::Value;

    pub fn string(v: &Value, key: &str) -> String {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }

    pub fn opt(v: &Value, key: &str) -> Option<String> {
        v.get(key).and_then(Value::as_str).map(str::to_string)
    }

    pub fn strings(v: &Value, key: &str) -> Vec<String> {
        v.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn origin(v: &Value) -> super::Origin {
        match v.get("origin").and_then(Value::as_str) {
            Some("made-here") => super::Origin::MadeHere,
            Some("trusted") => super::Origin::Trusted,
            Some("signed") => super::Origin::Signed,
            _ => super::Origin::Untrusted,
        }
    }

    pub fn action(v: &Value) -> super::Action {
        match v.get("action").and_then(Value::as_str) {
            Some("undo") | Some("undone") => super::Action::Undone,
            Some("discard") | Some("discarded") => super::Action::Discarded,
            _ => super::Action::Applied,
        }
    }
}
