//! Which of the languages a search skipped are worth a warning (issue 42 item 4).
//!
//! A pattern that is only text in Markdown, YAML or HTML skips those files. Said on every search of a mixed repository, the warning is noise:
//! it matters only when a skipped file could have held a match, that is when it holds
//! the pattern's literal text (its longest piece between metavariables). `-v` says it
//! whatever the files hold. The report's `skipped_languages` always lists them all.

use crate::files::FileSet;
use crate::repo::Repo;

/// The entries of `skipped` (language, reason) to say: those whose files hold the
/// literal text of one of `patterns`, or all of them when `verbose`.
pub fn worth_saying(
    repo: &Repo,
    set: &FileSet,
    patterns: &[&str],
    skipped: &[(String, String)],
    verbose: bool,
) -> Vec<(String, String)> {
    if verbose || skipped.is_empty() {
        return skipped.to_vec();
    }
    // Nothing but metavariables: no file is told apart, and none holds a match.
    let literals: Vec<&str> = patterns.iter().filter_map(|p| literal(p)).collect();
    skipped
        .iter()
        .filter(|(lang, reason)| {
            !only_text(reason)
                || set
                    .files
                    .iter()
                    .filter(|f| f.lang.to_string() == *lang)
                    .any(|f| holds_any(repo, &f.path, &literals))
        })
        .cloned()
        .collect()
}

/// Whether a skip's reason is that the pattern is only text there (Markdown, YAML,
/// HTML), as [`crate::rewrite`] words it. A pattern that does not parse in a language
/// is always said: it may be a mistake in the pattern.
fn only_text(reason: &str) -> bool {
    reason.contains(" is only text in ")
}

/// Whether the work-tree file holds one of the texts (an unreadable file does not).
fn holds_any(repo: &Repo, path: &str, texts: &[&str]) -> bool {
    let Ok(bytes) = std::fs::read(repo.workdir.join(path)) else {
        return false;
    };
    texts
        .iter()
        .any(|t| memchr::memmem::find(&bytes, t.as_bytes()).is_some())
}

/// The longest piece of `pattern` between metavariables (`$A`, `$$$ARGS`, `$_`),
/// trimmed; `None` when no piece has two characters or more.
pub fn literal(pattern: &str) -> Option<&str> {
    let bytes = pattern.as_bytes();
    let mut pieces = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let name = |at: usize| {
            bytes[at..]
                .iter()
                .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_')
                .count()
        };
        if bytes[i] == b'$' {
            let dollars = bytes[i..].iter().take_while(|b| **b == b'$').count();
            let len = name(i + dollars);
            if len > 0 {
                pieces.push(&pattern[start..i]);
                i += dollars + len;
                start = i;
                continue;
            }
        }
        i += 1;
    }
    pieces.push(&pattern[start..]);
    pieces
        .into_iter()
        .map(str::trim)
        .filter(|p| p.chars().count() >= 2)
        .max_by_key(|p| p.len())
}

#[cfg(test)]
mod tests {
    use super::literal;

    #[test]
    fn the_literal_is_the_longest_piece_between_metavariables() {
        assert_eq!(literal("console.log($$$ARGS)"), Some("console.log("));
        assert_eq!(literal("$A.unwrap()"), Some(".unwrap()"));
        assert_eq!(literal("foo($A, $_)"), Some("foo("));
        assert_eq!(literal("$A == $B"), Some("=="));
        assert_eq!(literal("$A"), None);
        assert_eq!(literal("$$$"), Some("$$$"));
        assert_eq!(literal("price$"), Some("price$"));
    }
}
