//! `git astedit recover [--status | --finish | --abandon]`: an apply or undo that was
//! interrupted and could not be finished safely (a path edited after the crash, a
//! folder turned into a symlink) waits here for the user.

use std::fmt::Write as _;

use git_astedit::error::Exit;
use git_astedit::report::LockStatus;
use git_astedit::report::RecoverReport;
use git_astedit::report::RecoverStatusReport;
use git_astedit::report::Version;
use git_astedit::txn;
use git_astedit::txn::Recovery;
use git_astedit::Error;

use super::Ctx;
pub(super) use recover_policy::Policy;

/// Show, finish or abandon an interrupted apply or undo
///
/// Every command first finishes (past its point of no return) or rolls back an
/// interrupted apply or undo. A path it cannot finish safely — one that holds neither
/// the before nor the after content (edited after the crash), or whose folder is now a
/// symlink — is left alone and the run stays unfinished until resolved here; meanwhile
/// commands that write refuse (exit 6) and the others warn.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("what").args(["status", "finish", "abandon"])))]
pub struct RecoverArgs {
    /// Show the interrupted run and where each of its paths stands (the default)
    #[arg(long)]
    pub status: bool,
    /// Finish what can be finished; paths holding neither side stay as they are
    #[arg(long)]
    pub finish: bool,
    /// Put back what can be put back safely, keep the rest as it is, drop the run
    #[arg(long)]
    pub abandon: bool,
}

pub fn run(ctx: &mut Ctx, args: RecoverArgs) -> Result<Exit, Error> {
    let repo = ctx.repo()?;
    if args.finish || args.abandon {
        let recovery = if args.finish {
            txn::finish(repo)?
        } else {
            txn::abandon(repo)?
        };
        print_recovery(ctx, &recovery)?;
        return Ok(if recovery.pending() {
            Exit::Stale
        } else {
            Exit::Ok
        });
    }
    let status = txn::status(repo)?;
    let locks = txn::blocking_locks(repo);
    if ctx.json {
        ctx.out.json(&RecoverStatusReport {
            schema_version: Version,
            unfinished: status.as_ref().and_then(|s| serde_json::to_value(s).ok()),
            locks: locks
                .into_iter()
                .map(|(path, what)| LockStatus { path, what })
                .collect(),
        })?;
        return Ok(Exit::Ok);
    }
    // Writes into a String cannot fail; the text is printed (checked) at the end.
    let mut text = String::new();
    let out = &mut text;
    for (path, what) in &locks {
        let _ = writeln!(out, "Lock {path}: {what}.");
    }
    let Some(s) = status else {
        if locks.is_empty() {
            ctx.out.print("Nothing to recover.\n")?;
        } else {
            ctx.out.print(&text)?;
        }
        return Ok(Exit::Ok);
    };
    let next = match (s.running, s.phase) {
        (true, _) => "still running: its process holds the lock",
        (false, "prepared") => "before its point of no return: it will be rolled back",
        _ => "past its point of no return: it is rolled forward",
    };
    let _ = writeln!(
        out,
        "Interrupted {} of {} (pid {}), {next}.",
        s.op, s.id, s.pid
    );
    for f in &s.files {
        let what = f
            .what
            .as_deref()
            .map(|w| format!(": {w}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:<8} {}{what}",
            f.state,
            git_astedit::render::Quoting::default().quote(&f.path)
        );
    }
    if s.files
        .iter()
        .any(|f| f.state == "changed" || f.state == "refused")
    {
        let _ = writeln!(out, "hint: {}", txn::RESOLVE_HINT);
    }
    ctx.out.print(&text)?;
    Ok(Exit::Ok)
}

fn print_recovery(ctx: &mut Ctx, r: &Recovery) -> Result<(), Error> {
    if ctx.json {
        ctx.out.json(&RecoverReport {
            schema_version: Version,
            id: r.id.clone(),
            op: r.op.to_string(),
            action: r.action.to_string(),
            unresolved: r
                .unresolved
                .iter()
                .filter_map(|u| serde_json::to_value(u).ok())
                .collect(),
            notes: r.notes.clone(),
            message: r.message.clone(),
        })?;
    } else {
        ctx.out.print(&format!("{}\n", r.message))?;
    }
    Ok(())
}

/// What each command does while an interrupted run is unfinished (see the README's
/// Reliability section): commands that write (the work tree, previews, the journal)
/// refuse, read-only ones warn, `recover` itself looks without rolling anything.
pub(super) mod recover_policy {
    use git_astedit::repo::Repo;
    use git_astedit::Error;

    use super::super::Command;
    use super::super::Out;
    use super::super::ResolveCommand;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Policy {
        Refuse,
        Warn,
        /// `recover`: no automatic recovery first; it is the command that does it.
        Skip,
    }

    pub fn of(command: &Command) -> Policy {
        match command {
            Command::Recover(_)
            | Command::Schema(_)
            | Command::Man(_)
            | Command::Completions(_) => Policy::Skip,
            Command::Grep(_)
            | Command::List(_)
            | Command::Show(_)
            | Command::Log(_)
            | Command::Hook(_)
            | Command::Test(_)
            | Command::Verify(_)
            | Command::Mcp(_) => Policy::Warn,
            Command::Scan(args) if !args.stage && !args.apply => Policy::Warn,
            Command::Edit(_)
            | Command::Patch(_)
            | Command::Scan(_)
            | Command::Merge(_)
            | Command::Apply(_)
            | Command::Resolve(ResolveCommand::Apply(_) | ResolveCommand::Discard(_))
            | Command::Discard(_)
            | Command::Undo(_)
            | Command::Refresh(_)
            | Command::Gc(_)
            | Command::Pr(_) => Policy::Refuse,
        }
    }

    /// Recovers first (unless `Skip`), says what it did, and refuses under `Refuse`
    /// while the run stays unfinished.
    pub fn run(policy: Policy, repo: &Repo, out: &mut Out) -> Result<(), Error> {
        if policy == Policy::Skip {
            return Ok(());
        }
        // Clearing is a courtesy to the commands that follow: failing at it (a
        // read-only repository, say) must not stop a command that may not need it.
        match git_astedit::txn::clear_stale(repo) {
            Ok(notes) => {
                for note in notes {
                    out.warn(&note);
                }
            }
            Err(e) => out.warn(&format!(
                "could not clear what a killed git astedit left: {e} (`git astedit recover --status` shows it)"
            )),
        }
        let Some(recovery) = git_astedit::txn::recover(repo)? else {
            return Ok(());
        };
        out.warn(&recovery.message);
        if recovery.pending() && policy == Policy::Refuse {
            return Err(git_astedit::txn::Error::RecoveryPending {
                op: recovery.op.as_str(),
                id: recovery.id,
            }
            .into());
        }
        Ok(())
    }
}
