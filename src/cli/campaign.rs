//! `git astedit campaign`: one change across many repositories (the work is
//! [`git_astedit::ops::campaign`]'s; the state is `refs/astedit-campaign/<name>` in
//! the current repository).

use std::path::PathBuf;

use git_astedit::error::Exit;
use git_astedit::ops::campaign;
use git_astedit::Error;

use super::Ctx;

/// Run one change across many repositories: stage, publish as draft PRs, refresh, track
#[derive(Debug, clap::Subcommand)]
pub enum CampaignCommand {
    /// Clone or fetch each repository of SPEC and stage the change there
    Stage {
        /// The campaign spec (TOML)
        spec: PathBuf,
        /// Where the clones live (default: under the user's cache folder)
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Only shard I of N (1-based); the state goes to the shard's ref
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Repositories at the same time (default: the spec's at_once, else 4)
        #[arg(long = "at-once", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        at_once: Option<u64>,
        /// List the repositories it would stage (the spec's and its [targets]') and stop
        #[arg(long)]
        dry_run: bool,
    },
    /// Each repository's status, totals and the burndown
    Status {
        /// The campaign spec (TOML)
        spec: PathBuf,
        /// Where the clones live (default: under the user's cache folder)
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Write one self-contained HTML page (burndown chart and table) to FILE
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Do not ask gh whether pull requests were merged or closed
        #[arg(long)]
        offline: bool,
        /// Repositories at the same time (default: the spec's at_once, else 4)
        #[arg(long = "at-once", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        at_once: Option<u64>,
    },
    /// Push each staged preview as the campaign's branch and open a draft pull request
    Publish {
        /// The campaign spec (TOML)
        spec: PathBuf,
        /// Where the clones live (default: under the user's cache folder)
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Publish N first and stop until they are merged (or --continue)
        #[arg(long, value_name = "N")]
        canary: Option<usize>,
        /// Publish the rest even though the canary is not merged
        #[arg(long = "continue")]
        go_on: bool,
        /// Repositories at the same time (default: the spec's at_once, else 4)
        #[arg(long = "at-once", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        at_once: Option<u64>,
    },
    /// Re-derive the previews whose base moved; move each branch only over our own commit
    Refresh {
        /// The campaign spec (TOML)
        spec: PathBuf,
        /// Where the clones live (default: under the user's cache folder)
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Repositories at the same time (default: the spec's at_once, else 4)
        #[arg(long = "at-once", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        at_once: Option<u64>,
    },
    /// Merge the open pull requests whose checks pass and whose review is approved (as
    /// the spec's [merge] says), never a branch holding commits we did not push
    Merge {
        /// The campaign spec (TOML)
        spec: PathBuf,
        /// Where the clones live (default: under the user's cache folder)
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Repositories asked about at the same time (default: the spec's at_once, else 4)
        #[arg(long = "at-once", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        at_once: Option<u64>,
    },
    /// Apply every staged preview of the campaign's local checkouts
    Apply {
        /// The campaign spec (TOML)
        spec: PathBuf,
        /// Required: campaigns over clones are published, not applied
        #[arg(long, required = true)]
        local: bool,
    },
    /// Undo what `campaign apply --local` applied
    Undo {
        /// The campaign spec (TOML)
        spec: PathBuf,
    },
    /// Print a CI matrix (GitHub Actions and GitLab) of N shards of repositories
    Matrix {
        /// The campaign spec (TOML)
        spec: PathBuf,
        #[arg(long, value_name = "N", default_value_t = 4)]
        jobs: usize,
    },
    /// Merge the shards' states (refs/astedit-campaign-shards/<name>/*) into the state
    Collect {
        /// The campaign spec (TOML)
        spec: PathBuf,
    },
}

pub fn run(ctx: &mut Ctx, cmd: CampaignCommand) -> Result<Exit, Error> {
    use CampaignCommand as C;
    if let C::Matrix { spec, jobs } = &cmd {
        let loaded = campaign::load_spec(spec)?;
        let report = campaign::matrix(&loaded, *jobs);
        ctx.out.emit(&report)?;
        return Ok(Exit::Ok);
    }
    if let C::Stage {
        spec,
        dry_run: true,
        ..
    } = &cmd
    {
        let report = campaign::dry_run(campaign::load_spec(spec)?)?;
        ctx.out.emit(&report)?;
        return Ok(Exit::Ok);
    }
    let (repo, out) = ctx.parts()?;
    let report = match cmd {
        C::Stage {
            spec,
            workspace,
            shard,
            at_once,
            ..
        } => {
            let loaded = campaign::load_spec(&spec)?;
            let shard = shard.as_deref().map(campaign::parse_shard).transpose()?;
            let workspace = workspace_of(repo, workspace, &loaded);
            campaign::stage(
                repo,
                &campaign::StageRequest {
                    workspace,
                    shard,
                    at_once: loaded.at_once(count(at_once)),
                    spec: loaded,
                },
            )?
        }
        C::Status {
            spec,
            workspace,
            html,
            offline,
            at_once,
        } => {
            let loaded = campaign::load_spec(&spec)?;
            let report = campaign::status(
                repo,
                &campaign::StatusRequest {
                    name: loaded.spec.name.clone(),
                    branch: loaded.branch(),
                    offline,
                    at_once: loaded.at_once(count(at_once)),
                    checkouts: campaign::Checkouts::new(
                        &loaded,
                        workspace_of(repo, workspace, &loaded),
                    ),
                    reviews: html.is_some(),
                },
            )?;
            if let Some(file) = html {
                write_status_page(&file, &report)?;
            }
            out.emit(&report)?;
            return Ok(Exit::Ok);
        }
        C::Publish {
            spec,
            workspace,
            canary,
            go_on,
            at_once,
        } => {
            let loaded = campaign::load_spec(&spec)?;
            campaign::publish(
                repo,
                &campaign::PublishRequest {
                    at_once: loaded.at_once(count(at_once)),
                    checkouts: campaign::Checkouts::new(
                        &loaded,
                        workspace_of(repo, workspace, &loaded),
                    ),
                    spec: loaded,
                    canary,
                    go_on,
                },
            )?
        }
        C::Refresh {
            spec,
            workspace,
            at_once,
        } => {
            let loaded = campaign::load_spec(&spec)?;
            let checkouts =
                campaign::Checkouts::new(&loaded, workspace_of(repo, workspace, &loaded));
            campaign::refresh(repo, &loaded, &checkouts, loaded.at_once(count(at_once)))?
        }
        C::Merge {
            spec,
            workspace,
            at_once,
        } => {
            let loaded = campaign::load_spec(&spec)?;
            let checkouts =
                campaign::Checkouts::new(&loaded, workspace_of(repo, workspace, &loaded));
            campaign::merge(repo, &loaded, &checkouts, loaded.at_once(count(at_once)))?
        }
        C::Apply { spec, .. } => campaign::apply(repo, &campaign::load_spec(&spec)?)?,
        C::Undo { spec } => campaign::undo(repo, &campaign::load_spec(&spec)?)?,
        C::Collect { spec } => campaign::collect(repo, &campaign::load_spec(&spec)?)?,
        C::Matrix { .. } => unreachable!("handled above"),
    };
    out.emit(&report)?;
    Ok(report.exit())
}

/// `--workspace DIR` (relative to where the command runs), else the default one.
fn workspace_of(
    repo: &git_astedit::repo::Repo,
    asked: Option<PathBuf>,
    loaded: &campaign::Loaded,
) -> PathBuf {
    asked
        .map(|w| repo.cwd.join(w))
        .unwrap_or_else(|| campaign::default_workspace(&loaded.spec.name))
}

/// `--at-once N` (clap refused 0) as a count.
fn count(n: Option<u64>) -> Option<usize> {
    n.map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// `status --html FILE`: the page, and each pending preview's review page (as `review
/// --html` writes it) in the folder `<FILE's stem>-reviews` beside it, linked from
/// the page.
fn write_status_page(
    file: &std::path::Path,
    report: &git_astedit::report::campaign::CampaignStatusReport,
) -> Result<(), Error> {
    let stem = file
        .file_stem()
        .map_or_else(|| "status".into(), |s| s.to_string_lossy().into_owned());
    let folder = format!("{stem}-reviews");
    let dir = file.with_file_name(&folder);
    let write = |path: &std::path::Path, text: String| {
        std::fs::write(path, text).map_err(|e| git_astedit::error::InputError {
            action: "write",
            path: path.display().to_string(),
            source: e,
        })
    };
    if !report.reviews.is_empty() {
        std::fs::create_dir_all(&dir).map_err(|e| git_astedit::error::InputError {
            action: "create the folder",
            path: dir.display().to_string(),
            source: e,
        })?;
    }
    for (key, review) in &report.reviews {
        let name = git_astedit::render::campaign::review_file_name(key);
        write(&dir.join(name), git_astedit::render::review::html(review))?;
    }
    write(file, git_astedit::render::campaign::html(report, &folder))?;
    Ok(())
}
