//! `show` (and the server's `previews show`): one pending preview, its files and its
//! diff.

use crate::diff::render_diffs_counted;
use crate::ops::preview::stream_preview_diffs;
use crate::ops::preview::LoadedPreview;
use crate::repo::Repo;
use crate::report::CappedDiff;
use crate::report::ShowReport;
use crate::report::Version;
use crate::Error;

/// Which preview to show, and how much of it.
#[derive(Debug, Clone, Default)]
pub struct ShowRequest {
    /// A preview id or unique prefix (`None`: the newest pending one).
    pub id: Option<String>,
    /// Per-file line counts only, no diff.
    pub stat: bool,
    /// Only the files these git pathspecs select (relative to the current folder, as
    /// `git show ID -- PATHSPEC`); empty: every file. A spec that selects no file of
    /// the preview is an error naming it.
    pub pathspecs: Vec<String>,
    /// At most this many diff lines (0: no limit); the rest is summarized.
    pub max_render: usize,
    /// The diff as text for a person, coloured or not, handed to the sink file by file
    /// instead of kept in the report: only the blobs of the files shown are read, and a
    /// sink that fails (a closed pipe) stops the reading. `None`: the report holds the
    /// files and the plain diff. Ignored with `stat`.
    pub stream: Option<Streamed>,
}

/// How a streamed diff is written.
#[derive(Debug, Clone, Copy, Default)]
pub struct Streamed {
    pub color: bool,
}

/// What `run` hands its sink when the diff is streamed: first the report (the
/// preview's header, no files), then the diff's text in pieces.
pub enum ShowPiece<'a> {
    Header(&'a ShowReport),
    Diff(&'a str),
}

/// Shows a preview. With [`ShowRequest::stream`] (and no `stat`) the report goes to
/// `sink` before the diff and is returned with [`ShowReport::streamed`] set; otherwise
/// `sink` is not called.
pub fn run(
    repo: &Repo,
    req: &ShowRequest,
    sink: &mut dyn FnMut(ShowPiece<'_>) -> Result<(), Error>,
) -> Result<ShowReport, Error> {
    let preview = narrow(
        repo,
        super::preview::pending(repo, req.id.as_deref())?,
        &req.pathspecs,
    )?;
    if let (Some(stream), false) = (req.stream, req.stat) {
        let report = ShowReport {
            schema_version: Version,
            preview: row(repo, &preview),
            meta: preview.meta.clone(),
            files: Vec::new(),
            diff: None,
            streamed: true,
        };
        sink(ShowPiece::Header(&report))?;
        stream_preview_diffs(repo, &preview, stream.color, req.max_render, |chunk| {
            sink(ShowPiece::Diff(chunk))
        })?;
        return Ok(report);
    }
    let loaded = LoadedPreview::load(repo, preview)?;
    let diff = (!req.stat).then(|| {
        let (text, omitted) = render_diffs_counted(&loaded.files(), false, req.max_render);
        CappedDiff {
            diff_lines: text.lines().count(),
            diff_truncated: omitted > 0,
            diff: text,
        }
    });
    Ok(ShowReport {
        schema_version: Version,
        preview: row(repo, &loaded.preview),
        meta: loaded.preview.meta.clone(),
        files: loaded.shown_files(),
        diff,
        streamed: false,
    })
}

/// The preview's row, with what was decided on its review.
fn row(repo: &Repo, preview: &crate::txn::Preview) -> crate::report::PreviewRow {
    let mut row = super::preview::row(repo, preview);
    row.review = crate::ops::review::state(repo, preview);
    row
}

/// The preview with only the files `pathspecs` select (all of them when there are
/// none); its header (summary, counts) stays the whole preview's.
fn narrow(
    repo: &Repo,
    mut preview: crate::txn::Preview,
    pathspecs: &[String],
) -> Result<crate::txn::Preview, Error> {
    if pathspecs.is_empty() {
        return Ok(preview);
    }
    let paths: Vec<String> = preview.entries.iter().map(|e| e.path.clone()).collect();
    let selected = crate::files::select_paths(repo, pathspecs, &paths)?;
    if selected.is_empty() {
        // Only exclusions, and they exclude every file.
        return Err(crate::files::Error::PathspecNoMatch(pathspecs.to_vec()).into());
    }
    preview.entries.retain(|e| selected.contains(&e.path));
    Ok(preview)
}
