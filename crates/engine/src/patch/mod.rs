/*!
Agent patches in the `*** Begin Patch` format: parse, resolve every chunk uniquely or
refuse with a precise reason, and produce a [`crate::change::ChangeSet`].

Coding agents write their edits in this format, and their context lines drift:
trailing blanks lost, curly quotes straightened, a line edited since. Appliers that
guess put an edit in the wrong place; appliers that insist on exact text fail for no
good reason. This engine sits between: each chunk is placed at the one place that
fits at the strictest comparison that finds any ([`normalize`]), or by a bounded rescue
that says which lines it overwrote ([`resolve`]), or the whole patch is refused.

The stages: [`parse`] reads the text; [`vtree`] applies the file operations in order
over an overlay of the tree (never the disk); the net difference is the change set, and
a [`Report`] says per chunk how it was placed. Nothing is written here: the caller
stages the change set as a preview.
*/

pub mod meta;
pub mod normalize;
pub mod parse;
pub mod resolve;
pub mod vtree;

#[cfg(test)]
mod fuzz;

use serde::Serialize;

use crate::change::ChangeSet;
use crate::change::FileContent;
use crate::change::FileMode;
use crate::error::Classify;
use crate::error::Exit;
pub use normalize::Level;
pub use parse::parse;
pub use parse::Patch;
pub use resolve::ChunkReport;
pub use vtree::Entry;
pub use vtree::FsTree;
pub use vtree::MemTree;
pub use vtree::Tree;

/// Why a patch was refused.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("patch line {line}: expected {expected}, found {found}")]
    Syntax {
        line: usize,
        expected: String,
        found: String,
    },
    #[error("the patch has no file operations")]
    Empty,
    #[error("patch line {line}: `*** Update File: {path}` has no chunks (and no `*** Move to:`)")]
    EmptyUpdate { path: String, line: usize },
    #[error("{}refusing path '{path}': {reason}", at_line(line))]
    UnsafePath {
        path: String,
        reason: String,
        /// The patch line naming it, once known.
        line: Option<usize>,
    },
    /// A path another repository or the sparse checkout owns ([`crate::repo::Protected`]).
    #[error("{}refusing path '{path}': {why}", at_line(line))]
    Protected {
        path: String,
        why: String,
        line: Option<usize>,
    },
    #[error("patch line {line}: refusing to overwrite '{path}', which already exists")]
    Exists { path: String, line: usize },
    #[error("patch line {line}: cannot {op} '{path}': no such file")]
    Missing {
        path: String,
        op: &'static str,
        line: usize,
    },
    #[error("patch line {line}: cannot {op} '{path}': it is a folder")]
    NotAFile {
        path: String,
        op: &'static str,
        line: usize,
    },
    #[error("patch line {line}: cannot update '{path}': it is not UTF-8 text")]
    NotText { path: String, line: usize },
    #[error("patch line {line}: chunk {chunk} of '{path}' matches nowhere\n{detail}")]
    NoMatch {
        path: String,
        chunk: usize,
        line: usize,
        detail: String,
        /// The file region closest to the chunk's old lines.
        near: Option<Box<crate::text::closest::Near>>,
        /// Whether that region's text occurs in the file once.
        near_unique: bool,
    },
    #[error(
        "patch line {line}: chunk {chunk} of '{path}' matches {} places ({} comparison): lines {}",
        candidates.len(), level.name(), numbers(candidates)
    )]
    Ambiguous {
        path: String,
        chunk: usize,
        line: usize,
        level: Level,
        candidates: Vec<usize>,
    },
    #[error("patch line {line}: the `@@ {anchor}` anchor of chunk {chunk} of '{path}' is not in the file")]
    AnchorNotFound {
        path: String,
        chunk: usize,
        line: usize,
        anchor: String,
    },
    #[error(
        "patch line {line}: the `@@ {anchor}` anchor of chunk {chunk} of '{path}' matches lines {}",
        numbers(candidates)
    )]
    AnchorAmbiguous {
        path: String,
        chunk: usize,
        line: usize,
        anchor: String,
        candidates: Vec<usize>,
    },
    #[error("cannot read '{path}'")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

fn at_line(line: &Option<usize>) -> String {
    line.map(|l| format!("patch line {l}: "))
        .unwrap_or_default()
}

fn numbers(ns: &[usize]) -> String {
    const SHOWN: usize = 10;
    let mut s: Vec<String> = ns.iter().take(SHOWN).map(|n| n.to_string()).collect();
    if ns.len() > SHOWN {
        s.push(format!("… ({} in all)", ns.len()));
    }
    s.join(", ")
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::Syntax { .. } => "patch-syntax",
            Error::Empty => "patch-empty",
            Error::EmptyUpdate { .. } => "patch-empty-update",
            Error::UnsafePath { .. } => "unsafe-path",
            Error::Protected { .. } => "protected-path",
            Error::Exists { .. } => "file-exists",
            Error::Missing { .. } => "missing-file",
            Error::NotAFile { .. } => "not-a-file",
            Error::NotText { .. } => "not-text",
            Error::NoMatch { .. } => "no-match",
            Error::Ambiguous { .. } => "ambiguous-match",
            Error::AnchorNotFound { .. } => "anchor-not-found",
            Error::AnchorAmbiguous { .. } => "ambiguous-anchor",
            Error::Io { .. } => "io",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::Syntax { .. } | Error::Empty | Error::EmptyUpdate { .. } => Exit::BadInput,
            Error::UnsafePath { .. } | Error::Protected { .. } | Error::Exists { .. } => {
                Exit::Refused
            }
            Error::Missing { .. }
            | Error::NotAFile { .. }
            | Error::NotText { .. }
            | Error::NoMatch { .. }
            | Error::Ambiguous { .. }
            | Error::AnchorNotFound { .. }
            | Error::AnchorAmbiguous { .. } => Exit::Unplaceable,
            Error::Io { .. } => Exit::Internal,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::Ambiguous { .. } | Error::AnchorAmbiguous { .. } => Some(
                "add context lines, or an `@@` line naming the enclosing function or class, \
                 so that the chunk fits one place only"
                    .into(),
            ),
            Error::NoMatch { .. } => {
                Some("re-read the file and write the chunk from its current lines".into())
            }
            Error::Exists { .. } => {
                Some("use `*** Update File:` to change an existing file, or delete it first".into())
            }
            Error::Syntax { .. } => Some(
                "the format is `*** Begin Patch`, then `*** Add File:`, `*** Delete File:` or \
                 `*** Update File:` sections, then `*** End Patch`"
                    .into(),
            ),
            _ => None,
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            Error::NoMatch {
                path,
                chunk,
                line,
                near,
                near_unique,
                ..
            } => Some(
                serde_json::json!({"path": path, "chunk": chunk, "patch_line": line,
                                          "near": near, "near_unique": near_unique}),
            ),
            Error::Ambiguous {
                path,
                chunk,
                line,
                candidates,
                ..
            } => Some(
                serde_json::json!({"path": path, "chunk": chunk, "patch_line": line,
                                          "count": candidates.len(), "lines": candidates}),
            ),
            _ => None,
        }
    }
}

/// What happened to one file operation of the patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpReport {
    /// `add`, `delete` or `update`.
    pub op: &'static str,
    /// Repository path.
    pub path: String,
    /// Destination of a `*** Move to:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub move_to: Option<String>,
    /// 1-based patch line of the operation's header.
    pub patch_line: usize,
    /// How each chunk of an Update was placed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<ChunkReport>,
}

/// The per-operation, per-chunk resolution report of a whole patch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub ops: Vec<OpReport>,
}

impl Report {
    /// Every chunk report, in patch order.
    pub fn chunks(&self) -> impl Iterator<Item = &ChunkReport> {
        self.ops.iter().flat_map(|o| o.chunks.iter())
    }
    /// Chunks found already applied (skipped).
    pub fn already_applied(&self) -> usize {
        self.chunks()
            .filter(|c| c.level == Level::AlreadyApplied)
            .count()
    }
    /// Chunks placed by a rescue.
    pub fn rescued(&self) -> usize {
        self.chunks().filter(|c| c.level.is_rescue()).count()
    }
}

/// A resolved patch: the net file changes and how they were found.
#[derive(Debug, Clone)]
pub struct Resolution {
    pub changes: ChangeSet,
    pub report: Report,
}

/// Parses and resolves `text` against `tree`. Paths in the patch are relative to
/// `base`, the repository path of the folder it was given in (`""` at the top).
pub fn resolve_text(text: &str, tree: &dyn Tree, base: &str) -> Result<Resolution, Error> {
    resolve_text_with(text, tree, base, Options::default())
}

/// How tolerant a resolution is beyond the standard levels.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Place a chunk whose lines match only with indentation ignored (when no standard
    /// comparison places it), re-indenting its added lines like their neighbours. Never
    /// for a patch as written (it could edit the wrong nesting level): only for a
    /// refresh, where the patch already placed once and a formatter re-indented since.
    pub reindent: bool,
}

/// [`resolve_text`] with `opts`.
pub fn resolve_text_with(
    text: &str,
    tree: &dyn Tree,
    base: &str,
    opts: Options,
) -> Result<Resolution, Error> {
    let patch = parse(text)?;
    resolve_with(&patch, tree, base, opts)
}

/// Resolves a parsed patch against `tree`: every operation in order over a virtual
/// tree, all or nothing.
pub fn resolve(patch: &Patch, tree: &dyn Tree, base: &str) -> Result<Resolution, Error> {
    resolve_with(patch, tree, base, Options::default())
}

/// [`resolve`] with `opts`.
pub fn resolve_with(
    patch: &Patch,
    tree: &dyn Tree,
    base: &str,
    opts: Options,
) -> Result<Resolution, Error> {
    let mut vt = vtree::VTree::new(tree);
    let mut report = Report::default();
    for op in &patch.ops {
        let done = apply_op(&mut vt, op, base, opts).map_err(|e| match e {
            Error::UnsafePath {
                path,
                reason,
                line: None,
            } => Error::UnsafePath {
                path,
                reason,
                line: Some(op.line()),
            },
            Error::Protected {
                path,
                why,
                line: None,
            } => Error::Protected {
                path,
                why,
                line: Some(op.line()),
            },
            e => e,
        })?;
        report.ops.push(done);
    }
    let mut changes = ChangeSet {
        changes: vt.changes(),
    };
    changes.sort();
    Ok(Resolution { changes, report })
}

fn apply_op(
    vt: &mut vtree::VTree,
    op: &parse::Op,
    base: &str,
    opts: Options,
) -> Result<OpReport, Error> {
    match op {
        parse::Op::Add { path, lines, line } => {
            let path = vtree::clean_path(path, base)?;
            vt.check_creatable(&path, *line)?;
            let mut bytes = Vec::new();
            for l in lines {
                bytes.extend_from_slice(l.as_bytes());
                bytes.push(b'\n');
            }
            vt.set(
                &path,
                Some(FileContent {
                    bytes,
                    mode: FileMode::Regular,
                }),
            )?;
            Ok(OpReport {
                op: "add",
                path,
                move_to: None,
                patch_line: *line,
                chunks: Vec::new(),
            })
        }
        parse::Op::Delete { path, line } => {
            let path = vtree::clean_path(path, base)?;
            existing_file(vt, &path, "delete", *line)?;
            vt.set(&path, None)?;
            Ok(OpReport {
                op: "delete",
                path,
                move_to: None,
                patch_line: *line,
                chunks: Vec::new(),
            })
        }
        parse::Op::Update {
            path,
            move_to,
            chunks,
            line,
        } => {
            let path = vtree::clean_path(path, base)?;
            let dest = match move_to {
                Some(d) => Some(vtree::clean_path(d, base)?),
                None => None,
            };
            let file = existing_file(vt, &path, "update", *line)?;
            let text = resolve::Text::parse(&file.bytes).ok_or_else(|| Error::NotText {
                path: path.clone(),
                line: *line,
            })?;
            let (new_text, chunk_reports) = resolve::resolve_chunks(
                &resolve::Ctx {
                    path: &path,
                    reindent: opts.reindent,
                },
                &text,
                chunks,
            )?;
            // Unchanged text keeps its exact bytes (a no-op chunk must not rewrite).
            let bytes = if chunk_reports.iter().all(|c| c.removed == 0 && c.added == 0) {
                file.bytes.clone()
            } else {
                new_text.render()
            };
            let after = FileContent {
                bytes,
                mode: file.mode,
            };
            match &dest {
                Some(d) if *d != path => {
                    vt.check_creatable(d, *line)?;
                    vt.set(&path, None)?;
                    vt.set(d, Some(after))?;
                }
                _ => vt.set(&path, Some(after))?,
            }
            Ok(OpReport {
                op: "update",
                path,
                move_to: dest,
                patch_line: *line,
                chunks: chunk_reports,
            })
        }
    }
}

fn existing_file(
    vt: &mut vtree::VTree,
    path: &str,
    op: &'static str,
    line: usize,
) -> Result<FileContent, Error> {
    match vt.get(path)? {
        Entry::File(f) if f.mode == FileMode::Symlink => Err(Error::UnsafePath {
            path: path.to_string(),
            reason: "it is a symlink".into(),
            line: Some(line),
        }),
        Entry::File(f) => Ok(f),
        Entry::Missing => Err(Error::Missing {
            path: path.to_string(),
            op,
            line,
        }),
        Entry::Dir => Err(Error::NotAFile {
            path: path.to_string(),
            op,
            line,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> MemTree {
        MemTree::from_files(files.iter().map(|(p, c)| (*p, c.as_bytes())))
    }

    fn after(r: &Resolution, path: &str) -> Option<String> {
        r.changes
            .changes
            .iter()
            .find(|c| c.path == path)
            .and_then(|c| c.after.as_ref())
            .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
    }

    #[test]
    fn operations_apply_in_sequence() {
        let t = tree(&[("before.txt", "alpha\nbeta\n")]);
        let r = resolve_text(
            "*** Begin Patch\n*** Update File: before.txt\n*** Move to: nested/after.txt\n@@\n alpha\n-beta\n+BETA\n*** Add File: before.txt\n+replacement\n*** End Patch\n",
            &t,
            "",
        )
        .unwrap();
        assert_eq!(after(&r, "before.txt").as_deref(), Some("replacement\n"));
        assert_eq!(
            after(&r, "nested/after.txt").as_deref(),
            Some("alpha\nBETA\n")
        );
    }

    #[test]
    fn refusals_have_their_exit_class() {
        let t = tree(&[("a", "x\n"), ("d/f", "y\n")]);
        let cases = [
            ("*** Add File: a\n+z\n", Exit::Refused),
            ("*** Delete File: d\n", Exit::Unplaceable),
            ("*** Delete File: nope\n", Exit::Unplaceable),
            ("*** Update File: ../x\n@@\n-x\n+y\n", Exit::Refused),
            ("*** Add File: .git/hooks/pre-commit\n+x\n", Exit::Refused),
            (
                "*** Update File: a\n*** Move to: d/f\n@@\n-x\n+y\n",
                Exit::Refused,
            ),
            (
                "*** Delete File: a\n*** Delete File: a\n",
                Exit::Unplaceable,
            ),
        ];
        for (body, exit) in cases {
            let text = format!("*** Begin Patch\n{body}*** End Patch\n");
            let err = resolve_text(&text, &t, "").unwrap_err();
            assert_eq!(err.exit(), exit, "{body}: {err}");
        }
    }

    #[test]
    fn move_keeps_mode_and_update_keeps_bytes_elsewhere() {
        let mut t = tree(&[("run.sh", "#!/bin/sh\r\necho hi\r\n")]);
        if let Some(f) = t.files.get_mut("run.sh") {
            f.mode = FileMode::Executable;
        }
        let r = resolve_text(
            "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n-echo hi\n+echo bye\n*** End Patch\n",
            &t,
            "",
        )
        .unwrap();
        let moved = r
            .changes
            .changes
            .iter()
            .find(|c| c.path == "bin/run.sh")
            .and_then(|c| c.after.clone())
            .unwrap();
        assert_eq!(moved.mode, FileMode::Executable);
        assert_eq!(moved.bytes, b"#!/bin/sh\r\necho bye\r\n");
        let source = r
            .changes
            .changes
            .iter()
            .find(|c| c.path == "run.sh")
            .unwrap();
        assert!(source.after.is_none());
    }

    #[test]
    fn pure_move_needs_no_chunk() {
        let t = tree(&[("a", "x\n")]);
        let r = resolve_text(
            "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch\n",
            &t,
            "",
        )
        .unwrap();
        assert_eq!(r.changes.changes.len(), 2);
        assert_eq!(after(&r, "b").as_deref(), Some("x\n"));
    }

    #[test]
    fn net_noop_is_empty() {
        let t = tree(&[("a", "x\n")]);
        let r = resolve_text(
            "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** Update File: a\n@@\n-y\n+x\n*** End Patch\n",
            &t,
            "",
        )
        .unwrap();
        assert!(r.changes.is_empty());
    }
}
