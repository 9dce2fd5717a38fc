/*!
Opening the repository and translating paths.

Every command works from any folder inside the work tree, like git's own: paths the
user types are relative to the current folder, paths we print are relative to it too.
Inside the library a file is named by its *repository path*: relative to the work-tree
root, `/`-separated, normalized, never empty, never escaping the tree.
*/

use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

use crate::error::Classify;
use crate::error::Exit;

/// The variables that point git at another repository than the one it runs in (`git
/// --git-dir=… astedit` sets them): dropped for a git started on a repository we name.
pub const REPOSITORY_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_QUARANTINE_PATH",
    "GIT_CONFIG",
];

/// Fallback identity used when no `user.name`/`user.email` is configured: staging must
/// never fail for lack of an identity.
pub const FALLBACK_NAME: &str = "git-astedit";
pub const FALLBACK_EMAIL: &str = "git-astedit@localhost";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("not a git repository (or any parent up to the root): {}", .0.display())]
    /// The cause is kept only when it is more than "none found" (an unreadable folder,
    /// say): the message says that much already.
    NotARepository(PathBuf, #[source] Option<Box<gix::Error>>),
    #[error("cannot open the git repository at {}", .0.display())]
    Open(PathBuf, #[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("{} is a bare repository: git astedit needs a work tree", .0.display())]
    Bare(PathBuf),
    #[error("{} uses the reftable ref format, which git astedit cannot read or update safely", .0.display())]
    Reftable(PathBuf),
    #[error("path '{path}' is outside the repository at {}", .workdir.display())]
    OutsideRepository { path: String, workdir: PathBuf },
    #[error("path '{0}' is not valid UTF-8")]
    NonUtf8Path(String),
    #[error("cannot read the current directory")]
    Cwd(#[source] std::io::Error),
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::NotARepository(..) => "not-a-repository",
            Error::Open(..) => "repository-open",
            Error::Bare(..) => "bare-repository",
            Error::Reftable(..) => "reftable-repository",
            Error::OutsideRepository { .. } => "outside-repository",
            Error::NonUtf8Path(..) => "non-utf8-path",
            Error::Cwd(..) => "io",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::OutsideRepository { .. } => Exit::Refused,
            Error::Cwd(..) => Exit::Internal,
            _ => Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::NotARepository(..) => {
                Some("run inside a git work tree, or pass -C <dir>".to_string())
            }
            Error::Reftable(..) => Some(
                "convert it with `git refs migrate --ref-format=files` to use git astedit"
                    .to_string(),
            ),
            _ => None,
        }
    }
}

/// An open repository with a work tree, plus where the user stands in it.
pub struct Repo {
    pub git: gix::Repository,
    /// The work-tree root, absolute and canonical.
    pub workdir: PathBuf,
    /// This work tree's git dir (`.git`, or `.git/worktrees/<name>` for linked ones).
    pub git_dir: PathBuf,
    /// The git dir shared by all work trees (refs, objects).
    pub common_dir: PathBuf,
    /// The current folder, canonical.
    pub cwd: PathBuf,
    /// The current folder relative to the work-tree root: `""` at the top, else `"a/b"`.
    /// `None` when the current folder is outside the work tree (GIT_WORK_TREE elsewhere).
    pub prefix: Option<String>,
}

impl Repo {
    /// Opens the repository containing the current folder, honouring `GIT_DIR` and
    /// `GIT_WORK_TREE` like git does.
    pub fn discover() -> Result<Repo, Error> {
        let cwd = std::env::current_dir().map_err(Error::Cwd)?;
        Self::discover_from(&cwd)
    }

    /// Opens the repository containing `cwd` (which is treated as the user's folder).
    pub fn discover_from(cwd: &Path) -> Result<Repo, Error> {
        let git = match gix::discover_with_environment_overrides(cwd) {
            Ok(repo) => repo,
            Err(e) if std::env::var_os("GIT_DIR").is_some() => {
                return Err(Error::Open(cwd.to_path_buf(), Box::new(e)))
            }
            Err(e) => {
                use gix::discover::upwards::Error as Upwards;
                let none_found = matches!(
                    e.downcast_any_ref::<Upwards>(),
                    Some(
                        Upwards::NoGitRepository { .. }
                            | Upwards::NoGitRepositoryWithinCeiling { .. }
                            | Upwards::NoGitRepositoryWithinFs { .. }
                    )
                );
                let cause = (!none_found).then(|| Box::new(e));
                return Err(Error::NotARepository(cwd.to_path_buf(), cause));
            }
        };
        let git_dir = git.git_dir().to_path_buf();
        if is_reftable(&git) {
            return Err(Error::Reftable(git_dir));
        }
        let Some(workdir) = git.workdir() else {
            return Err(Error::Bare(git_dir));
        };
        let workdir = canonical(workdir);
        let cwd = canonical(cwd);
        let prefix = cwd.strip_prefix(&workdir).ok().map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")
        });
        let common_dir = canonical(git.common_dir());
        Ok(Repo {
            git_dir: canonical(&git_dir),
            common_dir,
            git,
            workdir,
            cwd,
            prefix,
        })
    }

    /// Turns a path the user typed (relative to the current folder, or absolute) into a
    /// repository path. `"."` at the root gives `""`.
    pub fn repo_path_from_arg(&self, arg: &str) -> Result<String, Error> {
        let joined = self.cwd.join(arg);
        let mut parts: Vec<String> = Vec::new();
        for comp in joined.components() {
            match comp {
                Component::Prefix(_) | Component::RootDir => parts.clear(),
                Component::CurDir => {}
                Component::ParentDir => {
                    parts.pop();
                }
                Component::Normal(s) => match s.to_str() {
                    Some(s) => parts.push(s.to_string()),
                    None => return Err(Error::NonUtf8Path(arg.to_string())),
                },
            }
        }
        let abs: PathBuf = std::iter::once("/".to_string()).chain(parts).collect();
        // Resolve symlinked ancestors (e.g. /tmp -> /private/tmp) the way `workdir` was.
        let abs = canonical_prefix(&abs);
        match abs.strip_prefix(&self.workdir) {
            Ok(rel) => Ok(rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/")),
            Err(_) => Err(Error::OutsideRepository {
                path: arg.to_string(),
                workdir: self.workdir.clone(),
            }),
        }
    }

    /// How text output quotes paths, from `core.quotePath` (default true): a plain
    /// value handed to printers, which never open the repository.
    pub fn quoting(&self) -> crate::text::Quoting {
        let non_ascii = self
            .git
            .config_snapshot()
            .boolean("core.quotePath")
            .unwrap_or(true);
        crate::text::Quoting { non_ascii }
    }

    /// Renders a repository path relative to the current folder, like `git grep` does.
    pub fn display_path(&self, repo_path: &str) -> String {
        self.path_display().show(repo_path)
    }

    /// How this repository writes paths for the user: [`Repo::display_path`] for
    /// threads (a `Repo` is not `Sync`).
    pub fn path_display(&self) -> PathDisplay<'_> {
        PathDisplay {
            workdir: &self.workdir,
            prefix: self.prefix.as_deref(),
        }
    }

    /// Which work tree this is: `None` for the main one, else the linked worktree's
    /// name as git knows it (the folder under `<common git dir>/worktrees/`; a lane's
    /// is the lane's name). Journal events record it.
    pub fn worktree_name(&self) -> Option<String> {
        if self.git_dir == self.common_dir {
            return None;
        }
        Some(
            self.git_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        )
    }

    /// The absolute path of a repository path.
    pub fn abs_path(&self, repo_path: &str) -> PathBuf {
        self.workdir.join(repo_path)
    }

    /// The identity for preview and journal commits: the user's, or a fixed fallback.
    pub fn signature(&self) -> gix::actor::Signature {
        let mut git = self.git.clone();
        match git.committer_or_set_fallback(FALLBACK_NAME, FALLBACK_EMAIL) {
            Ok(sig) => sig.to_owned().unwrap_or_else(|_| fallback_signature()),
            Err(_) => fallback_signature(),
        }
    }

    /// A git config value as git reads it for `git config KEY`: `git -c KEY=VALUE`
    /// (`GIT_CONFIG_PARAMETERS`) first, then the config files. `Some(None)` is a key
    /// set without a value (`[pager] show`), which git reads as true. For the front
    /// ends' settings (colour, pager).
    pub fn config_value(&self, key: &str) -> Option<Option<String>> {
        if let Some(v) = command_line_config(key) {
            return Some(v);
        }
        let snapshot = self.git.config_snapshot();
        snapshot
            .plumbing()
            .string_implicit(key)
            .map(|v| v.map(|v| v.to_string()))
    }

    /// Like [`Repo::config_value`], but only from `git -c` and this repository's own
    /// config files (`.git/config`, the worktree's `config.worktree`): never the
    /// global, system or XDG files, which every clone shares. For settings that must
    /// be the repository owner's choice (`astedit.customLanguages`).
    pub fn local_config_value(&self, key: &str) -> Option<String> {
        if let Some(v) = command_line_config(key) {
            return v;
        }
        let snapshot = self.git.config_snapshot();
        snapshot
            .plumbing()
            .string_filter(key, |meta| {
                matches!(
                    meta.source,
                    gix::config::Source::Local | gix::config::Source::Worktree
                )
            })
            .map(|v| v.to_string())
    }

    /// The commit HEAD points to, `None` on an unborn branch.
    pub fn head_commit(&self) -> Option<gix::ObjectId> {
        self.git.head_id().ok().map(|id| id.detach())
    }
}

/// The value of `key` given with `git -c` (the last one wins), which git passes to
/// the commands it runs in `GIT_CONFIG_PARAMETERS` (and gix does not read).
pub fn command_line_config(key: &str) -> Option<Option<String>> {
    let params = std::env::var("GIT_CONFIG_PARAMETERS").ok()?;
    parse_config_parameters(&params)
        .into_iter()
        .rev()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v)
}

/// Parses git's `GIT_CONFIG_PARAMETERS`: shell-quoted `'key'='value'` entries (or the
/// older `'key=value'`), separated by spaces; `'key'` alone has no value. Stops at the
/// first malformed entry, as git does.
fn parse_config_parameters(text: &str) -> Vec<(String, Option<String>)> {
    // One single-quoted word, with `'\''` standing for a quote inside it.
    fn quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<String> {
        if chars.next()? != '\'' {
            return None;
        }
        let mut word = String::new();
        loop {
            match chars.next()? {
                '\'' => {
                    if chars.peek() != Some(&'\\') {
                        return Some(word);
                    }
                    chars.next();
                    let escaped = chars.next()?;
                    if chars.next()? != '\'' {
                        return None;
                    }
                    word.push(escaped);
                }
                c => word.push(c),
            }
        }
    }
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_ascii_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return out;
        }
        let Some(first) = quoted(&mut chars) else {
            return out;
        };
        if chars.next_if_eq(&'=').is_some() {
            match quoted(&mut chars) {
                Some(value) => out.push((first, Some(value))),
                None => return out,
            }
        } else {
            match first.split_once('=') {
                Some((k, v)) => out.push((k.to_string(), Some(v.to_string()))),
                None => out.push((first, None)),
            }
        }
    }
}

fn fallback_signature() -> gix::actor::Signature {
    gix::actor::Signature {
        name: FALLBACK_NAME.into(),
        email: FALLBACK_EMAIL.into(),
        time: gix::date::Time::now_local_or_utc(),
    }
}

fn is_reftable(git: &gix::Repository) -> bool {
    let config = git.config_snapshot();
    if let Some(v) = config.string("extensions.refStorage") {
        return v.eq_ignore_ascii_case(b"reftable".as_slice());
    }
    // A config gix could not interpret still leaves this marker behind.
    git.common_dir().join("reftable").is_dir()
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The current folder's view of repository paths (see [`Repo::path_display`]).
#[derive(Debug, Clone, Copy)]
pub struct PathDisplay<'a> {
    workdir: &'a Path,
    prefix: Option<&'a str>,
}

impl PathDisplay<'_> {
    /// `repo_path` relative to the current folder (`../x` above it), or absolute when
    /// the current folder is outside the work tree.
    pub fn show(&self, repo_path: &str) -> String {
        let Some(prefix) = self.prefix else {
            return self.workdir.join(repo_path).to_string_lossy().into_owned();
        };
        if prefix.is_empty() {
            return repo_path.to_string();
        }
        let base: Vec<&str> = prefix.split('/').collect();
        let target: Vec<&str> = repo_path.split('/').collect();
        let common = base
            .iter()
            .zip(target.iter())
            .take_while(|(a, b)| a == b)
            .count();
        let mut out: Vec<&str> = Vec::new();
        out.extend(std::iter::repeat_n("..", base.len() - common));
        out.extend(&target[common..]);
        out.join("/")
    }
}

/// Canonicalizes the longest existing ancestor of `p` and appends the rest.
fn canonical_prefix(p: &Path) -> PathBuf {
    let mut existing = p.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(&existing) {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (
            existing.file_name().map(|s| s.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// Paths git astedit must not write although they lie inside the work tree, because
/// another repository or git's sparse checkout owns them: inside a submodule (a gitlink
/// in the index), inside a nested repository (a folder on the way holding its own
/// `.git`), or outside the sparse-checkout cone (a skip-worktree entry, or a path under a
/// sparse-index folder entry). Built once per command from the index; folders are
/// looked at lazily and remembered.
pub struct Protected {
    workdir: PathBuf,
    /// Gitlink paths: submodules, checked out or not.
    gitlinks: std::collections::HashSet<String>,
    /// Tracked files marked skip-worktree (outside the sparse cone).
    skip_worktree: std::collections::HashSet<String>,
    /// Folder entries of a sparse index (everything below them is outside the cone).
    sparse_dirs: std::collections::HashSet<String>,
    /// Folders already looked at for a `.git`: `true` when they hold one.
    nested: std::sync::Mutex<std::collections::HashMap<String, bool>>,
}

/// Why a path is [`Protected`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protection {
    /// Inside the submodule at this path (or the gitlink itself).
    Submodule(String),
    /// Inside the nested repository rooted at this folder.
    NestedRepository(String),
    /// Outside the sparse-checkout cone.
    Sparse,
}

impl std::fmt::Display for Protection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Protection::Submodule(at) => write!(
                f,
                "it is inside the submodule '{at}' (change it in that repository)"
            ),
            Protection::NestedRepository(at) => write!(
                f,
                "it is inside the nested git repository '{at}' (change it in that repository)"
            ),
            Protection::Sparse => write!(
                f,
                "it is outside the sparse-checkout cone (skip-worktree); widen the cone with \
                 `git sparse-checkout add <folder>` first"
            ),
        }
    }
}

impl Protected {
    /// Reads the index of `repo` (an empty index when there is none).
    pub fn of(repo: &Repo) -> Result<Protected, Box<gix::Error>> {
        let index = repo.git.index_or_empty().map_err(Box::new)?;
        let mut out = Protected {
            workdir: repo.workdir.clone(),
            gitlinks: Default::default(),
            skip_worktree: Default::default(),
            sparse_dirs: Default::default(),
            nested: Default::default(),
        };
        use gix::index::entry::Flags;
        use gix::index::entry::Mode;
        for e in index.entries() {
            // Most entries are plain files in the cone: no path string for them.
            let set = if e.mode == Mode::COMMIT {
                &mut out.gitlinks
            } else if e.mode == Mode::DIR {
                &mut out.sparse_dirs
            } else if e.flags.contains(Flags::SKIP_WORKTREE) {
                &mut out.skip_worktree
            } else {
                continue;
            };
            set.insert(e.path(&index).to_string().trim_end_matches('/').to_string());
        }
        Ok(out)
    }

    /// Why `path` (a repository path) must not be written, or `None`.
    pub fn check(&self, path: &str) -> Option<Protection> {
        if self.gitlinks.contains(path) {
            return Some(Protection::Submodule(path.to_string()));
        }
        if self.skip_worktree.contains(path) {
            return Some(Protection::Sparse);
        }
        let mut end = 0;
        while let Some(i) = path[end..].find('/') {
            let dir = &path[..end + i];
            end += i + 1;
            if self.gitlinks.contains(dir) {
                return Some(Protection::Submodule(dir.to_string()));
            }
            if self.sparse_dirs.contains(dir) {
                return Some(Protection::Sparse);
            }
            if self.holds_git(dir) {
                return Some(Protection::NestedRepository(dir.to_string()));
            }
        }
        None
    }

    fn holds_git(&self, dir: &str) -> bool {
        let mut seen = self
            .nested
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *seen.entry(dir.to_string()).or_insert_with(|| {
            std::fs::symlink_metadata(self.workdir.join(dir).join(".git")).is_ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::parse_config_parameters;

    #[test]
    fn config_parameters_as_git_writes_them() {
        let got = parse_config_parameters(
            "'color.ui'='never' 'pager.show'='less -S' 'core.x=old' 'flag' 'a.b'='it'\\''s'\\!''",
        );
        let want = [
            ("color.ui", Some("never")),
            ("pager.show", Some("less -S")),
            ("core.x", Some("old")),
            ("flag", None),
            ("a.b", Some("it's!")),
        ];
        let want: Vec<(String, Option<String>)> = want
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect();
        assert_eq!(got, want);
        assert!(parse_config_parameters("'unterminated").is_empty());
    }
}
