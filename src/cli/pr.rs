/*!
`git astedit pr`: a pull request from an applied (or pending) transaction.

The transaction becomes a branch `astedit/<id>`: a commit on top of the HEAD the
preview was staged on (or the commit `apply --commit` made), holding exactly the
preview's after-contents, so the PR diff is the preview. The branch is pushed with
plain `git push` and the PR opened with `gh pr create`, both spawned with argument
vectors (no shell, nothing to quote or inject), prompts disabled so that an agent or CI
never hangs on a question. The body carries the audit trail — reason, ops or patch
digest, per-file counts, the journal lines — and a machine-readable marker
`<!-- astedit:{json} -->` for bots.

Running it twice is safe: the branch is reused, and an existing PR for the branch is
reported instead of a second one being opened.
*/

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::process::Output;

use git_astedit::change::FileMode;
use git_astedit::error::Classify;
use git_astedit::error::Exit;
use git_astedit::render;
use git_astedit::repo::Repo;
use git_astedit::txn;
use git_astedit::txn::Event;
use git_astedit::txn::Preview;
use git_astedit::Error;
use gix::refs::transaction::PreviousValue;

use super::show::LoadedPreview;
use super::Ctx;

/// Open a pull request from a transaction with the GitHub CLI (`gh`).
///
/// Pushes a branch `astedit/<id>` holding exactly the transaction's changes on top
/// of the commit it was staged on, then runs `gh pr create` (a draft unless
/// --ready). The body holds the reason, the ops or patch digest, per-file counts,
/// the journal lines and a machine-readable `<!-- astedit:… -->` marker. Running it
/// again reports the existing pull request. Without ID: the newest applied
/// transaction, else the newest pending preview.
#[derive(Debug, clap::Args)]
pub struct PrArgs {
    /// Transaction id or unique prefix (applied or pending)
    pub id: Option<String>,

    /// The remote to push the branch to
    #[arg(long, value_name = "NAME", default_value = "origin")]
    pub remote: String,

    /// The branch the pull request merges into (default: the repository's default)
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,

    /// The pull request's title (default: the reason, else the summary)
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    /// Open it ready for review instead of as a draft
    #[arg(long)]
    pub ready: bool,
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
    #[error("transaction {id} was {state}: there is nothing to open a pull request for")]
    NotOpen { id: String, state: String },
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
        }
    }
    fn exit(&self) -> Exit {
        match self {
            PrError::NotOpen { .. } => Exit::BadInput,
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
            _ => return None,
        })
    }
}

/// What happened to a transaction last, from the journal (newest first).
fn state_of(events: &[Event], id: &str) -> Option<&'static str> {
    for e in events.iter().filter(|e| e.id == id) {
        match (
            e.event.as_str(),
            e.op.map(|o| o.as_str()),
            e.action.map(|a| a.as_str()),
        ) {
            ("applied", ..) => return Some("applied"),
            ("undone", ..) => return Some("undone"),
            ("discarded", ..) => return Some("discarded"),
            ("expired", ..) => return Some("expired"),
            ("recovered", Some("apply"), Some("completed")) => return Some("applied"),
            ("recovered", Some("undo"), Some("completed")) => return Some("undone"),
            _ => {}
        }
    }
    None
}

/// The transaction to open a PR for, and whether it is applied or pending.
fn pick(repo: &Repo, id: Option<&str>, events: &[Event]) -> Result<(Preview, String), Error> {
    let by_commit = |commit: &str| -> Result<Preview, Error> {
        let oid = gix::ObjectId::from_hex(commit.as_bytes()).map_err(|e| PrError::Git {
            action: format!("read transaction commit {commit}"),
            source: Box::new(e),
        })?;
        Ok(txn::read_preview(repo, oid)?)
    };
    match id {
        None => {
            if let Some(e) = events
                .iter()
                .find(|e| e.event == "applied" && state_of(events, &e.id) == Some("applied"))
            {
                return Ok((by_commit(&e.commit)?, "applied".into()));
            }
            Ok((txn::find(repo, None)?, "pending".into()))
        }
        Some(prefix) => {
            let prefix = prefix.trim().to_ascii_lowercase();
            if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(txn::Error::BadId(prefix).into());
            }
            let mut ids: Vec<&Event> = events
                .iter()
                .filter(|e| e.id.starts_with(&prefix))
                .collect();
            ids.sort_by(|a, b| a.id.cmp(&b.id));
            ids.dedup_by(|a, b| a.id == b.id);
            match ids.as_slice() {
                [] => Err(txn::Error::UnknownId(prefix).into()),
                [one] => match state_of(events, &one.id) {
                    Some("applied") => Ok((by_commit(&one.commit)?, "applied".into())),
                    Some(state) => Err(PrError::NotOpen {
                        id: one.id.clone(),
                        state: state.into(),
                    }
                    .into()),
                    None => Ok((txn::find(repo, Some(&one.id))?, "pending".into())),
                },
                many => Err(txn::Error::AmbiguousId {
                    prefix,
                    candidates: many.iter().map(|e| e.id.clone()).collect(),
                }
                .into()),
            }
        }
    }
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

/// The branch tip: the commit `apply --commit` made, else a new commit holding the
/// preview's after side on top of the HEAD it was staged on. An existing branch is
/// reused as it is, so a second run pushes the same commit.
fn branch_tip(
    repo: &Repo,
    preview: &Preview,
    events: &[Event],
    branch_ref: &str,
    title: &str,
) -> Result<gix::ObjectId, Error> {
    if let Some(mut r) = repo
        .git
        .try_find_reference(branch_ref)
        .map_err(git_err(format!("read {branch_ref}")))?
    {
        return Ok(r
            .peel_to_id()
            .map_err(git_err(format!("read {branch_ref}")))?
            .detach());
    }
    let made = events
        .iter()
        .find(|e| e.id == preview.id && e.event == "applied")
        .and_then(|e| e.made_commit.as_deref())
        .and_then(|c| gix::ObjectId::from_hex(c.as_bytes()).ok());
    let tip = match made {
        Some(c) => c,
        None => write_commit(repo, preview, title)?,
    };
    repo.git
        .reference(
            branch_ref,
            tip,
            PreviousValue::MustNotExist,
            format!("astedit: pr {}", preview.id),
        )
        .map_err(git_err(format!("create {branch_ref}")))?;
    Ok(tip)
}

fn write_commit(repo: &Repo, preview: &Preview, title: &str) -> Result<gix::ObjectId, Error> {
    let git = &repo.git;
    // The staging HEAD when it still exists, else today's HEAD.
    let parent = preview
        .meta
        .base_head
        .as_deref()
        .and_then(|h| gix::ObjectId::from_hex(h.as_bytes()).ok())
        .filter(|id| git.find_commit(*id).is_ok())
        .or_else(|| repo.head_commit());
    let base_tree = match parent {
        Some(p) => git
            .find_commit(p)
            .map_err(git_err(format!("read commit {p}")))?
            .tree_id()
            .map_err(git_err(format!("read commit {p}")))?
            .detach(),
        None => gix::ObjectId::empty_tree(git.object_hash()),
    };
    let mut tree = git.edit_tree(base_tree).map_err(git_err("edit a tree"))?;
    for e in &preview.entries {
        match e.after {
            Some((blob, mode)) => {
                let kind = match mode {
                    FileMode::Regular => gix::objs::tree::EntryKind::Blob,
                    FileMode::Executable => gix::objs::tree::EntryKind::BlobExecutable,
                    FileMode::Symlink => gix::objs::tree::EntryKind::Link,
                };
                tree.upsert(e.path.as_str(), kind, blob)
                    .map_err(git_err(format!("add {} to a tree", e.path)))?;
            }
            None => {
                tree.remove(e.path.as_str())
                    .map_err(git_err(format!("remove {} from a tree", e.path)))?;
            }
        }
    }
    let tree = tree.write().map_err(git_err("write a tree"))?.detach();
    let sig = repo.signature();
    let mut message = format!("{title}\n\n");
    if let Some(r) = &preview.meta.reason {
        message.push_str(&format!("{r}\n\n"));
    }
    message.push_str(&format!(
        "Astedit-Id: {}\nAstedit-Kind: {}\nAstedit-Summary: {}\n",
        preview.id,
        preview.meta.kind,
        render::first_line(&preview.meta.summary)
    ));
    let commit = gix::objs::Commit {
        tree,
        parents: parent.into_iter().collect(),
        author: sig.clone(),
        committer: sig,
        encoding: None,
        message: message.into(),
        extra_headers: Vec::new(),
    };
    Ok(git
        .write_object(&commit)
        .map_err(git_err("write the pull request commit"))?
        .detach())
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

fn gh(workdir: &Path, args: &[&str]) -> Result<String, PrError> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out = spawn(workdir, "gh", &args)?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = stderr_of(&out);
    if looks_offline(&stderr) {
        return Err(PrError::Network(stderr));
    }
    if args.first().map(String::as_str) == Some("auth") {
        return Err(PrError::GhAuth(stderr));
    }
    Err(PrError::Gh {
        command: args.iter().take(2).cloned().collect::<Vec<_>>().join(" "),
        stderr,
    })
}

/// The per-file rows of the body: counts from the metadata, lines from the blobs.
fn file_rows(loaded: &LoadedPreview) -> Vec<serde_json::Value> {
    let p = &loaded.preview;
    loaded
        .files()
        .iter()
        .map(|f| {
            let counts = render::line_counts(
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
        render::format_time(e.time),
        e.event,
        e.id,
        e.who
    );
    if let Some(a) = &e.agent {
        line.push_str(&format!("  agent: {a}"));
    }
    if let Some(r) = &e.reason {
        line.push_str(&format!("  reason: {}", render::first_line(r)));
    }
    line
}

/// Keeps a text inside a Markdown code span or fence.
fn code(s: &str) -> String {
    render::first_line(s).replace('`', "'")
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
        "tool_version": git_astedit::VERSION,
    });
    // `-->` can only occur inside JSON strings, where `\u003e` means the same.
    let marker = marker.to_string().replace("-->", "--\\u003e");
    b.push_str(&format!("<!-- astedit:{marker} -->\n"));
    b
}

pub fn run(ctx: &mut Ctx, args: PrArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let workdir = repo.workdir.clone();
    let events = txn::log(repo)?;
    let (preview, state) = pick(repo, args.id.as_deref(), &events)?;

    // Check the tools before touching anything: no branch is made for nothing.
    gh(&workdir, &["--version"])?;
    gh(&workdir, &["auth", "status"])?;

    let branch = format!("astedit/{}", preview.id);
    let branch_ref = format!("refs/heads/{branch}");
    let title = args.title.clone().unwrap_or_else(|| {
        let t = match &preview.meta.reason {
            Some(r) if !r.trim().is_empty() => render::first_line(r.trim()),
            _ => format!(
                "astedit {}: {}",
                preview.meta.kind,
                render::first_line(&preview.meta.summary)
            ),
        };
        t.chars().take(200).collect()
    });
    let tip = branch_tip(repo, &preview, &events, &branch_ref, &title)?;

    let push_args: Vec<String> = vec![
        "push".into(),
        args.remote.clone(),
        format!("{branch_ref}:{branch_ref}"),
    ];
    let pushed = spawn(&workdir, "git", &push_args)?;
    if !pushed.status.success() {
        let stderr = stderr_of(&pushed);
        return Err(if looks_offline(&stderr) {
            PrError::Network(stderr)
        } else {
            PrError::Push {
                remote: args.remote.clone(),
                branch: branch.clone(),
                stderr,
            }
        }
        .into());
    }

    let listed = gh(
        &workdir,
        &[
            "pr",
            "list",
            "--head",
            &branch,
            "--state",
            "all",
            "--json",
            "url,state",
        ],
    )?;
    // Output we cannot read must stop us: guessing "none" could open a duplicate.
    let existing: Vec<serde_json::Value> =
        serde_json::from_str(listed.trim()).map_err(|e| PrError::Gh {
            command: "pr list".into(),
            stderr: format!("unexpected output ({e}): {}", listed.trim()),
        })?;
    let (url, created) = match existing.first().and_then(|e| e["url"].as_str()) {
        Some(url) => (url.to_string(), false),
        None => {
            let loaded = LoadedPreview::load(repo, preview.clone())?;
            let text = body(&loaded, &state, &events, &branch);
            let mut create: Vec<&str> = vec![
                "pr", "create", "--head", &branch, "--title", &title, "--body", &text,
            ];
            if let Some(base) = &args.base {
                create.extend(["--base", base.as_str()]);
            }
            if !args.ready {
                create.push("--draft");
            }
            let created = gh(&workdir, &create)?;
            let url = created
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or_default()
                .trim()
                .to_string();
            (url, true)
        }
    };

    if json {
        let value = serde_json::json!({
            "id": preview.id,
            "state": state,
            "branch": branch,
            "commit": tip.to_string(),
            "remote": args.remote,
            "url": url,
            "created": created,
            "draft": created && !args.ready,
        });
        let _ = writeln!(out.stdout(), "{value}");
    } else if created {
        let _ = writeln!(
            out.stdout(),
            "Opened {}pull request {url} for {} (branch {branch}).",
            if args.ready { "" } else { "draft " },
            preview.id
        );
    } else {
        let _ = writeln!(
            out.stdout(),
            "A pull request for {} already exists: {url} (branch {branch}, pushed).",
            preview.id
        );
    }
    Ok(Exit::Ok)
}
