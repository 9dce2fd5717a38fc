/*!
`hook install`: a git pre-commit hook that runs `scan --check --cached
--changed-lines`, so a commit whose added or changed lines the rules would change (or
flag as errors) is blocked before it is made; with `--all`, `scan --check --cached`
(every staged file whole). An existing hook is never overwritten silently: it may hold the
team's other checks.
*/

use std::path::Path;
use std::path::PathBuf;

use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;

/// The first line after the shebang, to recognise a hook we wrote.
pub const MARKER: &str = "# git-astedit pre-commit hook";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("a pre-commit hook already exists at {}", .0.display())]
    Exists(PathBuf),
    #[error("cannot {action} {}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::Exists(_) => "hook-exists",
            Error::Io { .. } => "io",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::Exists(_) => Exit::Refused,
            Error::Io { .. } => Exit::Internal,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::Exists(_) => Some(
                "pass --force to replace it (the old hook is kept beside it as pre-commit.astedit-backup)"
                    .into(),
            ),
            Error::Io { .. } => None,
        }
    }
}

/// What `install` did.
#[derive(Debug, Clone)]
pub struct Installed {
    pub path: PathBuf,
    /// Where a replaced hook was moved (with `force`).
    pub backup: Option<PathBuf>,
    /// The same hook was already installed; nothing was written.
    pub unchanged: bool,
}

/// The arguments the hook gives `git-astedit`: only the lines being committed
/// (`--changed-lines`), so old code in a touched file does not block a commit; with
/// `all`, every staged file whole.
pub fn arguments(all: bool) -> &'static str {
    match all {
        true => "scan --check --cached",
        false => "scan --check --cached --changed-lines",
    }
}

/// The hook script. It prefers `git-astedit` from PATH (what a team shares) and falls
/// back to the binary that installed it. A hook it wrote before is rewritten, so
/// `hook install` brings an old hook's flags up to date.
pub fn script(fallback: Option<&Path>, all: bool) -> String {
    let args = arguments(all);
    let mut s = format!(
        "#!/bin/sh\n{MARKER} (installed by `git astedit hook install`).\n\
         # Blocks the commit when the astedit rules would change staged content.\n\
         if command -v git-astedit >/dev/null 2>&1; then\n\
         \texec git-astedit {args}\n\
         fi\n"
    );
    match fallback {
        Some(exe) => {
            let quoted = exe.display().to_string().replace('\'', "'\\''");
            s.push_str(&format!("exec '{quoted}' {args}\n"));
        }
        None => s.push_str(
            "echo 'git-astedit is not on PATH; cannot run the pre-commit scan' >&2\nexit 1\n",
        ),
    }
    s
}

/// Where git looks for hooks: `core.hooksPath` (relative to the work tree) or the
/// common git dir's `hooks/`, shared by linked work trees.
pub fn hooks_dir(repo: &Repo) -> PathBuf {
    let config = repo.git.config_snapshot();
    match config.trusted_path("core.hooksPath") {
        Ok(Some(p)) if p.is_absolute() => p,
        Ok(Some(p)) => repo.workdir.join(p),
        _ => repo.common_dir.join("hooks"),
    }
}

/// Writes the pre-commit hook ([`script`]); refuses to replace another hook unless
/// `force`.
pub fn install(
    repo: &Repo,
    force: bool,
    fallback: Option<&Path>,
    all: bool,
) -> Result<Installed, Error> {
    let dir = hooks_dir(repo);
    let path = dir.join("pre-commit");
    let content = script(fallback, all);
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    };
    let mut backup = None;
    if let Ok(existing) = std::fs::read(&path) {
        if existing == content.as_bytes() {
            return Ok(Installed {
                path,
                backup: None,
                unchanged: true,
            });
        }
        let ours = String::from_utf8_lossy(&existing).contains(MARKER);
        if !ours {
            if !force {
                return Err(Error::Exists(path));
            }
            let b = dir.join("pre-commit.astedit-backup");
            std::fs::rename(&path, &b).map_err(io("back up", &path))?;
            backup = Some(b);
        }
    }
    std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
    // Write beside, then rename: git never runs a half-written hook.
    let tmp = dir.join(".pre-commit.astedit-tmp");
    std::fs::write(&tmp, &content).map_err(io("write", &tmp))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
            .map_err(io("make executable", &tmp))?;
    }
    std::fs::rename(&tmp, &path).map_err(io("write", &path))?;
    Ok(Installed {
        path,
        backup,
        unchanged: false,
    })
}
