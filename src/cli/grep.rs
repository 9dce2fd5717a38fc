//! `git astedit grep`: structural search, one line per match.

use std::fmt::Write as _;

use git_astedit::error::Exit;
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
/// line and `…`), sorted by path and position. Exits 0 when something matched, 1 when
/// nothing did, 2 for a bad pattern.
#[derive(Debug, clap::Args)]
pub struct GrepArgs {
    /// The ast-grep pattern, e.g. 'console.log($A)' or 'foo($$$ARGS)'
    #[arg(short = 'p', long = "pattern", value_name = "PATTERN")]
    pub pattern: String,

    /// Show at most N matches (0: no limit)
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub max_count: usize,

    #[command(flatten)]
    pub input: InputArgs,
}

/// A match as one line: its first line, and `…` when it spans more.
fn shown_text(m: &git_astedit::rewrite::Match) -> String {
    if m.end_line > m.line {
        format!("{}…", m.text)
    } else {
        m.text.clone()
    }
}

pub fn run(ctx: &mut Ctx, args: GrepArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let quoting = git_astedit::render::Quoting::of(repo);
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
    let found = git_astedit::grep::grep_each(
        repo,
        &set,
        &args.pattern,
        lang,
        args.input.max_filesize,
        if json {
            MatchText::WithCaptures
        } else {
            MatchText::FirstLine
        },
        |file| {
            if shown >= cap {
                return true;
            }
            let display = repo.display_path(&file.path);
            line.clear();
            for m in file.matches.iter().take(cap - shown) {
                shown += 1;
                if json {
                    rows.push(GrepMatch {
                        path: display.clone(),
                        lang: file.lang.to_string(),
                        span: Span {
                            start_byte: m.start_byte,
                            end_byte: m.end_byte,
                            line: m.line,
                            column: m.column,
                            end_line: m.end_line,
                            end_column: m.end_column,
                            text: m.text.clone(),
                        },
                        meta_variables: MetaVariables::of(&m.captures),
                    });
                    continue;
                }
                let path = quoting.quote(&display);
                // Into the file's buffer: no allocation per match. Writes to a String
                // cannot fail.
                let _ = if color {
                    writeln!(
                        line,
                        "\x1b[35m{path}\x1b[0m:\x1b[32m{}\x1b[0m:{}: {}",
                        m.line,
                        m.column,
                        shown_text(m)
                    )
                } else {
                    writeln!(line, "{path}:{}:{}: {}", m.line, m.column, shown_text(m))
                };
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
