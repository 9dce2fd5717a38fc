//! `ast_grep`: structural search.

use git_astedit::files;
use git_astedit::render;
use git_astedit::report::GrepMatch;
use git_astedit::report::GrepReport;
use git_astedit::report::MetaVariables;
use git_astedit::report::Span;
use git_astedit::report::Version;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::collect;

use super::count;
use super::diagnostics;
use super::pathspecs;
use super::push_notes;
use super::string_or_list;
use super::Call;
use super::Done;
use super::DEFAULT_MAX_RESULTS;
use super::MAX_MATCH_TEXT;
use super::MAX_MAX_RESULTS;

/// Input of `ast_grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// An ast-grep pattern: code in the target language with metavariables, e.g.
    /// `console.log($MSG)` or `fn $NAME($$$ARGS)`. `$X` matches one node, `$$$X` any
    /// number of nodes.
    #[serde(alias = "pat")]
    pub pattern: String,
    /// Parse every file as this language (e.g. `rust`, `ts`, `python`) instead of
    /// choosing by file extension.
    #[serde(default)]
    pub lang: Option<String>,
    /// Git pathspecs relative to the repository root, e.g. `src/`, `*.ts` or
    /// `src/**/*.ts` (`**` spans directories) (default: the whole work tree, tracked
    /// and untracked-not-ignored files).
    #[serde(default, alias = "path", deserialize_with = "string_or_list")]
    pub paths: Vec<String>,
    /// Glob patterns (`**` spans directories), added to `paths`.
    #[serde(default, deserialize_with = "string_or_list")]
    pub glob: Vec<String>,
    /// Return at most this many matches (default 200, at most 5000). The result says
    /// when it was capped and how many matches there are in all.
    #[serde(default, alias = "limit", deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_RESULTS))]
    pub max_results: Option<usize>,
    /// Skip this many matches first (paging: call again with the next offset the
    /// result gives).
    #[serde(default, alias = "skip", deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = 0))]
    pub offset: Option<usize>,
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

pub fn ast_grep(call: &Call, input: GrepInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    let specs = pathspecs(&input.paths, &input.glob);
    let (set, lang, path_warnings) = collect(&repo, input.lang.as_deref(), &specs)?;
    let outcome = git_astedit::grep::grep_cancellable(
        &repo,
        &set,
        &input.pattern,
        lang,
        files::DEFAULT_MAX_FILE_SIZE,
        &call.cancel,
    )?;
    // A partial search must not pass for a whole one.
    call.cancel.check()?;
    let cap = input
        .max_results
        .unwrap_or(DEFAULT_MAX_RESULTS)
        .clamp(1, MAX_MAX_RESULTS);
    let offset = input.offset.unwrap_or(0);
    // Matches are taken while they fit the result's byte budget (a tenth kept for the
    // rest of the result); the first always is.
    let room = call.budget - call.budget / 10;
    let mut used = 0;
    let mut budget_cut = false;
    let matches: Vec<GrepMatch> = outcome
        .files
        .iter()
        .flat_map(|f| {
            f.matches.iter().map(|m| {
                let mut vars = MetaVariables::of(&m.captures);
                // Captures are cut as match text is: one `$$$B` can hold a whole class.
                for span in vars
                    .single
                    .values_mut()
                    .chain(vars.multi.values_mut().flatten())
                {
                    span.text = cut(&span.text, MAX_MATCH_TEXT);
                }
                GrepMatch {
                    path: f.path.clone(),
                    lang: f.lang.to_string(),
                    span: Span::of(m, cut(&m.text, MAX_MATCH_TEXT)),
                    meta_variables: vars,
                    context_before: None,
                    context_after: None,
                }
            })
        })
        .skip(offset)
        .take(cap)
        .take_while(|m| {
            // The match as JSON, and its line of text.
            let size = serde_json::to_string(m).map_or(0, |s| s.len())
                + m.path.len()
                + render::first_line(&m.span.text).len()
                + 16;
            used += size;
            let fits = used <= room || used == size;
            budget_cut |= !fits;
            fits
        })
        .collect();
    let mut out = GrepReport {
        schema_version: Version,
        pattern: input.pattern.clone(),
        shown: matches.len(),
        capped: offset + matches.len() < outcome.total,
        total: outcome.total,
        files_matched: outcome.files.len(),
        files_searched: outcome.files_searched,
        diagnostics: diagnostics(
            &outcome.skipped_languages,
            &outcome.parse_errors,
            &outcome.skipped,
        ),
        matches,
    };
    out.diagnostics.warnings.extend(path_warnings);
    let mut text = String::new();
    for m in &out.matches {
        text.push_str(&format!(
            "{}:{}:{}: {}\n",
            m.path,
            m.span.line,
            m.span.column,
            render::first_line(&m.span.text)
        ));
    }
    if out.total == 0 {
        text.push_str(&format!(
            "No matches ({} searched).\n",
            render::plural(out.files_searched, "file")
        ));
    } else {
        text.push_str(&format!(
            "{} {} in {}",
            out.total,
            if out.total == 1 { "match" } else { "matches" },
            render::plural(out.files_matched, "file")
        ));
        if offset > 0 || out.capped {
            text.push_str(&format!(
                "; showing {} from offset {offset}",
                out.matches.len()
            ));
        }
        if out.capped {
            text.push_str(&format!(
                "; more: call again with offset {} ({}or narrow paths)",
                offset + out.matches.len(),
                if budget_cut {
                    format!(
                        "the {}-byte result budget was reached; or raise max_bytes, ",
                        call.budget
                    )
                } else {
                    "or raise max_results, ".to_string()
                }
            ));
        }
        text.push_str(".\n");
    }
    push_notes(&mut text, &notes, &out.diagnostics.warnings);
    Done::new(text, &out)
}
