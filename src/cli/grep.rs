//! `git astedit grep`: structural search, one line per match.

use git_astedit::cancel::Cancel;
use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::levels::Strictness;
use git_astedit::ops::grep::DebugFormat;
use git_astedit::ops::grep::GrepRequest;
use git_astedit::ops::grep::GrepSink;
use git_astedit::ops::grep::Paths;
use git_astedit::pipeline::Delivery;
use git_astedit::render::grep::Finish;
use git_astedit::render::grep::GrepOutput;
use git_astedit::render::grep::GrepPrinter;
use git_astedit::Error;

use super::common::InputArgs;
use super::Ctx;
use super::JsonStyle;

/// Search code structurally with an ast-grep pattern.
///
/// Prints `path:line:col: text` per match (1-based; a multi-line match shows its first
/// line and `…`), sorted by path and position. With `-A`/`-B`/`-C N`, lines around each
/// match as `path-line-text`, every line of a multi-line match, and `--` between groups
/// that are not adjacent. Exits 0 when something matched, 1 when nothing did, 2 for a
/// bad pattern.
#[derive(Debug, clap::Args)]
pub struct GrepArgs {
    /// The ast-grep pattern, e.g. 'console.log($A)' or 'foo($$$ARGS)'
    #[arg(short = 'p', long = "pattern", value_name = "PATTERN")]
    pub pattern: String,

    /// Show at most N matches (0: no limit; default 200 on a terminal with no pager,
    /// else no limit, as for a JSON stream or a list of files)
    #[arg(long, value_name = "N")]
    pub max_count: Option<usize>,

    /// The node kind inside the pattern that is the actual pattern, as in ast-grep
    /// (`class A { $F = $V }` with the kind field_definition); without -l, languages
    /// whose parse of the pattern has no node of that kind are skipped
    #[arg(long, value_name = "KIND")]
    pub selector: Option<String>,

    /// Which nodes the pattern compares, as in ast-grep
    #[arg(long, value_name = "STRICTNESS", value_enum)]
    pub strictness: Option<StrictnessArg>,

    // ast-grep's flag, hidden from the help: refused with what to type instead.
    #[arg(short = 'k', long = "kind", value_name = "KIND", hide = true)]
    pub kind: Option<String>,

    /// Print the pattern's tree on stderr, as ast-grep does (ast by default, cst with
    /// unnamed nodes, sexp); needs -l
    #[arg(
        long,
        value_name = "FORMAT",
        value_enum,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "ast"
    )]
    pub debug_query: Option<DebugQuery>,

    /// Search the text on standard input (needs -l LANG); its matches are named STDIN
    #[arg(long)]
    pub stdin: bool,

    /// Print only the paths of files with a match, once each
    #[arg(long)]
    pub files_with_matches: bool,

    #[command(flatten)]
    pub heading: HeadingArg,

    /// Show N lines after each match
    #[arg(short = 'A', long = "after-context", value_name = "N")]
    pub after_context: Option<usize>,

    /// Show N lines before each match
    #[arg(short = 'B', long = "before-context", value_name = "N")]
    pub before_context: Option<usize>,

    /// Show N lines before and after each match (-A and -B win over it). A folder
    /// goes before the command: `git astedit -C DIR grep …`
    #[arg(short = 'C', long = "context", value_name = "N")]
    pub context: Option<usize>,

    /// Print each file's matches as soon as its search ends (completion order, which
    /// varies from run to run) instead of in path order. JSON stays in path order.
    #[arg(long)]
    pub stream: bool,

    // ast-grep's `--inspect nothing|summary|entity` (hidden: the "Coming from
    // ast-grep" chapter tells it): the files read and skipped, on stderr.
    #[arg(long, value_name = "GRANULARITY", hide = true)]
    pub inspect: Option<String>,

    #[command(flatten)]
    pub input: InputArgs,
}

/// ast-grep's strictness levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StrictnessArg {
    /// Match all nodes exactly
    Cst,
    /// Match all nodes except source trivial nodes (the default)
    Smart,
    /// Match only ast nodes
    Ast,
    /// Match ast nodes except comments
    Relaxed,
    /// Match ast nodes except comments, without text
    Signature,
    /// Like smart, but match text only, node kinds are ignored
    Template,
}

impl From<StrictnessArg> for Strictness {
    fn from(s: StrictnessArg) -> Strictness {
        match s {
            StrictnessArg::Cst => Strictness::Cst,
            StrictnessArg::Smart => Strictness::Smart,
            StrictnessArg::Ast => Strictness::Ast,
            StrictnessArg::Relaxed => Strictness::Relaxed,
            StrictnessArg::Signature => Strictness::Signature,
            StrictnessArg::Template => Strictness::Template,
        }
    }
}

/// `--debug-query` formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DebugQuery {
    /// ast-grep's own pattern dump: not available here (use ast or cst)
    Pattern,
    /// Named nodes, with field names and positions
    Ast,
    /// Every node, named or not
    Cst,
    /// tree-sitter's S-expression
    Sexp,
}

impl GrepArgs {
    /// The lines asked for before and after each match; as in ripgrep, `-A`/`-B`
    /// override `-C` on their side.
    fn context(&self) -> (usize, usize) {
        let both = self.context.unwrap_or(0);
        (
            self.before_context.unwrap_or(both),
            self.after_context.unwrap_or(both),
        )
    }
}

/// The flags whose ast-grep meaning is not ours, or that need another: refused with
/// what to type instead.
fn check(args: &GrepArgs, json: bool, stream: bool) -> Result<(), UsageError> {
    if let Some(kind) = &args.kind {
        return Err(UsageError(format!(
            "-k/--kind is not supported by grep; a rule matches by kind: git astedit scan \
             --inline-rules '{{id: kind, language: {}, rule: {{kind: {kind}}}}}'",
            args.input.lang.as_deref().unwrap_or("LANG")
        )));
    }
    let needs_lang = |flag: &str| {
        UsageError(format!(
            "{flag} needs the language of the pattern: add -l LANG"
        ))
    };
    if args.input.lang.is_none() {
        if args.debug_query.is_some() {
            return Err(needs_lang("--debug-query"));
        }
        if args.stdin {
            return Err(needs_lang("--stdin"));
        }
    }
    if args.debug_query == Some(DebugQuery::Pattern) {
        return Err(UsageError(
            "--debug-query=pattern (ast-grep's internal pattern dump) is not available: \
             use --debug-query=ast, cst or sexp"
                .into(),
        ));
    }
    if args.files_with_matches && json {
        return Err(UsageError(
            "--files-with-matches prints paths, not JSON: use --json and read the matches' \
             paths (or drop --json)"
                .into(),
        ));
    }
    if args.files_with_matches && stream {
        return Err(UsageError(
            "--files-with-matches and --json=stream are exclusive".into(),
        ));
    }
    if args.stdin && !args.input.pathspecs.is_empty() {
        return Err(UsageError(
            "--stdin searches standard input: leave the pathspecs out".into(),
        ));
    }
    if args.stdin && (args.input.changed.is_some() || args.input.changed_lines) {
        return Err(UsageError(
            "--stdin searches standard input, which has no git history: leave out --changed \
             and --changed-lines"
                .into(),
        ));
    }
    if args.stdin && args.input.cached {
        return Err(UsageError(
            "--stdin searches standard input, not the index: leave out --cached".into(),
        ));
    }
    Ok(())
}

/// The cap when `--max-count` is not given: only a person reading a terminal with no
/// pager is spared a flood (a pager scrolls; a pipe's reader, like `wc -l` or
/// `xargs`, wants every match, as from rg or `git grep`).
fn default_max_count(output: GrepOutput, terminal: bool, paging: bool) -> usize {
    match output {
        GrepOutput::Matches | GrepOutput::Document if terminal && !paging => 200,
        _ => 0,
    }
}

/// ast-grep's `--heading`, taken by `grep` and `run -p`.
#[derive(Debug, clap::Args)]
pub struct HeadingArg {
    /// Print each file's path above its matches instead of on every line, as ast-grep's
    /// --heading: always, never, or auto (on a terminal); a bare --heading is always;
    /// default: never for grep (as git grep), auto for run -p (as ast-grep)
    #[arg(
        long,
        value_name = "WHEN",
        value_enum,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "always"
    )]
    pub heading: Option<Heading>,
}

/// `--heading` values (ast-grep's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Heading {
    Auto,
    Always,
    Never,
}

impl Heading {
    pub fn as_str(self) -> &'static str {
        match self {
            Heading::Auto => "auto",
            Heading::Always => "always",
            Heading::Never => "never",
        }
    }
}

pub fn run(ctx: &mut Ctx, args: GrepArgs) -> Result<Exit, Error> {
    run_rewriting(ctx, args, None)
}

/// [`run`] with ast-grep's `run --rewrite` template: `--json=stream` rows then carry
/// each match's `replacement` (nothing is written).
pub fn run_rewriting(
    ctx: &mut Ctx,
    args: GrepArgs,
    rewrite: Option<String>,
) -> Result<Exit, Error> {
    let stream = ctx.json_style == JsonStyle::Stream;
    check(&args, ctx.json, stream)?;
    let input = args.input.input()?;
    let ctx_pretty = ctx.json_style == JsonStyle::Pretty;
    let cache = ctx.cache.clone();
    let (repo, out) = ctx.parts()?;
    let stdin = if args.stdin {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map_err(|source| {
            git_astedit::error::InputError {
                action: "read",
                path: "standard input".into(),
                source,
            }
        })?;
        Some(text)
    } else {
        None
    };
    let output = if stream {
        GrepOutput::Stream
    } else if args.files_with_matches {
        GrepOutput::Files
    } else if ctx_pretty {
        GrepOutput::Document
    } else {
        GrepOutput::Matches
    };
    let heading = match args.heading.heading {
        Some(Heading::Always) => true,
        Some(Heading::Auto) => out.terminal(),
        Some(Heading::Never) | None => false,
    };
    let printer = GrepPrinter::with_output(out.format(), out.style(), output).with_heading(heading);
    let (before, after) = args.context();
    let request = GrepRequest {
        input,
        pattern: args.pattern,
        text: printer.match_text(),
        before,
        after,
        order: if args.stream && printer.streams() {
            Delivery::AsReady
        } else {
            Delivery::InOrder
        },
        offset: 0,
        max_count: args.max_count.unwrap_or(default_max_count(
            output,
            std::io::IsTerminal::is_terminal(&std::io::stdout()),
            out.paging(),
        )),
        paths: Paths::Display,
        selector: args.selector,
        strictness: args.strictness.map(Into::into),
        rewrite,
        stdin,
        keep_lines: stream,
        cache,
        verbose: args.input.verbose,
    };
    if let Some(level) = args.inspect.as_deref() {
        let level = git_astedit::ops::inspect::Granularity::parse(level)?;
        for line in git_astedit::ops::inspect::search(repo, &request, level)? {
            out.note(&line);
        }
    }
    if let Some(format) = args.debug_query {
        let (title, format) = match format {
            DebugQuery::Ast | DebugQuery::Pattern => ("AST", DebugFormat::Ast),
            DebugQuery::Cst => ("CST", DebugFormat::Cst),
            DebugQuery::Sexp => ("Sexp", DebugFormat::Sexp),
        };
        if let Some(tree) = git_astedit::ops::grep::debug_query(repo, &request, format)? {
            out.note(&format!("Debug {title}:\n{}", tree.trim_end()));
        }
    }
    let mut printer = printer;
    let cancel = Cancel::never();
    let report = match printer.encoder() {
        // Rows are encoded where their file was searched.
        Some(encode) => {
            let mut rows = |rows: &[String]| -> Result<(), Error> {
                Ok(printer.rows(rows, &request.pattern, |s| out.print(s))?)
            };
            git_astedit::ops::grep::run(repo, &request, &cancel, GrepSink::Rows(encode, &mut rows))?
        }
        None => {
            let sink = GrepSink::Files(&mut |file| {
                let text = printer.file(&file, &request.pattern);
                if !text.is_empty() {
                    out.print(&text)?;
                }
                Ok(())
            });
            git_astedit::ops::grep::run(repo, &request, &cancel, sink)?
        }
    };
    let exit = report.exit();
    if !printer.reports() {
        // ast-grep's stream readers take every line for a match: warnings go to stderr.
        for warning in &report.diagnostics.warnings {
            out.warn(warning);
        }
        return Ok(exit);
    }
    // JSON rows went out as they came; the document ends with the counts.
    match printer.finish(report) {
        Finish::Report(report) => out.emit(&report)?,
        Finish::Rest(rest) => out.print(&rest)?,
    }
    Ok(exit)
}

#[cfg(test)]
mod tests {
    use super::default_max_count;
    use super::GrepOutput;

    #[test]
    fn only_a_terminal_with_no_pager_gets_a_default_cap() {
        assert_eq!(default_max_count(GrepOutput::Matches, true, false), 200);
        assert_eq!(default_max_count(GrepOutput::Document, true, false), 200);
        assert_eq!(default_max_count(GrepOutput::Matches, true, true), 0);
        assert_eq!(default_max_count(GrepOutput::Matches, false, false), 0);
        assert_eq!(default_max_count(GrepOutput::Stream, true, false), 0);
        assert_eq!(default_max_count(GrepOutput::Files, true, false), 0);
    }
}
