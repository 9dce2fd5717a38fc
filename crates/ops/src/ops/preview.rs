//! Reading a stored preview's blobs for display: its diff (reading only the files
//! shown) or every file at once.

use crate::change::FileMode;
use crate::diff::DiffFile;
use crate::diff::LimitedDiff;
use crate::diff::Side;
use crate::txn::Preview;
use crate::Error;

/// The row of `preview` in a listing, with its signature as git verifies it (an
/// unsigned preview costs no process; one git cannot check says `error`), its origin
/// and what its refresh would run ([`crate::ops::trust`]).
pub fn row(repo: &crate::repo::Repo, preview: &Preview) -> crate::report::PreviewRow {
    let check = crate::txn::sign::verify(repo, preview.commit)
        .unwrap_or_else(|_| crate::txn::sign::SignatureCheck::failed());
    let origin = crate::ops::trust::origin_signed(repo, preview, || check.clone());
    let runs = crate::ops::trust::runs(&preview.meta);
    let mut row = crate::report::PreviewRow::of(preview, origin, runs);
    row.signature = Some(crate::report::SignatureRow::of(&check));
    row
}

/// [`crate::diff::render_diffs`] of a stored preview, reading a file's blobs only when
/// its diff is shown: the files past `max_lines` of a large preview cost nothing.
pub fn render_preview_diffs(
    repo: &crate::repo::Repo,
    preview: &Preview,
    color: bool,
    max_lines: usize,
) -> Result<String, Error> {
    let mut text = String::new();
    stream_preview_diffs(repo, preview, color, max_lines, |chunk| {
        text.push_str(chunk);
        Ok(())
    })?;
    Ok(text)
}

/// Like [`render_preview_diffs`], handing the text to `sink` file by file, so that a
/// reader that stops early (a closed pipe) stops the rendering too.
pub fn stream_preview_diffs(
    repo: &crate::repo::Repo,
    preview: &Preview,
    color: bool,
    max_lines: usize,
    mut sink: impl FnMut(&str) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut diff = LimitedDiff::new(max_lines);
    for e in &preview.entries {
        if diff.is_full() {
            diff.omit();
            continue;
        }
        let (before, after) = read_blobs(repo, e)?;
        let before = side(e.before.map(|(_, m)| m), before.as_deref());
        let after = side(e.after.map(|(_, m)| m), after.as_deref());
        diff.add(|out| {
            crate::diff::file_diff(out, &e.path, before, after, color);
        });
        sink(&diff.take())?;
    }
    sink(&diff.finish())
}

/// The before and after bytes of one stored entry.
type BlobPair = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Reads an entry's before and after blobs (`None` for a side that does not exist).
fn read_blobs(repo: &crate::repo::Repo, e: &crate::txn::StoredEntry) -> Result<BlobPair, Error> {
    let before = e
        .before
        .map(|(id, _)| crate::txn::blob(repo, id))
        .transpose()?;
    let after = e
        .after
        .map(|(id, _)| crate::txn::blob(repo, id))
        .transpose()?;
    Ok((before, after))
}

/// The pending preview `show` and `previews show` mean: by unique id prefix, or the
/// newest never-applied one when `id` is `None`.
pub fn pending(repo: &crate::repo::Repo, id: Option<&str>) -> Result<Preview, Error> {
    Ok(crate::txn::find(repo, id)?)
}

/// A stored preview with its blobs read.
pub struct LoadedPreview {
    pub preview: Preview,
    pub blobs: Vec<BlobPair>,
}

impl LoadedPreview {
    pub fn load(repo: &crate::repo::Repo, preview: Preview) -> Result<Self, Error> {
        let mut blobs = Vec::with_capacity(preview.entries.len());
        for e in &preview.entries {
            blobs.push(read_blobs(repo, e)?);
        }
        Ok(LoadedPreview { preview, blobs })
    }

    pub fn files(&self) -> Vec<DiffFile<'_>> {
        self.preview
            .entries
            .iter()
            .zip(&self.blobs)
            .map(|(e, (b, a))| DiffFile {
                path: &e.path,
                before: side(e.before.map(|(_, m)| m), b.as_deref()),
                after: side(e.after.map(|(_, m)| m), a.as_deref()),
            })
            .collect()
    }

    /// Each file of the preview with its status, blobs and line counts, as `show`
    /// and the server's `previews show` report them.
    pub fn shown_files(&self) -> Vec<crate::report::ShownFile> {
        use crate::report::BlobRef;
        use crate::report::FileStatus;
        self.preview
            .entries
            .iter()
            .zip(self.files())
            .map(|(e, f)| {
                let counts = crate::diff::line_counts(
                    f.before.map(|s| s.bytes).unwrap_or_default(),
                    f.after.map(|s| s.bytes).unwrap_or_default(),
                );
                crate::report::ShownFile {
                    path: e.path.clone(),
                    status: match (&e.before, &e.after) {
                        (None, _) => FileStatus::Added,
                        (_, None) => FileStatus::Deleted,
                        _ => FileStatus::Modified,
                    },
                    before: BlobRef::of(e.before),
                    after: BlobRef::of(e.after),
                    added_lines: counts.added,
                    removed_lines: counts.removed,
                }
            })
            .collect()
    }
}

pub fn side(mode: Option<FileMode>, bytes: Option<&[u8]>) -> Option<Side<'_>> {
    match (mode, bytes) {
        (Some(mode), Some(bytes)) => Some(Side { bytes, mode }),
        _ => None,
    }
}
