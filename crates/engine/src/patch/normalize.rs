/*!
Line comparison levels.

Agents copy context lines imperfectly: an editor strips trailing blanks, a model writes
straight quotes where the file has curly ones. Each [`Level`] is one way of comparing a
patch line with a file line, from strict to tolerant. None of them touches leading
whitespace: a match that ignores indentation could edit the wrong YAML block or the
wrong nesting level, so the resolver never uses one for lines it replaces.
*/

use serde::Serialize;

/// How a chunk (or an anchor) was placed. The first four are comparisons of whole
/// lines; the rest are what the resolver did when none of them found a unique place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Byte-for-byte equal lines.
    Exact,
    /// Equal once trailing whitespace is dropped.
    TrailingWhitespace,
    /// Equal once typographic punctuation is folded to ASCII.
    Unicode,
    /// Both of the above.
    UnicodeTrailingWhitespace,
    /// Anchors only: equal once leading and trailing whitespace is dropped. Safe for
    /// anchors because an anchor line is never rewritten.
    Indentation,
    /// The chunk's unchanged first and last lines were found; what lay between them
    /// (drifted since the patch was written) was replaced.
    PrefixSuffix,
    /// A window of the chunk's length shared most of its lines with the chunk.
    Lcs,
    /// A pure insertion placed after its `@@` anchor.
    Anchor,
    /// A pure insertion placed at the end of the file.
    EndOfFile,
    /// The chunk's old lines are gone and its new lines are already in place.
    AlreadyApplied,
}

impl Level {
    /// The line comparisons tried for chunk lines, in order.
    pub const LINE_LEVELS: [Level; 4] = [
        Level::Exact,
        Level::TrailingWhitespace,
        Level::Unicode,
        Level::UnicodeTrailingWhitespace,
    ];

    /// The comparisons tried for `@@` anchor lines, in order.
    pub const ANCHOR_LEVELS: [Level; 5] = [
        Level::Exact,
        Level::TrailingWhitespace,
        Level::Unicode,
        Level::UnicodeTrailingWhitespace,
        Level::Indentation,
    ];

    /// The kebab-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Level::Exact => "exact",
            Level::TrailingWhitespace => "trailing-whitespace",
            Level::Unicode => "unicode",
            Level::UnicodeTrailingWhitespace => "unicode-trailing-whitespace",
            Level::Indentation => "indentation",
            Level::PrefixSuffix => "prefix-suffix",
            Level::Lcs => "lcs",
            Level::Anchor => "anchor",
            Level::EndOfFile => "end-of-file",
            Level::AlreadyApplied => "already-applied",
        }
    }

    /// Whether placing at this level rewrote lines the patch did not name exactly.
    pub fn is_rescue(self) -> bool {
        matches!(self, Level::PrefixSuffix | Level::Lcs)
    }

    /// The comparison key of `line` at this level. Rescue levels compare with the most
    /// tolerant line comparison that still respects indentation.
    pub fn key(self, line: &str) -> String {
        match self {
            Level::Exact => line.to_string(),
            Level::TrailingWhitespace => line.trim_end().to_string(),
            Level::Unicode => fold_unicode(line),
            Level::Indentation => fold_unicode(line).trim().to_string(),
            _ => fold_unicode(line).trim_end().to_string(),
        }
    }
}

/// Folds typographic punctuation to its ASCII look-alike: curly quotes, primes, dashes,
/// the minus sign, the ellipsis and the exotic spaces models and word processors emit.
pub fn fold_unicode(line: &str) -> String {
    if line.is_ascii() {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{2035}' => {
                out.push('\'')
            }
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{2036}'
            | '\u{00AB}' | '\u{00BB}' => out.push('"'),
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => out.push('-'),
            '\u{2026}' => out.push_str("..."),
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => {
                out.push(' ')
            }
            // Invisible characters that only ever sneak in by copy and paste.
            '\u{200B}' | '\u{2060}' | '\u{FEFF}' => {}
            _ => out.push(c),
        }
    }
    out
}

/// Whether a line carries anything but whitespace; blank lines prove nothing about a
/// place, so rescues do not count them as evidence.
pub fn is_significant(line: &str) -> bool {
    !line.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_punctuation() {
        assert_eq!(
            fold_unicode("\u{201C}Hola\u{201D} \u{2014} it\u{2019}s\u{2026}\u{00A0}x"),
            "\"Hola\" - it's... x"
        );
        assert_eq!(fold_unicode("plain"), "plain");
    }

    #[test]
    fn levels_keep_indentation() {
        assert_ne!(
            Level::UnicodeTrailingWhitespace.key("  alpha  "),
            Level::UnicodeTrailingWhitespace.key("alpha")
        );
        assert_eq!(Level::Indentation.key("  alpha  "), "alpha");
        assert_eq!(Level::TrailingWhitespace.key("alpha \t"), "alpha");
    }
}
