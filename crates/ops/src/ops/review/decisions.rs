/*!
A preview's decisions, read from its batches ([`crate::txn::review`]) and replayed
oldest first: what is *shown* replays every batch, what `apply` *obeys* replays only
the batches made here (the local record) or signed by an allowed signer. A preview
with no decisions of its own takes those of the preview it was refreshed or split
from (up the journal), so a refresh keeps them: sites are matched by id, and a site
re-derived otherwise has another id and is undecided.
*/

use std::collections::BTreeMap;
use std::collections::HashMap;

use gix::ObjectId;

use super::Decision;
use super::DecisionBatch;
use crate::repo::Repo;
use crate::txn::Preview;
use crate::Error;

/// How far up the journal a preview's decisions are looked for.
const MAX_ANCESTORS: usize = 32;

/// One batch as stored in its blob.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Stored {
    #[serde(default)]
    preview: String,
    /// Site id → `accept`, `reject`, or `undecided`.
    #[serde(default)]
    sites: BTreeMap<String, String>,
    /// The preview's sites and how many were accepted and rejected once this batch
    /// was taken (what `list` and `show` say without re-deriving the sites).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    counts: Option<Counts>,
}

/// A preview's decisions counted over its sites.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Counts {
    pub sites: usize,
    pub accepted: usize,
    pub rejected: usize,
}

/// A preview's decisions.
#[derive(Debug, Default)]
pub(super) struct Record {
    pub shown: HashMap<String, Decision>,
    pub obeyed: HashMap<String, Decision>,
    /// Newest first.
    pub batches: Vec<DecisionBatch>,
    /// Batches that are shown and not obeyed.
    untrusted: usize,
    /// The counts the newest batch recorded, when it is the preview's own and obeyed.
    pub counts: Option<Counts>,
    /// The preview the decisions are inherited from, when it has none of its own.
    pub inherited_from: Option<String>,
    /// The preview's own ref's tip (what a new batch must find there).
    tip: Option<ObjectId>,
    /// The parent of the next batch: the tip, else the newest batch of the preview
    /// this one was refreshed from.
    base: Option<ObjectId>,
}

impl Record {
    pub(super) fn load(repo: &Repo, preview: &Preview) -> Result<Record, Error> {
        let tip = crate::txn::review::tip(repo, &preview.id)?;
        let (base, inherited_from) = match tip {
            Some(t) => (Some(t), None),
            None => match inherited(repo, &preview.id)? {
                Some((from, t)) => (Some(t), Some(from)),
                None => (None, None),
            },
        };
        let mut record = Record {
            tip,
            base,
            inherited_from,
            ..Record::default()
        };
        let Some(base) = base else {
            return Ok(record);
        };
        let here = crate::txn::review::made_here(repo);
        for b in crate::txn::review::batches(repo, base)? {
            let trusted = here.contains(&b.commit) || signed(repo, b.commit);
            let stored: Stored = serde_json::from_slice(&b.data).unwrap_or_default();
            // Only the newest batch's counts stand (a batch below it counted less).
            record.counts = match stored.counts {
                Some(c) if trusted && record.tip.is_some() && stored.preview == preview.id => {
                    Some(c)
                }
                _ => None,
            };
            let (mut acc, mut rej) = (0, 0);
            for (id, d) in stored.sites {
                let d = match d.as_str() {
                    "accept" => Some(Decision::Accept),
                    "reject" => Some(Decision::Reject),
                    _ => None,
                };
                match d {
                    Some(Decision::Accept) => acc += 1,
                    Some(Decision::Reject) => rej += 1,
                    None => {}
                }
                set(&mut record.shown, &id, d);
                if trusted {
                    set(&mut record.obeyed, &id, d);
                }
            }
            if !trusted {
                record.untrusted += 1;
            }
            record.batches.push(DecisionBatch {
                commit: b.commit.to_string(),
                by: if trusted {
                    b.by
                } else {
                    format!("{} (fetched, not obeyed)", b.by)
                },
                time: crate::text::rfc3339(b.time),
                accepted: acc,
                rejected: rej,
            });
        }
        record.batches.reverse();
        Ok(record)
    }

    /// Whether every batch shown is obeyed.
    pub(super) fn all_obeyed(&self) -> bool {
        self.untrusted == 0
    }

    /// Writes `batch` as one commit by `by` (`counts`: the preview's once it is
    /// taken) and takes it in.
    pub(super) fn write(
        &mut self,
        repo: &Repo,
        preview: &str,
        batch: &BTreeMap<String, Option<Decision>>,
        counts: Counts,
        by: &str,
    ) -> Result<ObjectId, Error> {
        let stored = Stored {
            preview: preview.to_string(),
            counts: Some(counts),
            sites: batch
                .iter()
                .map(|(id, d)| {
                    (
                        id.clone(),
                        d.map_or("undecided", |d| d.as_str()).to_string(),
                    )
                })
                .collect(),
        };
        let data = serde_json::to_vec_pretty(&stored).unwrap_or_default();
        let (acc, rej) = batch.values().fold((0, 0), |(a, r), d| match d {
            Some(Decision::Accept) => (a + 1, r),
            Some(Decision::Reject) => (a, r + 1),
            None => (a, r),
        });
        let message = format!(
            "review {preview}: {acc} accepted, {rej} rejected, {} undecided, by {by}\n",
            batch.len() - acc - rej
        );
        let commit = crate::txn::review::write_batch(
            repo, preview, self.base, self.tip, &data, by, message,
        )?;
        for (id, d) in batch {
            set(&mut self.shown, id, *d);
            set(&mut self.obeyed, id, *d);
        }
        self.tip = Some(commit);
        self.base = Some(commit);
        self.counts = Some(counts);
        self.inherited_from = None;
        self.batches.insert(
            0,
            DecisionBatch {
                commit: commit.to_string(),
                by: by.to_string(),
                time: crate::text::rfc3339(now_secs()),
                accepted: acc,
                rejected: rej,
            },
        );
        Ok(commit)
    }
}

fn set(map: &mut HashMap<String, Decision>, id: &str, d: Option<Decision>) {
    match d {
        Some(d) => {
            map.insert(id.to_string(), d);
        }
        None => {
            map.remove(id);
        }
    }
}

/// Whether batch `commit` is signed by an allowed signer, as git verifies it
/// ([`crate::txn::sign::verify`]: `gpg.ssh.allowedSignersFile`, valid at the commit's
/// time, not revoked).
fn signed(repo: &Repo, commit: ObjectId) -> bool {
    crate::txn::sign::verify(repo, commit).is_ok_and(|c| c.trusted())
}

/// Whether preview `id` has decisions, its own or inherited.
pub(super) fn exist(repo: &Repo, id: &str) -> Result<bool, Error> {
    Ok(crate::txn::review::tip(repo, id)?.is_some() || inherited(repo, id)?.is_some())
}

/// The preview `id` was refreshed or split from (up the journal) that has decisions,
/// and its newest batch.
fn inherited(repo: &Repo, id: &str) -> Result<Option<(String, ObjectId)>, Error> {
    let events = crate::txn::log(repo)?;
    let mut current = id.to_string();
    for _ in 0..MAX_ANCESTORS {
        let parent = events.iter().rev().find(|e| {
            e.successors()
                .iter()
                .any(|s| current.starts_with(s.as_str()) || s.starts_with(current.as_str()))
        });
        let Some(parent) = parent else {
            return Ok(None);
        };
        if let Some(tip) = crate::txn::review::tip(repo, &parent.id)? {
            return Ok(Some((parent.id.clone(), tip)));
        }
        current = parent.id.clone();
    }
    Ok(None)
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
