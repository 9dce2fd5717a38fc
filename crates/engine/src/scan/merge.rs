/*!
`merge ID…`: several previews with disjoint paths become one new preview.

This is how sharded CI comes back together: N jobs each stage their part of a scan,
push the `refs/astedit/` refs, and one job fetches them all and merges them into the single
preview an unsharded run would have staged. Blobs are copied from the stored previews
(`ops::merge`), nothing is recomputed, so the merge is exact; paths touched by two
previews are refused (naming them), since no order of applying both is obviously right.

Here is what needs no git objects: the checks and the merged preview's metadata.
*/

use std::collections::BTreeMap;

use crate::change::PreviewMeta;
use crate::change::RuleCount;
use crate::error::Classify;
use crate::error::Exit;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("merge needs at least two previews")]
    TooFew,
    #[error("preview {0} is named twice")]
    Duplicate(String),
    #[error("{}", overlap_message(.0))]
    Overlap(Vec<(String, Vec<String>)>),
}

fn overlap_message(paths: &[(String, Vec<String>)]) -> String {
    let mut s = format!(
        "cannot merge: {} touched by more than one preview",
        crate::text::plural(paths.len(), "path")
    );
    for (path, ids) in paths {
        s.push_str(&format!("\n  {path}: {}", ids.join(", ")));
    }
    s
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::TooFew => "usage",
            Error::Duplicate(_) => "duplicate-id",
            Error::Overlap(_) => "overlapping-previews",
        }
    }
    fn exit(&self) -> Exit {
        Exit::BadInput
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::Overlap(_) => Some(
                "apply one preview first and re-run the other's scan, or merge only disjoint ones"
                    .into(),
            ),
            _ => None,
        }
    }
}

/// One preview to merge, as read from the store: enough to check and describe the
/// merge without touching its objects.
#[derive(Debug, Clone, Copy)]
pub struct Part<'a> {
    pub id: &'a str,
    /// The preview commit's id, in hex.
    pub commit: &'a str,
    pub meta: &'a PreviewMeta,
    /// The paths it changes.
    pub paths: &'a [String],
}

/// Fewer than two previews cannot be merged.
pub fn check_count(ids: &[String]) -> Result<(), Error> {
    if ids.len() < 2 {
        return Err(Error::TooFew);
    }
    Ok(())
}

/// Refuses the preview `id` at `commit` when a preview already taken (by their
/// commits, `taken`) is the same one.
pub fn check_duplicate(taken: &[String], id: &str, commit: &str) -> Result<(), Error> {
    if taken.iter().any(|c| c == commit) {
        return Err(Error::Duplicate(id.to_string()));
    }
    Ok(())
}

/// Refuses paths touched by more than one preview, naming each with its previews.
pub fn check_disjoint(parts: &[Part<'_>]) -> Result<(), Error> {
    let mut owners: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for p in parts {
        for path in p.paths {
            owners
                .entry(path.as_str())
                .or_default()
                .push(p.id.to_string());
        }
    }
    let overlap: Vec<(String, Vec<String>)> = owners
        .into_iter()
        .filter(|(_, ids)| ids.len() > 1)
        .map(|(path, ids)| (path.to_string(), ids))
        .collect();
    if !overlap.is_empty() {
        return Err(Error::Overlap(overlap));
    }
    Ok(())
}

/// Sums what the inputs recorded: per-rule counts (first-seen order), files, totals.
pub fn merged_meta(previews: &[Part<'_>], reason: Option<String>) -> PreviewMeta {
    let mut rules: Vec<RuleCount> = Vec::new();
    for p in previews {
        for rc in &p.meta.rules {
            match rules.iter_mut().find(|r| r.rule == rc.rule) {
                Some(r) => r.count += rc.count,
                None => rules.push(rc.clone()),
            }
        }
    }
    let mut files: Vec<_> = previews
        .iter()
        .flat_map(|p| p.meta.files.iter().cloned())
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let replacements: usize = previews.iter().map(|p| p.meta.replacements).sum();
    let paths: usize = previews.iter().map(|p| p.paths.len()).sum();
    let heads: Vec<&Option<String>> = previews.iter().map(|p| &p.meta.base_head).collect();
    let base_head = if heads.windows(2).all(|w| w[0] == w[1]) {
        heads.first().and_then(|h| (*h).clone())
    } else {
        None
    };
    let kinds: Vec<&str> = previews.iter().map(|p| p.meta.kind.as_str()).collect();
    let counted = if kinds.iter().all(|k| *k == "scan") {
        crate::text::plural(replacements, "fix")
    } else {
        crate::text::plural(replacements, "replacement")
    };
    PreviewMeta {
        kind: crate::change::PreviewKind::Merge,
        summary: format!(
            "{} in {} (merge of {})",
            counted,
            crate::text::plural(paths, "file"),
            previews.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
        ),
        reason,
        rules,
        files,
        replacements,
        base_head,
        tool_version: crate::VERSION.to_string(),
        details: serde_json::json!({
            "merged": previews.iter().map(|p| serde_json::json!({
                "id": p.id,
                "commit": p.commit,
                "kind": p.meta.kind,
                "summary": p.meta.summary,
            })).collect::<Vec<_>>(),
        }),
        ..Default::default()
    }
}
