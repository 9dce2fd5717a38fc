/*!
`verify --new-only`: a repository whose check already fails on the base always fails,
so the check is run on the base too (once per base commit and command: the result is
cached under the git dir, `astedit/verify-base/`), and the preview passes when its
output has no diagnostic line the base's lacks.

A diagnostic line is one that names a place (`a.ts(3,5)`, `src/x.py:12:1`, `-->
src/main.rs:4:9`) or says `error`, `warning` or `fail`; lines are compared with the
worktree's folder taken out and every number read as `N` (positions, counts, times
move when the preview adds or removes lines), as a multiset: the preview adds a line
when it prints it more often than the base did.
*/

use std::collections::HashMap;
use std::io::Read as _;
use std::io::Seek as _;
use std::path::Path;
use std::path::PathBuf;

use serde::Deserialize;
use serde::Serialize;

use crate::repo::Repo;

/// The most of a check's output read for its diagnostics (its end).
const MAX_READ: u64 = 16 << 20;

/// The base's check, as cached.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct BaseRun {
    pub(super) base: String,
    pub(super) command: String,
    pub(super) passed: bool,
    pub(super) exit_code: Option<i32>,
    /// Its diagnostic lines, normalised.
    pub(super) diagnostics: Vec<String>,
}

/// The cache file of the check `command` (its exact words) at `base`.
fn cache_file(repo: &Repo, base: &str, command: &str) -> PathBuf {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(format!("{base}\0{command}").as_bytes());
    let name: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    repo.common_dir
        .join("astedit")
        .join("verify-base")
        .join(format!("{name}.json"))
}

/// The cached check of `command` at `base`, if any (one that does not read back is
/// not used).
pub(super) fn cached(repo: &Repo, base: &str, command: &str) -> Option<BaseRun> {
    let bytes = std::fs::read(cache_file(repo, base, command)).ok()?;
    let run: BaseRun = serde_json::from_slice(&bytes).ok()?;
    (run.base == base && run.command == command).then_some(run)
}

/// Keeps `run` for the next `--new-only` at the same base with the same command.
/// Best effort: a check not kept is run again next time.
pub(super) fn keep(repo: &Repo, run: &BaseRun) {
    let file = cache_file(repo, &run.base, &run.command);
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(text) = serde_json::to_vec(run) else {
        return;
    };
    let part = file.with_extension(format!("json.{}", std::process::id()));
    if std::fs::write(&part, text).is_ok() && std::fs::rename(&part, &file).is_ok() {
        return;
    }
    let _ = std::fs::remove_file(&part);
}

/// The end of a check's whole output (at most [`MAX_READ`]), from its log.
pub(super) fn read_log(log: &mut std::fs::File) -> String {
    let Ok(len) = log.seek(std::io::SeekFrom::End(0)) else {
        return String::new();
    };
    let mut bytes = Vec::new();
    if log
        .seek(std::io::SeekFrom::Start(len.saturating_sub(MAX_READ)))
        .is_ok()
    {
        let _ = log.read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The diagnostic lines of `output`, each normalised and as printed; `tree` is the
/// worktree the check ran in (taken out of the lines).
pub(super) fn diagnostics(output: &str, tree: &Path) -> Vec<(String, String)> {
    let mut roots = vec![tree.display().to_string()];
    if let Ok(real) = std::fs::canonicalize(tree) {
        roots.push(real.display().to_string());
    }
    output
        .lines()
        .filter_map(|line| {
            let key = normalise(line, &roots);
            is_diagnostic(&key).then(|| (key, line.trim_end().to_string()))
        })
        .collect()
}

/// The lines of `preview` (normalised, as printed) beyond what `base` has, as printed.
pub(super) fn added(base: &[String], preview: &[(String, String)]) -> Vec<String> {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for line in base {
        *left.entry(line.as_str()).or_default() += 1;
    }
    let mut added = Vec::new();
    for (key, shown) in preview {
        match left.get_mut(key.as_str()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => added.push(shown.clone()),
        }
    }
    added
}

/// `line` without colours and the worktree's folder, every number `N`.
fn normalise(line: &str, roots: &[String]) -> String {
    let mut text = strip_colours(line);
    for root in roots {
        text = text.replace(&format!("{root}/"), "").replace(root, ".");
    }
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out.trim().to_string()
}

/// A normalised line that names a place or says it is a problem.
fn is_diagnostic(line: &str) -> bool {
    if line.is_empty() {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    ["error", "warning", "fail"]
        .iter()
        .any(|w| lower.contains(w))
        || line.split_whitespace().any(names_a_place)
}

/// `path:N…` or `path(N,N)…`, the path with a `.` or `/` in it.
fn names_a_place(token: &str) -> bool {
    [":N", "(N,N)"].iter().any(|pos| {
        token
            .find(pos)
            .is_some_and(|at| token[..at].contains(['.', '/']))
    })
}

/// `text` without ANSI escape sequences (`ESC [ … letter`).
fn strip_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(output: &str) -> Vec<String> {
        diagnostics(output, Path::new("/tmp/w/tree"))
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    #[test]
    fn positions_counts_and_the_worktree_do_not_count() {
        let base = keys(
            "/tmp/w/tree/a.ts(3,5): error TS2322: Type 'string' is not assignable.\n\
             Found 1 error in a.ts:3\n\
             \n   Compiling x v0.1.0 (/tmp/w/tree)\n",
        );
        assert_eq!(
            base,
            [
                "a.ts(N,N): error TSN: Type 'string' is not assignable.",
                "Found N error in a.ts:N"
            ]
        );
        let preview = diagnostics(
            "a.ts(4,5): error TS2322: Type 'string' is not assignable.\n\
             b.py:7:1: F821 Undefined name `x`\n\
             Found 2 error in a.ts:4\n",
            Path::new("/tmp/v/tree"),
        );
        assert_eq!(
            added(&base, &preview),
            ["b.py:7:1: F821 Undefined name `x`"]
        );
        // A line printed more often than on the base is added once per extra.
        let twice = diagnostics(
            "a.ts(3,5): error TS2322: Type 'string' is not assignable.\n\
             a.ts(9,1): error TS2322: Type 'string' is not assignable.\n",
            Path::new("/tmp/v/tree"),
        );
        assert_eq!(
            added(&base, &twice),
            ["a.ts(9,1): error TS2322: Type 'string' is not assignable."]
        );
    }

    #[test]
    fn colours_are_not_part_of_a_line() {
        assert_eq!(
            keys("\u{1b}[1m\u{1b}[31merror\u{1b}[0m: bad"),
            ["error: bad"]
        );
    }
}
