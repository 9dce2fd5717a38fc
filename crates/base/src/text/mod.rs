/*!
Text helpers every layer may use (the base layer of the house): times as RFC 3339,
messages kept to one line, counted nouns, escaped lines, and paths quoted as git
quotes them ([`Quoting`]).
*/

pub mod closest;
mod quote;
pub use quote::Quoting;

/// Lines of files, by repository path: 1-based inclusive ranges (`--changed-lines`
/// keeps what touches the lines a change added or rewrote). A path not listed has none.
#[derive(Debug, Clone, Default)]
pub struct LineRanges(pub std::collections::HashMap<String, Vec<(usize, usize)>>);

impl LineRanges {
    /// Whether lines `first..=last` of `path` touch one of its ranges.
    pub fn touches(&self, path: &str, first: usize, last: usize) -> bool {
        self.0
            .get(path)
            .is_some_and(|ranges| ranges.iter().any(|&(a, b)| a <= last && first <= b))
    }
}

/// Seconds since the epoch as an RFC 3339 UTC timestamp, `2026-11-30T15:33:02Z`.
pub fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}

/// Messages are meant to be one line; a multi-line one would break `path:line:` output.
pub fn one_line(s: &str) -> String {
    let first = s.lines().next().unwrap_or("").trim_end();
    if s.trim_end().contains('\n') {
        format!("{first} …")
    } else {
        first.to_string()
    }
}

/// `arg` as a POSIX shell would need it typed: bare when it is plain, else in single
/// quotes.
pub fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// The number of characters to insert, delete or replace to turn `a` into `b`
/// (Levenshtein), for "did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `1 replacement`, `3 replacements`; `2 fixes`, `2 outer matches`, `2 repositories`
/// (English's regular endings: `-es` after s, x, z, ch and sh; `-ies` for a
/// consonant's `-y`).
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        return format!("{n} {word}");
    }
    let sibilant = ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| word.ends_with(e));
    if sibilant {
        return format!("{n} {word}es");
    }
    if let Some(stem) = word.strip_suffix('y') {
        if stem.ends_with(|c: char| c.is_ascii_alphabetic() && !"aeiou".contains(c)) {
            return format!("{n} {stem}ies");
        }
    }
    format!("{n} {word}s")
}

/// The first line of a possibly multi-line text, with `…` when lines were cut.
pub fn first_line(text: &str) -> String {
    match text.split_once('\n') {
        Some((first, _)) => format!("{}…", first.strip_suffix('\r').unwrap_or(first)),
        None => text.to_string(),
    }
}

/// A text as one line: control characters (newlines, tabs, escapes) shown as `\n`,
/// `\t`, `\u{1b}`, so a value can never forge or break a line of text output.
pub fn escape_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .flat_map(|c| {
                if c.is_control() {
                    c.escape_default().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect(),
    )
}

/// Seconds since the epoch as `2026-01-01T00:00:00Z`: the one time format, in text as
/// in JSON.
pub fn format_time(secs: i64) -> String {
    rfc3339(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_take_the_regular_english_endings() {
        assert_eq!(plural(1, "fix"), "1 fix");
        assert_eq!(plural(731, "fix"), "731 fixes");
        assert_eq!(plural(2, "outer match"), "2 outer matches");
        assert_eq!(plural(3, "repository"), "3 repositories");
        assert_eq!(plural(0, "file"), "0 files");
        assert_eq!(plural(2, "day"), "2 days");
    }

    #[test]
    fn first_line_marks_cut_lines() {
        assert_eq!(first_line("a(\n b)"), "a(…");
        assert_eq!(first_line("a()"), "a()");
    }
}
