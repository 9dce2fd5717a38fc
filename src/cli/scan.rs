//! `git astedit scan`: run the rules; report findings, or check, stage or apply fixes.

use std::path::PathBuf;

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::files;
use git_astedit::levels::Severity;
use git_astedit::ops;
use git_astedit::ops::input::Input;
use git_astedit::ops::scan::Frames;
use git_astedit::ops::scan::ScanRequest;
use git_astedit::ops::scan::SeverityOverride;
use git_astedit::render::scan::ReportStyle;
use git_astedit::render::scan::ScanFormat;
use git_astedit::render::scan::ScanStream;
use git_astedit::report::FindingRow;
use git_astedit::report::ScanMode;
use git_astedit::report::ScanReport;
use git_astedit::Error;

use super::interactive;
use super::Ctx;
use super::OutputError;

/// Run the codemod rules of astedit.toml and ast-grep rule files
///
/// Without a mode flag, prints findings (on a terminal with a code frame around each,
/// else as `path:line:col: severity[rule-id]: message`; see --report-style) and exits 1
/// when one has severity error. `--check` prints the diff of every fix,
/// writes nothing, and exits 1 when a fix would change a file or an error finding would
/// remain. `--stage` stages all fixes as one preview. `--apply` stages and applies them
/// and exits 1 when files were changed (the pre-commit convention).
#[derive(Debug, clap::Args)]
pub struct ScanArgs {
    /// Git pathspecs or file names (relative to the current folder); default: the current folder
    #[arg(value_name = "PATHSPEC")]
    pub pathspecs: Vec<String>,

    /// Read rules from FILE: an astedit.toml, an sgconfig.yml or an ast-grep rule YAML
    /// file (can be repeated); default: astedit.toml and sgconfig.yml at the root
    #[arg(short = 'c', long, value_name = "FILE")]
    pub config: Vec<PathBuf>,

    /// Run the rules of this ast-grep rule file only (as ast-grep's -r; can be repeated)
    #[arg(short = 'r', long = "rule", value_name = "FILE")]
    pub rule_files: Vec<PathBuf>,

    /// Run the rules in this YAML text instead of config files (documents separated by
    /// `---`), as in ast-grep
    #[arg(long, value_name = "RULE_TEXT", conflicts_with_all = ["rule_files", "config"])]
    pub inline_rules: Option<String>,

    /// Give each JSON finding its rule's `metadata`
    #[arg(long)]
    pub include_metadata: bool,

    /// Print the diff of every fix and exit 1 if any would change a file; write nothing
    #[arg(long, conflicts_with_all = ["stage", "apply"])]
    pub check: bool,

    /// Stage all fixes as one preview
    #[arg(long, conflicts_with = "apply")]
    pub stage: bool,

    /// Stage all fixes and apply them; exit 1 when files were changed
    #[arg(long)]
    pub apply: bool,

    /// With --stage or --apply: sign the preview with git (`git commit-tree -S`), as
    /// `git config astedit.signPreviews true` does for every preview
    #[arg(long)]
    pub sign: bool,

    /// With --apply: first run CMD (a shell command line) in a worktree holding the
    /// staged fixes; apply them only if it exits 0 (see `verify`)
    #[arg(long, value_name = "CMD")]
    pub verify: Option<String>,

    /// With --verify: kill CMD (and what it started) after SECS seconds
    #[arg(long, value_name = "SECS", default_value_t = 600, requires = "verify")]
    pub verify_timeout: u64,

    /// Ask about each fix (y/n/a/d/q, one answer a line on stdin); stage (or with
    /// --apply, apply) only the accepted ones
    #[arg(short = 'i', long, conflicts_with = "check")]
    pub interactive: bool,

    /// Scan the staged content (the index) instead of the work tree
    #[arg(long)]
    pub cached: bool,

    /// Compare with what the same rules find at REV (a commit, branch or tag, or
    /// `auto`: the merge-base with the upstream): only new findings are shown and
    /// counted; JSON and SARIF mark each finding and list the fixed ones
    #[arg(long, value_name = "REV")]
    pub baseline: Option<String>,

    /// With --baseline and --check, --stage or --apply: fix every finding, not only the
    /// new ones
    #[arg(long, requires = "baseline")]
    pub fix_all: bool,

    /// Scan only the files that differ from REV (default: HEAD): modified, staged and
    /// untracked ones (with --cached, the staged ones); write it --changed=REV
    #[arg(long, value_name = "REV", num_args = 0..=1, require_equals = true, default_missing_value = "HEAD")]
    pub changed: Option<String>,

    /// Report only findings on lines that differ from the --changed revision (default
    /// HEAD; with --cached, the lines being committed); fixes only for those
    #[arg(long)]
    pub changed_lines: bool,

    /// Scan only shard I of N (1-based), split by path the same way on every machine
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,

    /// How to print findings
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// How text shows each finding, as in ast-grep: rich (a code frame, the note, a fix
    /// as a diff), medium (a line and the note) or short (a line); default: rich on a
    /// terminal, else short (and short for --check, --stage, --apply)
    #[arg(long, value_name = "STYLE", value_enum)]
    pub report_style: Option<ReportStyleArg>,

    /// Run only the rule with this id (can be repeated)
    #[arg(long = "rule-id", value_name = "ID")]
    pub rules: Vec<String>,

    /// Run only the rules whose id matches REGEX
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,

    /// Report rules as errors: all, or those listed (--error=ID[,ID…]; can be repeated)
    #[arg(long, value_name = "ID", num_args = 0..=1, require_equals = true, value_delimiter = ',', default_missing_value = "")]
    pub error: Option<Vec<String>>,

    /// Report rules as warnings: all, or those listed
    #[arg(long, value_name = "ID", num_args = 0..=1, require_equals = true, value_delimiter = ',', default_missing_value = "")]
    pub warning: Option<Vec<String>>,

    /// Report rules as info: all, or those listed
    #[arg(long, value_name = "ID", num_args = 0..=1, require_equals = true, value_delimiter = ',', default_missing_value = "")]
    pub info: Option<Vec<String>>,

    /// Report rules as hints: all, or those listed
    #[arg(long, value_name = "ID", num_args = 0..=1, require_equals = true, value_delimiter = ',', default_missing_value = "")]
    pub hint: Option<Vec<String>>,

    /// Turn rules off: all, or those listed (`--off=unused-suppression` too)
    #[arg(long, value_name = "ID", num_args = 0..=1, require_equals = true, value_delimiter = ',', default_missing_value = "")]
    pub off: Option<Vec<String>>,

    /// Run only the rules of this severity or above (after --error, --warning, …):
    /// error, warning, info or hint, as in ast-grep
    #[arg(long, value_name = "LEVEL", value_enum)]
    pub min_severity: Option<LevelArg>,

    /// Report at most N findings (the rest are counted in a note)
    #[arg(long, value_name = "N")]
    pub max_results: Option<usize>,

    /// Re-run a rule's fix at most N times per file (default: the config's max-passes, else 10)
    #[arg(long, value_name = "N")]
    pub max_passes: Option<usize>,

    /// Why these fixes are made (recorded in the preview and the journal)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// Run each fixed file through the formatter astedit.toml's [fmt] declares for its
    /// language, keeping only its hunks over the fixes (with --stage, --apply, --check)
    #[arg(long)]
    pub fmt: bool,

    /// Allow the [fmt] command of this digest to run for this run only, as `git astedit
    /// allow` prints it (sha256:…; can be repeated): CI pins the formatter it reviewed
    #[arg(long, value_name = "DIGEST", requires = "fmt")]
    pub allow_fmt: Vec<String>,

    /// Render at most N diff lines (0: no limit); the rest is summarized
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub max_render: usize,

    /// Skip files larger than BYTES
    #[arg(long, value_name = "BYTES", default_value_t = files::DEFAULT_MAX_FILE_SIZE)]
    pub max_filesize: u64,

    /// Number of worker threads (default: the number of cores)
    #[arg(short = 'j', long = "threads", value_name = "N")]
    pub threads: Option<usize>,

    /// Load sgconfig.yml's customLanguages libraries (a library runs code when loaded):
    /// allow (every one, this run), ignore (none), or sha256:DIGEST,… (those, this run);
    /// default: those `git astedit allow` recorded
    #[arg(long, value_name = "POLICY")]
    pub custom_languages: Option<String>,

    // ast-grep's `scan` flags that are not the ones above: `-U`, `--globs`,
    // `--no-ignore`, and those refused with what to type instead.
    #[command(flatten)]
    pub ast_grep: super::astgrep::ScanFlags,
}

/// `--report-style` values (ast-grep's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportStyleArg {
    Rich,
    Medium,
    Short,
}

impl From<ReportStyleArg> for ReportStyle {
    fn from(style: ReportStyleArg) -> ReportStyle {
        match style {
            ReportStyleArg::Rich => ReportStyle::Rich,
            ReportStyleArg::Medium => ReportStyle::Medium,
            ReportStyleArg::Short => ReportStyle::Short,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `path:line:col: severity[rule-id]: message`
    Text,
    /// GitHub Actions workflow commands (annotations)
    Github,
    /// A SARIF 2.1.0 log
    Sarif,
}

pub fn run(ctx: &mut Ctx, mut args: ScanArgs) -> Result<Exit, Error> {
    args.ast_grep.check()?;
    let inspect = args.ast_grep.inspect.as_deref();
    let inspect = inspect.map(ops::inspect::Granularity::parse).transpose()?;
    // ast-grep's `-U` is `--apply` here.
    args.apply |= args.ast_grep.update_all;
    let format = format(ctx, &args)?;
    refusals(ctx, &args, format)?;
    let mode = if args.check {
        ScanMode::Check
    } else if args.stage || (args.interactive && !args.apply) {
        ScanMode::Stage
    } else if args.apply {
        ScanMode::Apply
    } else {
        ScanMode::Report
    };
    super::common::threads(args.threads);
    super::common::sign(args.sign);
    let filter = super::common::filter(args.filter.as_deref())?;
    // ast-grep's `-r` names a rule file; selecting by id is `--rule-id` here.
    for file in &args.rule_files {
        if !file.is_file() {
            return Err(UsageError(format!(
                "--rule takes a rule file, as in ast-grep; '{}' is not one (to run only the \
                 rule with that id: --rule-id {})",
                file.display(),
                file.display()
            ))
            .into());
        }
    }
    let mut severities = Vec::new();
    for (severity, listed) in [
        (Some(Severity::Error), &args.error),
        (Some(Severity::Warning), &args.warning),
        (Some(Severity::Info), &args.info),
        (Some(Severity::Hint), &args.hint),
        (None, &args.off),
    ] {
        if let Some(listed) = listed {
            severities.push(SeverityOverride {
                severity,
                rules: listed.iter().filter(|r| !r.is_empty()).cloned().collect(),
            });
        }
    }
    let mut configs = args.config;
    configs.extend(args.rule_files);
    let mut request = ScanRequest {
        input: Input {
            pathspecs: args.pathspecs,
            max_file_size: args.max_filesize,
            changed: args.changed,
            changed_lines: args.changed_lines,
            cached: args.cached,
            globs: args.ast_grep.globs.clone(),
            no_ignore: args.ast_grep.reads_ignored(),
            ..Input::default()
        },
        configs,
        mode,
        shard: args.shard,
        only_rules: args.rules,
        filter,
        severities,
        min_severity: args.min_severity.map(Severity::from),
        max_results: args.max_results,
        max_passes: args.max_passes,
        reason: args.reason,
        max_render: args.max_render,
        color: false,
        frames: match format {
            ScanFormat::Text(ReportStyle::Rich) => Frames::All,
            ScanFormat::Text(_) => Frames::Labelled,
            ScanFormat::AstGrep => Frames::AstGrep,
            _ => Frames::None,
        },
        inline_rules: args.inline_rules,
        include_metadata: args.include_metadata,
        verify: args
            .verify
            .map(|line| ops::apply::VerifyPlan::shell(line, args.verify_timeout)),
        cache: ctx.cache.clone(),
        agent: git_astedit::ops::agent_hook::shell_session(),
        baseline: args.baseline,
        fix_all: args.fix_all,
        fmt: args.fmt,
        allow_fmt: super::edit::allowed_digests(&args.allow_fmt)?,
    };
    let (repo, out) = ctx.parts()?;
    request.color = matches!(format, ScanFormat::Text(_)) && out.color();
    if let Some(level) = inspect {
        for line in ops::inspect::scan(repo, &request, level)? {
            out.note(&line);
        }
    }
    if args.interactive {
        let color = out.color();
        let (report, ..) = interactive::session(out, color, false, repo, |prompter| {
            ops::scan::run(repo, &request, ops::scan::Consumer::Ask(prompter))
        })?;
        return print(out, format, &report);
    }
    // Findings are printed as they come when the format can (issue 26); `ops::scan`
    // decides whether the scan streams.
    let Some(printer) = ScanStream::new(format, out.style()) else {
        let report = ops::scan::run(repo, &request, ops::scan::Consumer::Collect)?;
        return print(out, format, &report);
    };
    let mut sink = Sink { printer, out };
    let report = ops::scan::run(repo, &request, ops::scan::Consumer::Stream(&mut sink))?;
    if report.streamed.is_none() {
        return print(sink.out, format, &report);
    }
    let printed = sink.printer.finish(&report).map_err(OutputError::Encode)?;
    sink.out.printed(&printed)?;
    Ok(report.exit())
}

/// The combinations of flags `scan` refuses, each saying what to type instead.
fn refusals(ctx: &Ctx, args: &ScanArgs, format: ScanFormat) -> Result<(), Error> {
    if args.include_metadata && !ctx.json {
        return Err(
            UsageError("--include-metadata adds to the JSON findings: add --json".into()).into(),
        );
    }
    if args.verify.is_some() && !args.apply {
        return Err(UsageError(
            "--verify checks fixes before they are applied: use it with --apply".into(),
        )
        .into());
    }
    if args.interactive {
        let refuse = |what: &str| -> Result<(), Error> {
            Err(UsageError(format!("-i/--interactive cannot be combined with {what}")).into())
        };
        match format {
            ScanFormat::Text(_) => {}
            ScanFormat::Json | ScanFormat::JsonPretty | ScanFormat::AstGrep => {
                return refuse("--json")
            }
            ScanFormat::Github | ScanFormat::Sarif => return refuse("--format"),
        }
        if args.config.iter().any(|c| c.as_os_str() == "-") {
            // The answers come from stdin.
            return refuse("rules read from stdin (--config -)");
        }
    }
    let fixing = args.check || args.stage || args.apply;
    if format == ScanFormat::AstGrep && fixing {
        return Err(UsageError(
            "--json=stream prints the findings as ast-grep does: the fixes of --check, \
             --stage and --apply are reported by --json"
                .into(),
        )
        .into());
    }
    Ok(())
}

/// How the scan prints: `--json`, `--format`, or text in a report style. As ast-grep's,
/// the text is a rich report on a terminal; a pipe, a script and the fix modes (the
/// pre-commit hook's `--check`) keep one line a finding.
fn format(ctx: &Ctx, args: &ScanArgs) -> Result<ScanFormat, Error> {
    let fixing = args.check || args.stage || args.apply || args.interactive;
    let report_style = match args.report_style {
        Some(style) => style.into(),
        None if !fixing && ctx.out.terminal() => ReportStyle::Rich,
        None => ReportStyle::Short,
    };
    Ok(match (ctx.json, args.format) {
        (true, _) | (_, Format::Github | Format::Sarif) if args.report_style.is_some() => {
            return Err(UsageError(
                "--report-style styles the text report: drop --json or --format".into(),
            )
            .into());
        }
        (false, Format::Text) => ScanFormat::Text(report_style),
        (false, Format::Github) => ScanFormat::Github,
        (false, Format::Sarif) => ScanFormat::Sarif,
        (true, Format::Text) if ctx.json_style == super::JsonStyle::Stream => ScanFormat::AstGrep,
        (true, Format::Text) if ctx.out.pretty() => ScanFormat::JsonPretty,
        (true, Format::Text) => ScanFormat::Json,
        (true, _) => {
            return Err(UsageError("--json and --format are exclusive".into()).into());
        }
    })
}

/// Prints a report that holds its findings.
fn print(
    out: &mut super::output::Out,
    format: ScanFormat,
    report: &ScanReport,
) -> Result<Exit, Error> {
    let printed = format
        .print(report, &out.style())
        .map_err(OutputError::Encode)?;
    out.printed(&printed)?;
    Ok(report.exit())
}

/// A streamed scan's findings, printed as each file's come.
struct Sink<'a> {
    printer: ScanStream,
    out: &'a mut super::output::Out,
}

impl ops::scan::ScanSink for Sink<'_> {
    fn file(&mut self, head: &ScanReport, rows: &[FindingRow]) -> Result<(), Error> {
        let printed = self.printer.file(head, rows).map_err(OutputError::Encode)?;
        self.out.printed(&printed)?;
        Ok(())
    }
}

/// `--min-severity` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LevelArg {
    Error,
    Warning,
    Info,
    Hint,
}

impl From<LevelArg> for Severity {
    fn from(level: LevelArg) -> Severity {
        match level {
            LevelArg::Error => Severity::Error,
            LevelArg::Warning => Severity::Warning,
            LevelArg::Info => Severity::Info,
            LevelArg::Hint => Severity::Hint,
        }
    }
}
