//! `git astedit grep`: structural search, one line per match.

use std::fmt::Write as _;

use git_astedit::error::Exit;
use git_astedit::grep::context_groups;
use git_astedit::grep::Context;
use git_astedit::grep::GroupLine;
use git_astedit::grep::Keep;
use git_astedit::grep::Lines;
use git_astedit::pipeline::Delivery;
use git_astedit::render;
use git_astedit::report::ContextLine;
use git_astedit::report::GrepMatch;
use git_astedit::report::GrepReport;
use git_astedit::report::MetaVariables;
use git_astedit::report::Span;
use git_astedit::report::Version;
use git_astedit::rewrite::MatchText;
use git_astedit::Error;

use super::common;
use super::common::InputArgs;
use super::Ctx;
use super::OutputError;

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
    /// The context asked for; as in ripgrep, `-A`/`-B` override `-C` on their side.
    fn context(&self) -> Context {
        let both = self.context.unwrap_or(0);
        Context {
            before: self.before_context.unwrap_or(both),
            after: self.after_context.unwrap_or(both),
        }
    }
}

/// One line of a context group: `path:line:col: text` for a match (its first line),
/// `path:line: text` for a later line of a multi-line match, `path-line-text` around.
fn write_group_line(
    buf: &mut String,
    path: &str,
    lines: &Lines<'_>,
    l: GroupLine<'_>,
    color: bool,
) {
    match l {
        GroupLine::MatchStart(m) => write_located(
            buf,
            (path, ':', m.line, ":"),
            format_args!("{}: {}", m.column, m.text),
            color,
        ),
        GroupLine::MatchContinued(n) => write_located(
            buf,
            (path, ':', n, ":"),
            format_args!(" {}", lines.get(n)),
            color,
        ),
        GroupLine::Context(n) => write_located(
            buf,
            (path, '-', n, "-"),
            format_args!("{}", lines.get(n)),
            color,
        ),
    }
}

/// `path{sep}line{after}rest` and a newline, the path and line number coloured as
/// git's `color.grep.filename` and `color.grep.linenumber`.
fn write_located(
    buf: &mut String,
    (path, sep, line, after): (&str, char, usize, &str),
    rest: std::fmt::Arguments<'_>,
    color: bool,
) {
    // Writes to a String cannot fail.
    let _ = if color {
        let (file, num) = (render::style::FILENAME, render::style::LINE_NUMBER);
        writeln!(
            buf,
            "{}{path}{}{sep}{}{line}{}{after}{rest}",
            file.render(),
            file.render_reset(),
            num.render(),
            num.render_reset()
        )
    } else {
        writeln!(buf, "{path}{sep}{line}{after}{rest}")
    };
}

pub fn run(ctx: &mut Ctx, args: GrepArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let quoting = repo.quoting();
    let (set, lang) = args.input.collect(repo)?;
    let cap = if args.max_count == 0 {
        usize::MAX
    } else {
        args.max_count
    };
    // Lines are written as each file's turn comes; JSON rows are kept (up to the cap).
    let mut rows = Vec::new();
    let mut shown = 0usize;
    let mut line = String::new();
    let mut failed: Option<OutputError> = None;
    let context = args.context();
    // `--` goes between groups, across files too (as ripgrep), so not before the first.
    let mut any_group = false;
    let found = git_astedit::grep::grep_each(
        repo,
        &set,
        &args.pattern,
        lang,
        args.input.max_filesize,
        Keep {
            text: if json {
                MatchText::WithCaptures
            } else {
                MatchText::FirstLine
            },
            source: !context.is_empty(),
            // JSON is one object at the end: nothing to gain from completion order.
            order: if args.stream && !json {
                Delivery::AsReady
            } else {
                Delivery::InOrder
            },
        },
        |file| {
            if shown >= cap {
                return true;
            }
            let display = repo.display_path(&file.path);
            line.clear();
            let take = file.matches.len().min(cap - shown);
            let shown_here = &file.matches[..take];
            shown += take;
            let lines = Lines::new(file.source.as_deref().unwrap_or(""));
            if json {
                let listed = |range: std::ops::RangeInclusive<usize>| {
                    (!context.is_empty()).then(|| {
                        range
                            .map(|n| ContextLine {
                                line: n,
                                text: lines.get(n).to_string(),
                            })
                            .collect()
                    })
                };
                rows.extend(shown_here.iter().map(|m| {
                    let (before, after) = lines.around(m, context);
                    GrepMatch {
                        path: display.clone(),
                        lang: file.lang.to_string(),
                        span: Span::of(m, m.text.clone()),
                        meta_variables: MetaVariables::of(&m.captures),
                        context_before: listed(before),
                        context_after: listed(after),
                    }
                }));
                return true;
            }
            let path = quoting.quote(&display);
            if !context.is_empty() {
                for group in context_groups(shown_here, &lines, context) {
                    if any_group {
                        line.push_str("--\n");
                    }
                    any_group = true;
                    for l in group {
                        write_group_line(&mut line, &path, &lines, l, color);
                    }
                }
            }
            for m in shown_here.iter().filter(|_| context.is_empty()) {
                // Into the file's buffer: no allocation per match. Writes to a String
                // cannot fail.
                // The text is written in place, with `…` when the match spans more lines.
                let more = if m.end_line > m.line { "…" } else { "" };
                write_located(
                    &mut line,
                    (&path, ':', m.line, ":"),
                    format_args!("{}: {}{more}", m.column, m.text),
                    color,
                );
            }
            if line.is_empty() {
                return true;
            }
            match out.print(&line) {
                Ok(()) => true,
                Err(e) => {
                    // The reader left (or the disk is full): stop searching.
                    failed = Some(e);
                    false
                }
            }
        },
    )?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let capped = found.total > shown;
    let exit = if found.total > 0 {
        Exit::Ok
    } else {
        Exit::NothingFound
    };
    let diag = common::diagnostics(
        repo,
        &found.skipped_languages,
        &found.parse_errors,
        &found.skipped,
    );
    if json {
        out.json(&GrepReport {
            schema_version: Version,
            pattern: args.pattern,
            matches: rows,
            total: found.total,
            shown,
            capped,
            files_searched: found.files_searched,
            files_matched: found.files_matched,
            diagnostics: diag,
        })?;
        return Ok(exit);
    }
    if capped {
        out.print(&format!(
            "… stopped at {shown} of {} matches (--max-count {}); narrow the search or raise the limit\n",
            found.total, args.max_count
        ))?;
    }
    common::warn_all(out, &diag);
    Ok(exit)
}
