//! `ast_grep`: structural search.

use git_astedit::ops::grep::GrepRequest;
use git_astedit::ops::grep::GrepSink;
use git_astedit::ops::grep::Paths;
use git_astedit::pipeline::Delivery;
use git_astedit::render;
use git_astedit::render::agent::grep::Rows;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;

use super::count;

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

pub fn ast_grep(call: &Call, input: GrepInput) -> Result<Done, Error> {
    let (repo, notes) = call.open_read_only()?;
    let cap = input
        .max_results
        .unwrap_or(DEFAULT_MAX_RESULTS)
        .clamp(1, MAX_MAX_RESULTS);
    let offset = input.offset.unwrap_or(0);
    // Matches are taken while they fit the result's byte budget (a tenth kept for the
    // rest of the result).
    let mut rows = Rows::new(call.budget - call.budget / 10, MAX_MATCH_TEXT);
    let request = GrepRequest {
        input: super::input(input.lang.as_deref(), &input.paths, &input.glob),
        pattern: input.pattern,
        text: rows.match_text(),
        before: 0,
        after: 0,
        order: Delivery::InOrder,
        offset,
        max_count: cap,
        paths: Paths::Repo,
        selector: None,
        strictness: None,
        rewrite: None,
        stdin: None,
        keep_lines: false,
        cache: Default::default(),
        verbose: false,
    };
    let sink = GrepSink::Files(&mut |file| {
        rows.add(&file);
        Ok(())
    });
    let report = git_astedit::ops::grep::run(&repo, &request, &call.cancel, sink)?;
    let kept = rows.finish(report, offset);
    let text = render::agent::grep::text(&kept, offset, call.budget, &notes);
    Done::new(text, &kept.report)
}
