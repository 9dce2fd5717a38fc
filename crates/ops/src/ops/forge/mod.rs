/*!
The forge seam: what `pr` and campaigns ask of the place pull requests live — find
one by branch, open one, describe it again, mark it ready, merge it, list and search
repositories — behind one trait, with GitHub (through `gh`) and GitLab (through
`glab`, merge requests) implementations. Callers never spawn a forge CLI themselves.

Every call is an argument vector (no shell); every value of a spec or a user that
reaches one is passed as `--opt=VALUE` or after `--`, so it cannot be read as an
option. Prompts are disabled so that CI or an agent never hangs on a question.
*/

use std::path::Path;
use std::process::Command;
use std::process::Output;

use crate::error::Classify;
use crate::error::Exit;
use crate::report::campaign::ForgeKind;
use crate::report::campaign::MergeMethod;
use crate::Error;

mod github;
mod gitlab;

pub use github::GitHub;
pub use gitlab::GitLab;

/// A pull (or merge) request as the forge describes it.
#[derive(Debug, Clone)]
pub struct FoundPr {
    pub url: String,
    /// GitHub's number, GitLab's `iid`.
    pub number: Option<u64>,
    /// `OPEN`, `MERGED` or `CLOSED`, whatever the forge's words.
    pub state: String,
    pub draft: bool,
    /// Its checks in one word: `passing`, `failing` or `pending` (`None`: none ran).
    pub checks: Option<String>,
    /// The review decision: `APPROVED`, `CHANGES_REQUESTED`, `REVIEW_REQUIRED`.
    pub review: Option<String>,
    /// Why the review could not be read (the forge's approvals call failed): then
    /// `review` is `None`, and nothing takes the request for approved.
    pub review_unknown: Option<String>,
    /// The commit its head branch points at, when the forge says.
    pub head: Option<String>,
}

/// A pull request to open.
#[derive(Debug, Clone, Default)]
pub struct NewPr<'a> {
    pub branch: &'a str,
    pub title: &'a str,
    pub body: &'a str,
    pub labels: &'a [String],
    pub reviewers: &'a [String],
    pub base: Option<&'a str>,
    pub draft: bool,
}

/// How to merge.
#[derive(Debug, Clone)]
pub struct MergeHow {
    pub method: MergeMethod,
    pub delete_branch: bool,
    /// Merge only while the head is this commit (the one we pushed).
    pub head: Option<String>,
}

/// A repository a forge listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundRepo {
    /// `owner/name` (GitLab: the full path).
    pub name: String,
    /// What git clones.
    pub url: String,
    pub archived: bool,
    pub fork: bool,
    pub topics: Vec<String>,
    pub language: Option<String>,
    pub default_branch: Option<String>,
}

/// What a campaign or `pr` asks of a forge.
pub trait Forge: Send + Sync {
    fn kind(&self) -> ForgeKind;
    /// Checks that the CLI is installed and logged in.
    fn check(&self, workdir: &Path) -> Result<(), Error>;
    /// The request whose head is `branch`: the open one, else the newest in any state.
    fn find(&self, workdir: &Path, branch: &str) -> Result<Option<FoundPr>, Error>;
    /// Opens a request; returns its URL.
    fn create(&self, workdir: &Path, new: &NewPr) -> Result<String, Error>;
    /// Writes a request's title and body again.
    fn edit(&self, workdir: &Path, pr: &FoundPr, title: &str, body: &str) -> Result<(), Error>;
    /// Marks a draft ready for review.
    fn ready(&self, workdir: &Path, pr: &FoundPr) -> Result<(), Error>;
    fn merge(&self, workdir: &Path, pr: &FoundPr, how: &MergeHow) -> Result<(), Error>;
    /// Every repository of an owner (archived and forks included: the caller filters).
    fn list_repos(&self, owner: &str, limit: usize) -> Result<Vec<FoundRepo>, Error>;
    /// The repositories a search finds.
    fn search_repos(&self, query: &str, limit: usize) -> Result<Vec<FoundRepo>, Error>;
}

/// The forge of `kind`.
pub fn of(kind: ForgeKind) -> Box<dyn Forge> {
    match kind {
        ForgeKind::Github => Box::new(GitHub),
        ForgeKind::Gitlab => Box::new(GitLab),
    }
}

/// Why a forge call failed.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    #[error("the {} `{tool}` was not found on PATH", cli_name(.tool))]
    Missing {
        tool: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("`{tool}` is not logged in to {}{}", site(.tool), detail(.stderr))]
    Auth { tool: &'static str, stderr: String },
    #[error("cannot reach {}{}", site(.tool), detail(.stderr))]
    Network { tool: &'static str, stderr: String },
    #[error("`{tool} {command}` failed{}", detail(.stderr))]
    Failed {
        tool: &'static str,
        command: String,
        stderr: String,
    },
    #[error("cannot run {tool}")]
    Spawn {
        tool: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A value that would reach the CLI's argument vector as an option.
    #[error("{what} '{value}' is refused: it would be read as an option")]
    Unsafe { what: &'static str, value: String },
}

fn cli_name(tool: &str) -> &'static str {
    match tool {
        "glab" => "GitLab CLI",
        _ => "GitHub CLI",
    }
}

fn site(tool: &str) -> &'static str {
    match tool {
        "glab" => "GitLab",
        _ => "GitHub",
    }
}

fn detail(stderr: &str) -> String {
    let s = stderr.trim();
    if s.is_empty() {
        String::new()
    } else {
        format!(": {s}")
    }
}

impl Classify for ForgeError {
    fn code(&self) -> &'static str {
        let gitlab = |tool: &str| tool == "glab";
        match self {
            ForgeError::Missing { tool, .. } if gitlab(tool) => "glab-missing",
            ForgeError::Missing { .. } => "gh-missing",
            ForgeError::Auth { tool, .. } if gitlab(tool) => "glab-auth",
            ForgeError::Auth { .. } => "gh-auth",
            ForgeError::Network { .. } => "network",
            ForgeError::Failed { tool, .. } if gitlab(tool) => "glab-failed",
            ForgeError::Failed { .. } => "gh-failed",
            ForgeError::Spawn { .. } => "spawn",
            ForgeError::Unsafe { .. } => "unsafe-argument",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            ForgeError::Unsafe { .. } => Exit::Refused,
            _ => Exit::Internal,
        }
    }
    fn hint(&self) -> Option<String> {
        Some(match self {
            ForgeError::Missing { tool, .. } if *tool == "glab" => {
                "install the GitLab CLI (https://gitlab.com/gitlab-org/cli), then run `glab auth \
                 login`"
                    .into()
            }
            ForgeError::Missing { .. } => {
                "install the GitHub CLI (https://cli.github.com), then run `gh auth login`".into()
            }
            ForgeError::Auth { tool, .. } if *tool == "glab" => {
                "run `glab auth login`, or set GITLAB_TOKEN to a token".into()
            }
            ForgeError::Auth { .. } => "run `gh auth login`, or set GH_TOKEN to a token".into(),
            ForgeError::Network { tool, .. } => format!(
                "check the network connection to {}, then run the same command again",
                site(tool)
            ),
            ForgeError::Failed { tool, .. } => {
                format!("the branch is pushed; fix what {tool} said and run the same command again")
            }
            _ => return None,
        })
    }
}

/// Refuses a value that would be read as an option.
pub fn plain(what: &'static str, value: &str) -> Result<(), ForgeError> {
    if value.starts_with('-') || value.is_empty() {
        return Err(ForgeError::Unsafe {
            what,
            value: value.to_string(),
        });
    }
    Ok(())
}

/// Runs `tool ARGS` in `workdir`, prompts disabled; its standard output.
pub fn call(tool: &'static str, workdir: &Path, args: &[String]) -> Result<String, Error> {
    let out = spawn(tool, workdir, args)?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = stderr_of(&out);
    if looks_offline(&stderr) {
        return Err(ForgeError::Network { tool, stderr }.into());
    }
    if args.first().map(String::as_str) == Some("auth") {
        return Err(ForgeError::Auth { tool, stderr }.into());
    }
    Err(ForgeError::Failed {
        tool,
        command: args.iter().take(2).cloned().collect::<Vec<_>>().join(" "),
        stderr,
    }
    .into())
}

fn spawn(tool: &'static str, workdir: &Path, args: &[String]) -> Result<Output, ForgeError> {
    Command::new(tool)
        .args(args)
        .current_dir(workdir)
        .env("GH_PROMPT_DISABLED", "1")
        .env("GLAB_NO_PROMPT", "1")
        .env("NO_PROMPT", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                ForgeError::Missing { tool, source }
            } else {
                ForgeError::Spawn { tool, source }
            }
        })
}

fn stderr_of(out: &Output) -> String {
    let mut s = String::from_utf8_lossy(&out.stderr).into_owned();
    if s.trim().is_empty() {
        s = String::from_utf8_lossy(&out.stdout).into_owned();
    }
    s.trim().to_string()
}

/// Network trouble as the forge CLIs word it.
fn looks_offline(stderr: &str) -> bool {
    let s = stderr.to_ascii_lowercase();
    [
        "could not resolve",
        "dial tcp",
        "connection refused",
        "network is unreachable",
        "timed out",
        "timeout",
        "no such host",
        "error connecting",
    ]
    .iter()
    .any(|p| s.contains(p))
}

/// JSON a CLI printed, or an error naming the call: output we cannot read must stop
/// us (guessing "none" could open a duplicate).
fn json(tool: &'static str, command: &str, text: &str) -> Result<serde_json::Value, Error> {
    serde_json::from_str(text.trim()).map_err(|e| {
        ForgeError::Failed {
            tool,
            command: command.into(),
            stderr: format!("unexpected output ({e}): {}", text.trim()),
        }
        .into()
    })
}

/// The last non-empty line a CLI printed (the URL `pr create` prints).
fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}
