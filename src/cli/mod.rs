/*!
The command line, a front end: one module per command, each turning its arguments
into a library call (an engine, `txn` or `ops`) and printing the typed report
(`git_astedit::report`) as text or JSON through [`Out`] (results on stdout, warnings
on stderr, every write checked, a closed pipe ends the run quietly). No gix calls and
no child processes here but the pager ([`pager`]); colour ([`color`]) and progress
bars ([`progress`]) are decided once per run in [`main`]. Errors are reported once,
here, in [`report_error`], in the one error shape (usage errors from clap too, under
`--json`), rendered by `git_astedit::render::error`.
*/

use std::io::Write as _;
use std::process::ExitCode;

use clap::CommandFactory;
use clap::FromArgMatches;
use clap::Parser;
use clap::Subcommand;
use git_astedit::error::Exit;
use git_astedit::repo::Repo;
use git_astedit::Error;

mod agent_hook;
mod allow;
mod apply;
mod astgrep;
mod browser;
mod campaign;
mod color;
mod common;
mod completions;
mod discard;
mod edit;
mod gc;
mod grep;
mod hook;
mod interactive;
mod lane;
mod list;
mod log;
mod lsp;
mod man;
mod mcp;
mod merge;
mod new;
mod output;
mod pager;
mod patch;
mod pr;
mod progress;
mod recover;
mod refresh;
mod review;
mod run;
mod scan;
mod schema;
mod show;
mod steps;
mod test;
mod traits;
mod trust;
mod undo;
mod verify;
mod web;

pub use output::Out;
pub use output::OutputError;

/// Structural search and rewrites staged as git objects: preview, apply, undo.
#[derive(Debug, Parser)]
#[command(name = "git-astedit", bin_name = "git astedit", version, about, long_about = None)]
pub struct Cli {
    /// Run as if started in DIR (before the command, as in git: `grep -C N` is context)
    #[arg(short = 'C', value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,

    /// Print results (and errors) as JSON on stdout: one object on one line (compact,
    /// the default), indented (pretty), or, for grep, one ast-grep match a line as
    /// the search goes (stream)
    #[arg(
        long,
        global = true,
        value_name = "STYLE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "compact"
    )]
    pub json: Option<JsonStyle>,

    /// Colour the output: auto (on a terminal or into a pager), always, never, ansi (as
    /// always; ast-grep's); a bare --color is always (as in git). Wins over color.ui,
    /// color.diff and color.grep
    #[arg(
        long,
        global = true,
        value_name = "WHEN",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "always",
        overrides_with = "no_color"
    )]
    pub color: Option<color::When>,

    /// Same as --color=never
    #[arg(long, global = true, overrides_with = "color")]
    pub no_color: bool,

    /// Keep grep, edit and scan results per file content in DIR (e.g. one a CI job
    /// restores) instead of the git dir's astedit/cache
    #[arg(long, global = true, value_name = "DIR", overrides_with = "no_cache")]
    pub cache_dir: Option<std::path::PathBuf>,

    /// Neither read nor write the result cache: read and parse every file
    #[arg(long, global = true, overrides_with = "cache_dir")]
    pub no_cache: bool,

    /// Page the output (before the command, as in git), through GIT_PAGER, core.pager,
    /// PAGER or less
    #[arg(short = 'p', long, overrides_with = "no_pager")]
    pub paginate: bool,

    /// Never page the output (before the command, as in git)
    #[arg(short = 'P', long, overrides_with = "paginate")]
    pub no_pager: bool,

    #[command(subcommand)]
    pub command: Command,
}

/// How `--json` prints (ast-grep's `--json=STYLE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JsonStyle {
    // Values without doc comments keep every command's help in its short layout.
    Compact,
    Pretty,
    Stream,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    // Commands without a doc comment here take theirs (a one-line summary for the list,
    // the whole text for `--help`) from their arguments struct.
    Grep(grep::GrepArgs),
    Edit(edit::EditArgs),
    Patch(patch::PatchArgs),
    Run(run::RunArgs),
    Scan(Box<scan::ScanArgs>),
    Steps(steps::StepsArgs),
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
    Refresh(refresh::RefreshArgs),
    Review(review::ReviewArgs),
    Trust(trust::TrustArgs),
    /// Show the journal of staged, applied, discarded and undone transactions
    Log(log::LogArgs),
    /// Prune old previews and journal entries
    Gc(gc::GcArgs),
    Allow(allow::AllowArgs),
    Mcp(mcp::McpArgs),
    /// Keep agents' own Read/Edit/Write safe: hooks for Claude Code and OpenCode
    #[command(subcommand)]
    AgentHook(agent_hook::AgentHookCommand),
    /// One work tree per agent: start, list, drop and merge lanes
    #[command(subcommand)]
    Lane(lane::LaneCommand),
    Lsp(lsp::LspArgs),
    Pr(pr::PrArgs),
    #[command(subcommand)]
    Campaign(campaign::CampaignCommand),
    Schema(schema::SchemaArgs),
    Test(test::TestArgs),
    New(new::NewArgs),
    Verify(verify::VerifyArgs),
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
    /// `--json=STYLE` (compact when not given).
    pub json_style: JsonStyle,
    /// The result cache the command's operation uses (`--no-cache`, `--cache-dir`).
    pub cache: git_astedit::ops::cache::CacheChoice,
    repo: Option<Repo>,
    /// Recovery ran on the opened repository.
    recovered: bool,
    /// [`Ctx::config_value`] looked for a repository (found or not).
    looked_for_repo: bool,
    unfinished: traits::Policy,
}

impl Ctx {
    fn new(json: bool, unfinished: traits::Policy) -> Ctx {
        Ctx {
            out: Out::new(),
            json,
            json_style: JsonStyle::Compact,
            cache: Default::default(),
            repo: None,
            recovered: false,
            looked_for_repo: false,
            unfinished,
        }
    }

    /// Opens the repository on first use (so `--help` works anywhere), and first
    /// finishes or rolls back an apply that a crash interrupted.
    pub fn repo(&mut self) -> Result<&Repo, Error> {
        if self.repo.is_none() {
            self.repo = Some(Repo::discover()?);
        }
        let repo = self.repo.as_ref().expect("repository was just opened");
        self.out.set_quoting(repo.quoting());
        if !self.recovered {
            recover::recover_policy::run(self.unfinished, repo, &mut self.out)?;
            self.recovered = true;
        }
        Ok(repo)
    }

    /// A git config value for the output settings (colour, pager), from the
    /// repository if there is one (opened here, recovery left for later). Outside a
    /// repository: the `git -c` values only.
    fn config_value(&mut self, key: &str) -> Option<Option<String>> {
        if self.repo.is_none() && !self.looked_for_repo {
            self.looked_for_repo = true;
            self.repo = Repo::discover().ok();
        }
        match &self.repo {
            Some(repo) => repo.config_value(key),
            None => git_astedit::repo::command_line_config(key),
        }
    }

    /// A value from `git -c` or the repository's own config files only (see
    /// [`Repo::local_config_value`]).
    fn local_config_value(&mut self, key: &str) -> Option<String> {
        if self.repo.is_none() && !self.looked_for_repo {
            self.looked_for_repo = true;
            self.repo = Repo::discover().ok();
        }
        match &self.repo {
            Some(repo) => repo.local_config_value(key),
            None => git_astedit::repo::command_line_config(key).flatten(),
        }
    }

    /// The repository and the output streams at once (they borrow different fields).
    pub fn parts(&mut self) -> Result<(&Repo, &mut Out), Error> {
        self.repo()?;
        let repo = self.repo.as_ref().expect("repository was just opened");
        Ok((repo, &mut self.out))
    }
}

/// The command line with ast-grep's `--color WHEN` and `--heading WHEN` (a space, not
/// `=`) read as `--color=WHEN`: git's bare `--color` means always (and a bare
/// `--heading` is git grep's), so a word after them is a pathspec or a pattern unless
/// it is one of their values (before `--` only).
fn ast_grep_spellings(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    let mut ended = false;
    for arg in args {
        let value = arg.to_str().unwrap_or_default();
        let joined = !ended
            && match out.last().and_then(|last| last.to_str()) {
                Some("--color") => matches!(value, "auto" | "always" | "never" | "ansi"),
                Some("--heading") => matches!(value, "auto" | "always" | "never"),
                _ => false,
            };
        ended |= arg == "--";
        match (joined, out.last_mut()) {
            (true, Some(last)) => {
                last.push("=");
                last.push(&arg);
            }
            _ => out.push(arg),
        }
    }
    out
}

pub fn main() -> ExitCode {
    // `--json` is known before clap has parsed, so that a usage error can be JSON too;
    // not `--json=stream`, whose reader takes every line for a match (see
    // [`report_error`]).
    let wants_json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| {
            a == "--json"
                || a.to_str()
                    .is_some_and(|a| a.starts_with("--json=") && a != "--json=stream")
        });
    let parsed = Cli::command()
        .try_get_matches_from(ast_grep_spellings(std::env::args_os()))
        .and_then(|matches| {
            let cli = Cli::from_arg_matches(&matches)?;
            Ok((cli, matches))
        });
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => return clap_error(e, wants_json),
    };
    let traits = cli.command.traits();
    let mut ctx = Ctx::new(cli.json.is_some(), traits.recovery);
    ctx.json_style = cli.json.unwrap_or(JsonStyle::Compact);
    ctx.out.set_pretty(ctx.json_style == JsonStyle::Pretty);
    ctx.cache = match (&cli.cache_dir, cli.no_cache) {
        (_, true) => git_astedit::ops::cache::CacheChoice::Off,
        (Some(dir), false) => git_astedit::ops::cache::CacheChoice::Dir(dir.clone()),
        (None, false) => git_astedit::ops::cache::CacheChoice::Default,
    };
    ctx.out.set_format(if cli.json.is_some() {
        git_astedit::render::Format::Json
    } else {
        git_astedit::render::Format::Text
    });
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
    // The command's name, as in `pager.<name>` (`resolve` for `resolve apply`).
    let name = matches.subcommand_name().unwrap_or("");
    if ctx.json_style == JsonStyle::Stream && !traits.json_stream {
        let err = git_astedit::error::UsageError(format!(
            "--json=stream is grep's (one ast-grep match a line); {name} prints one report: \
             use --json"
        ));
        return report_error(&mut ctx, &Error::from(err));
    }
    setup_output(&mut ctx, &cli, name, &traits);
    if let Err(err) = custom_languages(&mut ctx, traits.custom_languages) {
        return report_error(&mut ctx, &err);
    }
    // Engines report progress to the bar only while it is installed.
    let installed = progress_bar(&ctx, traits.progress).map(|bar| {
        ctx.out.start_progress(bar.clone());
        git_astedit::progress::install(std::sync::Arc::new(bar))
    });
    let result = run(&mut ctx, cli.command).and_then(|exit| {
        ctx.out.end_progress();
        ctx.out.flush()?;
        Ok(exit)
    });
    drop(installed);
    let code = match result {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(err) => report_error(&mut ctx, &err),
    };
    // The pager (if any) gets the end of its input, and the user reads it to the end.
    ctx.out.finish();
    code
}

/// Starts the pager and decides colour for `command` (see [`pager`] and [`color`]).
fn setup_output(ctx: &mut Ctx, cli: &Cli, command: &str, traits: &traits::Traits<'_>) {
    let flag = if cli.no_pager {
        Some(pager::Flag::NoPager)
    } else if cli.paginate {
        Some(pager::Flag::Paginate)
    } else {
        None
    };
    let mut config = |key: &str| ctx.config_value(key);
    let program = pager::choose(
        command,
        traits.paging,
        flag,
        cli.json.is_some(),
        &mut config,
    );
    let flag = if cli.no_color {
        Some(color::When::Never)
    } else {
        cli.color
    };
    let color = color::decide(
        flag,
        traits.color_slot,
        &mut config,
        &color::Terminal {
            // Our pager reads stdout instead of the terminal.
            stdout_tty: program.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()),
            pager_in_use: program.is_some() || color::git_pager_in_use(),
        },
    );
    if let Some(program) = program {
        ctx.out.page(&program);
    }
    // JSON strings (a diff in a report) never carry escape codes.
    ctx.out.set_color(color && cli.json.is_none());
}

/// A progress bar for a run whose stderr is a terminal of its own: not under `--json`,
/// nor under a pager (ours or git's, which holds the terminal), nor for a command
/// whose traits rule it out (`allowed`: the servers, a campaign).
fn progress_bar(ctx: &Ctx, allowed: bool) -> Option<progress::Bar> {
    let wanted = !ctx.json
        && !ctx.out.paging()
        && !color::git_pager_in_use()
        && allowed
        && std::io::IsTerminal::is_terminal(&std::io::stderr());
    wanted.then(progress::Bar::new)
}

/// A parse error from clap: help and version go to stdout as clap prints them; a usage
/// error is the usual error (JSON on stdout with `--json`), exit 2.
fn clap_error(e: clap::Error, json: bool) -> ExitCode {
    use clap::error::ErrorKind;
    // A bare `git astedit` is a usage error (help on stderr, exit 2), as in ast-grep;
    // only an asked-for --help or --version succeeds.
    let informational = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    // `-C DIR` after a command (it is global only, as in git; `grep -C N` is context).
    let dir_tip = (e.kind() == ErrorKind::UnknownArgument
        && matches!(
            e.get(clap::error::ContextKind::InvalidArg),
            Some(clap::error::ContextValue::String(a)) if a == "-C"
        ))
    .then_some("tip: -C DIR goes before the command, as in git: git astedit -C DIR COMMAND …");
    if informational || !json {
        // Nothing is left to tell the user when the terminal itself fails.
        let _ = e.print();
        if let Some(tip) = dir_tip {
            let _ = writeln!(std::io::stderr(), "{tip}");
        }
        return if informational {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(Exit::BadInput.code())
        };
    }
    let rendered = e.render().to_string();
    let lines: Vec<&str> = rendered.lines().filter(|l| !l.trim().is_empty()).collect();
    // The first line, with the indented lines under it (the missing arguments, a tip).
    let mut message = lines
        .first()
        .copied()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string();
    let listed: Vec<&str> = lines
        .iter()
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .map(|l| l.trim())
        .collect();
    let (mut tips, args): (Vec<&str>, Vec<&str>) =
        listed.iter().partition(|l| l.starts_with("tip:"));
    tips.extend(dir_tip);
    if !args.is_empty() {
        message = format!("{} {}", message.trim_end(), args.join(", "));
    }
    for tip in tips {
        message = format!("{}; {tip}", message.trim_end());
    }
    let usage = lines
        .iter()
        .find(|l| l.starts_with("Usage:"))
        .map(|l| l.trim_start_matches("Usage:").trim().to_string());
    let err = Error::from(ClapUsage {
        message,
        kind: e.kind().to_string(),
        usage,
    });
    let mut ctx = Ctx::new(true, traits::Policy::Skip);
    report_error(&mut ctx, &err)
}

/// A usage error found by clap.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct ClapUsage {
    message: String,
    kind: String,
    usage: Option<String>,
}

impl git_astedit::error::Classify for ClapUsage {
    fn code(&self) -> &'static str {
        "usage"
    }
    fn exit(&self) -> Exit {
        Exit::BadInput
    }
    fn hint(&self) -> Option<String> {
        Some(match &self.usage {
            Some(u) => format!("usage: {u}; see --help"),
            None => "see `git astedit --help`".into(),
        })
    }
    fn details(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({ "kind": self.kind, "usage": self.usage }))
    }
}

/// Which customLanguages' libraries are loaded: the policy `ops::consent` decides from
/// `--custom-languages`, the consents of `git astedit allow` and the repository's own
/// `astedit.customLanguages` (where `ignore` still loads none).
fn custom_languages(ctx: &mut Ctx, flag: Option<&str>) -> Result<(), Error> {
    let config = ctx.local_config_value("astedit.customLanguages");
    let policy =
        git_astedit::ops::consent::custom_policy(ctx.repo.as_ref(), flag, config.as_deref())?;
    git_astedit::lang::set_custom_policy(policy);
    Ok(())
}

fn run(ctx: &mut Ctx, command: Command) -> Result<Exit, Error> {
    match command {
        Command::Grep(args) => grep::run(ctx, args),
        Command::Edit(args) => edit::run(ctx, args),
        Command::Patch(args) => patch::run(ctx, args),
        Command::Run(args) => run::run(ctx, args),
        Command::List(args) => list::run(ctx, args),
        Command::Show(args) => show::run(ctx, args),
        Command::Apply(args) | Command::Resolve(ResolveCommand::Apply(args)) => {
            apply::run(ctx, args)
        }
        Command::Discard(args) | Command::Resolve(ResolveCommand::Discard(args)) => {
            discard::run(ctx, args)
        }
        Command::Undo(args) => undo::run(ctx, args),
        Command::Refresh(args) => refresh::run(ctx, args),
        Command::Review(args) => review::run(ctx, args),
        Command::Trust(args) => trust::run(ctx, args),
        Command::Log(args) => log::run(ctx, args),
        Command::Gc(args) => gc::run(ctx, args),
        Command::Allow(args) => allow::run(ctx, args),
        Command::Scan(args) => scan::run(ctx, *args),
        Command::Steps(args) => steps::run(ctx, args),
        Command::Hook(cmd) => hook::run(ctx, cmd),
        Command::Merge(args) => merge::run(ctx, args),
        Command::Mcp(args) => mcp::run(ctx, args),
        Command::AgentHook(cmd) => agent_hook::run(ctx, cmd),
        Command::Lane(cmd) => lane::run(ctx, cmd),
        Command::Lsp(args) => lsp::run(ctx, args),
        Command::Pr(args) => pr::run(ctx, args),
        Command::Campaign(cmd) => campaign::run(ctx, cmd),
        Command::Schema(args) => schema::run(ctx, args),
        Command::Test(args) => test::run(ctx, args),
        Command::New(args) => new::run(ctx, args),
        Command::Verify(args) => verify::run(ctx, args),
        Command::Recover(args) => recover::run(ctx, args),
        Command::Man(args) => man::run(ctx, args),
        Command::Completions(args) => completions::run(ctx, args),
    }
}

/// Renders an error once: JSON on stdout with `--json`, else `error:` lines on stderr.
/// With `--json=stream` too: its readers (VS Code's ast-grep search panel) take every
/// stdout line for a match, and ast-grep prints its errors on stderr. A closed stdout
/// ends the run quietly (as ripgrep and git do).
fn report_error(ctx: &mut Ctx, err: &Error) -> ExitCode {
    if let Some(OutputError::Closed) = err.downcast_ref::<OutputError>() {
        return ExitCode::from(Exit::Ok.code());
    }
    let report = git_astedit::report::ErrorReport::new(err);
    let code = ExitCode::from(report.error.exit);
    // The error is the last thing said; if stdout is gone, nobody is listening.
    let json = ctx.json && ctx.json_style != JsonStyle::Stream;
    if json && ctx.out.json(&report).and_then(|()| ctx.out.flush()).is_ok() {
        return code;
    }
    let style = ctx.out.style();
    // Stderr only: this cannot fail.
    let _ = ctx
        .out
        .printed(&git_astedit::render::TextReport::text(&report, &style));
    code
}
