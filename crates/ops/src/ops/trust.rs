/*!
The one place that decides whether a preview's origin is trusted here and whether a
caller may run programs (issue 48). The CLI, the MCP server and the language server all
come through here, so they refuse the same things the same way.

Previews travel (a `git fetch` of the refs under `refs/astedit/`): whatever a fetched
preview records (a command preview's argv, the formatters of `details.fmt`, the folders
and pathspecs of its recipe) was written by whoever made the commit. So:

* **Origin.** A preview is trusted when the local record ([`crate::txn::trusted`],
  which no fetch carries) says it was made, refreshed or split here (`made-here`), or
  that the user vouched for exactly what it runs (`trusted`, `git astedit trust ID`,
  kept with a digest of what it runs); otherwise it is `untrusted`. The metadata's
  `made_by` and `agent` are claims and decide nothing.
* **What it runs** ([`runs`]): a command preview's argv in its recorded folder, and the
  formatters a preview staged with `--fmt` records. Every other recipe (patterns,
  rules, patches, steps) runs no program.
* **The refresh gate** ([`gate_refresh`]): every path a recipe records must lie inside
  the repository (no `..` above the top, no absolute path, no folder that is a symlink),
  for any preview; a refresh that runs something needs a caller that may run programs
  (an MCP server without `--allow-run` may not) and a trusted preview. The check comes
  before anything runs: nothing is started, nothing is staged.

An untrusted preview may still be listed, shown, applied as staged (its blobs are data,
and apply's path checks hold), discarded, and refreshed when its recipe runs nothing.
*/

use crate::change::PreviewKind;
use crate::change::PreviewMeta;
use crate::error::Classify;
use crate::error::Exit;
use crate::repo::Repo;
use crate::report::trust::Origin;
use crate::report::trust::OriginKind;
use crate::report::trust::Runs;
use crate::report::trust::TrustReport;
use crate::report::Version;
use crate::txn;
use crate::txn::trusted::TrustRecord;
use crate::txn::trusted::Vouched;
use crate::txn::Preview;
use crate::Error;

/// Why a preview may not be refreshed, or a program may not run.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("{}", untrusted_message(.id, .runs, .why))]
    Untrusted { id: String, runs: Runs, why: String },
    #[error("{}", not_allowed_message(.what, .runs))]
    RunNotAllowed { what: String, runs: Vec<String> },
    #[error(
        "preview {id} records {what} '{}' outside the repository ({why}); nothing was run or \
         staged", crate::text::escape_line(.path)
    )]
    Uncontained {
        id: String,
        what: &'static str,
        path: String,
        why: String,
    },
    #[error(
        "refreshing preview {id} would run:\n{}\nnothing was trusted: there is no terminal to \
         confirm on", run_lines(.runs, "  ").join("\n")
    )]
    Unconfirmed { id: String, runs: Runs },
}

fn untrusted_message(id: &str, runs: &Runs, why: &str) -> String {
    let mut s = format!(
        "preview {id} is not trusted here ({why}), and refreshing it would run:\n{}",
        run_lines(runs, "  ").join("\n")
    );
    s.push_str("\nnothing was run or staged");
    s
}

fn not_allowed_message(what: &str, runs: &[String]) -> String {
    let mut s = format!(
        "{what} would run a program, and this server was started without --allow-run; \
         nothing was run"
    );
    for line in runs {
        s.push_str(&format!("\n  {line}"));
    }
    s
}

impl Classify for TrustError {
    fn code(&self) -> &'static str {
        match self {
            TrustError::Untrusted { .. } => "untrusted-preview",
            TrustError::RunNotAllowed { .. } => "run-not-allowed",
            TrustError::Uncontained { .. } => "uncontained-path",
            TrustError::Unconfirmed { .. } => "usage",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            TrustError::Unconfirmed { .. } => Exit::BadInput,
            _ => Exit::Refused,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            TrustError::Untrusted { id, .. } => Some(format!(
                "read it (`git astedit show {id}`); to let it run, `git astedit trust {id}`; \
                 `git astedit apply {id}` applies it as staged, running nothing"
            )),
            TrustError::RunNotAllowed { .. } => Some(
                "start the server with `git astedit mcp --allow-run` to let it run programs, \
                 or resolve without refresh, verify or fmt"
                    .into(),
            ),
            TrustError::Uncontained { id, .. } => Some(format!(
                "it was not staged by git-astedit as it reads; discard it (`git astedit \
                 discard {id}`)"
            )),
            TrustError::Unconfirmed { id, .. } => Some(format!(
                "having read it, confirm with `git astedit trust {id} --yes`"
            )),
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            TrustError::Untrusted { id, runs, why } => {
                Some(serde_json::json!({"id": id, "runs": runs, "why": why}))
            }
            TrustError::RunNotAllowed { what, runs } => {
                Some(serde_json::json!({"what": what, "runs": runs}))
            }
            TrustError::Uncontained {
                id,
                what,
                path,
                why,
            } => Some(serde_json::json!({"id": id, "what": what, "path": path, "why": why})),
            TrustError::Unconfirmed { id, runs } => {
                Some(serde_json::json!({"id": id, "runs": runs}))
            }
        }
    }
}

/// What refreshing a preview with `meta` would run: a command preview's argv in its
/// recorded folder; for a preview re-derived path by path, the formatters it records
/// (`details.fmt`, run on each re-derived file).
pub fn runs(meta: &PreviewMeta) -> Runs {
    let mut runs = Runs::default();
    match meta.kind {
        PreviewKind::Run => {
            runs.argv = recorded(meta, "argv");
            if runs.argv.is_some() {
                runs.folder = Some(recorded(meta, "prefix").unwrap_or_default());
            }
        }
        // Re-derived whole: never formatted; steps run rules and ops only.
        PreviewKind::Steps => {}
        _ => {
            if let Some(fmts) = crate::ops::fmt::Formatters::recorded(meta) {
                runs.formatters = fmts.record();
            }
        }
    }
    runs
}

/// One field of the recipe `meta` records (`details.refresh`), read on its own: a
/// field that does not read as `T` is absent. Each kind's typed recipe
/// (`ops::refresh::Recipe`) reads the same fields as the same types, so what a refresh
/// would use is never missed here; a recipe that does not read whole is used by no
/// refresh, and checking its fields anyway only refuses more.
fn recorded<T: serde::de::DeserializeOwned>(meta: &PreviewMeta, key: &str) -> Option<T> {
    let field = meta
        .details
        .get(crate::ops::recipe::DETAILS_KEY)?
        .get(key)?;
    serde_json::from_value(field.clone()).ok()
}

/// What `runs` runs, one line each, as a person would type it (control characters
/// escaped: a recorded newline cannot forge a line).
pub fn run_lines(runs: &Runs, indent: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(argv) = &runs.argv {
        let shown = crate::ops::verify::VerifyCommand::Argv(argv.clone()).display();
        out.push(format!(
            "{indent}command: {}",
            crate::text::escape_line(&shown)
        ));
        let folder = runs.folder.as_deref().unwrap_or("");
        out.push(format!(
            "{indent}in folder: {}",
            if folder.is_empty() {
                "the top of the repository".to_string()
            } else {
                crate::text::escape_line(folder).into_owned()
            }
        ));
    }
    for f in &runs.formatters {
        out.push(format!(
            "{indent}formatter: {}",
            crate::text::escape_line(f)
        ));
    }
    out
}

/// `sha256:` over what `runs` runs: the record of a preview the user trusted keeps it.
pub fn digest(runs: &Runs) -> String {
    use sha2::Digest as _;
    let text = serde_json::to_vec(runs).expect("runs serialize");
    let mut h = sha2::Sha256::new();
    h.update(&text);
    format!("sha256:{:x}", h.finalize())
}

/// Whether `p`'s origin is trusted here, and who vouches for it: the local record
/// first, else its signature as git verifies it (an unsigned preview costs no process).
pub fn origin(repo: &Repo, p: &Preview) -> Origin {
    origin_signed(repo, p, || {
        txn::sign::verify(repo, p.commit).unwrap_or_else(|_| txn::sign::SignatureCheck::failed())
    })
}

/// [`origin`], with the signature check `check` gives (called only when the local
/// record does not decide; a listing that shows the signature checks it once).
pub fn origin_signed(
    repo: &Repo,
    p: &Preview,
    check: impl FnOnce() -> txn::sign::SignatureCheck,
) -> Origin {
    if let Some(r) = txn::trusted::lookup(repo, p.commit) {
        match r.how {
            Vouched::MadeHere | Vouched::Refreshed => {
                return Origin {
                    origin: OriginKind::MadeHere,
                    vouched_by: Some(r.who),
                    origin_why: None,
                }
            }
            Vouched::Trusted if r.digest.as_deref() == Some(digest(&runs(&p.meta)).as_str()) => {
                return Origin {
                    origin: OriginKind::Trusted,
                    vouched_by: Some(r.who),
                    origin_why: None,
                }
            }
            Vouched::Trusted => {}
        }
    }
    let sig = check();
    if sig.trusted() {
        return Origin {
            origin: OriginKind::Signed,
            vouched_by: sig.signer,
            origin_why: None,
        };
    }
    let signed = match sig.status {
        txn::sign::SigStatus::Unsigned => "not signed".to_string(),
        _ => sig.describe(),
    };
    Origin {
        origin: OriginKind::Untrusted,
        vouched_by: None,
        origin_why: Some(format!(
            "not made or trusted here, and {signed}: a fetched preview"
        )),
    }
}

/// The refresh gate: refuses a preview whose recipe records a path outside the
/// repository, and one whose refresh would run a program when the caller may not run
/// programs (`allow_run` false: an MCP server without `--allow-run`) or the preview
/// is untrusted. Returns its origin (a refresh made here of a trusted preview is
/// trusted in turn: [`vouch_successor`]). Called before anything runs.
pub fn gate_refresh(repo: &Repo, p: &Preview, allow_run: bool) -> Result<Origin, Error> {
    check_contained(repo, p)?;
    let origin = origin(repo, p);
    let runs = runs(&p.meta);
    if runs.is_empty() {
        return Ok(origin);
    }
    if !allow_run {
        return Err(TrustError::RunNotAllowed {
            what: format!("refreshing preview {}", p.id),
            runs: run_lines(&runs, ""),
        }
        .into());
    }
    if !origin.origin.is_trusted() {
        return Err(TrustError::Untrusted {
            id: p.id.clone(),
            runs,
            why: origin.origin_why.clone().unwrap_or_default(),
        }
        .into());
    }
    Ok(origin)
}

/// Refuses to stage a preview here from `parent`'s metadata (`review --split`) when
/// `parent` is untrusted and its recipe runs a program: the copy would be made here,
/// hence trusted, with someone else's argv or formatters.
pub fn check_derive(repo: &Repo, parent: &Preview) -> Result<(), Error> {
    let runs = runs(&parent.meta);
    let origin = origin(repo, parent);
    if runs.is_empty() || origin.origin.is_trusted() {
        return Ok(());
    }
    Err(TrustError::Untrusted {
        id: parent.id.clone(),
        runs,
        why: origin.origin_why.unwrap_or_default(),
    }
    .into())
}

/// Refuses `what` (a `verify` command, `fmt`) when the caller may not run programs.
pub fn allow_run(allow_run: bool, what: &str, runs: Vec<String>) -> Result<(), Error> {
    if allow_run {
        return Ok(());
    }
    Err(TrustError::RunNotAllowed {
        what: what.to_string(),
        runs,
    }
    .into())
}

/// Records `new`, the successor a refresh made here of `old`, as trusted when `old`
/// was (`origin`, from [`gate_refresh`]): a refresh does not make an untrusted preview
/// trusted. A record that cannot be written leaves the successor untrusted.
pub fn vouch_successor(repo: &Repo, origin: &Origin, old: &Preview, new: &Preview) {
    if !origin.origin.is_trusted() {
        return;
    }
    let mut r = TrustRecord::new(repo, Vouched::Refreshed);
    r.agent = new.meta.agent.clone();
    r.from = Some(old.id.clone());
    let _ = txn::trusted::record(repo, new.commit, &r);
}

/// `git astedit trust ID`: which preview, and whether the user confirmed.
#[derive(Debug, Clone, Default)]
pub struct TrustRequest {
    /// A pending preview's id or unique prefix (`None`: the newest pending one).
    pub id: Option<String>,
}

/// What `trust` would record for the preview `req` names: its runs, their digest,
/// its origin now (`recorded` false). Nothing is written.
pub fn inspect(repo: &Repo, req: &TrustRequest) -> Result<(TrustReport, Preview), Error> {
    let p = txn::find(repo, req.id.as_deref())?;
    let runs = runs(&p.meta);
    let report = TrustReport {
        schema_version: Version,
        id: p.id.clone(),
        commit: p.commit.to_string(),
        digest: digest(&runs),
        runs,
        was: origin(repo, &p).origin,
        recorded: false,
    };
    Ok((report, p))
}

/// Records the preview `inspect` showed (by its commit, so a preview re-staged or
/// re-forged meanwhile is not the one trusted) as trusted by the user, with the
/// digest of what it runs. A preview already trusted is left as it is.
pub fn record(repo: &Repo, shown: TrustReport, p: &Preview) -> Result<TrustReport, Error> {
    if shown.was.is_trusted() {
        return Ok(shown);
    }
    let mut r = TrustRecord::new(repo, Vouched::Trusted);
    r.digest = Some(shown.digest.clone());
    txn::trusted::record(repo, p.commit, &r)?;
    Ok(TrustReport {
        recorded: true,
        ..shown
    })
}

/// `trust` of the preview `shown` without a confirmation (no terminal to ask on, and
/// no `--yes`): refused, printing what it runs.
pub fn unconfirmed(shown: &TrustReport) -> Error {
    TrustError::Unconfirmed {
        id: shown.id.clone(),
        runs: shown.runs.clone(),
    }
    .into()
}

/// Refuses a preview whose recipe records a path outside the repository (see
/// [`contained`]): the folder the recipe ran in, its pathspecs (relative to that
/// folder), its config files. (Its files are apply's to check, as every write's, and
/// a path-by-path refresh's before it reads one.)
pub fn check_contained(repo: &Repo, p: &Preview) -> Result<(), Error> {
    let refuse = |what: &'static str, path: &str, why: String| -> Error {
        TrustError::Uncontained {
            id: p.id.clone(),
            what,
            path: path.to_string(),
            why,
        }
        .into()
    };
    let meta = &p.meta;
    // The folder the recipe ran in: a patch's base, the others' prefix.
    let folder_key = match meta.kind {
        PreviewKind::Patch => "base",
        _ => "prefix",
    };
    let prefix: String = recorded(meta, folder_key).unwrap_or_default();
    let pathspecs: Vec<String> = recorded(meta, "pathspecs").unwrap_or_default();
    folder_contained(repo, &prefix, &pathspecs)
        .map_err(|(what, path, why)| refuse(what, &path, why))?;
    let configs: Option<Vec<String>> = recorded(meta, "configs").flatten();
    for c in configs.iter().flatten() {
        contained(repo, "", c).map_err(|why| refuse("the config file", c, why))?;
    }
    Ok(())
}

/// Checks that a recipe's folder `prefix` and its `pathspecs` (read from that folder)
/// lie inside the repository, as [`check_contained`] does; a command preview's run
/// checks them again before its command starts. `Err`: what ("the folder", "the
/// pathspec"), which, and why.
pub fn folder_contained(
    repo: &Repo,
    prefix: &str,
    pathspecs: &[String],
) -> Result<(), (&'static str, String, String)> {
    contained(repo, "", prefix).map_err(|why| ("the folder", prefix.to_string(), why))?;
    for spec in pathspecs {
        pathspec_contained(repo, prefix, spec)
            .map_err(|why| ("the pathspec", spec.clone(), why))?;
    }
    Ok(())
}

/// Checks that `path` (a repository path under the folder `base`; `""`: the top) is
/// inside the work tree: relative, no `..` above the top, and nothing on the way (nor
/// the path itself) that is a symlink. `Err` says why.
fn contained(repo: &Repo, base: &str, path: &str) -> Result<(), String> {
    if path.contains('\0') {
        return Err("it holds a NUL byte".into());
    }
    if path.starts_with('/') || path.contains('\\') || path.as_bytes().get(1) == Some(&b':') {
        return Err("an absolute path".into());
    }
    let mut comps: Vec<&str> = base.split('/').filter(|c| !c.is_empty()).collect();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                if comps.pop().is_none() {
                    return Err("it goes above the top of the repository".into());
                }
            }
            c if c.eq_ignore_ascii_case(".git") => return Err("it is under .git".into()),
            c => comps.push(c),
        }
    }
    no_symlink(repo, &comps)
}

/// Checks what `comps` names under the work tree, step by step, for symlinks, up to
/// the first step that does not exist or holds a glob character (a pathspec matches
/// from there).
fn no_symlink(repo: &Repo, comps: &[&str]) -> Result<(), String> {
    let mut at = repo.workdir.clone();
    for (i, c) in comps.iter().enumerate() {
        if c.contains(['*', '?', '[']) {
            break;
        }
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Err(_) => break,
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "'{}' is a symlink",
                    crate::text::escape_line(&comps[..=i].join("/"))
                ))
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

/// [`contained`] for a git pathspec typed in the folder `prefix`: its magic read
/// (`:/` and `:(top)` start at the top), the path after it checked.
fn pathspec_contained(repo: &Repo, prefix: &str, spec: &str) -> Result<(), String> {
    let (top, path) = pathspec_parts(spec);
    let base = if top { "" } else { prefix };
    contained(repo, base, path)
}

/// A pathspec's magic: whether it starts at the top, and the path after the magic.
fn pathspec_parts(spec: &str) -> (bool, &str) {
    let Some(rest) = spec.strip_prefix(':') else {
        return (false, spec);
    };
    if let Some(long) = rest.strip_prefix('(') {
        return match long.split_once(')') {
            Some((words, path)) => (words.split(',').any(|w| w.trim() == "top"), path),
            None => (false, rest),
        };
    }
    let magic_len = rest
        .find(|c: char| !matches!(c, '/' | '!' | '^'))
        .unwrap_or(rest.len());
    let (magic, mut path) = rest.split_at(magic_len);
    if let Some(p) = path.strip_prefix(':') {
        path = p;
    }
    (magic.contains('/'), path)
}

#[cfg(test)]
mod tests {
    use super::pathspec_parts;

    #[test]
    fn pathspec_magic_is_read() {
        assert_eq!(pathspec_parts("src"), (false, "src"));
        assert_eq!(pathspec_parts(":/src"), (true, "src"));
        assert_eq!(pathspec_parts(":!src"), (false, "src"));
        assert_eq!(pathspec_parts(":/!:src"), (true, "src"));
        assert_eq!(pathspec_parts(":(top,glob)../x"), (true, "../x"));
        assert_eq!(pathspec_parts(":(glob)x"), (false, "x"));
    }
}
