/*!
The local trust record: which preview commits this machine vouches for.

Previews travel (a `git fetch` of the refs under `refs/astedit/`), and so does the journal
(a mirror fetch brings `refs/astedit-journal`): neither can say that a preview was made
here. This record can, because no fetch carries it: one small file per preview commit
under `<common git dir>/astedit/trusted/` (outside `refs/`; linked worktrees share it),
named by the commit's full id, holding how it came to be trusted:

* `made-here`: staged by this repository's git-astedit, written just after the
  preview's ref was created (a crash in between leaves it untrusted, never the other
  way round);
* `refreshed`: the successor a refresh made here of a trusted preview;
* `trusted`: the user read what it runs and vouched for it (`git astedit trust ID`),
  with a digest of what it runs.

A file is written whole (a temp file, then a rename) and a missing or unreadable one
means "not recorded": nothing here ever makes a preview *more* trusted than its id
says. `discard` forgets a preview's file; `gc` forgets those of commits that are
neither pending nor in the journal (`super::gc`) (an applied preview comes back pending on `undo`,
so it keeps its record while its journal entry lives).

Deciding what a record means (with signatures and the runs digest) is
[`crate::ops::trust`]'s job; this module only keeps the files.
*/

use std::path::PathBuf;

use gix::ObjectId;

use super::Error;
use crate::repo::Repo;

/// The record's folder, under the common git dir.
pub const TRUSTED_DIR: &str = "astedit/trusted";

/// How a preview came to be trusted here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Vouched {
    /// Staged by this repository.
    MadeHere,
    /// Refreshed here from a preview that was trusted then.
    Refreshed,
    /// Vouched for by the user after reading what it runs.
    Trusted,
}

/// One preview commit's record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrustRecord {
    pub how: Vouched,
    /// The git identity that staged or trusted it (`Name <email>`).
    pub who: String,
    /// The agent (MCP client) that staged it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `refreshed`: the preview it was refreshed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// `trusted`: the digest of what it runs, as the user read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Seconds since the epoch when it was written.
    pub at: i64,
}

impl TrustRecord {
    /// A record of `how`, by this repository's git identity, now.
    pub fn new(repo: &Repo, how: Vouched) -> TrustRecord {
        let sig = repo.signature();
        TrustRecord {
            how,
            who: format!("{} <{}>", sig.name, sig.email),
            agent: None,
            from: None,
            digest: None,
            at: super::journal::now_secs(),
        }
    }
}

fn dir(repo: &Repo) -> PathBuf {
    repo.common_dir.join(TRUSTED_DIR)
}

/// Records `commit` as `record` says (replacing an older record of it).
pub fn record(repo: &Repo, commit: ObjectId, record: &TrustRecord) -> Result<(), Error> {
    let dir = dir(repo);
    std::fs::create_dir_all(&dir).map_err(Error::io("create", &dir))?;
    let path = dir.join(commit.to_string());
    let text = serde_json::to_vec(record).expect("a trust record serializes");
    let tmp = dir.join(format!(".{commit}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, &text).map_err(Error::io("write", &tmp))?;
    std::fs::rename(&tmp, &path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io("rename", &path)(e)
    })
}

/// The record of `commit`; `None` when there is none or it does not read.
pub fn lookup(repo: &Repo, commit: ObjectId) -> Option<TrustRecord> {
    let bytes = std::fs::read(dir(repo).join(commit.to_string())).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Forgets `commit` (nothing when it has no record).
pub fn forget(repo: &Repo, commit: ObjectId) {
    let _ = std::fs::remove_file(dir(repo).join(commit.to_string()));
}

/// Whether `p` is vouched for here: a record of it, or a good signature by an allowed
/// signer. A preview derived from it here (a split's parts, a refresh's successor) is
/// signed with `astedit.signPreviews` only then: signing what a fetched preview records
/// would make it trusted (`ops::trust` decides the full origin).
pub fn vouched(repo: &Repo, p: &super::Preview) -> bool {
    lookup(repo, p.commit).is_some()
        || super::sign::verify(repo, p.commit).is_ok_and(|c| c.trusted())
}

/// Records `parts` as trusted the way `parent` is (nothing when it has no record):
/// the parts of a split hold the parent's changes and recipe. A record that cannot be
/// written leaves the part untrusted.
pub fn inherit(repo: &Repo, parent: &super::Preview, parts: &[ObjectId]) {
    let Some(mut r) = lookup(repo, parent.commit) else {
        return;
    };
    r.from = Some(parent.id.clone());
    for part in parts {
        let _ = record(repo, *part, &r);
    }
}

/// The commits with a record, read now.
pub fn recorded(repo: &Repo) -> Vec<ObjectId> {
    let Ok(entries) = std::fs::read_dir(dir(repo)) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<ObjectId>().ok())
        .collect()
}
