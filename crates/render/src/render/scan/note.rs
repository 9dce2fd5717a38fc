/*!
A rule's `note` as ast-grep prints it in its text reports: read as Markdown and shown
without styles, as the Markdown renderer ast-grep uses shows it when colour is off.
Emphasis marks (`**`, `*`, `~~`) and code marks (`` ` ``) go; a list item gets a `•`
bullet, an ordered one its number, a quote a `▐`; a line indented by four spaces (or a
tab) or inside a fence is code, shown without its indent and padded with spaces to the
width of its block's widest line; fences and `---` rules leave no text. Lines are never
wrapped (ast-grep gives no width). Tables are left as written (the renderer draws
their borders; we do not).
*/

/// The note as ast-grep shows it, each line ending with a newline.
pub fn plain(note: &str) -> String {
    let mut lines: Vec<Line> = Vec::new();
    let mut fenced = false;
    // Runs of ordered items are numbered from their first item's number.
    let mut ordered: Vec<Option<u32>> = Vec::new();
    for src in note.lines() {
        if src.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            lines.push(Line::Code(src.to_string()));
            continue;
        }
        let line = parse(src);
        match &line {
            Line::Ordered { depth, .. } => {
                let depth = *depth;
                ordered.resize(ordered.len().max(depth + 1), None);
                ordered.truncate(depth + 1);
            }
            _ => ordered.clear(),
        }
        lines.push(match line {
            Line::Ordered { depth, index, text } => {
                let slot = &mut ordered[depth];
                let index = match *slot {
                    Some(previous) => previous + 1,
                    None => index,
                };
                *slot = Some(index);
                Line::Ordered { depth, index, text }
            }
            other => other,
        });
    }
    justify_code(&mut lines);
    let mut out = String::new();
    for line in &lines {
        match line {
            Line::Text(text) | Line::Code(text) => out.push_str(text),
            Line::Item { depth, text } => {
                out.push_str(&" ".repeat(*depth));
                out.push_str("• ");
                out.push_str(text);
            }
            Line::Ordered { depth, index, text } => {
                out.push_str(&" ".repeat(*depth));
                out.push_str(&format!("{index}. "));
                out.push_str(text);
            }
        }
        out.push('\n');
    }
    out
}

/// One line of a note, its marks read.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Text(String),
    Code(String),
    Item {
        depth: usize,
        text: String,
    },
    Ordered {
        depth: usize,
        index: u32,
        text: String,
    },
}

fn parse(src: &str) -> Line {
    if src.starts_with('|') {
        return Line::Text(src.to_string());
    }
    if let Some(code) = src.strip_prefix("    ").or_else(|| src.strip_prefix('\t')) {
        return Line::Code(code.to_string());
    }
    let depth = src.len() - src.trim_start_matches(' ').len();
    let rest = &src[depth..];
    if depth < 4 {
        for bullet in ["* ", "- ", "+ "] {
            if let Some(text) = rest.strip_prefix(bullet) {
                return Line::Item {
                    depth,
                    text: inline(text),
                };
            }
        }
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            let after = &rest[digits..];
            if let Some(after) = after.strip_prefix('.').or_else(|| after.strip_prefix(')')) {
                let text = match after.strip_prefix(' ') {
                    Some(text) => Some(text),
                    None if after.is_empty() => Some(""),
                    None => None,
                };
                if let Some(text) = text {
                    return Line::Ordered {
                        depth,
                        index: rest[..digits].parse().unwrap_or(1),
                        text: inline(text),
                    };
                }
            }
        }
    }
    if src == ">" {
        return Line::Text("▐ ".to_string());
    }
    if let Some(quoted) = src.strip_prefix("> ") {
        return Line::Text(format!("▐ {}", inline(quoted)));
    }
    if let Some(text) = header(src) {
        return Line::Text(inline(text));
    }
    if src.len() >= 3 && src.bytes().all(|b| b == b'-') {
        // A horizontal rule: drawn as wide as the output, which has no width here.
        return Line::Text(String::new());
    }
    Line::Text(inline(src))
}

/// A header's text: after one to eight `#` and a space.
fn header(src: &str) -> Option<&str> {
    let hashes = src.len() - src.trim_start_matches('#').len();
    if hashes == 0 || hashes > 8 || src.len() < 3 {
        return None;
    }
    src[hashes..].strip_prefix(' ')
}

/// A line's text without its emphasis and code marks.
fn inline(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    let (mut code, mut italic) = (false, false);
    while let Some(c) = chars.next() {
        if code {
            match c {
                '`' => code = false,
                c => out.push(c),
            }
            continue;
        }
        match c {
            '*' => match chars.peek() {
                Some('*') => {
                    chars.next();
                }
                Some('`') => {
                    chars.next();
                    italic = !italic;
                    code = true;
                }
                // A last star is a mark only when it closes an italic run.
                None if !italic => out.push('*'),
                _ => italic = !italic,
            },
            '~' if chars.peek() == Some(&'~') => {
                chars.next();
            }
            '`' => code = true,
            c => out.push(c),
        }
    }
    out
}

/// Pads each run of code lines to the width of its widest line.
fn justify_code(lines: &mut [Line]) {
    let width = |s: &str| s.chars().count();
    let mut i = 0;
    while i < lines.len() {
        if !matches!(lines[i], Line::Code(_)) {
            i += 1;
            continue;
        }
        let end = lines[i..]
            .iter()
            .position(|l| !matches!(l, Line::Code(_)))
            .map_or(lines.len(), |n| i + n);
        let widest = lines[i..end]
            .iter()
            .map(|l| match l {
                Line::Code(s) => width(s),
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        for line in &mut lines[i..end] {
            if let Line::Code(s) = line {
                let pad = widest - width(s);
                s.push_str(&" ".repeat(pad));
            }
        }
        i = end;
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    /// What ast-grep 0.51.1 prints for this note (`scan --report-style medium
    /// --color never`, its ` = ` and indent taken off).
    #[test]
    fn a_note_reads_as_ast_greps() {
        let note = "[CWE-328] Use of **Weak** `Hash`, *really*.\n[REFERENCES]\n2 * 3 = 6 *\n\
                    a ~ b ~~c~~\n# Title\n- one\n  * two\n1. a\n1. b\n> said\n---\nUse:\n\
                    \x20   let x = 1;\n    f(x)\n```\nraw *x*\n```\nend";
        assert_eq!(
            plain(note),
            "[CWE-328] Use of Weak Hash, really.\n[REFERENCES]\n2  3 = 6 \na ~ b c\nTitle\n\
             • one\n  • two\n1. a\n2. b\n▐ said\n\nUse:\nlet x = 1;\nf(x)      \n\
             raw *x*   \nend\n"
        );
    }
}
