//! `git astedit refresh`: re-derives a stale pending preview on the current work tree
//! and stages the result as its successor (the engine is `git_astedit::ops::refresh`).

use git_astedit::error::Exit;
use git_astedit::ops::refresh::How;
use git_astedit::ops::refresh::RefreshRequest;
use git_astedit::report::RefreshReport;
use git_astedit::report::RefreshState;
use git_astedit::Error;

use super::Ctx;

/// Re-derive a pending preview on the current work tree, staged as its successor
///
/// Files that still hold what the preview was computed from keep their blobs; edit
/// previews re-run their ops on changed files, patch previews resolve their patch
/// again, scan and merge previews take a three-way merge. A file edited where the
/// preview changes it refuses the refresh (exit 3, naming the lines). The old preview
/// is then `refreshed` in the journal, naming its successor.
#[derive(Debug, clap::Args)]
pub struct RefreshArgs {
    /// The preview to refresh (a unique id prefix); the newest pending one when omitted
    pub id: Option<String>,
    /// Edit and scan previews: re-run the ops or rules over the whole file set recorded
    /// at staging, so files that match now join the successor
    #[arg(long)]
    pub all: bool,
}

pub fn run(ctx: &mut Ctx, args: RefreshArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let refreshed = git_astedit::ops::refresh::refresh(
        repo,
        &RefreshRequest {
            id: args.id,
            all: args.all,
            agent: None,
        },
    )?;
    if json {
        // Paths of previews are repository paths in JSON, as in `show` and `log`.
        out.json(&RefreshReport::of(&refreshed, str::to_string))?;
        return Ok(Exit::Ok);
    }
    let report = RefreshReport::of(&refreshed, |p| repo.display_path(p));
    out.print(&text(&report, true))?;
    Ok(Exit::Ok)
}

/// The text form of a refresh report (also used by `apply --refresh`, which applies
/// the successor at once: `hint_apply` false).
pub(super) fn text(r: &RefreshReport, hint_apply: bool) -> String {
    let mut s = String::new();
    if r.state == RefreshState::Current {
        s.push_str(&format!(
            "Preview {} is current: every file still holds what it was computed from. \
             Nothing was staged.\n",
            r.id
        ));
        return s;
    }
    for f in r.files.iter().filter(|f| f.how != How::Kept) {
        let count = |n: Option<usize>| n.map_or("-".to_string(), |n| n.to_string());
        let how = match f.how {
            How::Kept => "kept",
            How::Rerun => "re-run",
            How::Repatched => "patch resolved again",
            How::Merged => "three-way merge",
            How::Dropped => "dropped out",
        };
        s.push_str(&format!(
            "{}: {} → {} ({how}{})\n",
            git_astedit::render::escape_line(&f.path),
            count(f.before),
            count(f.now),
            f.why
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default()
        ));
    }
    let kept = r.files.iter().filter(|f| f.how == How::Kept).count();
    if kept > 0 {
        s.push_str(&format!(
            "{} unchanged (same blobs).\n",
            git_astedit::render::plural(kept, "file")
        ));
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    if let Some(next) = &r.successor {
        s.push_str(&format!(
            "Refreshed {} as {next}: {} replacements before, {} now{}.",
            r.id,
            r.replacements_before,
            r.replacements_now,
            if r.same_counts {
                ", the same in every file"
            } else {
                ""
            }
        ));
        if hint_apply {
            s.push_str(&format!(" Apply with `git astedit apply {next}`."));
        }
        s.push('\n');
    }
    s
}
