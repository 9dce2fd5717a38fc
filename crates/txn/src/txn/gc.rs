/*!
`gc`: prunes pending previews and journal entries older than an age.

Expired previews lose their ref and get an `expired` event; journal entries older than
the age are dropped by rewriting the chain (same messages, same transaction parents)
and swapping the journal ref with compare-and-swap. Objects only those entries kept
alive become garbage for `git gc`. Pruning an `applied` entry gives up its undo.
*/

use gix::refs::transaction::PreviousValue;
use gix::refs::Target;

use super::journal;
use super::journal::Event;
use super::journal::EventKind;
use super::lock::Lock;
use super::store;
use super::Error;
use crate::repo::Repo;

/// What gc removed.
#[derive(Debug, Clone, Default)]
pub struct Pruned {
    /// Pending previews whose refs were removed.
    pub expired_previews: Vec<String>,
    /// Journal entries dropped.
    pub pruned_events: usize,
    /// Journal entries kept.
    pub kept_events: usize,
    /// Refs under `refs/astedit/` that were not readable previews, removed: (ref, why).
    pub removed_bad_refs: Vec<(String, String)>,
}

/// Parses `30d`, `12h`, `45m`, `10s`, `2w` or `now` into seconds.
pub fn parse_age(s: &str) -> Result<i64, Error> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("now") {
        return Ok(0);
    }
    let bad = || Error::BadAge(s.to_string());
    let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().map_err(|_| bad())?;
    let mult = match unit {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

/// Prunes previews and journal entries older than `expire` seconds.
pub fn gc(repo: &Repo, expire: i64) -> Result<Pruned, Error> {
    let _lock = Lock::acquire(repo, "gc")?;
    let now = journal::now_secs();
    let old = |t: i64| t.saturating_add(expire) <= now;
    let mut report = Pruned::default();
    let (previews, bad) = store::list_checked(repo)?;
    // Nothing can use them, and each is journalled (its commit kept reachable).
    for b in bad.iter().filter(|b| !b.id.is_empty()) {
        store::remove_bad(repo, b, Some("gc: not a readable preview"), None, "gc")?;
        report
            .removed_bad_refs
            .push((b.name.clone(), b.why.clone()));
    }
    for p in previews {
        if !old(p.time) {
            continue;
        }
        let mut event = Event::new(repo, EventKind::Expired, &p.id, p.commit);
        event.reason = Some(format!("gc --expire {expire}s"));
        event.kind = Some(p.meta.kind);
        event.files = p.entries.iter().map(|e| e.path.clone()).collect();
        let del = journal::delete_edit(
            &format!("{}{}", store::REF_PREFIX, p.id),
            PreviousValue::MustExistAndMatch(Target::Object(p.commit)),
        )?;
        journal::append(repo, &event, p.commit, vec![del])?;
        report.expired_previews.push(p.id);
    }
    let Some(tip) = journal::tip(repo)? else {
        prune_trusted(repo)?;
        return Ok(report);
    };
    // The clock is read again for the journal: the events this run just wrote are dated
    // after the first reading, so with `--expire now` whether they went too used to
    // depend on the second ticking during the run. Against the second reading they go
    // with `now` and stay with any longer age, every time.
    let now = journal::now_secs();
    let old = |t: i64| t.saturating_add(expire) <= now;
    let entries = journal::read(repo)?;
    let (pruned, kept): (Vec<_>, Vec<_>) = entries.into_iter().partition(|e| old(e.event.time));
    report.pruned_events = pruned.len();
    report.kept_events = kept.len();
    if !pruned.is_empty() {
        let mut parent = None;
        for e in kept.iter().rev() {
            parent = Some(journal::write_commit(repo, parent, e.txn_commit, &e.event)?);
        }
        journal::replace(repo, tip, parent, Vec::new())?;
    }
    // The trust records of the previews gone from both the refs and the journal.
    prune_trusted(repo)?;
    Ok(report)
}

/// Forgets every trust record whose commit is neither pending nor in the journal. The
/// records are listed before the previews are, so a preview staged meanwhile (its
/// record written after its ref) is never forgotten.
fn prune_trusted(repo: &Repo) -> Result<(), Error> {
    let listed = super::trusted::recorded(repo);
    if listed.is_empty() {
        return Ok(());
    }
    let mut keep: std::collections::HashSet<gix::ObjectId> =
        store::list(repo)?.into_iter().map(|p| p.commit).collect();
    keep.extend(journal::read(repo)?.into_iter().map(|e| e.txn_commit));
    for commit in listed.into_iter().filter(|c| !keep.contains(c)) {
        super::trusted::forget(repo, commit);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        assert_eq!(parse_age("now").ok(), Some(0));
        assert_eq!(parse_age("30d").ok(), Some(30 * 86_400));
        assert_eq!(parse_age("12h").ok(), Some(12 * 3600));
        assert_eq!(parse_age("2w").ok(), Some(14 * 86_400));
        assert!(parse_age("12").is_err());
        assert!(parse_age("d").is_err());
        assert!(parse_age("5y").is_err());
    }
}
