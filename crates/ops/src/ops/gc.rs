//! `gc`: prunes pending previews and journal entries older than an age, and the refs
//! under `refs/astedit/` that are not readable previews.

use crate::repo::Repo;
use crate::report::CachePruned;
use crate::report::GcReport;
use crate::report::UnreadableRef;
use crate::report::Version;
use crate::Error;

/// What to prune.
#[derive(Debug, Clone)]
pub struct GcRequest {
    /// Prune what is older than this many seconds (0: everything).
    pub expire_secs: i64,
    /// The result cache to prune (other versions' buckets, stale temporary files,
    /// the least recently used beyond its budget); `Off`: left alone.
    pub cache: super::cache::CacheChoice,
}

impl GcRequest {
    /// From an age as typed: `30d`, `12h`, `45m`, `10s`, `2w` or `now`.
    pub fn parse(expire: &str) -> Result<GcRequest, Error> {
        Ok(GcRequest {
            expire_secs: crate::txn::parse_age(expire)?,
            cache: Default::default(),
        })
    }
}

pub fn run(repo: &Repo, req: &GcRequest) -> Result<GcReport, Error> {
    let pruned = crate::txn::gc(repo, req.expire_secs)?;
    let cache = match req.cache.settings(repo) {
        Some(s) => {
            let p = crate::cache::prune(&s.dir, s.max_bytes).map_err(|source| {
                crate::error::IoError {
                    action: "prune the result cache in",
                    path: s.dir.display().to_string(),
                    source,
                }
            })?;
            Some(CachePruned {
                removed: p.removed,
                freed_bytes: p.freed,
                kept: p.kept,
            })
        }
        None => None,
    };
    Ok(GcReport {
        cache,
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
