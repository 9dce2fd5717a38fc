//! `git astedit edit`: compute a structural rewrite and stage it as a preview.

use std::io::Write;

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::render;
use git_astedit::rewrite::Op;
use git_astedit::txn;
use git_astedit::Error;

use super::common;
use super::common::InputArgs;
use super::common::StageArgs;
use super::show::render_preview_diffs;
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
fn ops(args: &EditArgs) -> Result<Vec<Op>, UsageError> {
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
        .zip(&args.rewrites)
        .map(|(p, r)| Op {
            pattern: p.clone(),
            rewrite: r.clone(),
        })
        .collect())
}

pub fn run(ctx: &mut Ctx, args: EditArgs) -> Result<Exit, Error> {
    let ops = ops(&args)?;
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let (set, lang) = args.input.collect(repo)?;
    // Each changed file goes into the preview's objects as soon as it is rewritten.
    let mut stager = txn::Stager::new(repo);
    let mut stage_error = None;
    let outcome =
        git_astedit::edit::edit_each(repo, &set, &ops, lang, args.input.max_filesize, |change| {
            match stager.add(change) {
                Ok(()) => true,
                Err(e) => {
                    stage_error = Some(e);
                    false
                }
            }
        })?;
    if let Some(e) = stage_error {
        return Err(e.into());
    }

    let diag = || {
        common::json_diagnostics(
            repo,
            &outcome.skipped_languages,
            &outcome.parse_errors,
            &outcome.skipped,
        )
    };
    if outcome.files.is_empty() {
        if json {
            let mut value = serde_json::json!({
                "id": null,
                "summary": outcome.summary(),
                "replacements": 0,
                "files": [],
                "files_searched": outcome.files_searched,
                "applied": false,
            });
            common::merge(&mut value, diag());
            let _ = writeln!(out.stdout(), "{value}");
        } else {
            common::warn_common(
                out,
                repo,
                &outcome.skipped_languages,
                &outcome.parse_errors,
                &outcome.skipped,
            );
            let _ = writeln!(out.stderr(), "No changes; nothing staged.");
        }
        return Ok(Exit::NothingFound);
    }

    let mut meta = outcome.meta(&ops, lang, args.stage.reason.clone());
    meta.base_head = repo.head_commit().map(|id| id.to_string());
    let (preview, applied) = args.stage.finish(repo, stager, &meta)?;

    if json {
        let files: Vec<serde_json::Value> = outcome
            .files
            .iter()
            .map(|f| {
                serde_json::json!({
                    "path": repo.display_path(&f.path),
                    "count": f.replacements.len(),
                    "introduces_parse_errors": f.introduces_parse_error,
                    "dropped": f.dropped.iter().map(|d| serde_json::json!({
                        "op": d.op, "line": d.line, "column": d.column, "text": d.text,
                    })).collect::<Vec<_>>(),
                    "changes": f.replacements.iter().map(|r| serde_json::json!({
                        "op": r.op,
                        "line": r.line,
                        "column": r.column,
                        "before": r.before,
                        "after": r.after,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut value = serde_json::json!({
            "id": preview.id,
            "summary": outcome.summary(),
            "replacements": outcome.replacements(),
            "files": files,
            "files_searched": outcome.files_searched,
            "applied": applied.is_some(),
        });
        common::merge(&mut value, diag());
        let _ = writeln!(out.stdout(), "{value}");
        return Ok(Exit::Ok);
    }

    let mut text = render_preview_diffs(repo, &preview, color, args.stage.max_render)?;
    text.push_str(&format!("\n{}\n", outcome.summary()));
    let flagged: Vec<String> = outcome
        .files
        .iter()
        .filter(|f| f.introduces_parse_error)
        .map(|f| repo.display_path(&f.path))
        .collect();
    if !flagged.is_empty() {
        text.push_str(&format!(
            "warning: the rewrite makes {} parse with errors: {}\n",
            render::plural(flagged.len(), "file"),
            flagged.join(", ")
        ));
    }
    let dropped: Vec<String> = outcome
        .files
        .iter()
        .flat_map(|f| {
            f.dropped
                .iter()
                .map(|d| format!("{}:{}:{}", repo.display_path(&f.path), d.line, d.column))
        })
        .collect();
    if !dropped.is_empty() {
        text.push_str(&format!(
            "warning: {} no longer matched once the matches inside were rewritten, and \
             were left as those made them: {}\n",
            render::plural(dropped.len(), "outer match"),
            dropped.join(", ")
        ));
    }
    text.push_str(&common::staged_line(&preview, applied.as_ref()));
    let _ = out.stdout().write_all(text.as_bytes());
    common::warn_common(
        out,
        repo,
        &outcome.skipped_languages,
        &outcome.parse_errors,
        &outcome.skipped,
    );
    Ok(Exit::Ok)
}
