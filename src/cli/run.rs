//! `git astedit run`: run a command in a worktree of the work tree and stage what it
//! changed there as a preview.

use std::time::Duration;

use git_astedit::cancel::Cancel;
use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::ops::apply::VerifyPlan;
use git_astedit::ops::run::RunRequest;
use git_astedit::Error;

use super::common::StageArgs;
use super::Ctx;

/// Run a command in a worktree of the work tree and stage what it changed as a preview
///
/// The command (a formatter, a fixer, a script) runs in a temporary worktree holding
/// the work tree's tracked and untracked files. The work tree is not touched until the preview is applied: new, changed, deleted
/// files and mode changes are staged (within the pathspecs, when given), with the
/// command, its exit status and the end of its output in the preview's record.
/// `refresh` runs the command again on the tree as it is then. A command that exits
/// non-zero stages nothing (exit 1) unless --allow-failure; one that writes to the
/// repository (a commit, a tag, its config) is refused (exit 4).
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Stage only what the command changed under these git pathspecs (relative to the
    /// current folder); default: everything it changed
    #[arg(value_name = "PATHSPEC")]
    pub pathspecs: Vec<String>,

    #[command(flatten)]
    pub stage: StageArgs,

    /// Stage what the command changed even when it exits non-zero
    #[arg(long)]
    pub allow_failure: bool,

    /// Kill the command (and what it started) after SECS seconds
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub timeout: u64,

    /// With --apply: first run CMD (a shell command line) in a worktree holding the
    /// preview; apply only if it exits 0 (see `verify`)
    #[arg(long, value_name = "CMD", requires = "apply")]
    pub verify: Option<String>,

    /// With --verify: kill CMD (and what it started) after SECS seconds
    #[arg(long, value_name = "SECS", default_value_t = 600, requires = "verify")]
    pub verify_timeout: u64,

    /// The command and its arguments, after `--` (run in the current folder's place in
    /// the worktree, as is, not through a shell)
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,

    /// ast-grep's `run`: search with this pattern instead of running a command (as
    /// `grep -p`; with --rewrite, as `edit`); the PATHSPECs are its paths
    #[arg(short = 'p', long = "pattern", value_name = "PATTERN")]
    pub pattern: Option<String>,

    /// ast-grep's `run --rewrite`: with --json=stream each match carries its
    /// `replacement`; otherwise the rewrite is staged as an `edit` preview
    #[arg(short = 'r', long = "rewrite", value_name = "FIX")]
    pub rewrite: Option<String>,

    /// ast-grep's `run -U`: apply the rewrite (an `edit` preview, applied and journaled)
    #[arg(short = 'U', long = "update-all")]
    pub update_all: bool,

    /// ast-grep's `run -l`: the language of the pattern
    #[arg(short = 'l', long = "lang", value_name = "LANG")]
    pub lang: Option<String>,

    // The rest of ast-grep's `run` flags, hidden: taken as `grep` and `edit` take them.
    #[command(flatten)]
    pub ast_grep: super::astgrep::RunFlags,

    #[command(flatten)]
    pub heading: super::grep::HeadingArg,
}

impl RunArgs {
    /// Whether a flag of ast-grep's `run` was given: then this is ast-grep's search.
    pub fn is_ast_grep(&self) -> bool {
        self.pattern.is_some()
            || self.rewrite.is_some()
            || self.update_all
            || self.lang.is_some()
            || self.ast_grep.any()
            || self.heading.heading.is_some()
    }
}

/// The two forms of `run`, named in every error about mixing them.
const FORMS: &str = "`run -- CMD` (a command preview) or `run -p PATTERN [-r FIX] [-U] \
                     [PATH]` (ast-grep's search)";

/// ast-grep's `run` as the search it is here: `grep` without a rewrite or with
/// `--json=stream` (each match with its replacement), `edit` (staged, or applied with
/// `-U`) with one.
fn ast_grep_run(ctx: &mut Ctx, args: RunArgs) -> Result<Exit, Error> {
    if !args.command.is_empty() {
        return Err(UsageError(format!(
            "`run` takes either a command after `--` or ast-grep's -p/--pattern, not both: \
             use {FORMS}"
        ))
        .into());
    }
    let Some(pattern) = args.pattern else {
        return Err(UsageError(format!("ast-grep's `run` needs -p PATTERN: use {FORMS}")).into());
    };
    let stream = ctx.json_style == super::JsonStyle::Stream && ctx.json;
    if args.allow_failure || args.verify.is_some() {
        return Err(UsageError(
            "--allow-failure and --verify are for a command: ast-grep's `run -p` runs none".into(),
        )
        .into());
    }
    // `--apply`, this command's spelling, is ast-grep's `-U` here.
    let update_all = args.update_all || args.stage.apply;
    if update_all && args.rewrite.is_none() {
        return Err(UsageError("-U/--update-all applies a rewrite: add -r FIX".into()).into());
    }
    let mut argv: Vec<String> = vec!["git astedit".into(), format!("--pattern={pattern}")];
    let lang = args.lang.as_deref();
    // A search: no rewrite, or each match with its replacement on the stream.
    let search = args.rewrite.is_none() || (stream && !update_all && !args.ast_grep.interactive);
    argv.extend(args.ast_grep.argv(search, lang)?);
    if let Some(lang) = args.lang {
        argv.push(format!("--lang={lang}"));
    }
    let rewrite = match args.rewrite {
        Some(fix) if search => {
            argv.extend(["--".into()]);
            argv.extend(args.pathspecs);
            let grep = parse::<super::grep::GrepArgs>(&argv)?;
            return super::grep::run_rewriting(ctx, grep, Some(fix));
        }
        other => other,
    };
    match rewrite {
        None => {
            let heading = args.heading.heading.unwrap_or(super::grep::Heading::Auto);
            argv.push(format!("--heading={}", heading.as_str()));
            argv.push("--".into());
            argv.extend(args.pathspecs);
            super::grep::run(ctx, parse(&argv)?)
        }
        Some(fix) => {
            argv.push(format!("--rewrite={fix}"));
            if update_all {
                argv.push("--apply".into());
            }
            if args.stage.sign {
                argv.push("--sign".into());
            }
            if let Some(reason) = args.stage.reason {
                argv.push(format!("--reason={reason}"));
            }
            argv.push("--".into());
            argv.extend(args.pathspecs);
            super::edit::run(ctx, parse(&argv)?)
        }
    }
}

/// One command's arguments, from an argv built above.
fn parse<A: clap::Args>(argv: &[String]) -> Result<A, Error> {
    #[derive(clap::Parser)]
    struct Wrap<A: clap::Args> {
        #[command(flatten)]
        args: A,
    }
    use clap::Parser as _;
    Wrap::<A>::try_parse_from(argv)
        .map(|w| w.args)
        .map_err(|e| UsageError(e.to_string()).into())
}

pub fn run(ctx: &mut Ctx, args: RunArgs) -> Result<Exit, Error> {
    if args.is_ast_grep() {
        return ast_grep_run(ctx, args);
    }
    if args.command.first().is_none_or(|c| c.is_empty()) {
        return Err(UsageError("give the command to run after `--`".into()).into());
    }
    let (repo, out) = ctx.parts()?;
    let request = RunRequest {
        argv: args.command,
        pathspecs: args.pathspecs,
        allow_failure: args.allow_failure,
        timeout: Duration::from_secs(args.timeout.max(1)),
        verify: args
            .verify
            .map(|line| VerifyPlan::shell(line, args.verify_timeout)),
        staging: args.stage.staging(true, out.color()),
    };
    let report = git_astedit::ops::run::run(repo, &request, &Cancel::never())?;
    out.emit(&report)?;
    Ok(report.exit())
}
