//! `git astedit apply` (and `resolve apply`): writes a pending preview to the work tree.

use git_astedit::error::Exit;
use git_astedit::ops::apply::ApplyRequest;
use git_astedit::ops::apply::ApplyScope;
use git_astedit::report::Action;
use git_astedit::report::ResolveReport;
use git_astedit::txn::ApplyOptions;
use git_astedit::Error;

use super::Ctx;
use super::OutputError;

#[derive(Debug, clap::Args)]
pub struct ApplyArgs {
    /// The preview to apply (a unique id prefix); the newest pending one when omitted
    pub id: Option<String>,
    /// Why it is applied, recorded in the journal (and in --commit's trailers)
    #[arg(long)]
    pub reason: Option<String>,
    /// Also update the index entries of the touched paths
    #[arg(long)]
    pub index: bool,
    /// Make a commit on HEAD holding exactly the preview's changes, with audit trailers
    #[arg(long)]
    pub commit: bool,
    /// The commit message's subject for --commit
    #[arg(short = 'm', long = "message", value_name = "MSG", requires = "commit")]
    pub message: Option<String>,
    /// When the preview is stale, refresh it and apply the refreshed preview, only if
    /// it makes the same number of changes in the same files (else exit 3, the
    /// refreshed preview staged for review)
    #[arg(long, conflicts_with = "pathspecs")]
    pub refresh: bool,
    /// Apply only the part of the preview under these git pathspecs (relative to the
    /// current folder); the rest stays pending as a new preview
    #[arg(last = true, value_name = "PATHSPEC")]
    pub pathspecs: Vec<String>,
}

pub fn run(ctx: &mut Ctx, args: ApplyArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let repo = ctx.repo()?;
    let request = ApplyRequest {
        id: args.id,
        scope: if args.refresh {
            ApplyScope::Refreshed
        } else if !args.pathspecs.is_empty() {
            ApplyScope::Part(args.pathspecs)
        } else {
            ApplyScope::Whole
        },
        options: ApplyOptions {
            reason: args.reason,
            index: args.index || args.commit,
            commit: args.commit.then_some(args.message),
            agent: None,
        },
    };
    let applied = git_astedit::ops::apply::apply(repo, &request)?;
    let refreshed = applied.refreshed.as_ref().map(|r| {
        let display = |p: &str| match json {
            // Paths of previews are repository paths in JSON.
            true => p.to_string(),
            false => repo.display_path(p),
        };
        git_astedit::report::RefreshReport::of(r, display)
    });
    if ctx.json {
        let mut value = applied.report;
        value.refreshed = refreshed.map(Box::new);
        ctx.out.json(&value)?;
        return Ok(Exit::Ok);
    }
    if let Some(r) = &refreshed {
        ctx.out.print(&super::refresh::text(r, false))?;
    }
    print_report(ctx, &applied.report)?;
    Ok(Exit::Ok)
}

/// Prints an apply or undo report: one JSON object, or a summary line per fact.
pub(super) fn print_report(ctx: &mut Ctx, report: &ResolveReport) -> Result<(), OutputError> {
    if ctx.json {
        return ctx.out.json(report);
    }
    let mut text = match report.action {
        Action::Undone => format!(
            "Undid {}: {} written, {} deleted. The preview is pending again; it is applied \
             again only by its id.\n",
            report.id,
            count(report.written.len()),
            count(report.deleted.len())
        ),
        _ => format!(
            "Applied {}: {} written, {} deleted.\n",
            report.id,
            count(report.written.len()),
            count(report.deleted.len())
        ),
    };
    if let Some(s) = &report.split {
        text.push_str(&format!(
            "Split {} by the pathspecs: applied part {}; the remainder, {}, is pending as {} \
             (`git astedit apply {}`).\n",
            s.parent,
            s.selected,
            count(s.remainder_files.len()),
            s.remainder,
            s.remainder
        ));
    }
    if let Some(c) = &report.commit {
        text.push_str(&format!("Committed {c}.\n"));
    }
    for line in undo_notes(report) {
        text.push_str(&line);
        text.push('\n');
    }
    ctx.out.print(&text)
}

/// What an undo left as applied (the index, a commit) and the commands that finish it.
fn undo_notes(report: &ResolveReport) -> Vec<String> {
    let mut out = Vec::new();
    if report.index_restored {
        out.push("Restored the index entries too.".to_string());
    }
    let paths: Vec<String> = report.index_left.iter().map(|p| shell_quote(p)).collect();
    match &report.commit_kept {
        Some(c) => {
            let short = &c[..c.len().min(12)];
            out.push(format!(
                "Commit {short} made by `apply --commit` stays in history: undo restores the \
                 work tree{} and never rewrites commits.",
                if report.index_restored {
                    " and the index"
                } else {
                    " only"
                }
            ));
            out.push(format!(
                "To take it back in history, record the reversal as a commit: git commit -m \
                 'Revert {short}'{}",
                if report.index_restored || paths.is_empty() {
                    String::new()
                } else {
                    format!(" -- {}", paths.join(" "))
                }
            ));
            out.push(format!(
                "(Instead of undo, `git revert {short}` does the same from a clean tree.)"
            ));
        }
        None if !paths.is_empty() => {
            out.push(format!(
                "The index still holds the applied content of {}: undo restores the work tree \
                 only (`git astedit undo --index` restores both).",
                count(paths.len())
            ));
            out.push(format!(
                "To unstage it: git restore --staged -- {}",
                paths.join(" ")
            ));
        }
        None => {}
    }
    out
}

/// A path as a shell word: bare when plainly safe, else single-quoted.
fn shell_quote(p: &str) -> String {
    if !p.is_empty()
        && p.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,@%".contains(&b))
    {
        p.to_string()
    } else {
        format!("'{}'", p.replace('\'', "'\\''"))
    }
}
fn count(n: usize) -> String {
    format!("{n} file{}", if n == 1 { "" } else { "s" })
}
