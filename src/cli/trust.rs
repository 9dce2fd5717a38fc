//! `git astedit trust`: vouches for a preview (a fetched one) after showing what its
//! refresh would run (the decision and the record are `git_astedit::ops::trust`'s).

use std::io::BufRead as _;
use std::io::IsTerminal as _;
use std::io::Write as _;

use git_astedit::error::Exit;
use git_astedit::ops::trust::TrustRequest;
use git_astedit::Error;

use super::Ctx;

/// Let a preview's refresh run what it records, once you have read it
///
/// Prints what refreshing the preview would run (a command preview's exact argv and
/// folder, the formatters it records), asks, and on yes records its commit id with a
/// digest of that in the local trust record (`<git dir>/astedit/trusted`, which no
/// fetch carries). A preview changed in any way is another commit and asks again.
/// Without a terminal to ask on, nothing is recorded unless `--yes` is given. A
/// preview made here is trusted already.
#[derive(Debug, clap::Args)]
pub struct TrustArgs {
    /// The preview to trust (a unique id prefix)
    pub id: String,
    /// Record it without asking (for scripts: read what it runs first, e.g. in the
    /// error of the refused refresh or `git astedit show ID`)
    #[arg(long)]
    pub yes: bool,
}

pub fn run(ctx: &mut Ctx, args: TrustArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let request = TrustRequest { id: Some(args.id) };
    let (shown, preview) = git_astedit::ops::trust::inspect(repo, &request)?;
    if !shown.was.is_trusted() && !args.yes && !confirmed(&shown, json)? {
        return Err(git_astedit::ops::trust::unconfirmed(&shown));
    }
    let report = git_astedit::ops::trust::record(repo, shown, &preview)?;
    out.emit(&report)?;
    Ok(report.exit())
}

/// Asks on the terminal whether to trust the preview `shown`, after printing what it
/// runs; `false` when there is no terminal (or `--json`) to ask on, or the answer is no.
fn confirmed(shown: &git_astedit::report::trust::TrustReport, json: bool) -> Result<bool, Error> {
    if json || !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    let lines = git_astedit::ops::trust::run_lines(&shown.runs, "  ");
    let mut err = std::io::stderr().lock();
    let what = if lines.is_empty() {
        "  nothing (its recipe runs no program)".to_string()
    } else {
        lines.join("\n")
    };
    let _ = write!(
        err,
        "refreshing preview {} would run:\n{what}\nTrust it to run this? [y/N] ",
        shown.id
    );
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| git_astedit::error::UsageError(format!("cannot read the answer: {e}")))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
