/*!
Edits addressed by content (the MCP `read` and `edit_lines` tools).

`read` returns a file's lines with the blob id of its bytes, and keeps that blob in the
object database. `edit_lines` replaces line ranges *of that blob* and stages the result
as a preview (kind `lines`), never writing the work tree:

* the file still holds the blob: the ranges are replaced where they are;
* the file changed since the read: the edit is re-placed by the three-way merge a
  refresh uses (base = the blob read, ours = the file now, theirs = the blob with the
  ranges replaced), so ranges that moved (lines added above them) land where their
  lines are now, and the report says so;
* the file changed where the ranges are: nothing is staged (`stale-read`, exit 3),
  naming the file and the regions; read it again.

Applying is `resolve`'s ordinary stale check; a preview gone stale after staging is
refreshed (`refresh: true`) by the same three-way merge.
*/

use crate::cancel::Cancel;
use crate::change::ChangeSet;
use crate::change::FileChange;
use crate::change::FileContent;
use crate::change::FileMeta;
use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::diff::render_diffs;
use crate::diff::DiffFile;
use crate::error::Classify;
use crate::error::Exit;
use crate::ops::recipe::merge::merge3_layout;
use crate::ops::recipe::merge::Region;
use crate::ops::stage::settle;
use crate::ops::stage::stage_changes;
use crate::ops::stage::Staging;
use crate::patch::vtree::Entry;
use crate::patch::vtree::Tree;
use crate::repo::Repo;
use crate::report::Diagnostics;
use crate::report::LineRange;
use crate::report::ReadReport;
use crate::report::StageReport;
use crate::report::StageText;
use crate::report::StagedFile;
use crate::report::Version;
use crate::txn;
use crate::Error;

/// Why a `read` or an `edit_lines` refused.
#[derive(Debug, thiserror::Error)]
pub enum LinesError {
    #[error("{path}: {why}")]
    NotReadable { path: String, why: String },
    #[error("{path}: {why}")]
    BadRange { path: String, why: String },
    #[error("{path}: `{blob}` is not a blob id (40 or 64 hex digits, as `read` returns it)")]
    BadBlob { path: String, blob: String },
    #[error(
        "{path}: blob {blob} is not in the repository (it was not returned by `read`, or was \
         pruned); nothing was staged"
    )]
    UnknownBlob { path: String, blob: String },
    #[error(
        "{path} changed since it was read (blob {blob}, now {now}) where the edit replaces \
         lines ({}); nothing was staged\nwhat changed since the read:\n{diff}",
        regions.iter().map(Region::describe).collect::<Vec<_>>().join(", ")
    )]
    StaleRead {
        path: String,
        blob: String,
        now: String,
        /// Regions of the current file where its changes and the edit collide.
        regions: Vec<Region>,
        /// What changed in the file since the read (a small unified diff).
        diff: String,
    },
}

impl Classify for LinesError {
    fn code(&self) -> &'static str {
        match self {
            LinesError::NotReadable { .. } => "not-readable",
            LinesError::BadRange { .. } => "bad-range",
            LinesError::BadBlob { .. } => "bad-blob",
            LinesError::UnknownBlob { .. } => "unknown-blob",
            LinesError::StaleRead { .. } => "stale-read",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            LinesError::NotReadable { .. }
            | LinesError::BadRange { .. }
            | LinesError::BadBlob { .. } => Exit::BadInput,
            LinesError::UnknownBlob { .. } | LinesError::StaleRead { .. } => Exit::Stale,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            LinesError::UnknownBlob { path, .. } | LinesError::StaleRead { path, .. } => Some(
                format!("read {path} again and address the edit to the blob it returns"),
            ),
            LinesError::BadRange { .. } => Some(
                "ranges are 1-based and inclusive, in the lines of the blob read; end = start - 1 \
                 inserts before start; ranges must not overlap"
                    .into(),
            ),
            _ => None,
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        Some(match self {
            LinesError::StaleRead {
                path,
                blob,
                now,
                regions,
                diff,
            } => serde_json::json!({"path": path, "blob": blob, "now": now, "regions": regions,
                                    "changed_since_read": diff}),
            LinesError::NotReadable { path, .. }
            | LinesError::BadRange { path, .. }
            | LinesError::BadBlob { path, .. }
            | LinesError::UnknownBlob { path, .. } => serde_json::json!({"path": path}),
        })
    }
}

/// What to read.
#[derive(Debug, Clone, Default)]
pub struct ReadRequest {
    /// Repository path.
    pub path: String,
    /// First line (1-based; default 1).
    pub start: Option<usize>,
    /// Last line (inclusive; default the last).
    pub end: Option<usize>,
    /// At most this many bytes of lines (whole lines; at least one line is sent).
    pub max_bytes: usize,
}

/// A file's bytes as lines: each with its ending.
fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Reads a work-tree file by repository path, refusing what a patch may not touch.
pub(super) fn read_file(repo: &Repo, raw: &str) -> Result<(String, FileContent, String), Error> {
    let path = crate::patch::vtree::clean_path(raw, "")?;
    let tree = crate::patch::FsTree::for_repo(repo)?;
    let not = |why: &str| LinesError::NotReadable {
        path: path.clone(),
        why: why.into(),
    };
    let content = match tree.entry(&path)? {
        Entry::File(c) => c,
        Entry::Missing => return Err(not("no such file in the work tree").into()),
        Entry::Dir => return Err(not("is a folder, not a file").into()),
    };
    let text = String::from_utf8(content.bytes.clone())
        .map_err(|_| not("is not UTF-8 text: line edits need text"))?;
    Ok((path, content, text))
}

/// `read`: the lines `req` asks for, the blob id of the whole file, and the blob kept.
pub fn read(repo: &Repo, req: &ReadRequest) -> Result<ReadReport, Error> {
    let (path, content, text) = read_file(repo, &req.path)?;
    let blob = txn::keep_blob(repo, &content.bytes)?;
    let lines = split_lines(&text);
    let total = lines.len();
    let start = req.start.unwrap_or(1).max(1);
    let end = req.end.unwrap_or(total).min(total);
    if start > total.max(1) || (req.end.is_some() && end + 1 < start) {
        return Err(LinesError::BadRange {
            path,
            why: format!("lines {start}-{end} are not in the file ({total} lines)"),
        }
        .into());
    }
    let mut out = String::new();
    let mut last = start.saturating_sub(1);
    for (i, l) in lines.iter().enumerate().take(end).skip(start - 1) {
        if last >= start && out.len() + l.len() > req.max_bytes {
            break;
        }
        out.push_str(l);
        last = i + 1;
    }
    let truncated = last < end;
    Ok(ReadReport {
        schema_version: Version,
        path,
        blob: blob.to_string(),
        total_lines: total,
        start,
        end: last,
        truncated,
        next_start: truncated.then_some(last + 1),
        text: out,
    })
}

/// One range to replace, in lines of the blob read.
#[derive(Debug, Clone)]
pub struct LineEdit {
    /// First line replaced (1-based).
    pub start: usize,
    /// Last line replaced (inclusive); `start - 1` inserts before `start`.
    pub end: usize,
    /// The new lines (a final newline is added when missing); empty deletes.
    pub text: String,
}

/// Line edits to stage.
#[derive(Debug, Clone)]
pub struct EditLinesRequest {
    pub path: String,
    /// The blob id `read` returned: the lines the ranges count.
    pub blob: String,
    pub edits: Vec<LineEdit>,
    pub staging: Staging,
}

/// The blob's text with the ranges replaced.
fn splice(path: &str, base: &str, edits: &[LineEdit]) -> Result<String, LinesError> {
    let bad = |why: String| LinesError::BadRange {
        path: path.to_string(),
        why,
    };
    let lines = split_lines(base);
    let total = lines.len();
    if edits.is_empty() {
        return Err(bad("no edits given".into()));
    }
    let mut sorted: Vec<&LineEdit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    let crlf = base.matches("\r\n").count() * 2 > base.matches('\n').count();
    let mut out = String::with_capacity(base.len());
    let mut next = 1usize;
    for e in sorted {
        if e.start == 0 || e.start > total + 1 || e.end + 1 < e.start || e.end > total {
            return Err(bad(format!(
                "lines {}-{} are not a range of the blob read ({total} lines)",
                e.start, e.end
            )));
        }
        if e.start < next {
            return Err(bad(format!(
                "lines {}-{} overlap another edit's range",
                e.start, e.end
            )));
        }
        for l in &lines[next - 1..e.start - 1] {
            out.push_str(l);
        }
        let mut new = e.text.clone();
        if crlf {
            new = new.replace("\r\n", "\n").replace('\n', "\r\n");
        }
        if !new.is_empty() && !new.ends_with('\n') {
            new.push_str(if crlf { "\r\n" } else { "\n" });
        }
        out.push_str(&new);
        next = e.end + 1;
    }
    for l in &lines[next - 1..] {
        out.push_str(l);
    }
    // A file without a final newline keeps lacking one when its last line is replaced.
    if !base.is_empty() && !base.ends_with('\n') && out.ends_with('\n') && next > total {
        out.pop();
        if out.ends_with('\r') {
            out.pop();
        }
    }
    Ok(out)
}

fn blob_hash(repo: &Repo, bytes: &[u8]) -> Result<gix::ObjectId, Error> {
    gix::objs::compute_hash(repo.git.object_hash(), gix::objs::Kind::Blob, bytes).map_err(|e| {
        crate::error::IoError {
            action: "hash",
            path: "a work-tree file".into(),
            source: std::io::Error::other(e.to_string()),
        }
        .into()
    })
}

/// `edit_lines`: stages the ranges replaced (see the module docs).
pub fn edit_lines(
    repo: &Repo,
    req: &EditLinesRequest,
    cancel: &Cancel,
) -> Result<StageReport, Error> {
    let (path, current, now_text) = read_file(repo, &req.path)?;
    let pin = Pin::of(repo, &path, Some(&req.blob), &current, now_text)?;
    let edited = splice(&path, &pin.base, &req.edits)?;
    let (after, notes) = pin.onto_current(&path, &current, edited)?;
    let want = pin.blob();
    let ranges: Vec<LineRange> = req
        .edits
        .iter()
        .map(|e| LineRange {
            start: e.start,
            end: e.end,
        })
        .collect();
    let count = req.edits.len();
    let placement = format!(
        "update {path}: {} {}\n",
        ranges
            .iter()
            .map(|r| if r.end < r.start {
                format!("insert before line {}", r.start)
            } else {
                format!("lines {}-{}", r.start, r.end)
            })
            .collect::<Vec<_>>()
            .join(", "),
        if pin.moved() {
            "re-placed onto the changed file"
        } else {
            "replaced in the blob read"
        }
    );
    stage_file(
        repo,
        OneFile {
            kind: PreviewKind::Lines,
            summary: format!("{} in 1 file", crate::text::plural(count, "line range")),
            details: serde_json::json!({
                "lines": {"path": path, "blob": want, "ranges": ranges,
                          "replaced": pin.moved()},
            }),
            path,
            before: Some(current),
            after,
            count,
            placement,
            notes,
        },
        &req.staging,
        cancel,
    )
}

/// The content an edit was made against: the blob a caller read (when it names one)
/// or the file as it is now; [`Pin::onto_current`] carries the edit over to the file
/// as it is now.
pub(super) struct Pin {
    /// The text the edit is made on.
    pub base: String,
    /// The blob read, when the file changed since (the base is then that blob's text).
    pub read: Option<gix::ObjectId>,
    /// The blob the file holds now.
    pub now: gix::ObjectId,
}

impl Pin {
    /// The base of an edit of `path` (content `current`, text `now_text`) pinned to
    /// `blob` (as `read` returned it), if any.
    pub fn of(
        repo: &Repo,
        path: &str,
        blob: Option<&str>,
        current: &FileContent,
        now_text: String,
    ) -> Result<Pin, Error> {
        let now = blob_hash(repo, &current.bytes)?;
        let Some(blob) = blob.map(str::trim).filter(|b| !b.is_empty()) else {
            return Ok(Pin {
                base: now_text,
                read: None,
                now,
            });
        };
        let want = gix::ObjectId::from_hex(blob.as_bytes()).map_err(|_| LinesError::BadBlob {
            path: path.to_string(),
            blob: blob.to_string(),
        })?;
        if want == now {
            return Ok(Pin {
                base: now_text,
                read: None,
                now,
            });
        }
        if !txn::has_blob(repo, want) {
            return Err(LinesError::UnknownBlob {
                path: path.to_string(),
                blob: want.to_string(),
            }
            .into());
        }
        let base =
            String::from_utf8(txn::blob(repo, want)?).map_err(|_| LinesError::NotReadable {
                path: path.to_string(),
                why: format!("blob {want} is not UTF-8 text"),
            })?;
        Ok(Pin {
            base,
            read: Some(want),
            now,
        })
    }

    /// Whether the file changed since the blob read.
    pub fn moved(&self) -> bool {
        self.read.is_some()
    }

    /// The blob the edit was addressed to, as hex.
    pub fn blob(&self) -> String {
        self.read.unwrap_or(self.now).to_string()
    }

    /// `edited` (the base with the edit made) carried over to the file as it is now,
    /// by a three-way merge when it changed since the read, with a note saying so; a
    /// collision is [`LinesError::StaleRead`].
    pub fn onto_current(
        &self,
        path: &str,
        current: &FileContent,
        edited: String,
    ) -> Result<(Vec<u8>, Vec<String>), Error> {
        let Some(want) = self.read else {
            return Ok((edited.into_bytes(), Vec::new()));
        };
        let now = self.now;
        let m = merge3_layout(self.base.as_bytes(), &current.bytes, edited.as_bytes())?;
        if !m.conflicts.is_empty() {
            return Err(LinesError::StaleRead {
                path: path.to_string(),
                blob: want.to_string(),
                now: now.to_string(),
                regions: m.conflicts,
                diff: changes_since(&self.base, &String::from_utf8_lossy(&current.bytes)),
            }
            .into());
        }
        let note = format!(
            "{path} changed since it was read (blob {want}, now {now}); the edit was re-placed \
             by a three-way merge onto the current file{}: check the diff",
            if m.by_layout {
                " (only whitespace at the ends of lines changed, merged line by line)"
            } else {
                ""
            }
        );
        Ok((m.text, vec![note]))
    }
}

/// What changed in a file since a read, as a small unified diff (for a stale read's
/// error: the model sees what moved under it without reading the file again).
fn changes_since(read: &str, now: &str) -> String {
    const MAX_LINES: usize = 40;
    let diff = similar::TextDiff::from_lines(read, now);
    let text = diff
        .unified_diff()
        .context_radius(1)
        .header("read", "now")
        .to_string();
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        if i == MAX_LINES {
            out.push_str("… (diff cut)\n");
            break;
        }
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// One file's change to stage, and how to describe it.
pub(super) struct OneFile {
    pub kind: PreviewKind,
    pub path: String,
    /// `None`: the file is created.
    pub before: Option<FileContent>,
    pub after: Vec<u8>,
    /// Edits made (the preview's count).
    pub count: usize,
    pub summary: String,
    /// The preview's `details`.
    pub details: serde_json::Value,
    /// The placement line of the report.
    pub placement: String,
    /// Warnings for the report.
    pub notes: Vec<String>,
}

/// Stages one file's change as a preview of `file.kind` and reports it as the other
/// staging tools do.
pub(super) fn stage_file(
    repo: &Repo,
    file: OneFile,
    staging: &Staging,
    cancel: &Cancel,
) -> Result<StageReport, Error> {
    cancel.check()?;
    let OneFile {
        kind,
        path,
        before,
        after,
        count,
        summary,
        details,
        placement,
        notes,
    } = file;
    let unchanged = before.as_ref().is_some_and(|b| b.bytes == after);
    let mode = before
        .as_ref()
        .map(|b| b.mode)
        .unwrap_or(crate::change::FileMode::Regular);
    let changes = ChangeSet {
        changes: if unchanged {
            Vec::new()
        } else {
            vec![FileChange {
                path: path.clone(),
                before,
                after: Some(FileContent { bytes: after, mode }),
            }]
        },
    };
    let mut meta = PreviewMeta {
        kind,
        summary,
        reason: staging.reason.clone(),
        files: vec![FileMeta {
            path: path.clone(),
            count,
            flags: Vec::new(),
        }],
        replacements: count,
        details,
        ..PreviewMeta::default()
    };
    let preview = stage_changes(repo, &changes, &mut meta, staging.agent.clone())?;
    let mut diagnostics = Diagnostics::default();
    diagnostics.warnings.extend(notes);
    if preview.is_none() {
        diagnostics
            .warnings
            .push("the edit leaves the file as it is; nothing staged".into());
    }
    let files = match &preview {
        Some(_) => meta
            .files
            .iter()
            .map(|f| StagedFile::of_meta(f, f.path.clone()))
            .collect(),
        None => Vec::new(),
    };
    let mut report = StageReport {
        kind,
        replacements: if preview.is_some() { count } else { 0 },
        file_count: usize::from(preview.is_some()),
        diagnostics,
        text: StageText {
            diff: staging
                .diff
                .map(|d| render_diffs(&DiffFile::from_changes(&changes), d.color, d.max_lines)),
            placement: Some(placement),
            offered: None,
            already_applied: 0,
            apply_index: false,
        },
        ..StageReport::of_meta(&meta, files)
    };
    settle(repo, &mut report, preview.as_ref(), staging, cancel)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(start: usize, end: usize, text: &str) -> LineEdit {
        LineEdit {
            start,
            end,
            text: text.into(),
        }
    }

    #[test]
    fn splices_ranges_insertions_and_deletions() {
        let base = "a\nb\nc\nd\n";
        assert_eq!(
            splice("f", base, &[e(2, 3, "B\nC")]).unwrap(),
            "a\nB\nC\nd\n"
        );
        assert_eq!(
            splice("f", base, &[e(1, 0, "z\n")]).unwrap(),
            "z\na\nb\nc\nd\n"
        );
        assert_eq!(
            splice("f", base, &[e(5, 4, "e")]).unwrap(),
            "a\nb\nc\nd\ne\n"
        );
        assert_eq!(
            splice("f", base, &[e(4, 4, ""), e(1, 1, "A")]).unwrap(),
            "A\nb\nc\n"
        );
        assert_eq!(
            splice("f", "a\r\nb\r\n", &[e(2, 2, "x\ny")]).unwrap(),
            "a\r\nx\r\ny\r\n"
        );
        assert_eq!(splice("f", "a\nb", &[e(2, 2, "c\n")]).unwrap(), "a\nc");
        assert!(splice("f", base, &[e(2, 3, ""), e(3, 3, "")]).is_err());
        assert!(splice("f", base, &[e(0, 1, "")]).is_err());
        assert!(splice("f", base, &[e(3, 7, "")]).is_err());
        assert!(splice("f", base, &[]).is_err());
    }
}
