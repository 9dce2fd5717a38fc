/*!
What `verify` borrows from where the project lives, so that a check finds what the
project's own build would (`run` borrows none of it: its command stays contained).

* **`node_modules`**: the checkout's top-level `node_modules` folder, and that of each
  workspace package (a folder with a tracked `package.json`), is linked into the
  worktree (a symlink) when the worktree has none there and the preview touches
  nothing under it. The links are removed after the check (never followed); when the
  check changed the linked folder's top level (an entry added, removed or touched), a
  note says it wrote into the user's `node_modules`.
* **A Cargo target folder**: when the base tracks a `Cargo.toml`, the check runs with
  `CARGO_TARGET_DIR` set to a folder of verify's own under the git dir
  (`astedit/verify-target`), kept across runs, and seeded once from the checkout's
  (see [`super::seed`]). Never the user's own `target/`: its lock would make the
  user's build wait on the check, and the check's fingerprints (the preview's sources)
  would make the user's next build redo what the check did.
*/

use std::collections::HashSet;
use std::path::Path;
use std::path::PathBuf;
use std::time::SystemTime;

use super::super::worktree::Worktree;
use crate::repo::Repo;

/// At most this many workspace packages' `node_modules` are linked (the listing is
/// the base's tracked `package.json` files).
const MAX_PACKAGES: usize = 500;

/// A folder's entries and their modification times, and its own.
type Stamp = (
    Option<SystemTime>,
    Vec<(std::ffi::OsString, Option<SystemTime>)>,
);

/// A checkout's `node_modules` linked into the worktree.
struct Link {
    /// The link, in the worktree.
    link: PathBuf,
    /// The checkout's folder, as the repository's path shows it (`web/node_modules`).
    shown: String,
    target: PathBuf,
    before: Stamp,
}

/// What a verify's worktree borrowed; [`Home::finish`] returns it.
pub(super) struct Home {
    links: Vec<Link>,
    /// The check's environment: `CARGO_TARGET_DIR`.
    pub(super) env: Vec<(&'static str, PathBuf)>,
    /// What borrowing did that the user should know (a target folder seeded).
    notes: Vec<String>,
}

impl Home {
    /// Links the checkout's `node_modules` folders into `tree`, and gives the check a
    /// Cargo target folder (see the module docs); `touched` are the preview's paths.
    pub(super) fn borrow(repo: &Repo, tree: &Worktree, touched: &[&str]) -> Home {
        let listed = manifests(tree);
        let mut links = Vec::new();
        let mut known_dirs = HashSet::new();
        for folder in listed.packages {
            let shown = if folder.is_empty() {
                "node_modules".to_string()
            } else {
                format!("{folder}/node_modules")
            };
            let target = repo.workdir.join(&shown);
            if !target.is_dir()
                || touched
                    .iter()
                    .any(|p| *p == shown || p.starts_with(&format!("{shown}/")))
                || crate::txn::check_folder_contained_in(&tree.dir, &folder, &mut known_dirs)
                    .is_err()
            {
                continue;
            }
            let link = tree.dir.join(&shown);
            if std::fs::symlink_metadata(&link).is_ok() || !link_dir(&target, &link) {
                continue;
            }
            let before = stamp(&target);
            links.push(Link {
                link,
                shown,
                target,
                before,
            });
        }
        let mut notes = Vec::new();
        let mut env = Vec::new();
        if let Some(crate_folder) = listed.cargo {
            let (target, note) = super::seed::cargo_target(repo, &crate_folder);
            notes.extend(note);
            if let Some(target) = target {
                env.push(("CARGO_TARGET_DIR", target));
            }
        }
        Home { links, env, notes }
    }

    /// Removes the links (not what they point to); returns a note for each linked
    /// folder whose top level the check changed.
    pub(super) fn finish(self) -> Vec<String> {
        let mut notes = self.notes;
        for l in self.links {
            // A symlink is removed as a file: what it points to is not touched.
            let _ = std::fs::remove_file(&l.link);
            if stamp(&l.target) != l.before {
                notes.push(format!(
                    "the check wrote into your {} (the checkout's, linked into the worktree)",
                    l.shown
                ));
            }
        }
        notes
    }
}

/// What the base tracks that says where a project's things live.
struct Manifests {
    /// The folders (relative to the worktree, `""` the top) that may have a
    /// `node_modules`: the top, and each folder with a tracked `package.json`.
    packages: Vec<String>,
    /// The folder of the shallowest tracked `Cargo.toml` (a workspace's root), if any.
    cargo: Option<String>,
}

/// The base's tracked `package.json` and `Cargo.toml` files (one `git ls-files`).
fn manifests(tree: &Worktree) -> Manifests {
    let mut listed = Manifests {
        packages: vec![String::new()],
        cargo: None,
    };
    let mut list = tree.git();
    list.args([
        "ls-files",
        "-z",
        "--",
        ":(glob)**/package.json",
        ":(glob)**/Cargo.toml",
    ]);
    let Ok(out) = list.output() else {
        return listed;
    };
    if !out.status.success() {
        return listed;
    }
    let depth = |f: &str| {
        if f.is_empty() {
            0
        } else {
            f.split('/').count()
        }
    };
    for path in out.stdout.split(|b| *b == 0) {
        let Ok(path) = std::str::from_utf8(path) else {
            continue;
        };
        let (folder, name) = match path.rsplit_once('/') {
            Some((folder, name)) => (folder, name),
            None => ("", path),
        };
        if folder
            .split('/')
            .any(|c| c == "node_modules" || c == "target")
        {
            continue;
        }
        if name == "Cargo.toml" {
            if listed
                .cargo
                .as_deref()
                .is_none_or(|c| depth(folder) < depth(c))
            {
                listed.cargo = Some(folder.to_string());
            }
        } else if name == "package.json"
            && !folder.is_empty()
            && listed.packages.len() <= MAX_PACKAGES
        {
            listed.packages.push(folder.to_string());
        }
    }
    listed
}

#[cfg(unix)]
fn link_dir(target: &Path, link: &Path) -> bool {
    std::os::unix::fs::symlink(target, link).is_ok()
}

#[cfg(windows)]
fn link_dir(target: &Path, link: &Path) -> bool {
    std::os::windows::fs::symlink_dir(target, link).is_ok()
}

#[cfg(not(any(unix, windows)))]
fn link_dir(_: &Path, _: &Path) -> bool {
    false
}

/// `dir`'s modification time and its entries' (not followed), sorted by name.
fn stamp(dir: &Path) -> Stamp {
    let time = |p: &Path| std::fs::symlink_metadata(p).and_then(|m| m.modified()).ok();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| (e.file_name(), time(&e.path())))
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    (time(dir), entries)
}
