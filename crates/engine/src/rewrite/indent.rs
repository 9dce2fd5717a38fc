/*!
Tab indentation for rewrites. ast-grep-core re-indents a multi-line replacement by the
spaces before the matched node and knows no tabs: in a tab-indented file a rewrite's
new lines got the template's spaces and none of the file's indentation
(`\tif (ok) {\n  foo(3);\n};`). [`reindent_tabs`] puts that right for the lines the
template wrote: the matched line's own indentation first, then the template's levels
as tabs.
*/

/// Re-indents `inserted` (a replacement starting at byte `position` of `src`) with the
/// file's tabs when the matched line is indented with tabs. Lines that already carry a
/// tab in their indentation came from the file (a multi-line capture) and are left as
/// they are; blank lines stay blank. Anything else — no tab before the match, a
/// one-line replacement — comes back unchanged.
pub fn reindent_tabs(src: &[u8], position: usize, inserted: Vec<u8>) -> Vec<u8> {
    let position = position.min(src.len());
    let line_start = src[..position]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let prefix = &src[line_start..position];
    let base_len = prefix
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    let base = &prefix[..base_len];
    if !base.contains(&b'\t') || !inserted.contains(&b'\n') {
        return inserted;
    }
    let leading = |l: &[u8]| l.iter().take_while(|&&b| b == b' ').count();
    let mut lines = inserted.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    let rest: Vec<&[u8]> = lines.collect();
    // The template's unit: its smallest indentation by spaces.
    let unit = rest
        .iter()
        .filter(|l| !l.contains(&b'\t'))
        .map(|l| leading(l))
        .filter(|&n| n > 0)
        .min();
    let mut out = Vec::with_capacity(inserted.len() + rest.len() * (base.len() + 2));
    out.extend_from_slice(first);
    for line in rest {
        out.push(b'\n');
        let spaces = leading(line);
        let body = &line[spaces..];
        if body.is_empty() || body == b"\r" {
            out.extend_from_slice(body);
            continue;
        }
        if body.first() == Some(&b'\t') {
            out.extend_from_slice(line);
            continue;
        }
        let (levels, odd) = match unit {
            Some(u) => (spaces / u, spaces % u),
            None => (0, spaces),
        };
        out.extend_from_slice(base);
        out.extend(std::iter::repeat_n(b'\t', levels));
        out.extend(std::iter::repeat_n(b' ', odd));
        out.extend_from_slice(body);
    }
    out
}

/// Empties the lines of `inserted` that hold only the indentation ast-grep-core gave
/// them: it indents every line of a multi-line capture or template, the blank ones too,
/// so a blank line of a capture moved one level in came out as `    `. A
/// whitespace-only line the matched text (`matched`) already had is its own and stays;
/// the first and last lines (which continue text around the edit) are left alone.
pub fn keep_blank_lines(matched: &[u8], inserted: Vec<u8>) -> Vec<u8> {
    let strip_cr = |l: &'_ [u8]| -> usize { l.len() - usize::from(l.last() == Some(&b'\r')) };
    let blank = |l: &[u8]| !l.is_empty() && l.iter().all(|&b| b == b' ' || b == b'\t');
    let lines: Vec<&[u8]> = inserted.split(|&b| b == b'\n').collect();
    if lines.len() < 3
        || !lines[1..lines.len() - 1]
            .iter()
            .any(|l| blank(&l[..strip_cr(l)]))
    {
        return inserted;
    }
    let own: Vec<&[u8]> = matched
        .split(|&b| b == b'\n')
        .map(|l| &l[..strip_cr(l)])
        .filter(|l| blank(l))
        .collect();
    let last = lines.len() - 1;
    let mut out = Vec::with_capacity(inserted.len());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let body = &line[..strip_cr(line)];
        if i > 0 && i < last && blank(body) && !own.contains(&body) {
            out.extend_from_slice(&line[body.len()..]);
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::keep_blank_lines;
    use super::reindent_tabs;

    #[test]
    fn blank_lines_stay_blank() {
        let run = |matched: &str, inserted: &str| {
            String::from_utf8(keep_blank_lines(matched.as_bytes(), inserted.into())).expect("utf8")
        };
        let matched = "if (x) {\n    a();\n\n    b();\n  }";
        assert_eq!(
            run(
                matched,
                "try {\n      a();\n  \n      b();\n    } finally {}"
            ),
            "try {\n      a();\n\n      b();\n    } finally {}"
        );
        // CRLF keeps its CR; a whitespace line the text had is its own.
        assert_eq!(run("a\r\n\r\nb", "x\r\n  \r\ny"), "x\r\n\r\ny");
        assert_eq!(run("a\n  \nb", "x\n  \ny"), "x\n  \ny");
        // The last line is the indentation of what follows the edit.
        assert_eq!(run("a", "x\n  "), "x\n  ");
    }

    fn run(src: &str, at: &str, inserted: &str) -> String {
        let position = src.find(at).expect("position");
        String::from_utf8(reindent_tabs(src.as_bytes(), position, inserted.into())).expect("utf8")
    }

    #[test]
    fn template_lines_take_the_files_tabs() {
        let src = "fn f() {\n\tcheck(ok);\n}\n";
        assert_eq!(
            run(src, "check", "if (ok) {\n  foo(3);\n}"),
            "if (ok) {\n\t\tfoo(3);\n\t}"
        );
        // Two levels of a four-space template, under two tabs.
        let src = "\t\tcall();\n";
        assert_eq!(
            run(src, "call", "a {\n    b {\n        c;\n    }\n}"),
            "a {\n\t\t\tb {\n\t\t\t\tc;\n\t\t\t}\n\t\t}"
        );
    }

    #[test]
    fn spaces_one_line_and_captured_lines_are_left_alone() {
        assert_eq!(run("  x();\n", "x", "a {\n  b;\n}"), "a {\n  b;\n}");
        assert_eq!(run("\tx();\n", "x", "y()"), "y()");
        // A capture's own lines already hold the file's tabs; a blank line stays blank.
        assert_eq!(
            run("\tx();\n", "x", "wrap {\n\t\tkept();\n\n  new();\n}"),
            "wrap {\n\t\tkept();\n\n\t\tnew();\n\t}"
        );
    }
}
