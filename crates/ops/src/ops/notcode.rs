//! Whether a search says which languages it skipped (issue 42 item 4, issue 52 item 5).
//!
//! A pattern that is only text in Markdown, YAML or HTML, or does not parse as Css, skips
//! those files. Said on every search of a mixed repository, the warning is noise. One
//! rule: it is said when no file of a language where the pattern parses was searched
//! (then the search could not find anything, and the pattern may be the mistake), or
//! with `-v`. The report's `skipped_languages` always lists them all.

use crate::files::FileSet;

/// The entries of `skipped` (language, reason) to say: all of them when `verbose` or
/// when every file of `set` is of a skipped language, else none.
pub fn worth_saying(
    set: &FileSet,
    skipped: &[(String, String)],
    verbose: bool,
) -> Vec<(String, String)> {
    let parses_somewhere = set
        .files
        .iter()
        .any(|f| !skipped.iter().any(|(lang, _)| f.lang.to_string() == *lang));
    if verbose || !parses_somewhere {
        skipped.to_vec()
    } else {
        Vec::new()
    }
}
