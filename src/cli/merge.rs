//! `git astedit merge`: previews with disjoint paths combined into one (sharded CI).

use git_astedit::error::Exit;
use git_astedit::scan::merge;
use git_astedit::Error;

use super::Ctx;
use git_astedit::render::render_diffs;
use git_astedit::render::DiffFile;
use git_astedit::report::MergeReport;
use git_astedit::report::Version;

/// Combine previews with disjoint paths into one new preview
///
/// The usual source is sharded CI: each job runs `git astedit scan --stage --shard I/N`
/// and pushes `refs/astedit/*`; one job fetches them all and merges. The merged
/// previews are discarded (recorded in the journal) unless --keep. Paths touched by
/// more than one preview are an error that names them.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Preview ids or unique prefixes (at least two)
    #[arg(value_name = "ID", required = true, num_args = 2..)]
    pub ids: Vec<String>,

    /// Why (recorded in the merged preview and the journal)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// Keep the merged previews pending instead of discarding them
    #[arg(long)]
    pub keep: bool,

    /// Render at most N diff lines (0: no limit); the rest is summarized
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub max_render: usize,
}

pub fn run(ctx: &mut Ctx, args: MergeArgs) -> Result<Exit, Error> {
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    let color = out.color();
    let merged = merge::merge(repo, &args.ids, args.reason.clone(), args.keep)?;
    let p = &merged.preview;
    if json {
        let files: Vec<String> = p.entries.iter().map(|e| e.path.clone()).collect();
        out.json(&MergeReport {
            schema_version: Version,
            id: p.id.clone(),
            commit: p.commit.to_string(),
            summary: p.meta.summary.clone(),
            merged: merged.inputs.clone(),
            discarded: merged.discarded,
            file_count: files.len(),
            files,
        })?;
        return Ok(Exit::Ok);
    }
    let mut text = render_diffs(
        &DiffFile::from_changes(&merged.changes),
        color,
        args.max_render,
    );
    text.push_str(&format!("\n{}\n", p.meta.summary));
    text.push_str(&format!(
        "Staged preview {}. Apply with `git astedit apply {}`, drop with `git astedit discard {}`.\n",
        p.id, p.id, p.id
    ));
    if merged.discarded {
        text.push_str(&format!(
            "Discarded the merged previews: {}.\n",
            merged.inputs.join(", ")
        ));
    }
    out.print(&text)?;
    Ok(Exit::Ok)
}
