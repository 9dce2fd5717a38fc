//! A file as lines, each with its own ending (and whether it starts with a BOM), and
//! the chunks' edits put into it.

use super::Edit;
use super::NewLine;

/// A line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eol {
    Lf,
    CrLf,
    Cr,
    /// The last line of a file without a final newline.
    None,
}

impl Eol {
    fn bytes(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
            Eol::Cr => "\r",
            Eol::None => "",
        }
    }
}

/// A text file split into lines, each with its own ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    pub bom: bool,
    pub lines: Vec<(String, Eol)>,
}

impl Text {
    /// Splits UTF-8 bytes; `None` when they are not UTF-8.
    pub fn parse(bytes: &[u8]) -> Option<Text> {
        let s = std::str::from_utf8(bytes).ok()?;
        let (bom, s) = match s.strip_prefix('\u{FEFF}') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let mut lines = Vec::new();
        let b = s.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while i < b.len() {
            let (eol, len) = match b[i] {
                b'\n' => (Eol::Lf, 1),
                b'\r' if b.get(i + 1) == Some(&b'\n') => (Eol::CrLf, 2),
                b'\r' => (Eol::Cr, 1),
                _ => {
                    i += 1;
                    continue;
                }
            };
            // Line breaks are ASCII, so these are char boundaries.
            lines.push((s[start..i].to_string(), eol));
            i += len;
            start = i;
        }
        if start < b.len() {
            lines.push((s[start..].to_string(), Eol::None));
        }
        Some(Text { bom, lines })
    }

    /// The bytes of the file.
    pub fn render(&self) -> Vec<u8> {
        let mut out = String::new();
        if self.bom {
            out.push('\u{FEFF}');
        }
        for (text, eol) in &self.lines {
            out.push_str(text);
            out.push_str(eol.bytes());
        }
        out.into_bytes()
    }

    /// The most common line ending; ties go to the one seen first, and a file without
    /// any line break gets LF.
    pub fn dominant_eol(&self) -> Eol {
        let mut counts: Vec<(Eol, usize)> = Vec::new();
        for (_, eol) in &self.lines {
            if *eol == Eol::None {
                continue;
            }
            match counts.iter_mut().find(|(e, _)| e == eol) {
                Some((_, n)) => *n += 1,
                None => counts.push((*eol, 1)),
            }
        }
        let mut best = (Eol::Lf, 0);
        for (e, n) in counts {
            if n > best.1 {
                best = (e, n);
            }
        }
        best.0
    }

    fn missing_final_newline(&self) -> bool {
        self.lines.last().is_some_and(|(_, e)| *e == Eol::None)
    }
}

/// Applies the edits (sorted, non-overlapping) and settles line endings: kept lines
/// keep theirs, new lines take the dominant one, and the last line ends the way the
/// original last line did.
pub(super) fn assemble(text: &Text, edits: &[Edit]) -> Text {
    let eol = text.dominant_eol();
    let mut out: Vec<(String, Eol)> = Vec::with_capacity(text.lines.len());
    let mut i = 0usize;
    let keep = |out: &mut Vec<(String, Eol)>, k: usize| {
        if let Some(l) = text.lines.get(k) {
            out.push(l.clone());
        }
    };
    for e in edits {
        while i < e.start && i < text.lines.len() {
            keep(&mut out, i);
            i += 1;
        }
        for l in &e.lines {
            match l {
                NewLine::Keep(k) => keep(&mut out, *k),
                NewLine::Text(s) => out.push((s.clone(), eol)),
            }
        }
        i = i.max(e.start + e.del);
    }
    while i < text.lines.len() {
        keep(&mut out, i);
        i += 1;
    }
    let last = out.len().saturating_sub(1);
    let missing_final = text.missing_final_newline();
    for (k, (_, e)) in out.iter_mut().enumerate() {
        if k == last && missing_final {
            *e = Eol::None;
        } else if *e == Eol::None {
            *e = eol;
        }
    }
    Text {
        bom: text.bom,
        lines: out,
    }
}
