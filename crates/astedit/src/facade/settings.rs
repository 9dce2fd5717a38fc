//! How a repository is opened and a preview applied: who acts, whether programs may
//! run, how long a write waits for the lock.

use std::time::Duration;

/// Who acts: recorded with every event in the journal (its `agent`), beside the git
/// user that `user.name`/`user.email` name, so `git astedit log --session` and
/// `undo --session` find this work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity(pub(crate) String);

impl Identity {
    /// A program acting for itself, as `name/version` (an MCP client's spelling).
    pub fn agent(name_version: impl Into<String>) -> Identity {
        Identity(name_version.into())
    }

    /// One session of an agent harness: `harness/session:id`, the spelling the
    /// harness hooks journal (`claude-code/session:3f2a…`).
    pub fn session(harness: &str, id: &str) -> Identity {
        Identity(format!("{harness}/session:{id}"))
    }

    /// The spelling recorded in the journal.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether the library may run programs: a `verify` command, a formatter the project
/// declares. The CLI may (a person typed the command); an agent's server only when
/// started with `--allow-run`; an embedder says here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Programs {
    /// Nothing runs: a call that would run a program fails with `run-not-allowed`.
    #[default]
    Refuse,
    /// Programs run (a formatter still needs the user's recorded consent to its
    /// command, as with the CLI).
    Allow,
}

/// How a [`Repository`](crate::Repository) is opened.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub(crate) identity: Option<Identity>,
    pub(crate) programs: Programs,
    pub(crate) lock_wait: Option<Duration>,
}

impl Options {
    /// No identity, programs refused, a locked repository an error at once.
    pub fn new() -> Options {
        Options::default()
    }

    /// Who acts (recorded in the journal).
    pub fn identity(mut self, identity: Identity) -> Options {
        self.identity = Some(identity);
        self
    }

    /// Whether programs may run.
    pub fn programs(mut self, programs: Programs) -> Options {
        self.programs = programs;
        self
    }

    /// A write waits up to `bound` for the repository lock another writer holds,
    /// instead of failing with `locked` at once. This is a setting of the process:
    /// the last repository opened with it sets it for all.
    pub fn lock_wait(mut self, bound: Duration) -> Options {
        self.lock_wait = Some(bound);
        self
    }
}

/// How [`Repository::apply`](crate::Repository::apply) applies.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Why: recorded in the journal (and in the commit's trailers).
    pub reason: Option<String>,
    /// Also update the index entries of the touched paths.
    pub index: bool,
    /// Make a commit on HEAD holding exactly the preview's changes, with audit
    /// trailers, and this subject (`Some("")`: the default subject). Implies `index`.
    pub commit: Option<String>,
    /// First run this shell command line in a worktree holding the preview's base and
    /// its changes, and apply only if it exits 0 (needs [`Programs::Allow`]).
    pub verify: Option<String>,
    /// Kill the `verify` command after this long (default 600 s).
    pub verify_timeout: Option<Duration>,
}
