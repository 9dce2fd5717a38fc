//! `git astedit patch`: resolve a `*** Begin Patch` text against the work tree and
//! stage it as a preview (or apply it with `--apply`).

use std::io::Read;

use git_astedit::change::PreviewKind;
use git_astedit::error::Exit;
use git_astedit::error::InputError;
use git_astedit::error::IoError;
use git_astedit::error::UsageError;
use git_astedit::ops::patch::preview_meta;
use git_astedit::ops::patch::report_json;
use git_astedit::ops::patch::report_text;
use git_astedit::patch;
use git_astedit::report::Diagnostics;
use git_astedit::report::StageReport;
use git_astedit::report::StagedFile;
use git_astedit::report::Version;
use git_astedit::Error;
use sha2::Digest;

use super::common;
use super::common::StageArgs;
use super::Ctx;
use git_astedit::render::render_diffs;
use git_astedit::render::DiffFile;

/// Stage a `*** Begin Patch` patch as a preview; no work-tree file is touched.
///
/// Every chunk is placed at exactly one place: exact lines first, then ignoring
/// trailing whitespace and typographic punctuation, then bounded rescues of drifted
/// context, which are reported. An ambiguous or unplaceable chunk refuses the whole
/// patch (exit 5); paths outside the tree, under .git/ or through symlinks, and
/// overwrites by Add or Move are refused (exit 4). Paths are relative to the current
/// folder.
#[derive(Debug, clap::Args)]
pub struct PatchArgs {
    /// The patch file; `-` or nothing reads standard input
    #[arg(value_name = "FILE")]
    pub file: Option<String>,

    #[command(flatten)]
    pub stage: StageArgs,
}

fn read_patch(file: Option<&str>) -> Result<String, Error> {
    let mut bytes = Vec::new();
    match file {
        None | Some("-") => std::io::stdin()
            .read_to_end(&mut bytes)
            .map(|_| ())
            .map_err(|e| IoError {
                action: "read",
                path: "standard input".into(),
                source: e,
            })?,
        Some(path) => {
            bytes = std::fs::read(path).map_err(|e| InputError {
                action: "read",
                path: path.to_string(),
                source: e,
            })?
        }
    }
    String::from_utf8(bytes).map_err(|_| UsageError("the patch text is not UTF-8".into()).into())
}

pub fn run(ctx: &mut Ctx, args: PatchArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let text = read_patch(args.file.as_deref())?;
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let base = repo.prefix.clone().unwrap_or_default();
    let tree = patch::FsTree::for_repo(repo)?;
    let res = patch::resolve_text(&text, &tree, &base)?;
    let digest = format!("{:x}", sha2::Sha256::digest(text.as_bytes()));
    let mut meta = preview_meta(&res, &digest, args.stage.reason.clone());
    git_astedit::ops::refresh::record_patch(&mut meta, &text, &base);
    let mut diag = Diagnostics::default();
    if res.report.rescued() > 0 {
        diag.warnings
            .push("some chunks were placed by a rescue: review the drifted lines above".into());
    }
    let mut report = StageReport {
        schema_version: Version,
        kind: PreviewKind::Patch,
        id: None,
        staged: false,
        applied: false,
        summary: meta.summary.clone(),
        replacements: meta.replacements,
        files: meta
            .files
            .iter()
            .map(|f| StagedFile::of_meta(f, repo.display_path(&f.path)))
            .collect(),
        file_count: meta.files.len(),
        files_searched: None,
        patch_digest: Some(digest.clone()),
        ops: report_json(repo, &res).get("ops").cloned(),
        apply: None,
        diff: None,
        diagnostics: diag,
    };

    if res.changes.is_empty() {
        let why = if res.report.already_applied() > 0 {
            "The patch is already applied; nothing staged."
        } else {
            "The patch changes nothing; nothing staged."
        };
        if json {
            out.json(&report)?;
        } else {
            out.print(&report_text(repo, &res))?;
            out.note(why);
        }
        return Ok(Exit::Ok);
    }

    let (preview, applied) = args.stage.stage(repo, &res.changes, &meta)?;
    report.id = Some(preview.id.clone());
    report.staged = true;
    report.applied = applied.is_some();
    report.apply = common::apply_report(&preview, applied.as_ref(), meta.reason.clone());

    if json {
        out.json(&report)?;
        return Ok(Exit::Ok);
    }

    let mut text = render_diffs(
        &DiffFile::from_changes(&res.changes),
        color,
        args.stage.max_render,
    );
    text.push('\n');
    text.push_str(&report_text(repo, &res));
    text.push_str(&format!("{}\n", meta.summary));
    text.push_str(&common::staged_line(&preview, applied.as_ref()));
    out.print(&text)?;
    common::warn_all(out, &report.diagnostics);
    Ok(Exit::Ok)
}
