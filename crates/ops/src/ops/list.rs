//! `list` (and the server's `previews list`): the pending previews, newest first, and
//! the refs under `refs/astedit/` that are not readable previews.

use crate::repo::Repo;
use crate::report::ListReport;
use crate::report::UnreadableRef;
use crate::report::Version;
use crate::Error;

/// Which previews to list.
#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    /// Skip this many first (paging).
    pub offset: usize,
    /// At most this many (`None`: all).
    pub limit: Option<usize>,
}

pub fn run(repo: &Repo, req: &ListRequest) -> Result<ListReport, Error> {
    let (previews, bad) = crate::txn::list_checked(repo)?;
    Ok(ListReport {
        schema_version: Version,
        previews: previews
            .iter()
            .skip(req.offset)
            .take(req.limit.unwrap_or(usize::MAX))
            .map(|p| {
                let mut row = super::preview::row(repo, p);
                row.review = crate::ops::review::state(repo, p);
                row
            })
            .collect(),
        unreadable_refs: bad
            .iter()
            .map(|b| UnreadableRef {
                name: b.name.clone(),
                why: b.why.clone(),
            })
            .collect(),
        warnings: bad.iter().map(crate::txn::BadRef::describe).collect(),
        total: previews.len(),
        offset: req.offset,
    })
}
