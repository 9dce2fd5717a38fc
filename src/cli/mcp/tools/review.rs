//! `review`: a preview's sites grouped by what they do, outliers first, within the
//! result budget; decisions taken by group (or site), recorded with the client's name.

use git_astedit::ops::review::Decision;
use git_astedit::ops::review::Model;
use git_astedit::report::review::Decided;
use git_astedit::report::review::Review;
use git_astedit::report::review::SitePage;
use git_astedit::report::Version;
use git_astedit::Error;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use super::count;
use super::push_notes;
use super::Call;
use super::Done;

/// How many groups a result holds unless asked for more.
const DEFAULT_MAX_GROUPS: usize = 50;
/// Lines of a representative diff (or a site's) kept per side.
const MAX_DIFF_LINES: usize = 20;

/// A decision to record.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Choice {
    Accept,
    Reject,
    /// Back to undecided.
    Undecided,
}

/// One decision: on a group (its `key`), a site (its `id`), or `all`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionInput {
    /// A group's key, a site's id, or `all`.
    pub target: String,
    pub decision: Choice,
}

/// Input of `review`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewInput {
    /// A pending preview's id or unique prefix (default: the newest pending one).
    #[serde(default)]
    pub id: Option<String>,
    /// Decisions to record first, in order (one batch, authored by this client).
    #[serde(default)]
    pub decide: Vec<DecisionInput>,
    /// List this group's sites (with `offset` and `max_results`) instead of groups.
    #[serde(default)]
    pub group: Option<String>,
    /// Return at most this many groups (or sites with `group`); default 50.
    #[serde(default, alias = "limit", deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = DEFAULT_MAX_GROUPS))]
    pub max_results: Option<usize>,
    /// Skip this many groups (or sites) first; the result names the next offset.
    #[serde(default, deserialize_with = "count")]
    #[schemars(with = "usize", extend("default" = 0))]
    pub offset: Option<usize>,
}

/// Output of `review`: the review with a page of its groups (outliers first), or a page
/// of one group's sites; and the batch of decisions recorded, if any.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReviewToolOutput {
    pub schema_version: Version,
    pub review: Review,
    /// How many groups the preview has in all (`review.groups` is a page of them).
    pub total_groups: usize,
    /// The offset that continues the page, when there is more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sites: Option<SitePage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided: Option<Decided>,
}

fn cut_lines(s: &mut String) {
    if let Some((at, _)) = s.match_indices('\n').nth(MAX_DIFF_LINES - 1) {
        let more = s[at..].matches('\n').count();
        s.truncate(at);
        s.push_str(&format!("\n… ({more} more lines)"));
    }
}

pub fn review(call: &Call, input: ReviewInput) -> Result<Done, Error> {
    let (repo, notes) = call.open()?;
    call.cancel.check()?;
    let mut model = Model::load(&repo, input.id.as_deref())?;
    let decided = if input.decide.is_empty() {
        None
    } else {
        let batch: Vec<_> = input
            .decide
            .iter()
            .map(|d| {
                let choice = match d.decision {
                    Choice::Accept => Some(Decision::Accept),
                    Choice::Reject => Some(Decision::Reject),
                    Choice::Undecided => None,
                };
                (model.target(&d.target), choice)
            })
            .collect();
        let by = call.agent.clone().unwrap_or_else(|| "mcp".into());
        Some(model.decide(&repo, &batch, &by)?)
    };
    let offset = input.offset.unwrap_or(0);
    let limit = input.max_results.unwrap_or(DEFAULT_MAX_GROUPS).max(1);
    let mut review = model.review();
    let total_groups = review.groups.len();
    let sites = match &input.group {
        Some(key) => {
            let mut page = model.sites(key, offset, limit)?;
            for s in &mut page.sites {
                cut_lines(&mut s.diff.before);
                cut_lines(&mut s.diff.after);
            }
            Some(page)
        }
        None => None,
    };
    let next_offset = match &sites {
        Some(p) => (p.offset + p.sites.len() < p.total).then_some(p.offset + p.sites.len()),
        None => (offset + limit < total_groups).then_some(offset + limit),
    };
    review.groups = if sites.is_some() {
        Vec::new()
    } else {
        review.groups.into_iter().skip(offset).take(limit).collect()
    };
    for g in &mut review.groups {
        cut_lines(&mut g.representative.before);
        cut_lines(&mut g.representative.after);
        g.files.truncate(20);
    }
    let mut text = git_astedit::render::review::agent_text(&review, decided.as_ref(), next_offset);
    push_notes(&mut text, &notes, &[]);
    Done::new(
        text,
        &ReviewToolOutput {
            schema_version: Version,
            review,
            total_groups,
            next_offset,
            sites,
            decided,
        },
    )
}
