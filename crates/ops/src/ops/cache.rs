//! Which result cache an operation uses (the front ends' `--no-cache`, `--cache-dir`).

use std::path::PathBuf;

use crate::cache::Settings;
use crate::repo::Repo;

/// The cache a request asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CacheChoice {
    /// `<git common dir>/astedit/cache`, shared by the linked worktrees.
    #[default]
    Default,
    /// No cache: read and parse every file (`--no-cache`).
    Off,
    /// This folder (`--cache-dir DIR`, relative to the current folder), e.g. one a CI
    /// job restores between runs.
    Dir(PathBuf),
}

impl CacheChoice {
    /// Where the cache lives for `repo`, or `None` for no cache.
    pub fn settings(&self, repo: &Repo) -> Option<Settings> {
        let dir = match self {
            CacheChoice::Off => return None,
            CacheChoice::Default => Settings::default_dir(repo.git.common_dir()),
            CacheChoice::Dir(dir) => repo.cwd.join(dir),
        };
        Some(Settings {
            dir,
            max_bytes: crate::cache::DEFAULT_MAX_BYTES,
        })
    }
}
