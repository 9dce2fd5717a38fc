//! `git astedit review`: a preview's sites grouped by what they do, outliers first, as
//! text, JSON or one static HTML file; decisions on groups and sites; the accepted
//! sites split into previews of their own.

use git_astedit::error::Exit;
use git_astedit::ops::review::apply::SplitBy;
use git_astedit::ops::review::Decision;
use git_astedit::ops::review::ReviewOutcome;
use git_astedit::ops::review::ReviewRequest;
use git_astedit::Error;

use super::Ctx;

/// Review a preview's changes grouped by what they do, outliers first
///
/// A site is one match's replacement; sites of the same rule or op that make the same
/// change once the text they keep is abstracted are one group. Accept or reject groups
/// and sites: `apply` then applies the accepted ones, drops the rejected ones and
/// leaves the undecided ones pending as a preview of their own. Without --text, --html,
/// --json or a decision, it serves the review on a local page (127.0.0.1) and opens
/// the browser; the page's Apply applies and stops the server, Ctrl-C stops it.
#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    /// Preview id or unique prefix (the newest pending one when omitted)
    pub id: Option<String>,

    /// Print the groups and outliers as text (for a terminal or an SSH session)
    #[arg(long)]
    pub text: bool,

    /// Write the review as one static HTML file (no server, nothing fetched): groups,
    /// counts, outliers and a representative diff of each
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,

    /// Serve the page on this port of 127.0.0.1 (default: any free port)
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,

    /// Print the page's URL (good for one load) without opening a browser
    #[arg(long)]
    pub no_open: bool,

    /// Accept these groups (keys), sites (ids), or `all`
    #[arg(long, value_name = "KEY", value_delimiter = ',')]
    pub accept: Vec<String>,

    /// Reject these groups (keys), sites (ids), or `all`
    #[arg(long, value_name = "KEY", value_delimiter = ',')]
    pub reject: Vec<String>,

    /// Make these groups (keys), sites (ids), or `all` undecided again
    #[arg(long, value_name = "KEY", value_delimiter = ',')]
    pub undecide: Vec<String>,

    /// Who decides, recorded as the author of the batch of decisions
    #[arg(long, value_name = "NAME", default_value = "terminal")]
    pub by: String,

    /// List the sites of the group KEY (with --offset and --limit)
    #[arg(long, value_name = "KEY")]
    pub sites: Option<String>,

    /// With --sites: skip the first N sites
    #[arg(long, value_name = "N", default_value_t = 0, requires = "sites")]
    pub offset: usize,

    /// With --sites: list at most N sites (0: all)
    #[arg(long, value_name = "N", default_value_t = 50, requires = "sites")]
    pub limit: usize,

    /// Replace the preview by previews of its accepted sites, one per accepted group
    /// (one per PATHSPEC when pathspecs are given), and one of the sites no part took;
    /// rejected sites are dropped
    #[arg(long, conflicts_with_all = ["sites", "accept", "reject", "undecide"])]
    pub split: bool,

    /// With --split: one preview per pathspec (relative to the current folder)
    #[arg(last = true, value_name = "PATHSPEC", requires = "split")]
    pub pathspecs: Vec<String>,
}

impl ReviewArgs {
    /// Whether the run serves the page: no other face (text, HTML, JSON), no
    /// decision, site listing or split asked for.
    pub fn serves(&self, json: bool) -> bool {
        !(json
            || self.text
            || self.html.is_some()
            || self.split
            || self.sites.is_some()
            || !self.accept.is_empty()
            || !self.reject.is_empty()
            || !self.undecide.is_empty())
    }
}

pub fn run(ctx: &mut Ctx, args: ReviewArgs) -> Result<Exit, Error> {
    if args.serves(ctx.json) {
        let (repo, out) = ctx.parts()?;
        let options = super::web::Options {
            port: args.port.unwrap_or(0),
        };
        return super::web::run(repo, out, args.id.as_deref(), &options, !args.no_open);
    }
    let mut decide: Vec<(String, Option<Decision>)> = Vec::new();
    decide.extend(
        args.accept
            .iter()
            .map(|k| (k.clone(), Some(Decision::Accept))),
    );
    decide.extend(
        args.reject
            .iter()
            .map(|k| (k.clone(), Some(Decision::Reject))),
    );
    decide.extend(args.undecide.iter().map(|k| (k.clone(), None)));
    let request = ReviewRequest {
        id: args.id,
        decide,
        by: args.by,
        sites: args.sites,
        offset: args.offset,
        limit: args.limit,
        split: args.split.then_some(if args.pathspecs.is_empty() {
            SplitBy::Group
        } else {
            SplitBy::Pathspecs(args.pathspecs)
        }),
    };
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    match git_astedit::ops::review::run(repo, &request)? {
        ReviewOutcome::Review(review) => {
            if let Some(file) = &args.html {
                write_html(file, &review)?;
                if !args.text && !json {
                    return Ok(Exit::Ok);
                }
            }
            out.emit(&*review)?;
        }
        ReviewOutcome::Sites(page) => out.emit(&page)?,
        ReviewOutcome::Decided(decided, review) => {
            if let Some(file) = &args.html {
                write_html(file, &review)?;
            }
            out.emit(&decided)?;
        }
        ReviewOutcome::Split(parts) => out.emit(&parts)?,
    }
    Ok(Exit::Ok)
}

/// Writes the review's static HTML file.
pub fn write_html(
    file: &std::path::Path,
    review: &git_astedit::report::review::Review,
) -> Result<(), Error> {
    let html = git_astedit::render::review::html(review);
    std::fs::write(file, html).map_err(|source| {
        git_astedit::error::InputError {
            action: "write",
            path: file.display().to_string(),
            source,
        }
        .into()
    })
}
