//! `git astedit edit`: compute a structural rewrite and stage it as a preview.

use git_astedit::cancel::Cancel;
use git_astedit::change::ImportFix;
use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::ops::edit::EditOptions;
use git_astedit::ops::edit::EditRequest;
use git_astedit::Error;

use super::common::InputArgs;
use super::common::StageArgs;
use super::interactive;
use super::Ctx;

/// Stage a structural rewrite as a preview; no work-tree file is touched.
///
/// Each `-p PATTERN` is paired with the `-r TEMPLATE` that follows it; ops run in the
/// order given, each on the previous one's result. Prints the diff, a summary and the
/// preview id. Exits 1 when nothing would change.
#[derive(Debug, clap::Args)]
pub struct EditArgs {
    /// The ast-grep pattern of an op (can be repeated)
    #[arg(short = 'p', long = "pattern", value_name = "PATTERN", required = true)]
    pub patterns: Vec<String>,

    /// The rewrite template of the op whose pattern precedes it (can be repeated)
    #[arg(
        short = 'r',
        long = "rewrite",
        value_name = "TEMPLATE",
        required = true
    )]
    pub rewrites: Vec<String>,

    /// An import statement to add to each file the rewrite changes, unless the file
    /// has it (merged into an import of the same module when it can be); written in
    /// the files' language, metavariables allowed (can be repeated)
    #[arg(long = "add-import", value_name = "STMT")]
    pub add_imports: Vec<String>,

    /// A name whose import goes from each file the rewrite changes once nothing there
    /// refers to it (can be repeated)
    #[arg(long = "remove-import", value_name = "NAME")]
    pub remove_imports: Vec<String>,

    /// Run each rewritten file through the formatter astedit.toml's [fmt] declares for
    /// its language, keeping only its hunks over the rewrite
    #[arg(long)]
    pub fmt: bool,

    /// Allow the [fmt] command of this digest to run for this run only, as `git astedit
    /// allow` prints it (sha256:…; can be repeated): CI pins the formatter it reviewed
    #[arg(long, value_name = "DIGEST", requires = "fmt")]
    pub allow_fmt: Vec<String>,

    /// Ask about each change (y/n/a/d/q, one answer a line on stdin); stage only the
    /// accepted ones
    #[arg(short = 'i', long)]
    pub interactive: bool,

    /// Match the node of this kind inside each pattern, the pattern parsed as written
    /// (ast-grep's `run --selector`): `-p 'x: List[$T]' --selector generic_type` reaches
    /// Python's annotations
    #[arg(long, value_name = "KIND")]
    pub selector: Option<String>,

    #[command(flatten)]
    pub stage: StageArgs,

    #[command(flatten)]
    pub input: InputArgs,
}

/// Each `-r` must follow its `-p` and come before the next one: `-p A -p B -r X -r Y`
/// would otherwise pair quietly by position.
pub fn check_op_order(matches: &clap::ArgMatches) -> Result<(), UsageError> {
    let positions = |id: &str| -> Vec<usize> {
        matches
            .indices_of(id)
            .map(|i| i.collect())
            .unwrap_or_default()
    };
    let (patterns, rewrites) = (positions("patterns"), positions("rewrites"));
    for (n, (p, r)) in patterns.iter().zip(&rewrites).enumerate() {
        let next_pattern = patterns.get(n + 1).copied().unwrap_or(usize::MAX);
        if r < p || *r > next_pattern {
            return Err(UsageError(format!(
                "-r TEMPLATE number {} does not follow its -p PATTERN: give each op as \
                 `-p PATTERN -r TEMPLATE`, in order",
                n + 1
            )));
        }
    }
    Ok(())
}

/// Pairs `-p` and `-r` in the order they were typed.
fn ops(args: &EditArgs) -> Result<Vec<(String, String)>, UsageError> {
    if args.patterns.len() != args.rewrites.len() {
        return Err(UsageError(format!(
            "every -p PATTERN needs its -r TEMPLATE: got {} patterns and {} templates",
            args.patterns.len(),
            args.rewrites.len()
        )));
    }
    Ok(args
        .patterns
        .iter()
        .cloned()
        .zip(args.rewrites.iter().cloned())
        .collect())
}

pub fn run(ctx: &mut Ctx, args: EditArgs) -> Result<Exit, Error> {
    let ops = ops(&args)?;
    if args.interactive && ctx.json {
        return Err(UsageError("-i/--interactive cannot be combined with --json".into()).into());
    }
    let input = args.input.input()?;
    let cache = ctx.cache.clone();
    let allow_fmt = allowed_digests(&args.allow_fmt)?;
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let several_ops = ops.len() > 1;
    let request = EditRequest {
        input,
        ops,
        selector: args.selector.clone(),
        imports: ImportFix {
            add: args.add_imports.clone(),
            remove: args.remove_imports.clone(),
        },
        // After `-i` every accepted change has been shown already.
        staging: args.stage.staging(!args.interactive, color),
        cache,
        verbose: args.input.verbose,
        fmt: args.fmt,
        allow_fmt,
    };
    let never = Cancel::never();
    let report = if args.interactive {
        let (mut report, asked) =
            interactive::session(out, color, several_ops, repo, |prompter| {
                let options = EditOptions {
                    cancel: &never,
                    select: Some(prompter),
                };
                git_astedit::ops::edit::run(repo, &request, options)
            })?;
        report.text.offered = Some(asked.offered);
        report
    } else {
        let options = EditOptions {
            cancel: &never,
            select: None,
        };
        git_astedit::ops::edit::run(repo, &request, options)?
    };
    out.emit(&report)?;
    Ok(report.exit())
}

/// `--allow-fmt`'s digests, checked before anything runs.
pub(super) fn allowed_digests(given: &[String]) -> Result<Vec<String>, Error> {
    given
        .iter()
        .map(|d| git_astedit::ops::consent::parse_digest(d).map_err(Error::from))
        .collect()
}
