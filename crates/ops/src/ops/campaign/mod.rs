/*!
Campaigns (issue 27): one change across many repositories, each staged as a preview
in its own checkout by the same ops as `edit`, `scan --stage` and `patch`, published
as a pull request by [`super::pr`], re-derived by [`super::refresh`], applied and
undone by [`super::apply`] and [`super::undo`].

The campaign's state lives in git, in a state repository (the current one by
default): the ref `refs/astedit-campaign/<name>` points at a chain of commits whose
tree holds one JSON blob per repository ([`RepoState`], named by its key). Every
change of state is a commit, so the history is the audit trail (and the burndown), and
the state can be pushed and fetched like any ref. A sharded stage writes
`refs/astedit-campaign-shards/<name>/<I>-of-<N>`; `collect` merges the shards.

Every child process is `git` (or `gh`, through [`super::pr`]) with an argument vector:
no shell, `--` before URLs and paths, and URLs or branches starting with `-` refused.
*/

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use crate::change::FileMode;
use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
use crate::report::campaign::CampaignReport;
use crate::report::campaign::CampaignSpec;
use crate::report::campaign::RepoOutcome;
use crate::report::campaign::RepoSpec;
use crate::report::campaign::RepoState;
use crate::report::campaign::Totals;
use crate::report::Version;
use crate::txn;
use crate::Error;

mod clone;
mod local;
mod merge;
mod pool;
mod publish;
mod run_change;
mod stage;
mod status;
mod targets;
mod vouch;

pub use clone::Checkouts;
pub use local::apply;
pub use local::collect;
pub use local::matrix;
pub use local::undo;
pub use merge::merge;
pub use pool::DEFAULT_AT_ONCE;
pub use publish::publish;
pub use publish::refresh;
pub use publish::PublishRequest;
pub use stage::stage;
pub use stage::StageRequest;
pub use status::status;
pub use status::StatusRequest;
pub use targets::dry_run;
pub use targets::with_targets;

/// Why a campaign command could not run at all (one repository's trouble is recorded
/// in the state instead).
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error("cannot read the campaign spec {path}: {why}")]
    Spec { path: String, why: String },
    #[error("campaign {0} has no state yet: run `git astedit campaign stage SPEC` first")]
    NoState(String),
    #[error("cannot {0}")]
    Git(String),
    #[error("the campaign state moved while this run recorded it (another run?): {0}")]
    Concurrent(String),
    #[error("bad --shard '{0}': give I/N with 1 ≤ I ≤ N")]
    Shard(String),
    /// A folder at a clone's place that the campaign did not make.
    #[error("{path} is not a clone a campaign made ({why}): it was left as it is")]
    NotOurs { path: String, why: String },
    /// A campaign clone whose work tree someone changed.
    #[error("the campaign clone {path} has changes ({what}): they were left as they are")]
    Dirty { path: String, what: String },
    #[error("there is no campaign clone at {0}")]
    NoClone(String),
    #[error("the spec names no repository '{0}'")]
    NotInSpec(String),
}

impl Classify for CampaignError {
    fn code(&self) -> &'static str {
        match self {
            CampaignError::Spec { .. } => "bad-campaign-spec",
            CampaignError::NoState(_) => "no-campaign-state",
            CampaignError::Git(_) => "git",
            CampaignError::Concurrent(_) => "concurrent",
            CampaignError::Shard(_) => "usage",
            CampaignError::NotOurs { .. } => "not-campaign-clone",
            CampaignError::Dirty { .. } => "dirty-clone",
            CampaignError::NoClone(_) => "no-campaign-clone",
            CampaignError::NotInSpec(_) => "not-in-spec",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            CampaignError::Spec { .. } | CampaignError::NoState(_) | CampaignError::Shard(_) => {
                Exit::BadInput
            }
            CampaignError::NoClone(_) | CampaignError::NotInSpec(_) => Exit::BadInput,
            CampaignError::NotOurs { .. } | CampaignError::Dirty { .. } => Exit::Refused,
            CampaignError::Concurrent(_) => Exit::Locked,
            CampaignError::Git(_) => Exit::Internal,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            CampaignError::Concurrent(_) => Some("run the same command again".into()),
            CampaignError::NotOurs { .. } => {
                Some("give the campaign another --workspace, or move the folder away".into())
            }
            CampaignError::Dirty { .. } => Some(
                "commit, stash or remove them, or remove the clone (a rerun clones it again)"
                    .into(),
            ),
            CampaignError::NoClone(_) => Some(
                "run `campaign stage` first, and give every command the same --workspace".into(),
            ),
            _ => None,
        }
    }
}

fn git_fail<E: std::fmt::Display>(what: impl Into<String>) -> impl FnOnce(E) -> CampaignError {
    let what = what.into();
    move |e| CampaignError::Git(format!("{what}: {e}"))
}

/// A spec read and checked, its repositories keyed.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub spec: CampaignSpec,
    /// The spec's folder: relative paths in it are relative to this.
    pub dir: PathBuf,
    /// Every repository with its key, in spec order (then the listing file's order).
    pub repos: Vec<(String, RepoSpec)>,
}

impl Loaded {
    pub fn branch(&self) -> String {
        self.spec
            .pr
            .branch
            .clone()
            .unwrap_or_else(|| format!("astedit/{}", self.spec.name))
    }
    pub fn resolve(&self, p: &str) -> PathBuf {
        self.dir.join(p)
    }
    /// How many repositories to work on at once: `asked` (`--at-once`), else the
    /// spec's `at_once`, else [`DEFAULT_AT_ONCE`].
    pub fn at_once(&self, asked: Option<usize>) -> usize {
        asked
            .or(self.spec.at_once)
            .unwrap_or(DEFAULT_AT_ONCE)
            .max(1)
    }
}

/// Reads and checks a spec.
pub fn load_spec(path: &Path) -> Result<Loaded, Error> {
    let bad = |why: String| CampaignError::Spec {
        path: path.display().to_string(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let spec: CampaignSpec =
        toml::from_str(&text).map_err(|e| bad(e.to_string().trim_end().to_string()))?;
    if spec.name.is_empty()
        || spec.name.starts_with(['-', '.'])
        || !spec
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        || spec.name.contains("..")
    {
        return Err(bad(format!(
            "name '{}' must be letters, digits, '-', '_' or '.' (it names a ref)",
            spec.name
        ))
        .into());
    }
    if spec.at_once == Some(0) {
        return Err(bad("at_once must be at least 1".into()).into());
    }
    let c = &spec.change;
    let kinds = usize::from(!c.ops.is_empty())
        + usize::from(c.rules.is_some())
        + usize::from(c.patch.is_some())
        + usize::from(c.run.is_some());
    if kinds != 1 {
        return Err(bad("[change] needs exactly one of ops, rules, patch or run".into()).into());
    }
    run_change::check(c).map_err(bad)?;
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let mut specs = spec.repos.clone();
    if let Some(list) = &spec.repos_file {
        let listed =
            read_repos_file(&dir.join(list)).map_err(|e| bad(format!("repos_file {list}: {e}")))?;
        for line in listed.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            let mut words = line.split_whitespace();
            if let Some(url) = words.next() {
                specs.push(RepoSpec {
                    url: Some(url.to_string()),
                    base: words.next().map(str::to_string),
                    ..Default::default()
                });
            }
        }
    }
    let mut repos: Vec<(String, RepoSpec)> = Vec::new();
    for (i, r) in specs.into_iter().enumerate() {
        let source = match (&r.url, &r.path) {
            (Some(u), None) => u.clone(),
            (None, Some(p)) => p.clone(),
            _ => {
                return Err(bad(format!(
                    "repository {} needs exactly one of url or path",
                    i + 1
                ))
                .into())
            }
        };
        let base = r
            .name
            .clone()
            .unwrap_or_else(|| key_of(&source).unwrap_or_else(|| format!("repo-{}", i + 1)));
        let base = sanitize(&base);
        let mut key = base.clone();
        let mut n = 2;
        while repos.iter().any(|(k, _)| *k == key) {
            key = format!("{base}-{n}");
            n += 1;
        }
        repos.push((key, r));
    }
    Ok(Loaded { spec, dir, repos })
}

/// The most a `repos_file` may hold: 1 MiB (some ten thousand `URL BASE` lines).
pub const REPOS_FILE_MAX: u64 = 1 << 20;

/// Reads a `repos_file`: a regular file of at most [`REPOS_FILE_MAX`] bytes, checked
/// before anything is read — a device (`/dev/zero`), a FIFO (opened without waiting for
/// a writer) or a larger file is refused, and no more than the bound is ever read.
fn read_repos_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(
            "not a regular file: refused (give a file listing one URL [BASE] a line)".into(),
        );
    }
    let too_big = || {
        format!(
            "larger than {} MiB: refused (split the campaign, or list fewer repositories)",
            REPOS_FILE_MAX >> 20
        )
    };
    if meta.len() > REPOS_FILE_MAX {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(REPOS_FILE_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > REPOS_FILE_MAX {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

/// The last component of a URL or path, without `.git`.
pub(super) fn key_of(source: &str) -> Option<String> {
    let trimmed = source.trim_end_matches(['/', '\\']);
    let last = trimmed.rsplit(['/', '\\', ':']).next()?;
    let last = last.strip_suffix(".git").unwrap_or(last);
    (!last.is_empty()).then(|| last.to_string())
}

/// A key usable as a tree entry and a folder name.
pub(super) fn sanitize(key: &str) -> String {
    let mut s: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.starts_with(['.', '-']) || s.is_empty() {
        s.insert(0, 'r');
    }
    s
}

/// Refuses a value a child would read as an option (or that no URL, path or branch has).
pub fn plain(what: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        Err(format!("{what} is empty"))
    } else if value.starts_with('-') {
        Err(format!(
            "{what} '{value}' starts with '-' and would be read as an option: refused"
        ))
    } else if value.chars().any(|c| c.is_control()) {
        Err(format!("{what} holds a control character: refused"))
    } else {
        Ok(())
    }
}

/// Runs `git ARGS` in `dir` (no shell, no prompts); stdout, or the error text. The
/// variables that point git at another repository (`git --git-dir=… astedit` sets
/// them) are dropped: the repository is the one `dir` holds.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut cmd = Command::new("git");
    for var in crate::repo::REPOSITORY_VARS {
        cmd.env_remove(var);
    }
    // A `git clone` or fetch ends with a run killed outright, removing what it was
    // making, instead of racing the rerun.
    crate::cancel::end_with_parent(&mut cmd, crate::cancel::ParentDeath::Term);
    let out = cmd
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let err = err.trim();
        Err(format!(
            "`git {}` failed{}",
            args.first().copied().unwrap_or(""),
            if err.is_empty() {
                String::new()
            } else {
                format!(": {}", crate::text::one_line(err))
            }
        ))
    }
}

pub fn state_ref(name: &str) -> String {
    format!("refs/astedit-campaign/{name}")
}

pub fn shard_prefix(name: &str) -> String {
    format!("refs/astedit-campaign-shards/{name}/")
}

/// The campaign's state: the commit the ref points at, and every repository's entry.
#[derive(Debug, Clone, Default)]
pub struct State {
    pub refname: String,
    pub commit: Option<gix::ObjectId>,
    pub repos: BTreeMap<String, RepoState>,
}

fn ref_target(repo: &Repo, refname: &str) -> Result<Option<gix::ObjectId>, Error> {
    match repo
        .git
        .try_find_reference(refname)
        .map_err(git_fail(format!("read {refname}")))?
    {
        Some(mut r) => Ok(Some(
            r.peel_to_id()
                .map_err(git_fail(format!("read {refname}")))?
                .detach(),
        )),
        None => Ok(None),
    }
}

/// The entries of state commit `commit`.
fn entries_at(repo: &Repo, commit: gix::ObjectId) -> Result<BTreeMap<String, RepoState>, Error> {
    let what = format!("read campaign state {commit}");
    let c = repo
        .git
        .find_commit(commit)
        .map_err(git_fail(what.clone()))?;
    let tree = c.tree().map_err(git_fail(what.clone()))?;
    let mut out = BTreeMap::new();
    for entry in tree.iter() {
        let entry = entry.map_err(git_fail(what.clone()))?;
        let name = entry.filename().to_string();
        let Some(key) = name.strip_suffix(".json") else {
            continue;
        };
        let blob = txn::blob(repo, entry.oid().to_owned())?;
        let state: RepoState = serde_json::from_slice(&blob)
            .map_err(|e| CampaignError::Git(format!("read the state of {key}: {e}")))?;
        out.insert(key.to_string(), state);
    }
    Ok(out)
}

/// The state at `refname` (empty when the ref does not exist).
pub fn read_state(repo: &Repo, refname: &str) -> Result<State, Error> {
    let commit = ref_target(repo, refname)?;
    let repos = match commit {
        Some(c) => entries_at(repo, c)?,
        None => BTreeMap::new(),
    };
    Ok(State {
        refname: refname.to_string(),
        commit,
        repos,
    })
}

/// Records `changed` entries as one state commit on top of the state's (the ref moves
/// only if it still points where this run read it).
pub fn record(
    repo: &Repo,
    state: &mut State,
    changed: &[RepoState],
    message: &str,
    extra_parents: &[gix::ObjectId],
) -> Result<gix::ObjectId, Error> {
    let mut blobs = Vec::with_capacity(changed.len());
    for s in changed {
        let json = serde_json::to_vec_pretty(s)
            .map_err(|e| CampaignError::Git(format!("encode the state of {}: {e}", s.key)))?;
        let id = repo
            .git
            .write_blob(&json)
            .map_err(git_fail("write a state blob"))?
            .detach();
        blobs.push((format!("{}.json", s.key), id));
    }
    let edits: Vec<(&str, Option<(gix::ObjectId, FileMode)>)> = blobs
        .iter()
        .map(|(p, id)| (p.as_str(), Some((*id, FileMode::Regular))))
        .collect();
    // Shards' tips, when given, are further parents (a merge of shards). Signed by git
    // when previews are (a collector verifies them in `merge`). Who made it is said in
    // it, as a preview says it: a claim, which a signature backs.
    let full = format!("{}\n\n{}", message.trim_end(), made_by(repo));
    let new = txn::write_state_commit(repo, state.commit, extra_parents, &edits, &full)?;
    let previous = match state.commit {
        Some(p) => txn::RefWas::At(p),
        None => txn::RefWas::Absent,
    };
    let moved = txn::set_ref(
        repo,
        &state.refname,
        new,
        previous,
        &format!("astedit campaign: {}", crate::text::first_line(message)),
        "campaign",
    );
    match moved {
        Err(txn::Error::Concurrent(_)) => {
            return Err(CampaignError::Concurrent(state.refname.clone()).into())
        }
        other => other?,
    }
    state.commit = Some(new);
    for s in changed {
        state.repos.insert(s.key.clone(), s.clone());
    }
    Ok(new)
}

/// The trailer naming who records a state commit: the git identity, as a preview's
/// `made_by` and the journal's events name it (campaigns have no agent: no MCP tool
/// runs them).
fn made_by(repo: &Repo) -> String {
    let sig = repo.signature();
    format!(
        "Astedit-Made-By: {}\n",
        crate::text::escape_line(&format!("{} <{}>", sig.name, sig.email))
    )
}

pub fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    crate::text::rfc3339(secs)
}

/// The report of a campaign command that went over the repositories.
pub(super) fn report(
    loaded: &Loaded,
    command: &str,
    state: &State,
    outcomes: Vec<RepoOutcome>,
    notes: Vec<String>,
) -> CampaignReport {
    CampaignReport {
        schema_version: Version,
        name: loaded.spec.name.clone(),
        command: command.into(),
        state_commit: state.commit.map(|c| c.to_string()),
        totals: totals(state.repos.values()),
        outcomes,
        notes,
    }
}

pub fn totals<'a>(states: impl IntoIterator<Item = &'a RepoState>) -> Totals {
    let mut t = Totals::new();
    for s in states {
        *t.entry(s.status).or_insert(0) += 1;
    }
    t
}

pub fn outcome(s: &RepoState, action: &str, note: Option<String>) -> RepoOutcome {
    RepoOutcome {
        key: s.key.clone(),
        action: action.into(),
        status: s.status,
        note,
    }
}

/// `--shard I/N`, 1-based.
pub fn parse_shard(text: &str) -> Result<(usize, usize), Error> {
    let bad = || CampaignError::Shard(text.to_string());
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(bad().into());
    }
    Ok((i, n))
}

/// Whether the repository at `order` belongs to shard `i` of `n`.
pub fn in_shard(order: usize, shard: Option<(usize, usize)>) -> bool {
    match shard {
        Some((i, n)) => order % n == i - 1,
        None => true,
    }
}

/// A template with the campaign's placeholders filled in.
pub fn fill(template: &str, name: &str, s: &RepoState) -> String {
    template
        .replace("{name}", name)
        .replace("{repo}", &s.key)
        .replace("{base}", s.base.as_deref().unwrap_or(""))
        .replace("{files}", &s.file_count.to_string())
        .replace("{replacements}", &s.replacements.to_string())
        .replace("{preview}", s.preview.as_deref().unwrap_or(""))
}

/// The default workspace: `$XDG_CACHE_HOME/git-astedit/campaigns/<name>` (else under
/// `~/.cache`).
pub fn default_workspace(name: &str) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("git-astedit").join("campaigns").join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_from_the_last_component() {
        assert_eq!(key_of("/srv/git/app.git").as_deref(), Some("app"));
        assert_eq!(key_of("https://x.org/a/b/").as_deref(), Some("b"));
        assert_eq!(key_of("git@host:team/lib.git").as_deref(), Some("lib"));
        assert_eq!(sanitize("-x y"), "r-x-y");
    }

    #[test]
    fn shards_partition_the_repositories() {
        assert_eq!(parse_shard("2/3").unwrap(), (2, 3));
        assert!(parse_shard("0/3").is_err());
        assert!(parse_shard("4/3").is_err());
        let all: Vec<usize> = (0..10)
            .filter(|o| (1..=3).any(|i| in_shard(*o, Some((i, 3)))))
            .collect();
        assert_eq!(all.len(), 10);
        assert!(plain("url", "--upload-pack=x").is_err());
    }
}
