//! `git astedit edit`: compute a structural rewrite and stage it as a preview.

use git_astedit::change::PreviewKind;
use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::ops::stage::EditRequest;
use git_astedit::render;
use git_astedit::report::Dropped;
use git_astedit::report::Replacement;
use git_astedit::report::StageReport;
use git_astedit::report::StagedFile;
use git_astedit::report::Version;
use git_astedit::rewrite::Op;
use git_astedit::txn;
use git_astedit::Error;

use super::common;
use super::common::InputArgs;
use super::common::StageArgs;
use super::interactive;
use super::Ctx;
use git_astedit::ops::preview::render_preview_diffs;

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

    /// Ask about each change (y/n/a/d/q, one answer a line on stdin); stage only the
    /// accepted ones
    #[arg(short = 'i', long)]
    pub interactive: bool,

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
    if args.interactive && json {
        return Err(UsageError("-i/--interactive cannot be combined with --json".into()).into());
    }
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let (set, lang) = args.input.collect(repo)?;
    let request = EditRequest {
        set: &set,
        ops: &ops,
        lang,
        max_file_size: args.input.max_filesize,
        reason: args.stage.reason.clone(),
        agent: None,
    };
    let mut asked = None;
    let staged = if args.interactive {
        let session = interactive::session(out, color, ops.len() > 1, |prompter| {
            git_astedit::ops::stage::stage_edit_selecting(repo, &request, prompter)
        })?;
        asked = Some(session.1);
        session.0
    } else {
        git_astedit::ops::stage::stage_edit(repo, &request)?
    };
    let outcome = &staged.outcome;
    let mut diag = common::diagnostics(
        repo,
        &outcome.skipped_languages,
        &outcome.parse_errors,
        &outcome.skipped,
    );
    let quoting = repo.quoting();
    let flagged: Vec<String> = outcome
        .files
        .iter()
        .filter(|f| f.introduces_parse_error)
        .map(|f| quoting.quote_owned(repo.display_path(&f.path)))
        .collect();
    if !flagged.is_empty() {
        diag.warnings.push(format!(
            "the rewrite makes {} parse with errors: {}",
            render::plural(flagged.len(), "file"),
            flagged.join(", ")
        ));
    }
    let dropped: Vec<String> = outcome
        .files
        .iter()
        .flat_map(|f| {
            let path = quoting.quote_owned(repo.display_path(&f.path));
            f.dropped
                .iter()
                .map(move |d| format!("{path}:{}:{}", d.line, d.column))
        })
        .collect();
    if !dropped.is_empty() {
        diag.warnings.push(format!(
            "{} no longer matched once the matches inside were rewritten, and were left as \
             those made them: {}",
            render::plural(dropped.len(), "outer match"),
            dropped.join(", ")
        ));
    }

    let mut report = StageReport {
        schema_version: Version,
        kind: PreviewKind::Edit,
        id: None,
        staged: false,
        applied: false,
        summary: outcome.summary(),
        replacements: outcome.replacements(),
        files: outcome
            .files
            .iter()
            .map(|f| StagedFile {
                path: repo.display_path(&f.path),
                count: f.replacements.len(),
                flags: if f.introduces_parse_error {
                    vec![git_astedit::change::FileFlag::IntroducesParseErrors]
                } else {
                    Vec::new()
                },
                changes: f
                    .replacements
                    .iter()
                    .map(|r| Replacement {
                        op: r.op,
                        line: r.line,
                        column: r.column,
                        before: r.before.clone(),
                        after: r.after.clone(),
                    })
                    .collect(),
                dropped: f
                    .dropped
                    .iter()
                    .map(|d| Dropped {
                        op: d.op,
                        line: d.line,
                        column: d.column,
                        text: d.text.clone(),
                    })
                    .collect(),
            })
            .collect(),
        file_count: outcome.files.len(),
        files_searched: Some(outcome.files_searched),
        patch_digest: None,
        ops: None,
        apply: None,
        diff: None,
        diagnostics: diag,
    };

    if outcome.files.is_empty() {
        if json {
            out.json(&report)?;
        } else {
            common::warn_all(out, &report.diagnostics);
            out.note(&interactive::nothing_staged(asked));
        }
        return Ok(Exit::NothingFound);
    }

    let meta = &staged.meta;
    let Some(preview) = &staged.preview else {
        return Err(txn::Error::NoPending.into());
    };
    let applied = args.stage.apply_now(repo, preview)?;
    report.id = Some(preview.id.clone());
    report.staged = true;
    report.applied = applied.is_some();
    report.apply = common::apply_report(preview, applied.as_ref(), meta.reason.clone());

    if json {
        out.json(&report)?;
        return Ok(Exit::Ok);
    }
    // After `-i` every accepted change has been shown already.
    let mut text = match asked {
        Some(_) => String::new(),
        None => render_preview_diffs(repo, preview, color, args.stage.max_render)? + "\n",
    };
    text.push_str(&format!("{}\n", outcome.summary()));
    text.push_str(&common::staged_line(preview, applied.as_ref()));
    out.print(&text)?;
    common::warn_all(out, &report.diagnostics);
    Ok(Exit::Ok)
}
