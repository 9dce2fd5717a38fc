//! `git astedit grep`: structural search, one line per match.

use git_astedit::cancel::Cancel;
use git_astedit::error::Exit;
use git_astedit::ops::grep::GrepRequest;
use git_astedit::ops::grep::Paths;
use git_astedit::pipeline::Delivery;
use git_astedit::render::grep::Finish;
use git_astedit::render::grep::GrepPrinter;
use git_astedit::Error;

use super::common::InputArgs;
use super::Ctx;

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

    /// Show at most N matches (0: no limit)
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub max_count: usize,

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

    #[command(flatten)]
    pub input: InputArgs,
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

pub fn run(ctx: &mut Ctx, args: GrepArgs) -> Result<Exit, Error> {
    let cache = ctx.cache.clone();
    let (repo, out) = ctx.parts()?;
    let (set, lang) = args.input.collect(repo)?;
    let mut printer = GrepPrinter::new(out.format(), out.style());
    let (before, after) = args.context();
    let request = GrepRequest {
        set: &set,
        pattern: args.pattern,
        lang,
        max_file_size: args.input.max_filesize,
        text: printer.match_text(),
        before,
        after,
        order: if args.stream && printer.streams() {
            Delivery::AsReady
        } else {
            Delivery::InOrder
        },
        offset: 0,
        max_count: args.max_count,
        paths: Paths::Display,
        cache,
    };
    let report = git_astedit::ops::grep::run(repo, &request, &Cancel::never(), |file| {
        let text = printer.file(&file, &request.pattern);
        if !text.is_empty() {
            out.print(&text)?;
        }
        Ok(())
    })?;
    // JSON rows went out as they came; the document ends with the counts.
    match printer.finish(&report) {
        Finish::Report => out.emit(&report)?,
        Finish::Rest(rest) => out.print(&rest)?,
    }
    Ok(report.exit())
}
