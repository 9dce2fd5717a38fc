//! `gc`: prunes pending previews and journal entries older than an age, and the refs
//! under `refs/astedit/` that are not readable previews.

use crate::repo::Repo;
use crate::report::GcReport;
use crate::report::UnreadableRef;
use crate::report::Version;
use crate::Error;

/// What to prune.
#[derive(Debug, Clone, Copy)]
pub struct GcRequest {
    /// Prune what is older than this many seconds (0: everything).
    pub expire_secs: i64,
}

impl GcRequest {
    /// From an age as typed: `30d`, `12h`, `45m`, `10s`, `2w` or `now`.
    pub fn parse(expire: &str) -> Result<GcRequest, Error> {
        Ok(GcRequest {
            expire_secs: crate::txn::parse_age(expire)?,
        })
    }
}

pub fn run(repo: &Repo, req: &GcRequest) -> Result<GcReport, Error> {
    let pruned = crate::txn::gc(repo, req.expire_secs)?;
    Ok(GcReport {
        schema_version: Version,
        expired_previews: pruned.expired_previews,
        pruned_events: pruned.pruned_events,
        kept_events: pruned.kept_events,
        removed_refs: pruned
            .removed_bad_refs
            .into_iter()
            .map(|(name, why)| UnreadableRef { name, why })
            .collect(),
    })
}
