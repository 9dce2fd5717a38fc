//! `git astedit show`: a preview's diff, stat or JSON. Also the diff printer that
//! `edit` and `patch` use right after staging.

use std::io::Write;

use git_astedit::change::ChangeSet;
use git_astedit::change::FileMode;
use git_astedit::error::Exit;
use git_astedit::render;
use git_astedit::render::Side;
use git_astedit::txn;
use git_astedit::txn::Preview;
use git_astedit::Error;

use super::Ctx;

/// Show a preview's diff (the newest pending one when ID is omitted).
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Preview id or unique prefix
    pub id: Option<String>,

    /// Show per-file line counts instead of the diff
    #[arg(long)]
    pub stat: bool,

    /// Render at most N diff lines (0: no limit); the rest is summarized
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_render: usize,
}

/// One file to render: bytes and modes of both sides.
pub struct DiffFile<'a> {
    pub path: &'a str,
    pub before: Option<Side<'a>>,
    pub after: Option<Side<'a>>,
}

impl<'a> DiffFile<'a> {
    pub fn from_changes(set: &'a ChangeSet) -> Vec<DiffFile<'a>> {
        set.changes
            .iter()
            .map(|c| DiffFile {
                path: &c.path,
                before: c.before.as_ref().map(|b| Side {
                    bytes: &b.bytes,
                    mode: b.mode,
                }),
                after: c.after.as_ref().map(|a| Side {
                    bytes: &a.bytes,
                    mode: a.mode,
                }),
            })
            .collect()
    }
}

/// Renders diffs of `files`, stopping after about `max_lines` lines (0: no limit) and
/// saying what it left out. Returns the text.
pub fn render_diffs(files: &[DiffFile<'_>], color: bool, max_lines: usize) -> String {
    let mut diff = LimitedDiff::new(max_lines);
    for file in files {
        if diff.is_full() {
            diff.omit(file.path);
            continue;
        }
        diff.add(|out| {
            render::file_diff(out, file.path, file.before, file.after, color);
        });
    }
    diff.finish()
}

/// [`render_diffs`] of a stored preview, reading a file's blobs only when its diff is
/// shown: the files past `max_lines` of a large preview cost nothing.
pub fn render_preview_diffs(
    repo: &git_astedit::repo::Repo,
    preview: &Preview,
    color: bool,
    max_lines: usize,
) -> Result<String, Error> {
    let mut diff = LimitedDiff::new(max_lines);
    for e in &preview.entries {
        if diff.is_full() {
            diff.omit(&e.path);
            continue;
        }
        let before = e.before.map(|(id, _)| txn::blob(repo, id)).transpose()?;
        let after = e.after.map(|(id, _)| txn::blob(repo, id)).transpose()?;
        let before = side(e.before.map(|(_, m)| m), before.as_deref());
        let after = side(e.after.map(|(_, m)| m), after.as_deref());
        diff.add(|out| {
            render::file_diff(out, &e.path, before, after, color);
        });
    }
    Ok(diff.finish())
}

/// Diff text up to about a number of lines, and the paths left out after that.
struct LimitedDiff<'a> {
    out: String,
    lines: usize,
    max_lines: usize,
    omitted: Vec<&'a str>,
}

impl<'a> LimitedDiff<'a> {
    fn new(max_lines: usize) -> LimitedDiff<'a> {
        LimitedDiff {
            out: String::new(),
            lines: 0,
            max_lines,
            omitted: Vec::new(),
        }
    }

    fn is_full(&self) -> bool {
        self.max_lines > 0 && self.lines >= self.max_lines
    }

    fn add(&mut self, render: impl FnOnce(&mut String)) {
        let start = self.out.len();
        render(&mut self.out);
        self.lines += self.out[start..].lines().count();
    }

    fn omit(&mut self, path: &'a str) {
        self.omitted.push(path);
    }

    fn finish(mut self) -> String {
        if !self.omitted.is_empty() {
            self.out.push_str(&format!(
                "… diff of {} not shown (--max-render {}): {}\n",
                render::plural(self.omitted.len(), "more file"),
                self.max_lines,
                self.omitted.join(", ")
            ));
        }
        self.out
    }
}

/// The before and after bytes of one stored entry.
type BlobPair = (Option<Vec<u8>>, Option<Vec<u8>>);

/// A stored preview with its blobs read.
pub struct LoadedPreview {
    pub preview: Preview,
    pub blobs: Vec<BlobPair>,
}

impl LoadedPreview {
    pub fn load(repo: &git_astedit::repo::Repo, preview: Preview) -> Result<Self, Error> {
        let mut blobs = Vec::with_capacity(preview.entries.len());
        for e in &preview.entries {
            let before = e.before.map(|(id, _)| txn::blob(repo, id)).transpose()?;
            let after = e.after.map(|(id, _)| txn::blob(repo, id)).transpose()?;
            blobs.push((before, after));
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
}

fn side(mode: Option<FileMode>, bytes: Option<&[u8]>) -> Option<Side<'_>> {
    match (mode, bytes) {
        (Some(mode), Some(bytes)) => Some(Side { bytes, mode }),
        _ => None,
    }
}

/// The JSON shape of one stored preview (shared by `show`, `list`).
pub fn preview_json(p: &Preview) -> serde_json::Value {
    serde_json::json!({
        "id": p.id,
        "commit": p.commit.to_string(),
        "time": render::format_time(p.time),
        "kind": p.meta.kind,
        "summary": p.meta.summary,
        "reason": p.meta.reason,
        "files": p.entries.len(),
    })
}

pub fn run(ctx: &mut Ctx, args: ShowArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let preview = txn::find(repo, args.id.as_deref())?;
    if !json && !args.stat {
        // The diff alone reads only the blobs of the files it shows.
        let mut text = header(&preview);
        text.push_str(&render_preview_diffs(
            repo,
            &preview,
            color,
            args.max_render,
        )?);
        let _ = out.stdout().write_all(text.as_bytes());
        return Ok(Exit::Ok);
    }
    let loaded = LoadedPreview::load(repo, preview)?;
    let files = loaded.files();
    let p = &loaded.preview;

    if json {
        let file_rows: Vec<serde_json::Value> = p
            .entries
            .iter()
            .zip(&files)
            .map(|(e, f)| {
                let counts = render::line_counts(
                    f.before.map(|s| s.bytes).unwrap_or_default(),
                    f.after.map(|s| s.bytes).unwrap_or_default(),
                );
                serde_json::json!({
                    "path": e.path,
                    "before": e.before.map(|(id, m)| serde_json::json!({"blob": id.to_string(), "mode": m})),
                    "after": e.after.map(|(id, m)| serde_json::json!({"blob": id.to_string(), "mode": m})),
                    "added_lines": counts.added,
                    "removed_lines": counts.removed,
                })
            })
            .collect();
        let mut value = preview_json(p);
        value["meta"] = serde_json::to_value(&p.meta).unwrap_or_default();
        value["files"] = serde_json::Value::Array(file_rows);
        if !args.stat {
            value["diff"] = serde_json::Value::String(render_diffs(&files, false, args.max_render));
        }
        let _ = writeln!(out.stdout(), "{value}");
        return Ok(Exit::Ok);
    }

    // --stat.
    let mut text = header(p);
    let width = files.iter().map(|f| f.path.len()).max().unwrap_or(0);
    let (mut added, mut removed) = (0, 0);
    for f in &files {
        let counts = render::line_counts(
            f.before.map(|s| s.bytes).unwrap_or_default(),
            f.after.map(|s| s.bytes).unwrap_or_default(),
        );
        added += counts.added;
        removed += counts.removed;
        render::stat_line(&mut text, f.path, width, counts, color);
    }
    text.push_str(&format!(
        " {} changed, {} insertions(+), {} deletions(-)\n",
        render::plural(files.len(), "file"),
        added,
        removed
    ));
    let _ = out.stdout().write_all(text.as_bytes());
    Ok(Exit::Ok)
}

/// The lines above a shown preview: id, time, kind, summary, reason.
fn header(p: &Preview) -> String {
    let mut text = format!(
        "preview {}  {}  {}\n{}\n",
        p.id,
        render::format_time(p.time),
        p.meta.kind,
        p.meta.summary
    );
    if let Some(reason) = &p.meta.reason {
        text.push_str(&format!("reason: {reason}\n"));
    }
    text.push('\n');
    text
}
