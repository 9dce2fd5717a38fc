/*!
A pull request (`git astedit pr`, DESIGN §7a: the library side) from an applied (or pending) transaction.

The transaction becomes a branch `astedit/<id>`: a commit on top of the HEAD the
preview was staged on (or the commit `apply --commit` made), holding exactly the
preview's after-contents, so the PR diff is the preview. The branch is pushed with
plain `git push` and the PR opened with `gh pr create`, both spawned with argument
vectors (no shell, nothing to quote or inject), prompts disabled so that an agent or CI
never hangs on a question. The body carries the audit trail — reason, ops or patch
digest, per-file counts, the journal lines — and a machine-readable marker
`<!-- astedit:{json} -->` for bots.

Running it twice is safe: a branch that holds this preview is reused (one holding an
older preview of ours is moved to this one's commit), and an open PR for the branch (or
one whose head is the commit pushed) is reported instead of a second one being opened.
The base, the remote's default and the checked-out branch are never the branch.
*/

use std::path::Path;
use std::process::Command;
use std::process::Output;

use crate::change::FileMode;
use crate::diff;
use crate::error::Classify;
use crate::error::Exit;
use crate::ops::preview::LoadedPreview;
use crate::repo::Repo;
use crate::report::PrReport;
use crate::report::PreviewState;
use crate::report::Version;
use crate::text;
use crate::txn;
use crate::txn::Event;
use crate::txn::Preview;
use crate::Error;

/// What to open a pull request for, and how.
#[derive(Debug, Clone, Default)]
pub struct PrRequest {
    /// Transaction id or unique prefix; the newest applied, else pending, when `None`.
    pub id: Option<String>,
    pub remote: String,
    pub base: Option<String>,
    pub title: Option<String>,
    pub ready: bool,
    /// The MCP client (`name/version`) asking: journalled with the `pr` event and, on
    /// a commit `pr` makes, an `Astedit-Agent` trailer.
    pub agent: Option<String>,
    /// A campaign's branch (name, body, labels, reviewers, and how to move it);
    /// `None`: `astedit/<id>` with the generated body.
    pub branch: Option<BranchPlan>,
}

/// The branch a campaign publishes a preview on (issue 27).
#[derive(Debug, Clone, Default)]
pub struct BranchPlan {
    pub name: String,
    /// Put above the generated body (which keeps the audit trail and the marker).
    pub body: Option<String>,
    pub labels: Vec<String>,
    pub reviewers: Vec<String>,
    /// Rebuild the branch tip on this commit (the base moved), replacing the local
    /// branch instead of reusing it.
    pub parent: Option<gix::ObjectId>,
    /// Push with `--force-with-lease=refs/heads/<name>:<lease>`: the remote branch
    /// moves only while its head is still the commit we pushed.
    pub lease: Option<gix::ObjectId>,
    /// Spaces the writes to the forge (`gh pr create`, `gh pr edit`) of every
    /// repository a campaign works on at once.
    pub pace: Option<std::sync::Arc<Pace>>,
    /// The forge the pull request is opened on.
    pub forge: crate::report::campaign::ForgeKind,
}

/// A campaign's rate limit: each write to the forge waits for its own slot, at least
/// `interval` after the slot before, whichever thread asks.
#[derive(Debug)]
pub struct Pace {
    interval: std::time::Duration,
    last: std::sync::Mutex<Option<std::time::Instant>>,
}

impl Pace {
    pub fn new(interval: std::time::Duration) -> Pace {
        Pace {
            interval,
            last: std::sync::Mutex::new(None),
        }
    }

    /// Waits for the next slot and returns it.
    pub fn wait(&self) -> std::time::Instant {
        let slot = {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            let now = std::time::Instant::now();
            let slot = match *last {
                Some(t) if t + self.interval > now => t + self.interval,
                _ => now,
            };
            *last = Some(slot);
            slot
        };
        // Slept outside the lock: the next caller takes the slot after this one.
        let now = std::time::Instant::now();
        if slot > now {
            std::thread::sleep(slot - now);
        }
        slot
    }
}

/// Why a pull request could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum PrError {
    #[error("the GitHub CLI `gh` was not found on PATH")]
    GhMissing(#[source] std::io::Error),
    #[error("`gh` is not logged in to GitHub{}", detail(.0))]
    GhAuth(String),
    #[error("cannot reach GitHub{}", detail(.0))]
    Network(String),
    #[error("`git push {remote} {branch}` failed{}", detail(.stderr))]
    Push {
        remote: String,
        branch: String,
        stderr: String,
    },
    #[error("`gh {command}` failed{}", detail(.stderr))]
    Gh { command: String, stderr: String },
    #[error("cannot run {program}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot {action}")]
    Git {
        action: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The branch to push is the one the pull request goes into (or the remote's
    /// default): pushing the preview there would skip the review, pushing it unchanged
    /// would report a pull request that is none.
    #[error("branch '{branch}' is refused: it is the {what} branch")]
    BaseBranch { branch: String, what: &'static str },
    /// The local branch holds a commit `pr` did not make: moving it would drop it.
    #[error("branch '{branch}' is at {commit}, which git astedit did not make: it was left alone")]
    NotOurBranch { branch: String, commit: String },
    #[error("transaction {id} was {state}: there is nothing to open a pull request for")]
    NotOpen { id: String, state: String },
    /// A value that would reach a child's argument vector as an option, or a remote
    /// that is not configured: pushing to a place the repository's owner never named
    /// could send its code anywhere.
    #[error("{what} '{value}' is refused: {why}")]
    UnsafeArgument {
        what: &'static str,
        value: String,
        why: String,
        /// The configured remotes, for the hint.
        remotes: Vec<String>,
    },
}

fn detail(stderr: &str) -> String {
    let s = stderr.trim();
    if s.is_empty() {
        String::new()
    } else {
        format!(": {s}")
    }
}

impl Classify for PrError {
    fn code(&self) -> &'static str {
        match self {
            PrError::GhMissing(_) => "gh-missing",
            PrError::GhAuth(_) => "gh-auth",
            PrError::Network(_) => "network",
            PrError::Push { .. } => "push-failed",
            PrError::Gh { .. } => "gh-failed",
            PrError::Spawn { .. } => "spawn",
            PrError::Git { .. } => "git",
            PrError::NotOpen { .. } => "not-open",
            PrError::UnsafeArgument { .. } => "unsafe-argument",
            PrError::BaseBranch { .. } => "base-branch",
            PrError::NotOurBranch { .. } => "branch-not-ours",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            PrError::NotOpen { .. } => Exit::BadInput,
            PrError::UnsafeArgument { .. }
            | PrError::BaseBranch { .. }
            | PrError::NotOurBranch { .. } => Exit::Refused,
            // The environment is missing something, or the remote side failed.
            _ => Exit::Internal,
        }
    }
    fn hint(&self) -> Option<String> {
        Some(match self {
            PrError::GhMissing(_) => {
                "install the GitHub CLI (https://cli.github.com), then run `gh auth login`".into()
            }
            PrError::GhAuth(_) => "run `gh auth login`, or set GH_TOKEN to a token".into(),
            PrError::Network(_) => {
                "check the network connection to GitHub, then run the same command again".into()
            }
            PrError::Push { remote, .. } => format!(
                "check that the remote '{remote}' exists and you may push to it (`git remote -v`), \
                 and the network; then run the same command again"
            ),
            PrError::Gh { .. } => {
                "the branch is pushed; fix what gh said and run the same command again".into()
            }
            PrError::NotOpen { .. } => "`git astedit log` shows what happened to it".into(),
            PrError::BaseBranch { .. } => {
                "name a branch of its own (a campaign's `[pr] branch`; the default is \
                 `astedit/<name>`)"
                    .into()
            }
            PrError::NotOurBranch { branch, .. } => format!(
                "push it under another name, or delete it (`git branch -D {branch}`) if its \
                 commits are not needed"
            ),
            PrError::UnsafeArgument { remotes, .. } if remotes.is_empty() => {
                "no remote is configured: add one with `git remote add origin URL`".into()
            }
            PrError::UnsafeArgument { remotes, .. } => {
                format!("name one of the configured remotes: {}", remotes.join(", "))
            }
            _ => return None,
        })
    }
}

/// The transaction to open a PR for, and whether it is applied or pending (the rules
/// are [`txn::resolve`]'s: an applied one, else a pending one).
fn pick(repo: &Repo, id: Option<&str>) -> Result<(Preview, PreviewState), Error> {
    use txn::resolve::State;
    let target = match txn::resolve::resolve(repo, id, txn::resolve::Want::AppliedOrPending) {
        Err(txn::Error::Gone { id, how }) => return Err(PrError::NotOpen { id, state: how }.into()),
        other => other?,
    };
    let state = match target.state {
        State::Applied => PreviewState::Applied,
        _ => PreviewState::Pending,
    };
    let preview = match target.preview {
        Some(p) => p,
        None => txn::read_preview(repo, target.commit)?,
    };
    Ok((preview, state))
}

fn git_err<E: std::error::Error + Send + Sync + 'static>(
    action: impl Into<String>,
) -> impl FnOnce(E) -> PrError {
    let action = action.into();
    move |e| PrError::Git {
        action,
        source: Box::new(e),
    }
}

/// Where the branch is to point, and where it was (moved when they differ).
struct Tip {
    commit: gix::ObjectId,
    before: Option<gix::ObjectId>,
}

/// The branch tip: the commit `apply --commit` made, else a commit holding the
/// preview's after side on top of the HEAD it was staged on (`rebuild_on`: on that
/// commit instead). A branch that already holds this preview on that parent is kept,
/// so a second run pushes the same commit; one holding an older preview of ours (a
/// publish that failed before a refresh) is moved; one holding a commit we did not
/// make is refused.
fn branch_tip(
    repo: &Repo,
    preview: &Preview,
    events: &[Event],
    branch_ref: &str,
    title: &str,
    agent: Option<&str>,
    rebuild_on: Option<gix::ObjectId>,
) -> Result<Tip, Error> {
    let before = match repo
        .git
        .try_find_reference(branch_ref)
        .map_err(git_err(format!("read {branch_ref}")))?
    {
        Some(mut r) => Some(
            r.peel_to_id()
                .map_err(git_err(format!("read {branch_ref}")))?
                .detach(),
        ),
        None => None,
    };
    let made = events
        .iter()
        .find(|e| e.id == preview.id && e.event == "applied")
        .and_then(|e| e.made_commit.as_deref())
        .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok());
    let parent = rebuild_on.or_else(|| default_parent(repo, preview));
    let commit = match (rebuild_on, made, before) {
        (None, Some(c), _) => c,
        (None, None, Some(b)) if holds(repo, b, &preview.id, parent) => b,
        _ => write_commit(repo, preview, title, agent, parent)?,
    };
    if let Some(b) = before.filter(|b| *b != commit) {
        if !holds(repo, b, "", None) {
            return Err(PrError::NotOurBranch {
                branch: branch_ref.trim_start_matches("refs/heads/").into(),
                commit: b.to_string(),
            }
            .into());
        }
    }
    if before != Some(commit) {
        txn::set_ref(
            repo,
            branch_ref,
            commit,
            before.map_or(txn::RefWas::Absent, txn::RefWas::At),
            &format!("astedit: pr {}", preview.id),
            "pr-branch",
        )?;
    }
    Ok(Tip { commit, before })
}

/// Whether `commit` is one git astedit made (an `Astedit-Id:` trailer), for preview
/// `id` when it is not empty, on `parent` when one is given.
fn holds(repo: &Repo, commit: gix::ObjectId, id: &str, parent: Option<gix::ObjectId>) -> bool {
    let Ok(c) = repo.git.find_commit(commit) else {
        return false;
    };
    let Ok(message) = c.message_raw() else {
        return false;
    };
    let ours = message.to_string().lines().any(|l| {
        l.strip_prefix("Astedit-Id: ")
            .is_some_and(|v| id.is_empty() || v.trim() == id)
    });
    ours && parent.is_none_or(|p| c.parent_ids().next().map(|x| x.detach()) == Some(p))
}

/// The commit a preview's branch goes on: the HEAD it was staged on when that still
/// exists, else today's HEAD.
fn default_parent(repo: &Repo, preview: &Preview) -> Option<gix::ObjectId> {
    preview
        .meta
        .base_head
        .as_deref()
        .and_then(|h| gix::ObjectId::from_hex(h.as_bytes()).ok())
        .filter(|id| repo.git.find_commit(*id).is_ok())
        .or_else(|| repo.head_commit())
}

fn write_commit(
    repo: &Repo,
    preview: &Preview,
    title: &str,
    agent: Option<&str>,
    parent: Option<gix::ObjectId>,
) -> Result<gix::ObjectId, Error> {
    let mut message = format!("{title}\n\n");
    if let Some(r) = &preview.meta.reason {
        message.push_str(&format!("{r}\n\n"));
    }
    message.push_str(&format!(
        "Astedit-Id: {}\nAstedit-Kind: {}\nAstedit-Summary: {}\n",
        preview.id,
        preview.meta.kind,
        text::first_line(&preview.meta.summary)
    ));
    if let Some(a) = agent {
        message.push_str(&txn::agent_trailer(a));
    }
    let changes: Vec<(&str, Option<(gix::ObjectId, FileMode)>)> = preview
        .entries
        .iter()
        .map(|e| (e.path.as_str(), e.after))
        .collect();
    Ok(txn::write_commit(repo, parent, &changes, &message)?)
}

/// Refuses a value that a child would read as an option, or that holds a byte no
/// remote name, branch or URL has.
fn plain_value(what: &'static str, value: &str) -> Result<(), PrError> {
    let why = if value.is_empty() {
        "it is empty"
    } else if value.starts_with('-') {
        "it starts with '-' and would be read as an option"
    } else if value.chars().any(|c| c.is_control()) {
        "it holds a control character"
    } else {
        return Ok(());
    };
    Err(PrError::UnsafeArgument {
        what,
        value: value.into(),
        why: why.into(),
        remotes: Vec::new(),
    })
}

/// The remote to push to: a configured remote's name, or the URL (`url` or `pushurl`)
/// of one. Anything else is refused, so that a caller (an agent, or a prompt injected
/// into one) can neither pass an option to `git push` nor send the code elsewhere.
fn configured_remote(repo: &Repo, remote: &str) -> Result<String, PrError> {
    let names: Vec<String> = repo
        .git
        .remote_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let refuse = |why: &str| PrError::UnsafeArgument {
        what: "remote",
        value: remote.into(),
        why: why.into(),
        remotes: names.clone(),
    };
    plain_value("remote", remote).map_err(|e| match e {
        PrError::UnsafeArgument { why, .. } => refuse(&why),
        other => other,
    })?;
    if names.iter().any(|n| n == remote) {
        return Ok(remote.into());
    }
    let config = repo.git.config_snapshot();
    for name in &names {
        for key in ["url", "pushurl"] {
            let urls = config.strings(format!("remote.{name}.{key}").as_str());
            if urls
                .unwrap_or_default()
                .iter()
                .any(|u| AsRef::<[u8]>::as_ref(u) == remote.as_bytes())
            {
                return Ok(name.clone());
            }
        }
    }
    Err(refuse("it is not a configured remote"))
}

/// Runs a program with an argument vector in the work tree; prompts disabled.
fn spawn(workdir: &Path, program: &str, args: &[String]) -> Result<Output, PrError> {
    Command::new(program)
        .args(args)
        .current_dir(workdir)
        .env("GH_PROMPT_DISABLED", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound && program == "gh" {
                PrError::GhMissing(source)
            } else {
                PrError::Spawn {
                    program: program.into(),
                    source,
                }
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

/// Network trouble as gh and git word it.
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

/// The per-file rows of the body: counts from the metadata, lines from the blobs.
fn file_rows(loaded: &LoadedPreview) -> Vec<serde_json::Value> {
    let p = &loaded.preview;
    loaded
        .files()
        .iter()
        .map(|f| {
            let counts = diff::line_counts(
                f.before.map(|s| s.bytes).unwrap_or_default(),
                f.after.map(|s| s.bytes).unwrap_or_default(),
            );
            let meta = p.meta.files.iter().find(|m| m.path == f.path);
            serde_json::json!({
                "path": f.path,
                "count": meta.map(|m| m.count).unwrap_or(0),
                "flags": meta.map(|m| m.flags.clone()).unwrap_or_default(),
                "added_lines": counts.added,
                "removed_lines": counts.removed,
            })
        })
        .collect()
}

fn journal_line(e: &Event) -> String {
    let mut line = format!(
        "{}  {:<10} {}  {}",
        text::format_time(e.time),
        e.event,
        e.id,
        e.who
    );
    if let Some(a) = &e.agent {
        line.push_str(&format!("  agent: {a}"));
    }
    if let Some(r) = &e.reason {
        line.push_str(&format!("  reason: {}", text::first_line(r)));
    }
    line
}

/// Keeps a text inside a Markdown code span or fence.
fn code(s: &str) -> String {
    text::first_line(s).replace('`', "'")
}

/// GitHub rejects bodies over 65536 characters.
const MAX_BODY: usize = 60_000;

fn body(loaded: &LoadedPreview, state: &str, events: &[Event], remote_branch: &str) -> String {
    let p = &loaded.preview;
    let rows = file_rows(loaded);
    let mut lines: Vec<&Event> = events.iter().filter(|e| e.id == p.id).collect();
    lines.reverse(); // oldest first reads as a story
    let mut b = String::new();
    if let Some(r) = &p.meta.reason {
        b.push_str(&format!("{r}\n\n"));
    }
    b.push_str(&format!(
        "**git-astedit {}** `{}` ({state}): {}\n\n",
        p.meta.kind,
        p.id,
        code(&p.meta.summary)
    ));
    if !p.meta.ops.is_empty() {
        b.push_str("### Ops\n\n");
        for (i, op) in p.meta.ops.iter().enumerate() {
            b.push_str(&format!(
                "{}. `{}` → `{}`{}\n",
                i + 1,
                code(&op.pattern),
                code(&op.rewrite),
                op.lang
                    .as_deref()
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default()
            ));
        }
        b.push('\n');
    }
    if let Some(d) = &p.meta.patch_digest {
        b.push_str(&format!("Patch digest: `sha256:{d}`\n\n"));
    }
    b.push_str("### Files\n\n| path | changes | + | − | flags |\n|---|---:|---:|---:|---|\n");
    for r in &rows {
        b.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            code(r["path"].as_str().unwrap_or_default()),
            r["count"],
            r["added_lines"],
            r["removed_lines"],
            r["flags"]
                .as_array()
                .map(|f| f
                    .iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(", "))
                .unwrap_or_default()
        ));
    }
    b.push_str("\n### Journal\n\n```\n");
    for e in &lines {
        b.push_str(&journal_line(e).replace("```", "'''"));
        b.push('\n');
    }
    b.push_str("```\n\n");
    b.push_str(&format!(
        "Branch `{remote_branch}`; the preview is `refs/astedit/{}` / commit `{}`.\n\n",
        p.id, p.commit
    ));
    if b.len() > MAX_BODY {
        let mut cut = MAX_BODY;
        while !b.is_char_boundary(cut) {
            cut -= 1;
        }
        b.truncate(cut);
        b.push_str("\n\n… (cut; `git astedit show` has the rest)\n\n");
    }
    let marker = serde_json::json!({
        "id": p.id,
        "commit": p.commit.to_string(),
        "kind": p.meta.kind,
        "state": state,
        "summary": p.meta.summary,
        "reason": p.meta.reason,
        "ops": p.meta.ops,
        "patch_digest": p.meta.patch_digest,
        "base_head": p.meta.base_head,
        "files": rows,
        "agents": lines.iter().filter_map(|e| e.agent.clone()).collect::<std::collections::BTreeSet<_>>(),
        "tool_version": crate::VERSION,
    });
    // `-->` can only occur inside JSON strings, where `\u003e` means the same.
    let marker = marker.to_string().replace("-->", "--\\u003e");
    b.push_str(&format!("<!-- astedit:{marker} -->\n"));
    b
}

/// Refuses to push the preview as the branch the pull request goes into, or as the
/// remote's default branch, or as the branch checked out here.
fn not_the_base(
    repo: &Repo,
    remote: &str,
    branch: &str,
    base: Option<&str>,
) -> Result<(), PrError> {
    let refuse = |what| {
        Err(PrError::BaseBranch {
            branch: branch.into(),
            what,
        })
    };
    if base == Some(branch) {
        return refuse("base");
    }
    let default = repo
        .git
        .try_find_reference(format!("refs/remotes/{remote}/HEAD").as_str())
        .ok()
        .flatten()
        .and_then(|r| match r.target() {
            gix::refs::TargetRef::Symbolic(name) => Some(name.as_bstr().to_string()),
            gix::refs::TargetRef::Object(_) => None,
        });
    if default.as_deref() == Some(format!("refs/remotes/{remote}/{branch}").as_str()) {
        return refuse("remote's default");
    }
    let current = repo.git.head_name().ok().flatten();
    if current.is_some_and(|h| h.as_bstr() == format!("refs/heads/{branch}").as_str()) {
        return refuse("checked-out");
    }
    Ok(())
}

/// Pushes the branch. It moves over the remote branch only by lease: `lease` (the
/// commit a campaign pushed), else the commit the local branch held before this run
/// moved it (a push that went through before a failed `gh pr create`), when the remote
/// branch is still there; anything else on the remote is not replaced.
fn push(
    repo: &Repo,
    remote: &str,
    branch: &str,
    tip: &Tip,
    lease: Option<gix::ObjectId>,
) -> Result<(), Error> {
    let workdir = &repo.workdir;
    let branch_ref = format!("refs/heads/{branch}");
    let lease = match (lease, tip.before.filter(|b| *b != tip.commit)) {
        (Some(l), _) => Some(l),
        (None, Some(old)) => {
            let listed = spawn(
                workdir,
                "git",
                &[
                    "ls-remote".into(),
                    "--".into(),
                    remote.into(),
                    branch_ref.clone(),
                ],
            )?;
            let head = String::from_utf8_lossy(&listed.stdout)
                .split_whitespace()
                .next()
                .map(str::to_string);
            (listed.status.success() && head == Some(old.to_string())).then_some(old)
        }
        (None, None) => None,
    };
    // `--` ends git's options: what follows is a remote and a refspec, whatever it is.
    let mut push_args: Vec<String> = vec!["push".into()];
    if let Some(lease) = lease {
        push_args.push(format!("--force-with-lease={branch_ref}:{lease}"));
    }
    push_args.extend([
        "--".into(),
        remote.into(),
        format!("{branch_ref}:{branch_ref}"),
    ]);
    let pushed = spawn(workdir, "git", &push_args)?;
    if !pushed.status.success() {
        let stderr = stderr_of(&pushed);
        return Err(if looks_offline(&stderr) {
            PrError::Network(stderr)
        } else {
            PrError::Push {
                remote: remote.into(),
                branch: branch.into(),
                stderr,
            }
        }
        .into());
    }
    Ok(())
}

/// `pr`: pushes the branch and opens (or finds) the pull request.
pub fn run(repo: &Repo, args: &PrRequest) -> Result<PrReport, Error> {
    let workdir = repo.workdir.clone();
    let events = txn::log(repo)?;
    let (preview, state) = pick(repo, args.id.as_deref())?;
    let state_name = match state {
        PreviewState::Applied => "applied",
        _ => "pending",
    };

    // Every value of the caller's that reaches an argument vector is checked before
    // anything runs; values after an option go in its `--opt=VALUE` form.
    let remote = configured_remote(repo, &args.remote)?;
    if let Some(base) = &args.base {
        plain_value("base branch", base)?;
    }

    // Check the tools before touching anything: no branch is made for nothing.
    let forge = crate::ops::forge::of(args.branch.as_ref().map(|b| b.forge).unwrap_or_default());
    forge.check(&workdir)?;

    let plan = args.branch.clone().unwrap_or_default();
    for (what, values) in [("label", &plan.labels), ("reviewer", &plan.reviewers)] {
        for v in values {
            plain_value(what, v)?;
        }
    }
    let branch = match args.branch.as_ref() {
        Some(p) => {
            plain_value("branch", &p.name)?;
            p.name.clone()
        }
        None => format!("astedit/{}", preview.id),
    };
    let branch_ref = format!("refs/heads/{branch}");
    let title = args.title.clone().unwrap_or_else(|| {
        let t = match &preview.meta.reason {
            Some(r) if !r.trim().is_empty() => text::first_line(r.trim()),
            _ => format!(
                "astedit {}: {}",
                preview.meta.kind,
                text::first_line(&preview.meta.summary)
            ),
        };
        t.chars().take(200).collect()
    });
    not_the_base(repo, &remote, &branch, args.base.as_deref())?;
    let tip = branch_tip(
        repo,
        &preview,
        &events,
        &branch_ref,
        &title,
        args.agent.as_deref(),
        plan.parent,
    )?;
    push(repo, &remote, &branch, &tip, plan.lease)?;
    let tip = tip.commit;

    // Only an open pull request is this one's, or one whose head is the commit just
    // pushed: a merged or closed one that had the same branch name is history.
    let existing = forge.find(&workdir, &branch)?.filter(|found| {
        found.state == "OPEN" || found.head.as_deref() == Some(tip.to_string().as_str())
    });
    // A pull request found is reported as it is (a draft stays a draft whatever this
    // call asked for); one opened is a draft unless asked to be ready.
    let mut draft = !args.ready;
    let described = || -> Result<(String, String), Error> {
        let loaded = LoadedPreview::load(repo, preview.clone())?;
        let mut text = body(&loaded, state_name, &events, &branch);
        if let Some(above) = &plan.body {
            text = format!("{above}\n\n---\n\n{text}");
        }
        Ok((title.clone(), text))
    };
    let (url, created) = match existing {
        Some(found) => {
            draft = found.draft;
            // A campaign's open pull request follows its preview (a refresh moved the
            // branch): its title and body are written again. `pr` itself leaves a
            // found one as it is.
            if args.branch.is_some() && found.state == "OPEN" {
                let (title, text) = described()?;
                if let Some(pace) = &plan.pace {
                    pace.wait();
                }
                forge.edit(&workdir, &found, &title, &text)?;
            }
            (found.url, false)
        }
        None => {
            let (title, text) = described()?;
            if let Some(pace) = &plan.pace {
                pace.wait();
            }
            let url = forge.create(
                &workdir,
                &crate::ops::forge::NewPr {
                    branch: &branch,
                    title: &title,
                    body: &text,
                    labels: &plan.labels,
                    reviewers: &plan.reviewers,
                    base: args.base.as_deref(),
                    draft: !args.ready,
                },
            )?;
            (url, true)
        }
    };

    // The audit trail names who published it. The pull request exists by now: a
    // journal that cannot be written is reported, and a second run finds the PR.
    txn::record_pr(
        repo,
        &preview,
        args.agent.as_deref(),
        format!(
            "pull request {url} ({}; branch {branch} at {tip})",
            if created { "opened" } else { "found" }
        ),
    )?;

    Ok(PrReport {
        schema_version: Version,
        id: preview.id.clone(),
        state,
        branch,
        commit: tip.to_string(),
        remote,
        url,
        created,
        draft,
    })
}

/// A pull request as the forge describes it.
pub use crate::ops::forge::FoundPr;

/// The pull request whose head is `branch` (any state), asked of GitHub's `gh` in
/// `workdir` (campaigns ask their forge: [`crate::ops::forge`]).
pub fn find(workdir: &Path, branch: &str) -> Result<Option<FoundPr>, Error> {
    crate::ops::forge::of(Default::default()).find(workdir, branch)
}
