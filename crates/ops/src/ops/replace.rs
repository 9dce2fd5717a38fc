/*!
Edits in the shapes models were trained on (the MCP `replace` and `write` tools):
Claude Code's Edit/MultiEdit (`old_string` → `new_string`, once or everywhere) and
Write (a whole file), staged as previews like every other tool, never written here.

Both may be pinned to the blob `read` returned: the edit is then made on that blob's
text and carried over to the file as it is now by the three-way merge `edit_lines`
uses ([`super::lines::Pin`]), so a write made from a stale read keeps the other
agent's edit or is refused (`stale-read`), never silently undoes it.

A `replace` that cannot place its text says where it came closest
([`crate::text::closest`]): the region, the first line that differs, a small diff,
and (in `details`) what a `replace` that would work looks like. One that matches more
than once names every line it matches.
*/

use crate::cancel::Cancel;
use crate::change::PreviewKind;
use crate::error::Classify;
use crate::error::Exit;
use crate::ops::lines::read_file;
use crate::ops::lines::stage_file;
use crate::ops::lines::OneFile;
use crate::ops::lines::Pin;
use crate::ops::stage::Staging;
use crate::patch::vtree::Entry;
use crate::patch::vtree::Tree;
use crate::repo::Repo;
use crate::report::StageReport;
use crate::text::closest;
use crate::text::closest::Near;
use crate::Error;

/// Why a `replace` or `write` refused.
#[derive(Debug, thiserror::Error)]
pub enum ReplaceError {
    #[error("{}", not_found_message(.path, *.edit, *.of, .near.as_deref()))]
    NotFound {
        path: String,
        /// Which edit (1-based) of how many.
        edit: usize,
        of: usize,
        near: Option<Box<Near>>,
        /// Whether the closest region's text occurs once in the file (then it is an
        /// `old_string` that would work).
        near_unique: bool,
    },
    #[error(
        "{path}: {}old_string matches {count} places (lines {}); nothing was staged",
        edit_label(*.edit, *.of),
        lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
    )]
    NotUnique {
        path: String,
        edit: usize,
        of: usize,
        count: usize,
        /// The line each match starts on.
        lines: Vec<usize>,
        old_string: String,
    },
    #[error("{path}: {}{why}", edit_label(*.edit, *.of))]
    BadEdit {
        path: String,
        edit: usize,
        of: usize,
        why: String,
    },
}

fn edit_label(edit: usize, of: usize) -> String {
    if of > 1 {
        format!("edit {edit} of {of}: ")
    } else {
        String::new()
    }
}

fn not_found_message(path: &str, edit: usize, of: usize, near: Option<&Near>) -> String {
    let mut s = format!(
        "{path}: {}old_string is not in the file; nothing was staged",
        edit_label(edit, of)
    );
    match near {
        Some(n) => s.push_str(&format!(
            "\nclosest: lines {}-{}; first difference at line {}:\n  expected: {}\n  found:    {}\n{}",
            n.start,
            n.end,
            n.diverges_at,
            n.expected_line,
            n.found_line,
            n.diff.trim_end()
        )),
        None => s.push_str("\nno line of old_string occurs in the file"),
    }
    s
}

impl Classify for ReplaceError {
    fn code(&self) -> &'static str {
        match self {
            ReplaceError::NotFound { .. } => "text-not-found",
            ReplaceError::NotUnique { .. } => "text-not-unique",
            ReplaceError::BadEdit { .. } => "bad-edit",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            ReplaceError::NotFound { .. } | ReplaceError::NotUnique { .. } => Exit::Unplaceable,
            ReplaceError::BadEdit { .. } => Exit::BadInput,
        }
    }
    fn hint(&self) -> Option<String> {
        Some(match self {
            ReplaceError::NotFound { near: Some(n), .. } => format!(
                "copy old_string from the file's lines {}-{} (details.near.text), or read the \
                 file again",
                n.start, n.end
            ),
            ReplaceError::NotFound { .. } => {
                "read the file again and copy old_string from it".into()
            }
            ReplaceError::NotUnique { .. } => {
                "add surrounding lines to old_string so that it matches one place, or set \
                 replace_all to change every one"
                    .into()
            }
            ReplaceError::BadEdit { .. } => return None,
        })
    }
    fn details(&self) -> Option<serde_json::Value> {
        Some(match self {
            ReplaceError::NotFound {
                path,
                edit,
                of,
                near,
                near_unique,
            } => serde_json::json!({"path": path, "edit": edit, "edits": of, "near": near,
                                    "near_unique": near_unique}),
            ReplaceError::NotUnique {
                path,
                edit,
                of,
                count,
                lines,
                old_string,
            } => serde_json::json!({"path": path, "edit": edit, "edits": of, "count": count,
                                    "lines": lines, "old_string": old_string}),
            ReplaceError::BadEdit { path, edit, .. } => {
                serde_json::json!({"path": path, "edit": edit})
            }
        })
    }
}

/// One `old_string` → `new_string` edit.
#[derive(Debug, Clone)]
pub struct TextEdit {
    pub old: String,
    pub new: String,
    /// Every occurrence, not only a unique one.
    pub all: bool,
}

/// Edits of one file to stage, in order, each on the previous one's result.
#[derive(Debug, Clone)]
pub struct ReplaceRequest {
    pub path: String,
    /// The blob `read` returned, when the edits were made against it.
    pub blob: Option<String>,
    pub edits: Vec<TextEdit>,
    pub staging: Staging,
}

/// A whole file to stage.
#[derive(Debug, Clone)]
pub struct WriteRequest {
    pub path: String,
    pub content: String,
    /// The blob `read` returned, when the content was derived from it.
    pub blob: Option<String>,
    pub staging: Staging,
}

/// `replace`: stages the edits (see the module docs).
pub fn replace(repo: &Repo, req: &ReplaceRequest, cancel: &Cancel) -> Result<StageReport, Error> {
    let (path, current, now_text) = read_file(repo, &req.path)?;
    let pin = Pin::of(repo, &path, req.blob.as_deref(), &current, now_text)?;
    let mut text = pin.base.clone();
    let mut lines = Vec::new();
    let mut count = 0;
    for (i, e) in req.edits.iter().enumerate() {
        let (next, at) = replace_one(&path, &text, e, i + 1, req.edits.len())?;
        count += at.len();
        lines.extend(at);
        text = next;
    }
    if req.edits.is_empty() {
        return Err(ReplaceError::BadEdit {
            path,
            edit: 0,
            of: 0,
            why: "no edits given".into(),
        }
        .into());
    }
    let (after, notes) = pin.onto_current(&path, &current, text)?;
    let placement = format!(
        "update {path}: {} at line{} {}{}\n",
        crate::text::plural(count, "replacement"),
        if lines.len() == 1 { "" } else { "s" },
        lines
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        if pin.moved() {
            " (of the blob read), re-placed onto the changed file"
        } else {
            ""
        }
    );
    let (staging, not_applied) = unseen_merge(&path, &pin, &req.staging);
    let mut report = stage_file(
        repo,
        OneFile {
            kind: PreviewKind::Replace,
            summary: format!("{} in 1 file", crate::text::plural(count, "replacement")),
            details: serde_json::json!({
                "replace": {"path": path, "blob": pin.blob(), "edits": req.edits.len(),
                            "replaced": pin.moved()},
            }),
            path,
            before: Some(current),
            after,
            count,
            placement,
            notes,
        },
        &staging,
        cancel,
    )?;
    report.not_applied = not_applied.filter(|_| report.staged);
    Ok(report)
}

/// The staging of an edit made on `pin`: when the file changed since the blob read,
/// the edit was merged three-way onto it, and a merge nobody has looked at is staged,
/// never applied in the same call, whatever `apply` asked; the second value says why,
/// for the report's `not_applied`.
fn unseen_merge(path: &str, pin: &Pin, staging: &Staging) -> (Staging, Option<String>) {
    let mut staging = staging.clone();
    if !pin.moved() || staging.apply.is_none() {
        return (staging, None);
    }
    staging.apply = None;
    let why = format!(
        "{path} changed since the read of blob {}: the edit was merged three-way onto the \
         file as it is now, and a merged edit is staged, never applied unseen; look at the \
         diff, then apply it with resolve",
        pin.blob()
    );
    (staging, Some(why))
}

/// `text` with edit `e` (number `n` of `of`) made, and the line of each replacement
/// (in `text`).
fn replace_one(
    path: &str,
    text: &str,
    e: &TextEdit,
    n: usize,
    of: usize,
) -> Result<(String, Vec<usize>), ReplaceError> {
    let bad = |why: &str| ReplaceError::BadEdit {
        path: path.to_string(),
        edit: n,
        of,
        why: why.to_string(),
    };
    if e.old.is_empty() {
        return Err(bad(
            "old_string is empty: to create or overwrite a whole file use write",
        ));
    }
    if e.old == e.new {
        return Err(bad(
            "old_string and new_string are the same: nothing to change",
        ));
    }
    // A model writes `\n`; a file with CRLF endings holds `\r\n`.
    let (old, new) = match closest::occurrences(text, &e.old).is_empty() && text.contains("\r\n") {
        true if !e.old.contains('\r') => (crlf(&e.old), crlf(&e.new)),
        _ => (e.old.clone(), e.new.clone()),
    };
    let found = closest::occurrences(text, &old);
    match found.len() {
        0 => {
            let near = closest::closest(text, &e.old);
            let near_unique = near
                .as_ref()
                .is_some_and(|n| closest::occurrences(text, &n.text).len() == 1);
            Err(ReplaceError::NotFound {
                path: path.to_string(),
                edit: n,
                of,
                near: near.map(Box::new),
                near_unique,
            })
        }
        1 => Ok((text.replacen(&old, &new, 1), vec![found[0].1])),
        _ if e.all => Ok((
            text.replace(&old, &new),
            found.iter().map(|f| f.1).collect(),
        )),
        count => Err(ReplaceError::NotUnique {
            path: path.to_string(),
            edit: n,
            of,
            count,
            lines: found.iter().map(|f| f.1).collect(),
            old_string: e.old.clone(),
        }),
    }
}

fn crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// `write`: stages the file created or replaced (see the module docs).
pub fn write(repo: &Repo, req: &WriteRequest, cancel: &Cancel) -> Result<StageReport, Error> {
    let path = crate::patch::vtree::clean_path(&req.path, "")?;
    let tree = crate::patch::FsTree::for_repo(repo)?;
    let exists = !matches!(tree.entry(&path)?, Entry::Missing);
    let (before, after, notes, pin_blob, (staging, not_applied)) = if exists {
        let (path, current, now_text) = read_file(repo, &path)?;
        let pin = Pin::of(repo, &path, req.blob.as_deref(), &current, now_text)?;
        let (after, notes) = pin.onto_current(&path, &current, req.content.clone())?;
        let blob = pin.blob();
        let staging = unseen_merge(&path, &pin, &req.staging);
        (Some(current), after, notes, Some(blob), staging)
    } else {
        // Containment (no symlinked folder on the way, not under .git) is checked by
        // the tree when the preview is staged and again when it is applied.
        let staging = (req.staging.clone(), None);
        (
            None,
            req.content.clone().into_bytes(),
            Vec::new(),
            None,
            staging,
        )
    };
    let verb = if exists { "replace" } else { "create" };
    let lines = req.content.lines().count();
    let mut report = stage_file(
        repo,
        OneFile {
            kind: PreviewKind::Write,
            summary: format!("{verb} 1 file ({})", crate::text::plural(lines, "line")),
            details: serde_json::json!({
                "write": {"path": path, "blob": pin_blob, "created": !exists},
            }),
            placement: format!("{verb} {path}: {}\n", crate::text::plural(lines, "line")),
            path,
            before,
            after,
            count: 1,
            notes,
        },
        &staging,
        cancel,
    )?;
    report.not_applied = not_applied.filter(|_| report.staged);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(old: &str, new: &str, all: bool) -> TextEdit {
        TextEdit {
            old: old.into(),
            new: new.into(),
            all,
        }
    }

    #[test]
    fn unique_all_and_ambiguous() {
        let t = "a x\nb\nx\n";
        assert_eq!(
            replace_one("f", t, &e("b", "B", false), 1, 1).unwrap(),
            ("a x\nB\nx\n".into(), vec![2])
        );
        assert_eq!(
            replace_one("f", t, &e("x", "y", true), 1, 1).unwrap(),
            ("a y\nb\ny\n".into(), vec![1, 3])
        );
        let err = replace_one("f", t, &e("x", "y", false), 1, 1).unwrap_err();
        assert!(
            err.to_string().contains("matches 2 places (lines 1, 3)"),
            "{err}"
        );
        assert!(replace_one("f", t, &e("", "y", false), 1, 1).is_err());
        assert!(replace_one("f", t, &e("b", "b", false), 1, 1).is_err());
    }

    #[test]
    fn crlf_files_take_lf_strings() {
        let t = "a\r\nb\r\nc\r\n";
        assert_eq!(
            replace_one("f", t, &e("a\nb", "A\nB", false), 1, 1)
                .unwrap()
                .0,
            "A\r\nB\r\nc\r\n"
        );
    }

    #[test]
    fn not_found_names_the_closest_region() {
        let t = "fn a() {\n    one(1);\n    two(2);\n}\n";
        let err =
            replace_one("f", t, &e("    one(1);\n    tw0(2);", "x", false), 1, 1).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("closest: lines 2-3; first difference at line 3"),
            "{msg}"
        );
        assert!(msg.contains("-    tw0(2);\n+    two(2);"), "{msg}");
    }
}
