/*!
The command line: one module per command, each turning its arguments into one engine
call and rendering the result. Errors are rendered once, here, in [`report_error`].
*/

use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;
use clap::FromArgMatches;
use clap::Parser;
use clap::Subcommand;
use git_astedit::error::Exit;
use git_astedit::repo::Repo;
use git_astedit::Error;

mod apply;
mod common;
mod completions;
mod discard;
mod edit;
mod gc;
mod grep;
mod hook;
mod list;
mod log;
mod man;
mod mcp;
mod merge;
mod output;
mod patch;
mod pr;
mod recover;
mod scan;
mod show;
mod undo;

pub use output::Out;

/// Structural search and rewrites staged as git objects: preview, apply, undo.
#[derive(Debug, Parser)]
#[command(name = "git-astedit", bin_name = "git astedit", version, about, long_about = None)]
pub struct Cli {
    /// Run as if started in DIR
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub dir: Option<std::path::PathBuf>,

    /// Print results (and errors) as JSON on stdout
    #[arg(long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    // Commands without a doc comment here take theirs (a one-line summary for the list,
    // the whole text for `--help`) from their arguments struct.
    Grep(grep::GrepArgs),
    Edit(edit::EditArgs),
    Patch(patch::PatchArgs),
    Scan(scan::ScanArgs),
    /// Install a git pre-commit hook that runs `scan --check --cached`
    #[command(subcommand)]
    Hook(hook::HookCommand),
    Merge(merge::MergeArgs),
    List(list::ListArgs),
    Show(show::ShowArgs),
    /// Apply a pending preview to the work tree
    Apply(apply::ApplyArgs),
    /// Drop a pending preview
    #[command(visible_alias = "reject")]
    Discard(discard::DiscardArgs),
    /// Apply or discard a preview (the agents' pair of verbs)
    #[command(subcommand)]
    Resolve(ResolveCommand),
    /// Undo an applied preview
    Undo(undo::UndoArgs),
    /// Show the journal of staged, applied, discarded and undone transactions
    Log(log::LogArgs),
    /// Prune old previews and journal entries
    Gc(gc::GcArgs),
    Mcp(mcp::McpArgs),
    Pr(pr::PrArgs),
    Recover(recover::RecoverArgs),
    Man(man::ManArgs),
    Completions(completions::CompletionsArgs),
}

#[derive(Debug, Subcommand)]
pub enum ResolveCommand {
    /// Apply a pending preview (same as `apply`)
    Apply(apply::ApplyArgs),
    /// Discard a pending preview (same as `discard`)
    Discard(discard::DiscardArgs),
}

/// What every command gets: output streams, the JSON flag, and the repository.
pub struct Ctx {
    pub out: Out,
    pub json: bool,
    repo: Option<Repo>,
    unfinished: recover::Policy,
}

impl Ctx {
    /// Opens the repository on first use (so `--help` works anywhere), and first
    /// finishes or rolls back an apply that a crash interrupted.
    pub fn repo(&mut self) -> Result<&Repo, Error> {
        if self.repo.is_none() {
            let repo = Repo::discover()?;
            recover::recover_policy::run(self.unfinished, &repo, &mut self.out)?;
            self.repo = Some(repo);
        }
        Ok(self.repo.as_ref().expect("repository was just opened"))
    }

    /// The repository and the output streams at once (they borrow different fields).
    pub fn parts(&mut self) -> Result<(&Repo, &mut Out), Error> {
        self.repo()?;
        let repo = self.repo.as_ref().expect("repository was just opened");
        Ok((repo, &mut self.out))
    }
}

pub fn main() -> ExitCode {
    let parsed = Cli::command().try_get_matches().and_then(|matches| {
        let cli = Cli::from_arg_matches(&matches)?;
        Ok((cli, matches))
    });
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                // A bare `git astedit` is a usage error (help on stderr, exit 2), as
                // in ast-grep; only an asked-for --help or --version succeeds.
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(Exit::BadInput.code()),
            };
        }
    };
    let mut ctx = Ctx {
        out: Out::new(),
        json: cli.json,
        repo: None,
        unfinished: recover::recover_policy::of(&cli.command),
    };
    if let Some(dir) = &cli.dir {
        if let Err(e) = std::env::set_current_dir(dir) {
            let err = Error::from(git_astedit::error::InputError {
                action: "change to folder",
                path: dir.display().to_string(),
                source: e,
            });
            return report_error(&mut ctx, &err);
        }
    }
    // Which -r goes with which -p is a matter of order, which only the matches know.
    if let Some(("edit", edit_matches)) = matches.subcommand() {
        if let Err(e) = edit::check_op_order(edit_matches) {
            return report_error(&mut ctx, &Error::from(e));
        }
    }
    let result = run(&mut ctx, cli.command);
    let code = match result {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(err) => report_error(&mut ctx, &err),
    };
    let _ = ctx.out.flush();
    code
}

fn run(ctx: &mut Ctx, command: Command) -> Result<Exit, Error> {
    match command {
        Command::Grep(args) => grep::run(ctx, args),
        Command::Edit(args) => edit::run(ctx, args),
        Command::Patch(args) => patch::run(ctx, args),
        Command::List(args) => list::run(ctx, args),
        Command::Show(args) => show::run(ctx, args),
        Command::Apply(args) | Command::Resolve(ResolveCommand::Apply(args)) => {
            apply::run(ctx, args)
        }
        Command::Discard(args) | Command::Resolve(ResolveCommand::Discard(args)) => {
            discard::run(ctx, args)
        }
        Command::Undo(args) => undo::run(ctx, args),
        Command::Log(args) => log::run(ctx, args),
        Command::Gc(args) => gc::run(ctx, args),
        Command::Scan(args) => scan::run(ctx, args),
        Command::Hook(cmd) => hook::run(ctx, cmd),
        Command::Merge(args) => merge::run(ctx, args),
        Command::Mcp(args) => mcp::run(ctx, args),
        Command::Pr(args) => pr::run(ctx, args),
        Command::Recover(args) => recover::run(ctx, args),
        Command::Man(args) => man::run(ctx, args),
        Command::Completions(args) => completions::run(ctx, args),
    }
}

/// Renders an error once: JSON on stdout with `--json`, else `error:` lines on stderr.
fn report_error(ctx: &mut Ctx, err: &Error) -> ExitCode {
    let exit = err.exit();
    if ctx.json {
        let value = serde_json::json!({
            "error": {
                "code": err.code(),
                "exit": exit.code(),
                "message": err.to_string(),
                "causes": err.causes(),
                "hint": err.hint(),
                "details": err.details(),
            }
        });
        let _ = writeln!(ctx.out.stdout(), "{value}");
    } else {
        let mut text = format!("error: {err}\n");
        for cause in err.causes() {
            text.push_str(&format!("  caused by: {cause}\n"));
        }
        if let Some(hint) = err.hint() {
            text.push_str(&format!("hint: {hint}\n"));
        }
        let _ = ctx.out.stdout().flush();
        let _ = write!(ctx.out.stderr(), "{text}");
    }
    let _ = ctx.out.flush();
    ExitCode::from(exit.code())
}
