//! `git astedit show`: a preview's diff, stat or JSON.

use git_astedit::error::Exit;
use git_astedit::ops::preview::stream_preview_diffs;
use git_astedit::ops::preview::LoadedPreview;
use git_astedit::render;
use git_astedit::render::render_diffs_counted;
use git_astedit::report::CappedDiff;
use git_astedit::report::PreviewRow;
use git_astedit::report::ShowReport;
use git_astedit::report::Version;
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

pub fn run(ctx: &mut Ctx, args: ShowArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let preview = git_astedit::ops::preview::pending(repo, args.id.as_deref())?;
    if !json && !args.stat {
        // The diff alone reads only the blobs of the files it shows.
        out.print(&header(&preview))?;
        stream_preview_diffs(repo, &preview, color, args.max_render, |chunk| {
            Ok(out.print(chunk)?)
        })?;
        return Ok(Exit::Ok);
    }
    let loaded = LoadedPreview::load(repo, preview)?;
    let files = loaded.files();
    let p = &loaded.preview;

    if json {
        let shown = loaded.shown_files();
        let diff = (!args.stat).then(|| {
            let (text, omitted) = render_diffs_counted(&files, false, args.max_render);
            CappedDiff {
                diff_lines: text.lines().count(),
                diff_truncated: omitted > 0,
                diff: text,
            }
        });
        out.json(&ShowReport {
            schema_version: Version,
            preview: PreviewRow::of(p),
            meta: p.meta.clone(),
            files: shown,
            diff,
        })?;
        return Ok(Exit::Ok);
    }

    // --stat.
    let mut text = header(p);
    let quoting = repo.quoting();
    let paths: Vec<String> = files
        .iter()
        .map(|f| quoting.quote_owned(f.path.to_string()))
        .collect();
    let width = paths.iter().map(|p| p.chars().count()).max().unwrap_or(0);
    let (mut added, mut removed) = (0, 0);
    for (f, path) in files.iter().zip(&paths) {
        let counts = render::line_counts(
            f.before.map(|s| s.bytes).unwrap_or_default(),
            f.after.map(|s| s.bytes).unwrap_or_default(),
        );
        added += counts.added;
        removed += counts.removed;
        render::stat_line(&mut text, path, width, counts, color);
    }
    text.push_str(&format!(
        " {} changed, {} insertions(+), {} deletions(-)\n",
        render::plural(files.len(), "file"),
        added,
        removed
    ));
    out.print(&text)?;
    Ok(Exit::Ok)
}

/// The lines above a shown preview: id, time, kind, summary, reason.
fn header(p: &Preview) -> String {
    let mut text = format!(
        "preview {}  {}  {}\n{}\n",
        p.id,
        render::format_time(p.time),
        p.meta.kind,
        render::escape_line(&p.meta.summary)
    );
    if let Some(reason) = &p.meta.reason {
        text.push_str(&format!("reason: {}\n", render::escape_line(reason)));
    }
    text.push('\n');
    text
}
