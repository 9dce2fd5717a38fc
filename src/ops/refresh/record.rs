//! What a preview records at staging for its refresh, under `details.refresh`.

use crate::change::PreviewMeta;
use crate::repo::Repo;

/// The key under `details` where a preview records what a refresh needs.
pub const DETAILS_KEY: &str = "refresh";

/// Records in a patch preview's metadata what its refresh needs: the patch text and
/// the folder its paths are relative to.
pub fn record_patch(meta: &mut PreviewMeta, text: &str, base: &str) {
    insert_detail(meta, serde_json::json!({"patch": text, "base": base}));
}

/// Records in an edit preview's metadata what `refresh --all` needs: the pathspecs as
/// typed, the folder they were typed in, the file size limit.
pub fn record_edit(meta: &mut PreviewMeta, pathspecs: &[String], prefix: &str, max_file_size: u64) {
    insert_detail(
        meta,
        serde_json::json!({"pathspecs": pathspecs, "prefix": prefix, "max_file_size": max_file_size}),
    );
}

/// Marks a preview staged from a selection of the matches (`edit -i`, `scan -i`): a
/// refresh must not re-run its ops or rules, which would take every match; it merges
/// the chosen changes three-way instead. Call after `record_edit`/`record_scan`.
pub fn record_selection(meta: &mut PreviewMeta) {
    let mut rec = meta
        .details
        .get(DETAILS_KEY)
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
    rec["selected"] = serde_json::Value::Bool(true);
    insert_detail(meta, rec);
}

/// Whether the preview holds a selection of the matches ([`record_selection`]).
pub fn is_selection(meta: &PreviewMeta) -> bool {
    meta.details
        .get(DETAILS_KEY)
        .and_then(|r| r.get("selected"))
        .and_then(|s| s.as_bool())
        == Some(true)
}

/// Records in a scan preview's metadata what its refresh needs: the config files
/// given (repository paths; none: the defaults at the top), a content hash of every
/// file the rules were read from, the rules selected and the pass bound.
pub fn record_scan(
    meta: &mut PreviewMeta,
    repo: &Repo,
    rules: &crate::scan::rules::Plan,
    configs: &[std::path::PathBuf],
    opts: &crate::scan::Options,
) {
    let configs: Vec<String> = configs
        .iter()
        .map(|c| {
            let abs = repo.cwd.join(c);
            let abs = std::fs::canonicalize(&abs).unwrap_or(abs);
            match abs.strip_prefix(&repo.workdir) {
                Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
                Err(_) => abs.to_string_lossy().into_owned(),
            }
        })
        .collect();
    insert_detail(
        meta,
        serde_json::json!({
            "configs": configs,
            "rules_digest": rules_digest(&repo.cwd, &rules.sources),
            "only_rules": opts.only_rules,
            "max_passes": opts.max_passes.unwrap_or(rules.max_passes),
            "pathspecs": opts.pathspecs,
            "prefix": repo.prefix.as_deref().unwrap_or(""),
            "max_file_size": opts.max_file_size,
            "cached": opts.cached,
        }),
    );
}

/// SHA-256 over the bytes of every file `rules` were read from (`sources` are shown
/// relative to `cwd`), in order: the rules "by content hash".
pub(super) fn rules_digest(cwd: &std::path::Path, sources: &[String]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for s in sources {
        let bytes = std::fs::read(cwd.join(s)).unwrap_or_default();
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    format!("{:x}", h.finalize())
}

fn insert_detail(meta: &mut PreviewMeta, value: serde_json::Value) {
    insert_detail_at(meta, DETAILS_KEY, value);
}

/// Sets `meta.details[key]`, keeping what is there (a non-object value moves under
/// `engine`).
pub(super) fn insert_detail_at(meta: &mut PreviewMeta, key: &str, value: serde_json::Value) {
    let mut details = match std::mem::take(&mut meta.details) {
        serde_json::Value::Object(map) => map,
        serde_json::Value::Null => serde_json::Map::new(),
        other => {
            let mut map = serde_json::Map::new();
            map.insert("engine".into(), other);
            map
        }
    };
    details.insert(key.into(), value);
    meta.details = serde_json::Value::Object(details);
}
