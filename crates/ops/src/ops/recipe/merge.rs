//! The three-way merge of one file, by `git merge-file`, and its conflict regions; by
//! syntax node where the file's language allows ([`merge3_file`], [`nodes`]): the one
//! merge engine of `refresh` and of `lane merge`.

mod nodes;

use crate::error::Classify;
use crate::error::Exit;
use crate::Error;

/// `git merge-file` could not run.
#[derive(Debug, thiserror::Error)]
#[error("cannot run git merge-file: {0}")]
pub struct MergeToolError(String);

impl Classify for MergeToolError {
    fn code(&self) -> &'static str {
        "merge-failed"
    }
    fn exit(&self) -> Exit {
        Exit::Internal
    }
}

/// Lines `start..=end` of the work-tree file; `end == start - 1` (an empty region)
/// means the work tree removed the lines the preview changes, just before `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Region {
    pub start: usize,
    pub end: usize,
}

impl Region {
    pub fn describe(&self) -> String {
        if self.end < self.start {
            format!(
                "before line {} (the work tree removed what the preview changes)",
                self.start
            )
        } else if self.start == self.end {
            format!("line {}", self.start)
        } else {
            format!("lines {}-{}", self.start, self.end)
        }
    }
}

/// A three-way merge's result: the merged text (with conflict markers when there are
/// conflicts) and the conflict regions, in lines of "ours" (the work tree).
pub struct Merge3 {
    pub text: Vec<u8>,
    pub conflicts: Vec<Region>,
    /// Merged line by line because "ours" differs from the base only in whitespace at
    /// the ends of lines ([`merge3_layout`]).
    pub by_layout: bool,
    /// Merged declaration by declaration ([`merge3_file`]).
    pub by_nodes: bool,
    /// The conflicts at a declaration, by kind and name (their regions are also in
    /// `conflicts`).
    pub nodes: Vec<NodeConflict>,
}

/// A declaration the node merge could not merge.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct NodeConflict {
    /// Its tree-sitter kind, e.g. `function_item`, `method_definition`.
    pub kind: String,
    /// Its name (`Display for Point` for an impl, `(p *Point) Area` for a Go method).
    pub name: String,
    /// Its lines in "ours".
    pub region: Region,
    /// What happened to it on the two sides.
    pub why: &'static str,
}

impl NodeConflict {
    pub fn describe(&self) -> String {
        format!(
            "{} {} ({}): {}",
            self.kind,
            self.name,
            self.region.describe(),
            self.why
        )
    }
}

/// What the node merge does with a declaration both sides changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BothChanged {
    /// Merge it by line (`refresh`: as the line merge always did).
    ByLine,
    /// A conflict naming it (`lane merge`: two agents changed one function).
    Conflict,
}

/// The merge of one file at `path` (whose extension names its language): by syntax
/// node where the language is one [`nodes`] knows and the sides parse, else by line
/// ([`merge3_layout`]). With [`BothChanged::ByLine`] the line merge goes first and the
/// node merge is tried only where it conflicts, so a clean line merge is never
/// changed; with [`BothChanged::Conflict`] the node merge decides.
pub fn merge3_file(
    path: &str,
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
    both: BothChanged,
) -> Result<Merge3, Error> {
    let lang = crate::lang::Lang::from_path(path).filter(|l| nodes::supported(*l));
    if both == BothChanged::ByLine {
        let m = merge3_layout(base, ours, theirs)?;
        if m.conflicts.is_empty() {
            return Ok(m);
        }
        if let Some(lang) = lang {
            if let Some(n) = nodes::merge(lang, base, ours, theirs, both)? {
                if n.conflicts.is_empty() {
                    return Ok(n);
                }
            }
        }
        return Ok(m);
    }
    if let Some(lang) = lang {
        if let Some(n) = nodes::merge(lang, base, ours, theirs, both)? {
            return Ok(n);
        }
    }
    merge3_layout(base, ours, theirs)
}

/// [`merge3`], and where it conflicts only because "ours" changed whitespace at the
/// ends of lines (a formatter: trailing blanks, re-indentation) next to or under the
/// change, the change merged line by line: ours has the base's lines one for one, so
/// base → theirs applies to it by line number, every line theirs leaves alone kept as
/// ours has it. Anything else stays a conflict.
pub fn merge3_layout(base: &[u8], ours: &[u8], theirs: &[u8]) -> Result<Merge3, Error> {
    let m = merge3(base, ours, theirs)?;
    if m.conflicts.is_empty() {
        return Ok(m);
    }
    let (Ok(b), Ok(o), Ok(t)) = (
        std::str::from_utf8(base),
        std::str::from_utf8(ours),
        std::str::from_utf8(theirs),
    ) else {
        return Ok(m);
    };
    let bl: Vec<&str> = b.split_inclusive('\n').collect();
    let ol: Vec<&str> = o.split_inclusive('\n').collect();
    if bl.len() != ol.len() || bl.iter().zip(&ol).any(|(x, y)| x.trim() != y.trim()) {
        return Ok(m);
    }
    let tl: Vec<&str> = t.split_inclusive('\n').collect();
    let diff = similar::capture_diff_slices(similar::Algorithm::Myers, &bl, &tl);
    let mut text = String::with_capacity(o.len());
    for op in diff {
        match op {
            similar::DiffOp::Equal { old_index, len, .. } => {
                ol[old_index..old_index + len]
                    .iter()
                    .for_each(|l| text.push_str(l));
            }
            similar::DiffOp::Delete { .. } => {}
            similar::DiffOp::Insert {
                new_index, new_len, ..
            }
            | similar::DiffOp::Replace {
                new_index, new_len, ..
            } => tl[new_index..new_index + new_len]
                .iter()
                .for_each(|l| text.push_str(l)),
        }
    }
    Ok(Merge3 {
        text: text.into_bytes(),
        conflicts: Vec::new(),
        by_layout: true,
        by_nodes: false,
        nodes: Vec::new(),
    })
}

/// Merges the change base → theirs into ours with `git merge-file -p` (the same merge
/// git uses for a conflicted file), on temporary copies.
pub fn merge3(base: &[u8], ours: &[u8], theirs: &[u8]) -> Result<Merge3, Error> {
    let fail = |e: &dyn std::fmt::Display| MergeToolError(e.to_string());
    let dir = tempfile::tempdir().map_err(|e| fail(&e))?;
    let write = |name: &str, bytes: &[u8]| -> Result<std::path::PathBuf, MergeToolError> {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).map_err(|e| fail(&e))?;
        Ok(p)
    };
    let (o, b, t) = (
        write("ours", ours)?,
        write("base", base)?,
        write("theirs", theirs)?,
    );
    let out = std::process::Command::new("git")
        .args([
            "merge-file",
            "-p",
            "-L",
            "work tree",
            "-L",
            "before",
            "-L",
            "preview",
        ])
        .arg(&o)
        .arg(&b)
        .arg(&t)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| fail(&e))?;
    // Exit status: the number of conflicts (0 clean), negative on error.
    match out.status.code() {
        Some(n) if (0..=127).contains(&n) => {}
        _ => {
            return Err(
                MergeToolError(String::from_utf8_lossy(&out.stderr).trim().to_string()).into(),
            )
        }
    }
    let conflicts = if out.status.code() == Some(0) {
        Vec::new()
    } else {
        conflict_regions(&out.stdout)
    };
    Ok(Merge3 {
        text: out.stdout,
        conflicts,
        by_layout: false,
        by_nodes: false,
        nodes: Vec::new(),
    })
}

/// The line regions of "ours" inside the conflict blocks of `git merge-file` output
/// (markers `<<<<<<< `, `=======`, `>>>>>>> `; `|||||||` for a diff3 base).
fn conflict_regions(merged: &[u8]) -> Vec<Region> {
    #[derive(PartialEq)]
    enum In {
        Clean,
        Ours,
        Base,
        Theirs,
    }
    let mut state = In::Clean;
    let mut ours_line = 0usize;
    let mut start = 0usize;
    let mut out = Vec::new();
    for line in merged.split(|&b| b == b'\n') {
        let marker = |m: &[u8]| {
            line.starts_with(m) && (line.len() == 7 || line[7] == b' ' || line[7] == b'\r')
        };
        match state {
            In::Clean if marker(b"<<<<<<<") => {
                state = In::Ours;
                start = ours_line + 1;
            }
            In::Clean => ours_line += 1,
            In::Ours if marker(b"|||||||") => state = In::Base,
            In::Ours | In::Base if marker(b"=======") => {
                out.push(Region {
                    start,
                    end: ours_line,
                });
                state = In::Theirs;
            }
            In::Ours => ours_line += 1,
            In::Base => {}
            In::Theirs if marker(b">>>>>>>") => state = In::Clean,
            In::Theirs => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_merge_carries_the_change_over() {
        let base = b"a\nb\nc\nd\ne\nf\n";
        let ours = b"a \nb\nc\nd\ne\nf\nadded\n";
        let theirs = b"a\nb\nc\nD\ne\nf\n";
        let m = merge3(base, ours, theirs).expect("merge");
        assert!(m.conflicts.is_empty());
        assert_eq!(m.text, b"a \nb\nc\nD\ne\nf\nadded\n");
    }

    #[test]
    fn a_formatters_blanks_next_to_the_change_merge_line_by_line() {
        let base = b"a\nb\nc\nd\n";
        let ours = b"a\nb  \n  c\nd\n";
        let theirs = b"a\nb\nC\nd\n";
        assert!(!merge3(base, ours, theirs)
            .expect("merge")
            .conflicts
            .is_empty());
        let m = merge3_layout(base, ours, theirs).expect("merge");
        assert!(m.conflicts.is_empty() && m.by_layout);
        assert_eq!(m.text, b"a\nb  \nC\nd\n");
        // A real edit under the change stays a conflict.
        let ours = b"a\nb  \nX\nd\n";
        assert!(!merge3_layout(base, ours, theirs)
            .expect("merge")
            .conflicts
            .is_empty());
    }

    #[test]
    fn conflicts_name_the_work_tree_lines() {
        let base = b"1\n2\n3\n4\n5\n6\n7\n8\n";
        let ours = b"1\n2\n3\nfour\nfour again\n5\n6\n7\n8\n";
        let theirs = b"1\n2\n3\nFOUR\n5\n6\n7\n8\n";
        let m = merge3(base, ours, theirs).expect("merge");
        assert_eq!(m.conflicts, vec![Region { start: 4, end: 5 }]);
        assert_eq!(m.conflicts[0].describe(), "lines 4-5");
    }

    #[test]
    fn conflict_regions_count_ours_lines_only() {
        let text = b"x\n<<<<<<< work tree\no1\n||||||| before\nb1\n=======\nt1\nt2\n>>>>>>> preview\ny\n<<<<<<< work tree\n=======\nt\n>>>>>>> preview\n";
        assert_eq!(
            conflict_regions(text),
            vec![Region { start: 2, end: 2 }, Region { start: 4, end: 3 }]
        );
    }
}
