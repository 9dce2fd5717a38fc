/*!
`agent-hook`: our guarantees for edits agents make with their own tools.

Agents call the tools they were trained on (Claude Code's Read/Edit/Write, OpenCode's
read/edit/write), not ours. Their harnesses run hooks around each call, and this
operation answers them, the same way for every harness ([`HookEvent`] is what the
front end reads from the harness's protocol):

* after a read, the blob of the file the session saw is remembered (per session, per
  path, under the git dir: `astedit-agents/`);
* before an edit or a write, the file is compared with what that session last saw:
  changed since (another agent, the user, a formatter), the call is refused with a
  reason the model reads (read it again first). This is the stale write that loses
  another agent's edit while every call reports success. The content the edit starts
  from is kept in the object database;
* after the edit, it is journalled as an applied transaction (before: that content,
  after: the file now; the session as agent), so `git astedit log` shows it and
  `git astedit undo` takes it back; the session has now seen what it wrote.

A file the session never read is not refused (the harness has its own read-before-write
rule; we cannot tell what the model knows).

Hooks run before and after the tool, not around its write, so the check and the write
it allows are made one step by the repository lock: the before-hook takes it (waiting
behind an apply, recovering what a killed writer left), checks, and keeps it as the
session's *turn* past its own exit; the after-hook takes that turn back, journals and
releases it (a failed tool's event releases it too). An apply or another session's
edit therefore never lands between the check and the write. A turn whose after-event
never comes ends by itself after [`TURN_BOUND`]; an after-hook that finds its turn
ended and taken by a writer of the same path meanwhile says so to the model.

Shell commands (Claude Code's `Bash`, Codex's shell tools and `apply_patch`) are
journalled by comparing the work tree before and after them, with no lock held across
the command: see [`shell`].

[`install`] writes the harness's configuration: Claude Code's `.claude/settings.json`
(merged: other settings and hooks are kept) or OpenCode's plugin file.
*/

use std::path::Path;
use std::path::PathBuf;

use serde::Deserialize;
use serde::Serialize;

use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileMeta;
use crate::change::FileMode;
use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
use crate::txn;
use crate::Error;

mod shell;
pub use shell::with_session;
pub use shell::SESSION_ENV;

/// The harnesses we answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harness {
    ClaudeCode,
    OpenCode,
    /// Codex: Claude Code's hook wire format; its shell tools and `apply_patch` emit
    /// the events.
    Codex,
}

impl Harness {
    pub fn name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::OpenCode => "opencode",
            Harness::Codex => "codex",
        }
    }
}

/// Before or after the tool ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Before,
    After,
    /// After the tool failed (Claude Code's `PostToolUseFailure`): nothing was written.
    Failed,
}

/// What the tool does to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Read,
    /// Edit, MultiEdit, Write: the tool writes the file.
    Write,
    /// A shell command (Bash) or a patch (Codex's `apply_patch`): any file may change.
    Shell,
}

/// One hook call, in the harness's terms made common.
#[derive(Debug, Clone)]
pub struct HookEvent {
    pub harness: Harness,
    /// The harness's session id (who the agent is).
    pub session: String,
    pub phase: Phase,
    pub tool: ToolKind,
    /// The tool's name as the harness calls it (for the journal's reason).
    pub tool_name: String,
    /// The file, absolute or relative to `cwd`.
    pub path: PathBuf,
    /// The folder the harness runs in.
    pub cwd: PathBuf,
    /// What the file held before the tool ran, when the harness says (Claude Code's
    /// `tool_response.originalFile`): used when no before-hook kept it.
    pub original: Option<String>,
    /// The tool created the file (it did not exist before).
    pub created: bool,
    /// A shell tool's command (or `apply_patch`'s patch).
    pub command: Option<String>,
    /// The harness's id of this tool call (the same before and after it).
    pub tool_use_id: Option<String>,
}

/// The answer to a hook call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Refuse the tool call, with this reason for the model.
    pub deny: Option<String>,
    /// After the tool: something the model must know about the write it made.
    pub warn: Option<String>,
    /// The transaction the edit was journalled as.
    pub journalled: Option<String>,
    /// The file is not one we look after (outside the work tree, under `.git`).
    pub ignored: bool,
    /// Before a shell command: the command to run instead (the same, with the
    /// session in [`SESSION_ENV`]), for the harness's `updatedInput`.
    pub command: Option<String>,
}

/// What a session saw of a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Seen {
    Absent,
    Blob(String),
}

/// A session's state for one path (`astedit-agents/<session>/<path digest>.json`).
#[derive(Debug, Default, Serialize, Deserialize)]
struct PathState {
    path: String,
    /// What the session last read or wrote.
    #[serde(default)]
    seen: Option<Seen>,
    /// What the file held when the session's write tool started.
    #[serde(default)]
    before: Option<Seen>,
    /// The journal's tip when the session's write tool started (to tell, when its
    /// turn ended early, who wrote the file meanwhile).
    #[serde(default)]
    journal_at: Option<String>,
}

/// Why a hook call could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum AgentHookError {
    #[error("cannot read the hook event: {0}")]
    BadEvent(String),
    #[error("{path}: {why}")]
    Settings { path: String, why: String },
    #[error("cannot {action} {path}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl Classify for AgentHookError {
    fn code(&self) -> &'static str {
        match self {
            AgentHookError::BadEvent(_) => "bad-hook-event",
            AgentHookError::Settings { .. } => "bad-settings",
            AgentHookError::Io { .. } => "io",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            AgentHookError::BadEvent(_) | AgentHookError::Settings { .. } => Exit::BadInput,
            AgentHookError::Io { .. } => Exit::Internal,
        }
    }
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| {
        AgentHookError::Io {
            action,
            path: path.display().to_string(),
            source,
        }
        .into()
    }
}

/// Opens the repository the harness runs in, with the recovery every command runs
/// first (see [`super::session::open`]). Not as a writer: a check or a remembered read
/// must still work while a run waits for recovery; the journal write refuses then.
pub fn open(cwd: &Path) -> Result<Repo, Error> {
    super::session::open(cwd, false).map(|(repo, _)| repo)
}

/// How long a session's turn lasts at most between its before-hook and its
/// after-hook (the harness's own write, and any permission prompt, happen in between).
pub const TURN_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

/// Answers one hook call (see the module docs).
pub fn handle(repo: &Repo, ev: &HookEvent) -> Result<Outcome, Error> {
    let mut out = answer(repo, ev)?;
    if ev.phase != Phase::Before {
        if let Some(news) = take_notices(repo, ev) {
            out.warn = Some(match out.warn.take() {
                Some(w) => format!("{w}\n{news}"),
                None => news,
            });
        }
    }
    Ok(out)
}

/// The session of a `git astedit` command an agent's shell runs (the hook put it in
/// [`SESSION_ENV`]): its events are journalled under it. Control characters escaped.
pub fn shell_session() -> Option<String> {
    let s = std::env::var(SESSION_ENV).ok()?;
    let s = crate::text::escape_line(s.trim()).into_owned();
    (!s.is_empty()).then_some(s)
}

fn answer(repo: &Repo, ev: &HookEvent) -> Result<Outcome, Error> {
    if ev.tool == ToolKind::Shell {
        return match ev.phase {
            Phase::Before => shell::before(repo, ev),
            Phase::After | Phase::Failed => shell::after(repo, ev),
        };
    }
    let Some(path) = repo_path(repo, ev) else {
        return Ok(Outcome {
            ignored: true,
            ..Outcome::default()
        });
    };
    let state_file = state_path(repo, ev, &path);
    let mut state = read_state(&state_file, &path);
    let mut out = Outcome::default();
    match (ev.phase, ev.tool) {
        (Phase::After, ToolKind::Read) => {
            let (now, bytes) = on_disk(repo, &path)?;
            if let Some(bytes) = &bytes {
                txn::keep_blob(repo, bytes)?;
            }
            state.seen = Some(now);
        }
        (Phase::Before | Phase::Failed, ToolKind::Read) => return Ok(out),
        (_, ToolKind::Shell) => return Ok(out),
        (Phase::Before, ToolKind::Write) => return before_write(repo, ev, &path, state),
        (Phase::After, ToolKind::Write) => {
            let (lock, kept) = turn_back(repo, ev, &path)?;
            let (now, bytes) = on_disk(repo, &path)?;
            if !kept {
                out.warn = written_meanwhile(repo, ev, &path, state.journal_at.as_deref());
            }
            let before = state.before.take().or_else(|| fallback_before(repo, ev));
            if let (Some(before), Some(after)) = (before, bytes) {
                out.journalled = journal_edit(repo, &lock, ev, &path, before, after)?;
            }
            state.seen = Some(now);
            state.journal_at = None;
        }
        (Phase::Failed, ToolKind::Write) => {
            // Nothing written: the turn ends, the session's view stays what it was.
            drop(turn_back(repo, ev, &path)?);
            state.before = None;
            state.journal_at = None;
        }
    }
    write_state(&state_file, &state)?;
    Ok(out)
}

/// Before an agent's own write: the check, made under the repository lock, which is
/// then kept as the session's turn until its after-hook (see the module docs).
fn before_write(
    repo: &Repo,
    ev: &HookEvent,
    path: &str,
    mut state: PathState,
) -> Result<Outcome, Error> {
    let mut out = Outcome::default();
    let lock = match txn::HookLock::take(repo) {
        Ok((lock, _)) => lock,
        Err(txn::Error::Locked { holder, .. }) => {
            out.deny = Some(format!(
                "{path} was not written: the repository stayed busy ({holder}). Nothing was \
                 changed; make the same edit again in a few seconds."
            ));
            return Ok(out);
        }
        Err(e) => return Err(e.into()),
    };
    let (now, bytes) = on_disk(repo, path)?;
    if let Some(seen) = state.seen.as_ref().filter(|s| **s != now) {
        out.deny = Some(stale_reason(path, seen, &now));
        return Ok(out);
    }
    if let Some(bytes) = &bytes {
        txn::keep_blob(repo, bytes)?;
    }
    state.before = Some(now);
    state.journal_at = txn::newest(repo, 1)?.0.first().map(event_mark);
    write_state(&state_path(repo, ev, path), &state)?;
    lock.keep_as_turn(&turn_owner(ev), path, TURN_BOUND)?;
    Ok(out)
}

/// Who a turn belongs to in the lock file: the agent as the journal names it
/// (`claude-code/session:<id>`), so that a `locked` error and `git astedit log` name a
/// session the same way.
fn turn_owner(ev: &HookEvent) -> String {
    agent_name(ev)
}

/// The lock for an after-hook: the session's turn taken back (`true`), or taken anew
/// when the turn is gone (ended at its bound, or never given).
fn turn_back(repo: &Repo, ev: &HookEvent, path: &str) -> Result<(txn::HookLock, bool), Error> {
    if let Some(lock) = txn::HookLock::take_back(repo, &turn_owner(ev), path)? {
        return Ok((lock, true));
    }
    Ok((txn::HookLock::take(repo)?.0, false))
}

/// A journal event told apart from the others near it (kind, id and time).
fn event_mark(e: &txn::Event) -> String {
    format!("{}:{}:{}", e.event.as_str(), e.id, e.time)
}

/// When a session's turn ended before its after-hook: the transactions journalled on
/// `path` since its before-hook, which its write may have overwritten, as a warning.
fn written_meanwhile(
    repo: &Repo,
    ev: &HookEvent,
    path: &str,
    since: Option<&str>,
) -> Option<String> {
    let since = since?;
    let mine = agent_name(ev);
    let here = repo.worktree_name();
    let others: Vec<String> = txn::newest(repo, 200)
        .ok()?
        .0
        .into_iter()
        .take_while(|e| event_mark(e) != since)
        // Another work tree's path of the same name is another file.
        .filter(|e| e.worktree == here && e.files.iter().any(|f| f == path))
        .filter(|e| e.agent.as_deref() != Some(mine.as_str()))
        .map(|e| {
            let who = e.agent.as_deref().unwrap_or(e.who.as_str());
            format!("{} {} by {who}", e.event.as_str(), e.id)
        })
        .collect();
    if others.is_empty() {
        return None;
    }
    Some(format!(
        "{path}: this edit took longer than {} s between its check and its write, and \
         meanwhile {} wrote the file ({}); the write may have replaced their change. Read \
         {path} again and put back what is missing.",
        TURN_BOUND.as_secs(),
        crate::text::plural(others.len(), "transaction"),
        others.join(", ")
    ))
}

/// The reason a stale write is refused, for the model.
fn stale_reason(path: &str, seen: &Seen, now: &Seen) -> String {
    let what = match (seen, now) {
        (Seen::Absent, _) => "was created by someone else",
        (_, Seen::Absent) => "was deleted",
        _ => "was changed by someone else (another agent, the user or a tool)",
    };
    format!(
        "{path} {what} since this session last read it, so this edit would be made on old \
         content and could undo their change. Nothing was written. Read {path} again, then \
         make the edit on what it holds now."
    )
}

/// What the file held before the tool, when no before-hook kept it: the harness's
/// copy of the original, or nothing for a file the tool created.
fn fallback_before(repo: &Repo, ev: &HookEvent) -> Option<Seen> {
    if ev.created {
        return Some(Seen::Absent);
    }
    let original = ev.original.as_ref()?;
    txn::keep_blob(repo, original.as_bytes())
        .ok()
        .map(|id| Seen::Blob(id.to_string()))
}

/// Journals the edit of `path` from `before` to `after` as an applied transaction.
fn journal_edit(
    repo: &Repo,
    lock: &txn::HookLock,
    ev: &HookEvent,
    path: &str,
    before: Seen,
    after: Vec<u8>,
) -> Result<Option<String>, Error> {
    let mode = file_mode(repo, path);
    let before = match before {
        Seen::Absent => None,
        Seen::Blob(id) => {
            let Ok(id) = gix::ObjectId::from_hex(id.as_bytes()) else {
                return Ok(None);
            };
            if !txn::has_blob(repo, id) {
                return Ok(None);
            }
            Some(FileContent {
                bytes: txn::blob(repo, id)?,
                mode,
            })
        }
    };
    if before.as_ref().is_some_and(|b| b.bytes == after) {
        return Ok(None);
    }
    let changes = ChangeSet {
        changes: vec![FileChange {
            path: path.to_string(),
            before,
            after: Some(FileContent { bytes: after, mode }),
        }],
    };
    let agent = agent_name(ev);
    let meta = PreviewMeta {
        kind: PreviewKind::Hook,
        summary: format!("{} of {path} by {agent}", ev.tool_name),
        reason: Some(format!("{} by {agent}", ev.tool_name)),
        files: vec![FileMeta {
            path: path.to_string(),
            count: 1,
            flags: Vec::new(),
        }],
        replacements: 1,
        agent: Some(agent),
        details: serde_json::json!({"hook": {"harness": ev.harness.name(),
                                             "session": ev.session, "tool": ev.tool_name}}),
        ..PreviewMeta::default()
    };
    Ok(Some(lock.record_applied(repo, &changes, &meta)?))
}

/// The agent as the journal names it: the harness and the session, control
/// characters escaped (the session id is the harness's text).
fn agent_name(ev: &HookEvent) -> String {
    let session: String = ev
        .session
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    format!("{}/session:{session}", ev.harness.name())
}

fn file_mode(repo: &Repo, path: &str) -> FileMode {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(repo.abs_path(path)) {
            if m.permissions().mode() & 0o111 != 0 {
                return FileMode::Executable;
            }
        }
    }
    let _ = (repo, path);
    FileMode::Regular
}

/// The repository path of the event's file; `None` outside the work tree or in `.git`.
fn repo_path(repo: &Repo, ev: &HookEvent) -> Option<String> {
    let abs = if ev.path.is_absolute() {
        ev.path.clone()
    } else {
        ev.cwd.join(&ev.path)
    };
    // The folder is canonical (symlinks resolved), as the work-tree root is; the file
    // itself may not exist yet.
    let parent = abs.parent()?.canonicalize().ok()?;
    let full = parent.join(abs.file_name()?);
    let rel = full.strip_prefix(&repo.workdir).ok()?;
    let rel = rel.to_str()?.replace('\\', "/");
    if rel.is_empty() || rel == ".git" || rel.starts_with(".git/") {
        return None;
    }
    Some(rel)
}

/// What the file holds now, and its bytes when it is a file.
fn on_disk(repo: &Repo, path: &str) -> Result<(Seen, Option<Vec<u8>>), Error> {
    let abs = repo.abs_path(path);
    match std::fs::read(&abs) {
        Ok(bytes) => {
            let id = gix::objs::compute_hash(repo.git.object_hash(), gix::objs::Kind::Blob, &bytes)
                .map_err(|e| AgentHookError::BadEvent(e.to_string()))?;
            Ok((Seen::Blob(id.to_string()), Some(bytes)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Seen::Absent, None)),
        // A folder, or unreadable: nothing we can compare.
        Err(e) => Err(io("read", &abs)(e)),
    }
}

/// The folder of a session's state: `<git dir>/astedit-agents/<digest of harness and
/// session>` (the session id is the harness's text, not a safe file name).
fn session_dir(repo: &Repo, ev: &HookEvent) -> PathBuf {
    session_dir_of(repo, ev.harness.name(), &ev.session)
}

fn session_dir_of(repo: &Repo, harness: &str, session: &str) -> PathBuf {
    repo.git_dir
        .join("astedit-agents")
        .join(digest(&format!("{harness}\0{session}")))
}

/// Leaves `text` for the session the journal names `agent` (`HARNESS/session:ID`),
/// said to it at its next hook call after a tool ([`take_notices`]).
fn notify(repo: &Repo, agent: &str, text: &str) -> Result<(), Error> {
    let Some((harness, session)) = agent.split_once("/session:") else {
        return Ok(());
    };
    let dir = session_dir_of(repo, harness, session);
    std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
    let file = dir.join("notices.txt");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .map_err(io("open", &file))?;
    use std::io::Write as _;
    writeln!(f, "{}", crate::text::escape_line(text)).map_err(io("write", &file))
}

/// What other sessions left for `ev`'s ([`notify`]), taken.
fn take_notices(repo: &Repo, ev: &HookEvent) -> Option<String> {
    let file = session_dir(repo, ev).join("notices.txt");
    let taken = file.with_extension(format!("taken{}", std::process::id()));
    std::fs::rename(&file, &taken).ok()?;
    let text = std::fs::read_to_string(&taken).ok();
    let _ = std::fs::remove_file(&taken);
    text.map(|t| t.trim_end().to_string())
        .filter(|t| !t.is_empty())
}

fn state_path(repo: &Repo, ev: &HookEvent, path: &str) -> PathBuf {
    session_dir(repo, ev).join(format!("{}.json", digest(path)))
}

fn digest(s: &str) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(s.as_bytes());
    d.iter().take(10).map(|b| format!("{b:02x}")).collect()
}

/// The state kept for `path`, or a fresh one (a damaged file is started over: it only
/// ever makes the check weaker, never loses an edit).
fn read_state(file: &Path, path: &str) -> PathState {
    std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice::<PathState>(&b).ok())
        .filter(|s| s.path == path)
        .unwrap_or_else(|| PathState {
            path: path.to_string(),
            ..PathState::default()
        })
}

/// Writes the state whole (a temp file renamed over it): two hooks of one session at
/// once leave one of their states, never a torn one.
fn write_state(file: &Path, state: &PathState) -> Result<(), Error> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    let body = serde_json::to_vec(state).map_err(|e| AgentHookError::BadEvent(e.to_string()))?;
    let temp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temp, body).map_err(io("write", &temp))?;
    std::fs::rename(&temp, file).map_err(io("rename", &temp))
}

/// What `install` wrote.
#[derive(Debug, Clone)]
pub struct Installed {
    pub path: PathBuf,
    /// It already held our hooks: nothing was changed.
    pub unchanged: bool,
}

/// The command a harness runs for its hooks.
pub const CLAUDE_COMMAND: &str = "git astedit agent-hook claude-code";

/// The OpenCode plugin we ship (written by `install`).
pub const OPENCODE_PLUGIN: &str = include_str!("agent_hook/opencode-plugin.js");

/// Writes the harness's configuration into the work tree (see the module docs).
pub fn install(repo: &Repo, harness: Harness) -> Result<Installed, Error> {
    match harness {
        Harness::ClaudeCode => install_claude(&repo.workdir.join(".claude/settings.json")),
        Harness::Codex => Err(AgentHookError::Settings {
            path: "~/.codex/config.toml".into(),
            why: "not written by install: add the [[hooks.PreToolUse]] and \
                  [[hooks.PostToolUse]] entries the guide's Codex page shows"
                .into(),
        }
        .into()),
        Harness::OpenCode => {
            let path = repo.workdir.join(".opencode/plugin/git-astedit.js");
            let unchanged = std::fs::read_to_string(&path).is_ok_and(|t| t == OPENCODE_PLUGIN);
            if !unchanged {
                let dir = path.parent().unwrap_or(Path::new("."));
                std::fs::create_dir_all(dir).map_err(io("create", dir))?;
                std::fs::write(&path, OPENCODE_PLUGIN).map_err(io("write", &path))?;
            }
            Ok(Installed { path, unchanged })
        }
    }
}

/// Adds our two hook entries to Claude Code's settings at `path`, keeping everything
/// else in it; a file that is not a JSON object is refused, not replaced.
fn install_claude(path: &Path) -> Result<Installed, Error> {
    let bad = |why: String| AgentHookError::Settings {
        path: path.display().to_string(),
        why,
    };
    let mut settings = match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => serde_json::json!({}),
        Ok(text) => serde_json::from_str::<serde_json::Value>(&text)
            .map_err(|e| bad(format!("not valid JSON ({e}); nothing was changed")))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(e) => return Err(io("read", path)(e)),
    };
    let changed = add_claude_hooks(&mut settings).map_err(bad)?;
    if changed {
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io("create", dir))?;
        let mut text = serde_json::to_string_pretty(&settings)
            .map_err(|e| bad(format!("cannot encode: {e}")))?;
        text.push('\n');
        std::fs::write(path, text).map_err(io("write", path))?;
    }
    Ok(Installed {
        path: path.to_path_buf(),
        unchanged: !changed,
    })
}

/// Adds the PreToolUse, PostToolUse and PostToolUseFailure entries that run
/// [`CLAUDE_COMMAND`] unless an entry of that event already runs it (whose matcher is
/// then brought up to ours: older installs did not match `Bash`). Returns whether
/// anything changed.
fn add_claude_hooks(settings: &mut serde_json::Value) -> Result<bool, String> {
    let root = settings
        .as_object_mut()
        .ok_or("the settings are not a JSON object; nothing was changed")?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()
        .ok_or("`hooks` is not a JSON object; nothing was changed")?;
    let mut changed = false;
    for (event, matcher) in [
        ("PreToolUse", "Edit|MultiEdit|Write|Bash"),
        ("PostToolUse", "Read|Edit|MultiEdit|Write|Bash"),
        ("PostToolUseFailure", "Edit|MultiEdit|Write|Bash"),
    ] {
        let list = hooks
            .entry(event)
            .or_insert_with(|| serde_json::json!([]))
            .as_array_mut()
            .ok_or(format!(
                "`hooks.{event}` is not a list; nothing was changed"
            ))?;
        let ours = list.iter_mut().find(|entry| {
            entry["hooks"]
                .as_array()
                .is_some_and(|h| h.iter().any(|c| c["command"] == CLAUDE_COMMAND))
        });
        if let Some(entry) = ours {
            if entry["matcher"] != matcher {
                entry["matcher"] = serde_json::json!(matcher);
                changed = true;
            }
        } else {
            list.push(serde_json::json!({
                "matcher": matcher,
                "hooks": [{"type": "command", "command": CLAUDE_COMMAND}],
            }));
            changed = true;
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_settings_are_merged_once() {
        let mut s = serde_json::json!({
            "model": "x",
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]}
        });
        assert!(add_claude_hooks(&mut s).unwrap());
        assert_eq!(s["model"], "x");
        assert_eq!(s["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(s["hooks"]["PreToolUse"][0]["matcher"], "Bash");
        assert_eq!(
            s["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
            CLAUDE_COMMAND
        );
        assert!(!add_claude_hooks(&mut s).unwrap());
        assert!(add_claude_hooks(&mut serde_json::json!([])).is_err());
    }
}
