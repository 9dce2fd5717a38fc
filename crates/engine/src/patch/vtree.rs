/*!
The files a patch sees, and the virtual tree its operations are applied to.

A patch may name one path several times (add then update, update then move, move then
add at the source), so each operation must see the result of the ones before it. They
are applied to an in-memory overlay of the real tree, and only the net difference
between the overlay and the disk becomes the change set: the work tree is never touched
while resolving, so a refusal anywhere leaves everything as it was.

Paths in a patch are untrusted text. [`clean_path`] turns one into a repository path or
refuses it (absolute, escaping the tree, under `.git/`); [`FsTree`] refuses any path that
goes through a symlink, so that no write can land outside the tree.
*/

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::Error;
use crate::change::FileContent;
use crate::change::FileMode;
use crate::repo::Protected;
use crate::repo::Repo;

/// What a repository path holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Missing,
    File(FileContent),
    Dir,
}

/// Read access to the files a patch applies to, by repository path.
pub trait Tree {
    /// Looks a path up. Implementations refuse (with [`Error::UnsafePath`]) what must
    /// not be read or written, such as symlinks.
    fn entry(&self, path: &str) -> Result<Entry, Error>;
}

/// A folder on disk: the work tree, or a plain folder in tests.
pub struct FsTree {
    root: PathBuf,
    /// In a repository: the paths its index says another repository or the sparse
    /// checkout owns, refused before anything is read.
    protected: Option<Protected>,
}

impl FsTree {
    /// A plain folder.
    pub fn new(root: impl Into<PathBuf>) -> FsTree {
        FsTree {
            root: root.into(),
            protected: None,
        }
    }

    /// The work tree of `repo`, refusing submodules, nested repositories and paths
    /// outside the sparse-checkout cone.
    pub fn for_repo(repo: &Repo) -> Result<FsTree, Error> {
        let protected = Protected::of(repo).map_err(|e| Error::Io {
            path: "the index".into(),
            source: std::io::Error::other(e.to_string()),
        })?;
        Ok(FsTree {
            root: repo.workdir.clone(),
            protected: Some(protected),
        })
    }
}

impl Tree for FsTree {
    fn entry(&self, path: &str) -> Result<Entry, Error> {
        if let Some(why) = self.protected.as_ref().and_then(|p| p.check(path)) {
            return Err(Error::Protected {
                path: path.to_string(),
                why: why.to_string(),
                line: None,
            });
        }
        let mut cur = self.root.clone();
        let parts: Vec<&str> = path.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            cur.push(part);
            let meta = match std::fs::symlink_metadata(&cur) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Entry::Missing),
                // A file where a folder was expected: the path cannot exist.
                Err(e) if e.raw_os_error() == Some(20) => return Ok(Entry::Missing),
                // ENAMETOOLONG: no file system here can hold it; refused, not internal.
                Err(e) if e.raw_os_error() == Some(36) => {
                    return Err(Error::UnsafePath {
                        path: path.to_string(),
                        reason: "the name is longer than the file system allows".to_string(),
                        line: None,
                    })
                }
                Err(e) => {
                    return Err(Error::Io {
                        path: path.to_string(),
                        source: e,
                    })
                }
            };
            if meta.file_type().is_symlink() {
                let at = parts[..=i].join("/");
                return Err(Error::UnsafePath {
                    path: path.to_string(),
                    reason: if at == path {
                        "it is a symlink".to_string()
                    } else {
                        format!("it goes through the symlink '{at}'")
                    },
                    line: None,
                });
            }
            let last = i + 1 == parts.len();
            if !last && !meta.is_dir() {
                return Ok(Entry::Missing);
            }
            if last {
                if meta.is_dir() {
                    return Ok(Entry::Dir);
                }
                if !meta.is_file() {
                    return Err(Error::UnsafePath {
                        path: path.to_string(),
                        reason: "it is not a regular file".to_string(),
                        line: None,
                    });
                }
                let bytes = std::fs::read(&cur).map_err(|e| Error::Io {
                    path: path.to_string(),
                    source: e,
                })?;
                return Ok(Entry::File(FileContent {
                    bytes,
                    mode: FileMode::from_metadata(&meta),
                }));
            }
        }
        Ok(Entry::Dir)
    }
}

/// An in-memory tree, for tests and for callers that hold files already.
#[derive(Debug, Clone, Default)]
pub struct MemTree {
    pub files: BTreeMap<String, FileContent>,
}

impl MemTree {
    /// A tree of regular files.
    pub fn from_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> MemTree {
        MemTree {
            files: files
                .into_iter()
                .map(|(p, b)| {
                    (
                        p.to_string(),
                        FileContent {
                            bytes: b.to_vec(),
                            mode: FileMode::Regular,
                        },
                    )
                })
                .collect(),
        }
    }
}

impl Tree for MemTree {
    fn entry(&self, path: &str) -> Result<Entry, Error> {
        if let Some(f) = self.files.get(path) {
            return Ok(Entry::File(f.clone()));
        }
        let dir = format!("{path}/");
        if self.files.keys().any(|k| k.starts_with(&dir)) {
            return Ok(Entry::Dir);
        }
        Ok(Entry::Missing)
    }
}

/// Turns a path written in a patch into a repository path, relative to `base` (the
/// repository path of the folder the patch was given in, `""` at the top).
pub fn clean_path(raw: &str, base: &str) -> Result<String, Error> {
    let refuse = |reason: &str| Error::UnsafePath {
        path: raw.to_string(),
        reason: reason.to_string(),
        line: None,
    };
    if raw.contains('\0') {
        return Err(refuse("it contains a NUL byte"));
    }
    if raw.starts_with('/') || raw.starts_with('\\') || has_drive_prefix(raw) {
        return Err(refuse("it is absolute"));
    }
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in raw.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(refuse("it leads outside the repository"));
                }
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(refuse("it names the repository root"));
    }
    if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
        return Err(refuse("it is inside `.git/`"));
    }
    Ok(parts.join("/"))
}

fn has_drive_prefix(raw: &str) -> bool {
    let b = raw.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// The overlay: what each touched path holds after the operations so far.
pub struct VTree<'t> {
    base: &'t dyn Tree,
    /// `None`: deleted (or moved away) by the patch.
    overlay: BTreeMap<String, Option<FileContent>>,
    /// What the disk held for every touched path, read once.
    original: BTreeMap<String, Entry>,
}

impl<'t> VTree<'t> {
    pub fn new(base: &'t dyn Tree) -> VTree<'t> {
        VTree {
            base,
            overlay: BTreeMap::new(),
            original: BTreeMap::new(),
        }
    }

    fn disk(&mut self, path: &str) -> Result<Entry, Error> {
        if let Some(e) = self.original.get(path) {
            return Ok(e.clone());
        }
        let e = self.base.entry(path)?;
        self.original.insert(path.to_string(), e.clone());
        Ok(e)
    }

    /// What `path` holds now.
    pub fn get(&mut self, path: &str) -> Result<Entry, Error> {
        if let Some(v) = self.overlay.get(path) {
            return Ok(match v {
                Some(f) => Entry::File(f.clone()),
                None => Entry::Missing,
            });
        }
        // A folder the patch emptied is still a folder on disk; treating it as such
        // keeps "delete a folder" an error however the patch got there.
        self.disk(path)
    }

    /// Checks that a file can be created at `path`: nothing there, and no file in the
    /// way among its parents.
    pub fn check_creatable(&mut self, path: &str, line: usize) -> Result<(), Error> {
        match self.get(path)? {
            Entry::Missing => {}
            Entry::File(_) | Entry::Dir => {
                return Err(Error::Exists {
                    path: path.to_string(),
                    line,
                })
            }
        }
        let parts: Vec<&str> = path.split('/').collect();
        for i in 1..parts.len() {
            let parent = parts[..i].join("/");
            if let Entry::File(_) = self.get(&parent)? {
                return Err(Error::Exists { path: parent, line });
            }
        }
        // A file the patch itself created below `path` makes it a folder.
        let dir = format!("{path}/");
        if self
            .overlay
            .iter()
            .any(|(k, v)| v.is_some() && k.starts_with(&dir))
        {
            return Err(Error::Exists {
                path: path.to_string(),
                line,
            });
        }
        Ok(())
    }

    pub fn set(&mut self, path: &str, content: Option<FileContent>) -> Result<(), Error> {
        // Read the disk first so that the change set knows the before state.
        self.disk(path)?;
        self.overlay.insert(path.to_string(), content);
        Ok(())
    }

    /// The net changes: every touched path whose content or mode differs from disk.
    pub fn changes(self) -> Vec<crate::change::FileChange> {
        let mut out = Vec::new();
        for (path, after) in self.overlay {
            let before = match self.original.get(&path) {
                Some(Entry::File(f)) => Some(f.clone()),
                _ => None,
            };
            if before == after {
                continue;
            }
            out.push(crate::change::FileChange {
                path,
                before,
                after,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_and_refuses_paths() {
        assert_eq!(clean_path("./a//b.txt", "").unwrap(), "a/b.txt");
        assert_eq!(clean_path("../x", "sub").unwrap(), "x");
        assert_eq!(clean_path("x", "sub/dir").unwrap(), "sub/dir/x");
        for bad in [
            "/etc/passwd",
            "../x",
            ".git/config",
            "a/.GIT/x",
            "C:/x",
            "a/../..",
            ".",
        ] {
            assert!(
                matches!(clean_path(bad, ""), Err(Error::UnsafePath { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn refuses_symlinked_parents() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("f"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        let t = FsTree::new(dir.path());
        assert!(matches!(t.entry("link/f"), Err(Error::UnsafePath { .. })));
        assert!(matches!(t.entry("link"), Err(Error::UnsafePath { .. })));
        assert_eq!(t.entry("nope/f").unwrap(), Entry::Missing);
    }
}
