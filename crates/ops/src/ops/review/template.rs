/*!
A site's change with the text it keeps abstracted: the group key.

The before and after text of a site are cut into tokens (words, single punctuation
characters, whitespace runs) and diffed. What is equal on both sides is text the
change keeps (a metavariable's, mostly) and becomes `…`; what is removed is written
after `-`, what is added after `+`. So `console.log(a)` → `logger.info(a)` and
`console.log(x + 1)` → `logger.info(x + 1)` are both `-console+logger…-log+info…`.
A deletion keeps nothing: its template is its first and last tokens
(`-console…;`), and `⏎` when it takes its lines whole, so a deletion that took a
trailing comment or another separator, or left a comment on its line, stands apart.
Whitespace is written `⏎` and the indentation after it when it holds a line break, ` `
otherwise, so a site whose lines were re-indented differs from one whose were not.
That indentation is relative to the indentation of the line the site starts on (`⏎`
and two spaces: two columns deeper; `⏎⇤2`: two columns shallower): the same change at
another depth is the same template, and only lines re-indented relative to each other
make another.
*/

/// Longest template kept whole; a longer one keeps its ends.
const MAX_TEMPLATE: usize = 400;

/// The work (tokens on both sides past their common start and end, times the edit
/// distance) beyond which a site's change is diffed with a bounded algorithm: Myers'
/// exact diff costs that product, and a fix that deletes most of a minified bundle's
/// declaration has an edit distance of tens of thousands of tokens.
const EXACT_DIFF_WORK: usize = 1 << 24;

/// One step of a token diff: a run of equal tokens, or tokens `old` of the before
/// side replaced by tokens `new` of the after side (either may be empty).
enum Op {
    Equal,
    Change(std::ops::Range<usize>, std::ops::Range<usize>),
}

/// The diff of two token sequences (numbered, `count` distinct numbers): Myers'
/// minimal diff (`similar`), unless its work would pass [`EXACT_DIFF_WORK`]; then
/// `imara-diff`'s Myers, whose heuristics (git's) bound its work and give up
/// minimality on large, very different inputs. Its edit distance bounds the minimal
/// one from above, so it also tells when the exact diff is cheap enough after all.
fn diff(b: &[u32], a: &[u32], count: usize) -> Vec<Op> {
    let prefix = b.iter().zip(a).take_while(|(x, y)| x == y).count();
    let suffix = b[prefix..]
        .iter()
        .rev()
        .zip(a[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let tokens = (b.len() - prefix - suffix) + (a.len() - prefix - suffix);
    if tokens.saturating_mul(tokens) <= EXACT_DIFF_WORK {
        return exact_diff(b, a);
    }
    let bounded = bounded_diff(b, a, count);
    let distance: usize = bounded
        .iter()
        .map(|op| match op {
            Op::Change(old, new) => old.len() + new.len(),
            Op::Equal => 0,
        })
        .sum();
    if tokens.saturating_mul(distance) <= EXACT_DIFF_WORK {
        return exact_diff(b, a);
    }
    bounded
}

/// Myers' minimal diff (`similar`).
fn exact_diff(b: &[u32], a: &[u32]) -> Vec<Op> {
    similar::capture_diff_slices(similar::Algorithm::Myers, b, a)
        .into_iter()
        .map(|op| {
            use similar::DiffOp;
            match op {
                DiffOp::Equal { .. } => Op::Equal,
                DiffOp::Delete {
                    old_index, old_len, ..
                } => Op::Change(old_index..old_index + old_len, 0..0),
                DiffOp::Insert {
                    new_index, new_len, ..
                } => Op::Change(0..0, new_index..new_index + new_len),
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => Op::Change(
                    old_index..old_index + old_len,
                    new_index..new_index + new_len,
                ),
            }
        })
        .collect()
}

/// `imara-diff`'s Myers, with git's heuristics.
fn bounded_diff(b: &[u32], a: &[u32], count: usize) -> Vec<Op> {
    let tokens = |v: &[u32]| v.iter().map(|&t| imara_diff::Token(t)).collect::<Vec<_>>();
    let mut d = imara_diff::Diff::default();
    d.compute_with(
        imara_diff::Algorithm::Myers,
        &tokens(b),
        &tokens(a),
        count as u32,
    );
    let mut out = Vec::new();
    let mut at = 0;
    for h in d.hunks() {
        let (old, new) = (
            h.before.start as usize..h.before.end as usize,
            h.after.start as usize..h.after.end as usize,
        );
        if old.start > at {
            out.push(Op::Equal);
        }
        at = old.end;
        out.push(Op::Change(old, new));
    }
    if at < b.len() {
        out.push(Op::Equal);
    }
    out
}

fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let c = s[i..].chars().next().unwrap_or(' ');
        if c.is_alphanumeric() || c == '_' || c == '$' {
            while let Some(c) = s[i..].chars().next() {
                if c.is_alphanumeric() || c == '_' || c == '$' {
                    i += c.len_utf8();
                } else {
                    break;
                }
            }
        } else if c.is_whitespace() {
            while let Some(c) = s[i..].chars().next() {
                if c.is_whitespace() {
                    i += c.len_utf8();
                } else {
                    break;
                }
            }
        } else {
            i += c.len_utf8();
        }
        out.push(&s[start..i]);
    }
    out
}

/// A token as the template writes it: a line break with the indentation after it
/// relative to `base`, the indentation of the site's first line (so a re-indented
/// line differs, and a site at another depth does not), other whitespace as one space.
fn norm<'a>(t: &'a str, base: &str) -> std::borrow::Cow<'a, str> {
    if let Some(at) = t.rfind('\n') {
        let own = &t[at + 1..];
        if let Some(deeper) = own.strip_prefix(base) {
            format!("⏎{deeper}").into()
        } else if let Some(shallower) = base.strip_prefix(own) {
            format!("⏎⇤{}", shallower.chars().count()).into()
        } else {
            // Tabs against spaces: neither contains the other; written as it is.
            format!("⏎{own}").into()
        }
    } else if t.chars().all(char::is_whitespace) {
        " ".into()
    } else {
        t.into()
    }
}

/// Each token's number: the same for equal tokens (numbered in `ids` as first met).
fn numbered<'a>(
    ids: &mut std::collections::HashMap<&'a str, u32>,
    tokens: &'a [std::borrow::Cow<'_, str>],
) -> Vec<u32> {
    tokens
        .iter()
        .map(|t| {
            let next = ids.len() as u32;
            *ids.entry(&**t).or_insert(next)
        })
        .collect()
}

/// The indentation of the line of `text` that holds byte `at`.
pub(super) fn indent_at(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The template of a change from `before` to `after`, a site starting on a line
/// indented by `base`.
pub(super) fn template(before: &str, after: &str, base: &str) -> String {
    let (b, a) = (tokens(before), tokens(after));
    let solid = |v: &[&str]| -> Vec<String> {
        v.iter()
            .filter(|t| !t.chars().all(char::is_whitespace))
            .map(|t| t.to_string())
            .collect()
    };
    if after.trim().is_empty() || before.trim().is_empty() {
        let (sign, side) = if after.trim().is_empty() {
            ('-', solid(&b))
        } else {
            ('+', solid(&a))
        };
        let breaks = |s: &str| s.matches('\n').count().min(3);
        // A deletion that takes its lines whole (`  x;\n`) differs from one that leaves
        // something on them (a comment kept after it).
        let edge = |s: &str| {
            let inner = s.trim_matches([' ', '\t', '\r']);
            inner.starts_with('\n') || inner.ends_with('\n')
        };
        let lines = sign == '-' && (breaks(after) > 0 || edge(before));
        let mark = if lines { "⏎" } else { "" };
        return match side.as_slice() {
            [] => format!("{sign}⏎{}", breaks(before).max(breaks(after))),
            [one] => format!("{sign}{one}{mark}"),
            [first, .., last] => format!("{sign}{first}…{last}{mark}"),
        };
    }
    let bn: Vec<std::borrow::Cow<'_, str>> = b.iter().map(|t| norm(t, base)).collect();
    let an: Vec<std::borrow::Cow<'_, str>> = a.iter().map(|t| norm(t, base)).collect();
    // The diff runs over numbers, one per distinct token: the same equalities, so the
    // same diff, without comparing strings in its inner loop (a site can be a bundle of
    // tens of thousands of tokens).
    let mut ids = std::collections::HashMap::new();
    let (bi, ai) = (numbered(&mut ids, &bn), numbered(&mut ids, &an));
    let mut out = String::new();
    let mut kept = false;
    for op in diff(&bi, &ai, ids.len()) {
        match op {
            Op::Equal => {
                if !kept {
                    out.push('…');
                    kept = true;
                }
            }
            Op::Change(old, new) => {
                kept = false;
                if !old.is_empty() {
                    out.push('-');
                    out.extend(bn[old].iter().map(|t| &**t));
                }
                if !new.is_empty() {
                    out.push('+');
                    out.extend(an[new].iter().map(|t| &**t));
                }
            }
        }
    }
    if out.chars().count() > MAX_TEMPLATE {
        let head: String = out.chars().take(MAX_TEMPLATE / 2).collect();
        let tail: Vec<char> = out.chars().rev().take(MAX_TEMPLATE / 2).collect();
        let tail: String = tail.into_iter().rev().collect();
        out = format!("{head}…{tail}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::indent_at;
    use super::template;

    #[test]
    fn kept_text_is_abstracted_whatever_it_is() {
        let t = template("console.log(a)", "logger.info(a)", "");
        assert_eq!(t, "-console+logger…-log+info…");
        assert_eq!(
            template("console.log(x + f(y))", "logger.info(x + f(y))", ""),
            t
        );
        assert_eq!(
            template("console.log(console)", "logger.info(console)", ""),
            t
        );
    }

    #[test]
    fn a_reindented_site_or_a_deletion_taking_a_comment_stands_apart() {
        let plain = template("f(a,\n  b)", "g(a,\n  b)", "");
        let moved = template("f(a,\n  b)", "g(a,\n    b)", "");
        assert_eq!(plain, "-f+g…");
        assert_ne!(plain, moved);
        let del = template("console.log(a);", "", "");
        assert_eq!(del, "-console…;");
        assert_eq!(template("console.log(b.c, 1);", "", ""), del);
        assert_ne!(template("console.log(a); // why", "", ""), del);
        // The same statement deleted with its line, and with a comment left on it.
        let line = template("  console.log(a);\n", "", "  ");
        assert_eq!(line, "-console…;⏎");
        assert_ne!(line, del);
    }

    #[test]
    fn the_same_change_at_another_depth_is_the_same_template() {
        // A call folded onto one line, at depth 2 and at depth 6.
        let shallow = template("console.log(\n    d,\n  )", "logger.info(d)", "  ");
        let deep = template(
            "console.log(\n        d,\n      )",
            "logger.info(d)",
            "      ",
        );
        assert_eq!(shallow, "-console+logger…-log+info…-⏎  …-,⏎…");
        assert_eq!(shallow, deep);
        // A closing line shallower than the first one, at two depths.
        let a = template("f(x\n)", "g(x\n)", "  ");
        assert_eq!(a, template("f(x\n  )", "g(x\n  )", "    "));
        assert_eq!(template("f(x,\ny)", "f(x)", "  "), "…-,⏎⇤2y…");
    }

    #[test]
    fn lines_reindented_relative_to_each_other_stand_apart_at_any_depth() {
        let plain = template("f(a,\n      b)", "g(a,\n      b)", "    ");
        let moved = template("f(a,\n      b)", "g(a,\n        b)", "    ");
        let moved_shallow = template("f(a,\n  b)", "g(a,\n    b)", "");
        assert_eq!(plain, "-f+g…");
        assert_ne!(plain, moved);
        assert_eq!(moved, moved_shallow);
    }

    #[test]
    fn a_site_s_base_indentation_is_its_line_s() {
        let text = "fn f() {\n    let x = g(1);\n\tz\n";
        assert_eq!(indent_at(text, 0), "");
        assert_eq!(indent_at(text, text.find("g(").expect("g")), "    ");
        assert_eq!(indent_at(text, text.find('z').expect("z")), "\t");
    }
}
