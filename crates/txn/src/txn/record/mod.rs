/*!
The "applying" record and the machinery both a live run ([`super::apply`]) and
recovery ([`super::recover`]) drive from it: temp files, rolling forward, rolling back.

The record, `<git_dir>/astedit-applying.json`, names every path of the run with the
side it must hold (`from`) and the side it gets (`to`), its temp file, and the phase:
`prepared` (no target touched yet) or `committed` (the point of no return passed).

Every write here re-checks its target first, the same way a live apply does, and only
moves a path that holds exactly one of the two sides:

* containment: no folder on the way is a symlink or not a folder ([`fsutil::check_contained`]);
  a path that fails is left alone, and its temp file too (removing it would reach
  through the symlink): its place is reported instead;
* content: a path holding neither side (someone saved it after the crash, or during the
  renames) is left alone and reported; the record stays so that nothing is lost, and
  `git astedit recover` resolves it;
* right before each rename or removal, the target is looked at once more: its stat
  stamp (inode, size, times, mode) must be the one it had when its content was checked
  (or, for a stamp that cannot be trusted, its content is hashed again); a path to be
  created is created with `RENAME_NOREPLACE`, so it never replaces a file that appeared.
*/

use std::path::PathBuf;

use gix::refs::transaction::PreviousValue;
use gix::refs::Target;
use gix::ObjectId;
use serde::Deserialize;
use serde::Serialize;

use super::fsutil;
use super::fsutil::fault;
use super::fsutil::Stamp;
use super::journal;
use super::journal::Event;
use super::journal::EventKind;
use super::journal::TxnOp;
use super::store;
use super::Error;
use crate::change::FileMode;
use crate::repo::Repo;

mod pass;
mod temps;
mod write;

pub use pass::classify;
pub use pass::converge;
pub use pass::Pass;
pub use pass::State;
pub use temps::rollback;
pub use temps::write_temps;

/// The record of an apply/undo in progress, inside the work tree's git dir.
pub const RECORD_FILE: &str = "astedit-applying.json";

/// One side of a path: a blob and its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    #[serde(with = "hex_id")]
    pub blob: ObjectId,
    pub mode: FileMode,
}

impl Side {
    fn pair(s: Option<Side>) -> Option<(ObjectId, FileMode)> {
        s.map(|s| (s.blob, s.mode))
    }
}

/// One path of a run: what must be there (`from`) and what will be (`to`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathOp {
    pub path: String,
    pub from: Option<Side>,
    pub to: Option<Side>,
    /// The temp file (repository path) holding `to` before its rename.
    pub temp: Option<String>,
    /// Permission bits: of the file removed (when `to` is none), or for the file to
    /// create where nothing is (an undo giving back a removed file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perm: Option<u32>,
}

/// Where a run stands: before or after its point of no return.
/// Where an apply or undo run stands: `prepared` (before its point of no return:
/// recovery rolls it back) or `committed` (past it: recovery rolls it forward).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Prepared,
    Committed,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prepared => "prepared",
            Phase::Committed => "committed",
        }
    }
}

/// The durable record of a run in progress (see the module docs).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    pub op: TxnOp,
    pub id: String,
    #[serde(with = "hex_id")]
    pub commit: ObjectId,
    pub kind: crate::change::PreviewKind,
    /// A nonce naming this run; the journal event carries it too.
    pub run: String,
    pub pid: u32,
    pub phase: Phase,
    pub ops: Vec<PathOp>,
    /// Folders this run creates, shallowest first (repository paths).
    pub created_dirs: Vec<String>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub agent: Option<String>,
    /// The commit `--commit` will put on HEAD, made before the run so that the
    /// `applied` event can name it.
    #[serde(default)]
    pub made_commit: Option<String>,
}

pub fn record_path(repo: &Repo) -> PathBuf {
    repo.git_dir.join(RECORD_FILE)
}

pub fn read_record(repo: &Repo) -> Result<Option<Record>, Error> {
    read_record_at(&record_path(repo))
}

/// The record at `path` (another work tree's, say), if there is one.
pub fn read_record_at(path: &std::path::Path) -> Result<Option<Record>, Error> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", path)(e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::Corrupt(format!("{}: {e}", path.display())))
}

pub fn write_record(repo: &Repo, record: &Record) -> Result<(), Error> {
    let json = serde_json::to_vec_pretty(record)
        .map_err(|e| Error::Corrupt(format!("cannot encode the applying record: {e}")))?;
    fsutil::write_durable(&record_path(repo), &json)
}

fn remove_record(repo: &Repo) -> Result<(), Error> {
    fsutil::remove_if_present(&record_path(repo))?;
    fsutil::sync_dir(&repo.git_dir)
}

/// The temp file name beside `path` for preview `id`.
pub fn temp_name(path: &str, id: &str) -> String {
    let (dir, name) = match path.rfind('/') {
        Some(i) => (&path[..=i], &path[i + 1..]),
        None => ("", path),
    };
    format!("{dir}.{name}.astedit-{id}.tmp")
}

/// Which way to move the paths of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `from` → `to`: finishing the run.
    Forward,
    /// `to` → `from`: abandoning it.
    Back,
}

/// The folder where files that may hold a save of the user's are kept when a run had
/// to move them out of the way (see [`replace`]): `<git_dir>/astedit-saved/<id>/`.
pub fn kept_dir(repo: &Repo, id: &str) -> PathBuf {
    repo.git_dir.join(KEPT_DIR).join(id)
}

/// The folder of [`kept_dir`] inside the git dir.
pub const KEPT_DIR: &str = "astedit-saved";

/// Whether the run's `applied`/`undone` event is in the journal: it is written only
/// once every path was moved, so the run was complete.
pub fn event_landed(repo: &Repo, record: &Record) -> Result<bool, Error> {
    Ok(journal::find_newest(repo, |e| {
        e.event.run.as_deref() == Some(record.run.as_str())
    })?
    .is_some())
}

/// Rolls a committed run forward: every path that safely can be is moved; when all
/// are, the `applied`/`undone` event is written and the record removed. Idempotent, so
/// recovery can call it again. Paths left (see [`Pass::unresolved`]) keep the record.
///
/// `earlier` (the live run's stamps) is given only by the run that wrote the record and
/// still holds the lock: its event cannot have landed, so the journal is not searched
/// for it (a search that finds nothing reads the whole journal).
pub fn finish(
    repo: &Repo,
    record: &Record,
    earlier: Option<&[Option<Stamp>]>,
) -> Result<Pass, Error> {
    let live = earlier.is_some();
    if !live && event_landed(repo, record)? {
        remove_record(repo)?;
        return Ok(Pass::default());
    }
    let pass = converge(repo, record, Direction::Forward, earlier)?;
    if pass.unresolved.is_empty() {
        record_event(repo, record, live)?;
        fault("after-journal");
        remove_record(repo)?;
    }
    Ok(pass)
}

/// Whether the undo of a transaction of `kind` makes its preview pending again: not
/// for an agent's own edit (`agent-hook`), which nobody staged.
pub fn pending_again(kind: crate::change::PreviewKind) -> bool {
    kind != crate::change::PreviewKind::Hook
}

/// Rolls a committed run back as far as it safely can (`recover --abandon`), removes
/// its temps and the record. Paths holding neither side are left as they are.
pub fn abandon(repo: &Repo, record: &Record) -> Result<Pass, Error> {
    let pass = converge(repo, record, Direction::Back, None)?;
    remove_record(repo)?;
    Ok(pass)
}

/// Writes the run's `applied`/`undone` event (once: skipped when the journal has it),
/// removing (apply) or re-creating (undo) the pending ref in the same transaction. An
/// agent's own edit journalled by `agent-hook` (kind `hook`) was never a preview
/// anyone staged: its undo leaves none pending ([`pending_again`]).
/// `live`: called by the run itself, which has written no event yet.
fn record_event(repo: &Repo, record: &Record, live: bool) -> Result<(), Error> {
    if !live && event_landed(repo, record)? {
        return Ok(());
    }
    let name = format!("{}{}", store::REF_PREFIX, record.id);
    let pending = repo
        .git
        .try_find_reference(name.as_str())
        .map_err(Error::git(format!("read {name}")))?
        .is_some();
    let mut extra = Vec::new();
    let kind = match record.op {
        TxnOp::Undo => {
            if !pending && pending_again(record.kind) {
                extra.push(journal::update_edit(
                    &name,
                    PreviousValue::MustNotExist,
                    record.commit,
                    "astedit: undone",
                )?);
            }
            EventKind::Undone
        }
        TxnOp::Apply => {
            if pending {
                extra.push(journal::delete_edit(
                    &name,
                    PreviousValue::MustExistAndMatch(Target::Object(record.commit)),
                )?);
            }
            EventKind::Applied
        }
    };
    let mut event = Event::new(repo, kind, &record.id, record.commit);
    event.reason = record.reason.clone();
    event.agent = record.agent.clone();
    event.kind = Some(record.kind);
    event.files = record.ops.iter().map(|o| o.path.clone()).collect();
    event.run = Some(record.run.clone());
    event.made_commit = record.made_commit.clone();
    event.removed_modes = record
        .ops
        .iter()
        .filter(|o| o.to.is_none())
        .filter_map(|o| o.perm.map(|p| (o.path.clone(), format!("{p:04o}"))))
        .collect();
    let id = journal::append(repo, &event, record.commit, extra)?;
    // The record may only disappear once the event is on disk (gix fsyncs nothing).
    journal::sync(repo, id, &[journal::JOURNAL_REF, &name])
}

/// Object ids as hex strings in the record.
mod hex_id {
    use gix::ObjectId;
    use serde::Deserialize;

    pub fn serialize<S: serde::Serializer>(id: &ObjectId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&id.to_string())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ObjectId, D::Error> {
        let s = String::deserialize(d)?;
        ObjectId::from_hex(s.as_bytes()).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_and_ops_keep_their_on_disk_strings() {
        assert_eq!(
            serde_json::to_string(&Phase::Committed).expect("encode"),
            "\"committed\""
        );
        let p: Phase = serde_json::from_str("\"prepared\"").expect("decode");
        assert_eq!(p, Phase::Prepared);
        let op: TxnOp = serde_json::from_str("\"undo\"").expect("decode");
        assert_eq!(op, TxnOp::Undo);
    }

    #[test]
    fn temp_names_sit_beside_their_target() {
        assert_eq!(temp_name("a.js", "abc"), ".a.js.astedit-abc.tmp");
        assert_eq!(temp_name("d/e/f.js", "abc"), "d/e/.f.js.astedit-abc.tmp");
    }
}
