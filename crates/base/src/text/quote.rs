//! Paths in text output, quoted as git quotes them (`core.quotePath`): a name holding a
//! control character, `"` or `\` (and, unless `core.quotePath` is false, a byte above
//! 0x7f) is printed in double quotes with C escapes, so one line is always one path.

use std::borrow::Cow;

/// How to quote paths: whether bytes above 0x7f are escaped too (git's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quoting {
    pub non_ascii: bool,
}

impl Default for Quoting {
    fn default() -> Self {
        Quoting { non_ascii: true }
    }
}

impl Quoting {
    fn needs(&self, b: u8) -> bool {
        b < 0x20 || b == 0x7f || b == b'"' || b == b'\\' || (self.non_ascii && b >= 0x80)
    }

    /// [`Quoting::quote`] of an owned string.
    pub fn quote_owned(&self, path: String) -> String {
        match self.quote(&path) {
            Cow::Borrowed(_) => path,
            Cow::Owned(q) => q,
        }
    }

    /// `path` as git would print it.
    pub fn quote<'a>(&self, path: &'a str) -> Cow<'a, str> {
        if !path.bytes().any(|b| self.needs(b)) {
            return Cow::Borrowed(path);
        }
        let mut out = String::with_capacity(path.len() + 2);
        out.push('"');
        for (i, c) in path.char_indices() {
            let len = c.len_utf8();
            let bytes = &path.as_bytes()[i..i + len];
            if len == 1 && !self.needs(bytes[0]) {
                out.push(c);
                continue;
            }
            if len > 1 && !self.non_ascii {
                out.push(c);
                continue;
            }
            for &b in bytes {
                match b {
                    0x07 => out.push_str("\\a"),
                    0x08 => out.push_str("\\b"),
                    b'\t' => out.push_str("\\t"),
                    b'\n' => out.push_str("\\n"),
                    0x0b => out.push_str("\\v"),
                    0x0c => out.push_str("\\f"),
                    b'\r' => out.push_str("\\r"),
                    b'"' => out.push_str("\\\""),
                    b'\\' => out.push_str("\\\\"),
                    _ => out.push_str(&format!("\\{b:03o}")),
                }
            }
        }
        out.push('"');
        Cow::Owned(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_git() {
        let q = Quoting::default();
        assert_eq!(q.quote("src/a.ts"), "src/a.ts");
        assert_eq!(q.quote("a\tb"), "\"a\\tb\"");
        assert_eq!(q.quote("a\nb"), "\"a\\nb\"");
        assert_eq!(q.quote("say \"hi\".ts"), "\"say \\\"hi\\\".ts\"");
        assert_eq!(q.quote("back\\slash"), "\"back\\\\slash\"");
        assert_eq!(q.quote("\u{1}x"), "\"\\001x\"");
        assert_eq!(q.quote("é.ts"), "\"\\303\\251.ts\"");
        assert_eq!(q.quote("with space.ts"), "with space.ts");
        let raw = Quoting { non_ascii: false };
        assert_eq!(raw.quote("é.ts"), "é.ts");
        assert_eq!(raw.quote("é\t.ts"), "\"é\\t.ts\"");
    }
}
