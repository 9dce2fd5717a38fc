/*!
The three-way merge by syntax node: a file is cut into its top-level declarations (and
a class's, impl's or trait's into its members), each known by its kind and name, and
merged declaration by declaration; the text between declarations (imports, statements,
comments that belong to no declaration) merges by line, as `git merge-file` does. So
two sides that changed two different functions merge cleanly even where their lines
touch (a line merge conflicts there) or where both added a function at the same place.

A piece of the file is one declaration with what leads it (blank lines, comments,
attributes, decorators) up to the end of its last line. A declaration both sides
changed is merged inside when it is a class, impl or trait (member by member), else
it is [`BothChanged`]'s to decide: merged by line (refresh) or a conflict naming the
kind, the name and its lines (lanes). Deleted on one side and changed on the other is
a conflict; added on both sides with one name and different text too.

Nothing is merged by node (the caller falls back to the line merge) when a side does
not parse cleanly, a side moved declarations that both others have (their order
differs), or the merged file parses worse than the sides did. Languages: Rust, Python,
TypeScript, TSX, JavaScript and Go (their tree-sitter kinds); others merge by line.
*/

use std::collections::HashMap;
use std::collections::HashSet;
use std::ops::Range;

use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::Node;

use super::merge3;
use super::BothChanged;
use super::Merge3;
use super::NodeConflict;
use super::Region;
use crate::lang::Lang;
use crate::Error;

type N<'r> = Node<'r, StrDoc<Lang>>;

/// The languages merged by node.
pub fn supported(lang: Lang) -> bool {
    [
        Lang::Rust,
        Lang::Python,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::JavaScript,
        Lang::Go,
    ]
    .contains(&lang)
}

/// Kinds whose members merge one by one when both sides changed them.
const CONTAINERS: &[&str] = &[
    "impl_item",
    "trait_item",
    "mod_item",
    "class_definition",
    "class_declaration",
    "abstract_class_declaration",
    "class",
    "interface_declaration",
];

/// A declaration's identity in its level: kind, name, and which of that kind and name
/// it is (0 for the first: two `impl Foo` blocks are told apart by their order).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Key {
    kind: String,
    name: String,
    nth: usize,
}

/// One piece of a level (see the module docs).
struct Piece {
    /// `None`: text that is no named declaration (merged by line with its neighbours).
    key: Option<Key>,
    range: Range<usize>,
    /// Where the declaration itself starts (after its leading comments): its lines
    /// are what a conflict names.
    node_start: usize,
    /// A class, impl or trait: its members.
    inner: Option<Inner>,
}

struct Inner {
    /// The bytes the members cover (between the head, up to the body's opening line,
    /// and the tail, from its closing line).
    members: Range<usize>,
    pieces: Vec<Piece>,
}

/// One side of a merge: its text and the pieces of the level being merged.
#[derive(Clone, Copy)]
struct Side<'a> {
    src: &'a str,
    pieces: &'a [Piece],
}

/// Merges `theirs` into `ours` by node; `None` when the file cannot be merged that way
/// (see the module docs) and the line merge should be used.
pub fn merge(
    lang: Lang,
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
    both: BothChanged,
) -> Result<Option<Merge3>, Error> {
    let (Ok(b), Ok(o), Ok(t)) = (
        std::str::from_utf8(base),
        std::str::from_utf8(ours),
        std::str::from_utf8(theirs),
    ) else {
        return Ok(None);
    };
    let (Some(pb), Some(po), Some(pt)) = (pieces(b, lang), pieces(o, lang), pieces(t, lang)) else {
        return Ok(None);
    };
    let mut cx = Cx {
        both,
        nodes: Vec::new(),
        regions: Vec::new(),
    };
    let side = |src, pieces| Side { src, pieces };
    let Some(text) = cx.level(side(b, &pb), side(o, &po), side(t, &pt))? else {
        return Ok(None);
    };
    if cx.regions.is_empty() && crate::rewrite::parse_error_count(&text, lang) > 0 {
        return Ok(None);
    }
    let mut conflicts = cx.regions;
    conflicts.sort_by_key(|r| (r.start, r.end));
    Ok(Some(Merge3 {
        text: text.into_bytes(),
        conflicts,
        by_layout: false,
        by_nodes: true,
        nodes: cx.nodes,
    }))
}

/// The top-level pieces of `src`; `None` when it does not parse cleanly.
fn pieces(src: &str, lang: Lang) -> Option<Vec<Piece>> {
    let root = crate::rewrite::parse(src, lang).ok()?;
    let top = root.root();
    if top.get_inner_node().has_error() {
        return None;
    }
    Some(level(src, &top, 0..src.len()))
}

/// Leading trivia: they belong to the declaration after them.
fn trivia(kind: &str) -> bool {
    kind.contains("comment") || kind == "attribute_item" || kind == "decorator"
}

/// The pieces of `parent`'s named children over `span` (see the module docs).
fn level(src: &str, parent: &N<'_>, span: Range<usize>) -> Vec<Piece> {
    let kids: Vec<N<'_>> = parent
        .children()
        .filter(|c| c.is_named() && !trivia(&c.kind()))
        .collect();
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let mut out: Vec<Piece> = Vec::new();
    let mut pos = span.start;
    for kid in &kids {
        let r = kid.range();
        if r.end <= span.start || r.start >= span.end {
            continue;
        }
        let stop = line_end(src, r.end).clamp(pos, span.end);
        if r.start < pos {
            // On a line of the piece before: the two are one piece, of no name.
            if let Some(last) = out.last_mut() {
                last.range.end = last.range.end.max(stop);
                last.key = None;
                last.inner = None;
            }
            pos = pos.max(stop);
            continue;
        }
        let (named, body) = describe(kid);
        let key = named.map(|(kind, name)| {
            let n = seen.entry((kind.clone(), name.clone())).or_insert(0);
            *n += 1;
            Key {
                kind,
                name,
                nth: *n - 1,
            }
        });
        let inner = body.and_then(|b| inner(src, &b, r.start..stop));
        out.push(Piece {
            key,
            range: pos..stop,
            node_start: r.start,
            inner,
        });
        pos = stop;
    }
    if pos < span.end {
        out.push(Piece {
            key: None,
            range: pos..span.end,
            node_start: pos,
            inner: None,
        });
    }
    out
}

/// A container's members, between its body's opening line and its closing line;
/// `None` when a member shares a line with either.
fn inner(src: &str, body: &N<'_>, piece: Range<usize>) -> Option<Inner> {
    let r = body.range();
    let text = &src[r.clone()];
    let start = if text.starts_with('{') {
        line_end(src, r.start)
    } else {
        line_start(src, r.start)
    };
    let end = if text.ends_with('}') {
        line_start(src, r.end - 1)
    } else {
        line_end(src, r.end)
    }
    .min(piece.end);
    if start > end || start < piece.start {
        return None;
    }
    let members: Vec<N<'_>> = body
        .children()
        .filter(|c| c.is_named() && !trivia(&c.kind()))
        .collect();
    if members
        .iter()
        .any(|m| m.range().start < start || line_end(src, m.range().end) > end)
    {
        return None;
    }
    Some(Inner {
        members: start..end,
        pieces: level(src, body, start..end),
    })
}

/// The declaration a node is (looking through `export` and decorators): its kind and
/// name, when it has one, and its body when it is a container.
fn describe<'r>(node: &N<'r>) -> (Option<(String, String)>, Option<N<'r>>) {
    let mut d = node.clone();
    for _ in 0..2 {
        let wrapped = match d.kind().as_ref() {
            "export_statement" => d.field("declaration"),
            "decorated_definition" => d.field("definition"),
            _ => None,
        };
        match wrapped {
            Some(w) => d = w,
            None => break,
        }
    }
    let kind = d.kind().to_string();
    let text = |n: Option<N<'r>>| n.map(|n| squash(&n.text()));
    let first_named = |n: &N<'r>| n.children().find(|c| c.is_named());
    let name = match kind.as_str() {
        "impl_item" => text(d.field("type")).map(|ty| match text(d.field("trait")) {
            Some(tr) => format!("{tr} for {ty}"),
            None => ty,
        }),
        "method_declaration" if d.field("receiver").is_some() => {
            match (text(d.field("receiver")), text(d.field("name"))) {
                (Some(r), Some(n)) => Some(format!("{r} {n}")),
                _ => None,
            }
        }
        "lexical_declaration"
        | "variable_declaration"
        | "type_declaration"
        | "const_declaration"
        | "var_declaration" => first_named(&d).and_then(|spec| text(spec.field("name"))),
        "expression_statement" => first_named(&d)
            .filter(|a| a.kind() == "assignment")
            .and_then(|a| a.field("left"))
            .filter(|l| l.kind() == "identifier")
            .map(|l| l.text().to_string()),
        _ => text(d.field("name")),
    };
    let body = CONTAINERS
        .contains(&kind.as_str())
        .then(|| d.field("body"))
        .flatten();
    (name.map(|n| (kind, n)), body)
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Just past the end of the line holding byte `i - 1` (the line a range ending at `i`
/// ends on).
fn line_end(src: &str, i: usize) -> usize {
    if i == 0 || src.as_bytes().get(i - 1) == Some(&b'\n') {
        return i;
    }
    src[i..].find('\n').map_or(src.len(), |n| i + n + 1)
}

/// The start of the line holding byte `i`.
fn line_start(src: &str, i: usize) -> usize {
    src[..i].rfind('\n').map_or(0, |n| n + 1)
}

/// The 1-based line of byte `i`.
fn line_of(src: &str, i: usize) -> usize {
    src.as_bytes()[..i.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Whether the keys `a` and `b` both have come in the same order in each.
fn same_order(a: &[&Key], b: &[&Key]) -> bool {
    let (sa, sb): (HashSet<&Key>, HashSet<&Key>) =
        (a.iter().copied().collect(), b.iter().copied().collect());
    let ca = a.iter().filter(|k| sb.contains(*k));
    let cb = b.iter().filter(|k| sa.contains(*k));
    ca.eq(cb)
}

/// The merged order of the keys: ours', with what only theirs has placed after the
/// key it follows in theirs (and after what ours added there).
fn order<'a>(b: &[&'a Key], o: &[&'a Key], t: &[&'a Key]) -> Vec<&'a Key> {
    let old: HashSet<&Key> = b.iter().chain(t).copied().collect();
    let mut out: Vec<&Key> = o.to_vec();
    let mut at = 0;
    for k in t {
        match out.iter().position(|x| x == k) {
            Some(i) => {
                at = i + 1;
                while out.get(at).is_some_and(|x| !old.contains(x)) {
                    at += 1;
                }
            }
            None => {
                out.insert(at, k);
                at += 1;
            }
        }
    }
    out
}

/// A side's level seen by key: the named pieces, and the text between them (before
/// the first, and after each key), with where it starts.
struct Indexed<'a> {
    keys: Vec<&'a Key>,
    named: HashMap<&'a Key, &'a Piece>,
    gaps: HashMap<Option<Key>, (String, usize)>,
}

fn index<'a>(side: Side<'a>) -> Indexed<'a> {
    let mut ix = Indexed {
        keys: Vec::new(),
        named: HashMap::new(),
        gaps: HashMap::new(),
    };
    let mut anchor: Option<&Key> = None;
    for p in side.pieces {
        match &p.key {
            Some(k) => {
                ix.keys.push(k);
                ix.named.insert(k, p);
                anchor = Some(k);
            }
            None => {
                let gap = ix
                    .gaps
                    .entry(anchor.cloned())
                    .or_insert_with(|| (String::new(), p.range.start));
                gap.0.push_str(&side.src[p.range.clone()]);
            }
        }
    }
    ix
}

/// The text after `anchor` in a side's level.
fn gap<'x>(ix: &'x Indexed<'_>, anchor: Option<&Key>) -> Option<&'x str> {
    ix.gaps.get(&anchor.cloned()).map(|(s, _)| s.as_str())
}

fn text_of<'a>(s: Side<'a>, p: Option<&Piece>) -> Option<&'a str> {
    p.map(|p| &s.src[p.range.clone()])
}

/// A container's text before its members.
fn head<'a>(s: Side<'a>, p: &Piece, i: &Inner) -> &'a str {
    &s.src[p.range.start..i.members.start]
}

/// A container's text after its members.
fn tail<'a>(s: Side<'a>, p: &Piece, i: &Inner) -> &'a str {
    &s.src[i.members.end..p.range.end]
}

/// The merge's state: the policy and what conflicted.
struct Cx {
    both: BothChanged,
    nodes: Vec<NodeConflict>,
    regions: Vec<Region>,
}

impl Cx {
    /// Merges one level; `None` when a side reordered it.
    fn level<'a>(
        &mut self,
        b: Side<'a>,
        o: Side<'a>,
        t: Side<'a>,
    ) -> Result<Option<String>, Error> {
        let (ib, io, it) = (index(b), index(o), index(t));
        if !same_order(&ib.keys, &io.keys) || !same_order(&ib.keys, &it.keys) {
            return Ok(None);
        }
        let mut text = String::new();
        // Where in ours the text merged so far ends (for the lines of what ours lacks).
        let mut at = o.pieces.first().map_or(0, |p| p.range.start);
        let anchors =
            std::iter::once(None).chain(order(&ib.keys, &io.keys, &it.keys).into_iter().map(Some));
        for anchor in anchors {
            if let Some(k) = anchor {
                let (pb, po, pt) = (ib.named.get(k), io.named.get(k), it.named.get(k));
                if let Some(p) = po {
                    at = p.range.end;
                }
                let merged =
                    self.piece(k, (b, pb.copied()), (o, po.copied()), (t, pt.copied()), at)?;
                text.push_str(&merged);
            }
            let o_start = io.gaps.get(&anchor.cloned()).map(|g| g.1);
            if let Some(s) = o_start {
                at = s;
            }
            let merged = self.text(
                gap(&ib, anchor).unwrap_or(""),
                gap(&io, anchor).unwrap_or(""),
                gap(&it, anchor).unwrap_or(""),
                line_of(o.src, at),
            )?;
            if let (Some(s), Some(g)) = (o_start, gap(&io, anchor)) {
                at = s + g.len();
            }
            text.push_str(&merged);
        }
        Ok(Some(text))
    }

    /// Text with no node structure: taken from the side that changed it, or merged by
    /// line; `line` is where it starts in ours (for conflict regions).
    fn text(&mut self, b: &str, o: &str, t: &str, line: usize) -> Result<String, Error> {
        if o == t || t == b {
            return Ok(o.to_string());
        }
        if o == b {
            return Ok(t.to_string());
        }
        let m = merge3(b.as_bytes(), o.as_bytes(), t.as_bytes())?;
        self.regions.extend(m.conflicts.iter().map(|r| Region {
            start: r.start + line - 1,
            end: r.end + line - 1,
        }));
        Ok(String::from_utf8_lossy(&m.text).into_owned())
    }

    /// One declaration of the level.
    fn piece(
        &mut self,
        key: &Key,
        (b, pb): (Side<'_>, Option<&Piece>),
        (o, po): (Side<'_>, Option<&Piece>),
        (t, pt): (Side<'_>, Option<&Piece>),
        at: usize,
    ) -> Result<String, Error> {
        let (xb, xo, xt) = (text_of(b, pb), text_of(o, po), text_of(t, pt));
        match (xb, xo, xt) {
            (_, Some(xo), Some(xt)) if xo == xt => Ok(xo.to_string()),
            (Some(xb), Some(xo), Some(xt)) if xo == xb => Ok(xt.to_string()),
            (Some(xb), Some(xo), Some(xt)) if xt == xb => Ok(xo.to_string()),
            (None, Some(x), None) | (None, None, Some(x)) => Ok(x.to_string()),
            (Some(xb), None, Some(xt)) if xt == xb => Ok(String::new()),
            (Some(xb), Some(xo), None) if xo == xb => Ok(String::new()),
            (Some(_), None, None) => Ok(String::new()),
            (Some(xb), Some(xo), Some(xt)) => {
                let (pb, po, pt) = (pb.expect("base"), po.expect("ours"), pt.expect("theirs"));
                if let (Some(ib), Some(io), Some(it)) = (&pb.inner, &po.inner, &pt.inner) {
                    let mut inner = Cx {
                        both: self.both,
                        nodes: Vec::new(),
                        regions: Vec::new(),
                    };
                    let members = inner.level(
                        Side {
                            src: b.src,
                            pieces: &ib.pieces,
                        },
                        Side {
                            src: o.src,
                            pieces: &io.pieces,
                        },
                        Side {
                            src: t.src,
                            pieces: &it.pieces,
                        },
                    )?;
                    if let Some(members) = members {
                        self.nodes.append(&mut inner.nodes);
                        self.regions.append(&mut inner.regions);
                        let mut out = self.text(
                            head(b, pb, ib),
                            head(o, po, io),
                            head(t, pt, it),
                            line_of(o.src, po.range.start),
                        )?;
                        out.push_str(&members);
                        out.push_str(&self.text(
                            tail(b, pb, ib),
                            tail(o, po, io),
                            tail(t, pt, it),
                            line_of(o.src, io.members.end),
                        )?);
                        return Ok(out);
                    }
                }
                let region = Region {
                    start: line_of(o.src, po.node_start),
                    end: line_of(o.src, po.range.end.saturating_sub(1).max(po.node_start)),
                };
                if self.both == BothChanged::ByLine {
                    return self.text(xb, xo, xt, line_of(o.src, po.range.start));
                }
                Ok(self.conflict(key, region, "changed on both sides", xo, xt))
            }
            (None, Some(xo), Some(xt)) => {
                let po = po.expect("ours");
                let region = Region {
                    start: line_of(o.src, po.node_start),
                    end: line_of(o.src, po.range.end.saturating_sub(1).max(po.node_start)),
                };
                Ok(self.conflict(key, region, "added on both sides, differently", xo, xt))
            }
            (Some(_), None, Some(xt)) => {
                let line = line_of(o.src, at);
                let region = Region {
                    start: line,
                    end: line - 1,
                };
                Ok(self.conflict(
                    key,
                    region,
                    "deleted on one side, changed on the other",
                    "",
                    xt,
                ))
            }
            (Some(_), Some(xo), None) => {
                let po = po.expect("ours");
                let region = Region {
                    start: line_of(o.src, po.node_start),
                    end: line_of(o.src, po.range.end.saturating_sub(1).max(po.node_start)),
                };
                Ok(self.conflict(
                    key,
                    region,
                    "changed on one side, deleted on the other",
                    xo,
                    "",
                ))
            }
            (None, None, None) => Ok(String::new()),
        }
    }

    /// Records a conflict at a declaration; its text is both sides between markers.
    fn conflict(
        &mut self,
        key: &Key,
        region: Region,
        why: &'static str,
        o: &str,
        t: &str,
    ) -> String {
        self.regions.push(region);
        self.nodes.push(NodeConflict {
            kind: key.kind.clone(),
            name: key.name.clone(),
            region,
            why,
        });
        let nl = |s: &str| {
            if s.is_empty() || s.ends_with('\n') {
                ""
            } else {
                "\n"
            }
        };
        format!(
            "<<<<<<< work tree\n{o}{}=======\n{t}{}>>>>>>> preview\n",
            nl(o),
            nl(t)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::merge3_file;
    use super::*;

    fn node_merge(path: &str, b: &str, o: &str, t: &str) -> Merge3 {
        merge3_file(
            path,
            b.as_bytes(),
            o.as_bytes(),
            t.as_bytes(),
            BothChanged::Conflict,
        )
        .expect("merge")
    }

    fn text(m: &Merge3) -> &str {
        std::str::from_utf8(&m.text).expect("utf-8")
    }

    #[test]
    fn touching_functions_changed_on_two_sides_merge_where_lines_conflict() {
        let b = "fn a() -> u8 { 1 }\nfn b() -> u8 { 2 }\n";
        let o = "fn a() -> u8 { 10 }\nfn b() -> u8 { 2 }\n";
        let t = "fn a() -> u8 { 1 }\nfn b() -> u8 { 20 }\n";
        assert!(!merge3(b.as_bytes(), o.as_bytes(), t.as_bytes())
            .expect("merge")
            .conflicts
            .is_empty());
        let m = node_merge("x.rs", b, o, t);
        assert!(m.conflicts.is_empty() && m.by_nodes);
        assert_eq!(text(&m), "fn a() -> u8 { 10 }\nfn b() -> u8 { 20 }\n");
    }

    #[test]
    fn functions_both_sides_add_at_one_place_are_both_kept() {
        let b = "use std::io;\n\nfn a() {}\n";
        let o = "use std::io;\n\nfn a() {}\n\nfn mine() {}\n";
        let t = "use std::io;\n\nfn a() {}\n\nfn theirs() {}\n";
        let m = node_merge("x.rs", b, o, t);
        assert!(m.conflicts.is_empty());
        assert_eq!(
            text(&m),
            "use std::io;\n\nfn a() {}\n\nfn mine() {}\n\nfn theirs() {}\n"
        );
    }

    #[test]
    fn impl_members_merge_one_by_one_and_the_same_member_conflicts() {
        let b = "impl P {\n    fn x(&self) {}\n    fn y(&self) {}\n}\n";
        let o = "impl P {\n    fn x(&self) { 1; }\n    fn y(&self) {}\n}\n";
        let t = "impl P {\n    fn x(&self) {}\n    fn y(&self) { 2; }\n}\n";
        let m = node_merge("x.rs", b, o, t);
        assert!(m.conflicts.is_empty());
        assert_eq!(
            text(&m),
            "impl P {\n    fn x(&self) { 1; }\n    fn y(&self) { 2; }\n}\n"
        );
        let t = "impl P {\n    fn x(&self) { 3; }\n    fn y(&self) {}\n}\n";
        let m = node_merge("x.rs", b, o, t);
        assert_eq!(
            m.nodes,
            vec![NodeConflict {
                kind: "function_item".into(),
                name: "x".into(),
                region: Region { start: 2, end: 2 },
                why: "changed on both sides",
            }]
        );
        assert_eq!(m.conflicts, vec![Region { start: 2, end: 2 }]);
    }

    #[test]
    fn python_methods_and_decorated_functions_merge_by_name() {
        let b = "import os\n\nclass C:\n    def f(self):\n        return 1\n    def g(self):\n        return 2\n\n@cache\ndef h():\n    pass\n";
        let o = b.replace("return 1", "return 10");
        let t = b
            .replace("return 2", "return 20")
            .replace("    pass", "    return 3");
        let m = node_merge("x.py", b, &o, &t);
        assert!(m.conflicts.is_empty(), "{:?}", m.nodes);
        assert_eq!(
            text(&m),
            b.replace("return 1", "return 10")
                .replace("return 2", "return 20")
                .replace("    pass", "    return 3")
        );
        let t = b.replace("return 1", "return 11");
        let m = node_merge("x.py", b, &o, &t);
        assert_eq!(m.nodes.len(), 1);
        assert_eq!(
            (m.nodes[0].kind.as_str(), m.nodes[0].name.as_str()),
            ("function_definition", "f")
        );
        assert_eq!(m.nodes[0].region, Region { start: 4, end: 5 });
    }

    #[test]
    fn typescript_exported_classes_and_go_methods_merge_by_name() {
        let b = "export class A {\n  one() { return 1; }\n  two() { return 2; }\n}\nexport const k = 1;\n";
        let o = b.replace("return 1", "return 10");
        let t = b.replace("return 2", "return 20").replace("k = 1", "k = 2");
        let m = node_merge("x.ts", b, &o, &t);
        assert!(m.conflicts.is_empty(), "{:?}", m.nodes);
        assert_eq!(
            text(&m),
            b.replace("return 1", "return 10")
                .replace("return 2", "return 20")
                .replace("k = 1", "k = 2")
        );
        let b =
            "package p\n\nfunc (s *S) A() int {\n\treturn 1\n}\nfunc B() int {\n\treturn 2\n}\n";
        let o = b.replace("return 1", "return 10");
        let t = b.replace("return 2", "return 20");
        let m = node_merge("x.go", b, &o, &t);
        assert!(m.conflicts.is_empty(), "{:?}", m.nodes);
        let t = b.replace("return 1", "return 11");
        let m = node_merge("x.go", b, &o, &t);
        assert_eq!(m.nodes[0].kind, "method_declaration");
        assert_eq!(m.nodes[0].name, "(s *S) A");
    }

    #[test]
    fn a_deleted_function_changed_on_the_other_side_is_a_conflict() {
        let b = "fn a() {}\nfn b() {}\n";
        let o = "fn b() {}\n";
        let t = "fn a() { 1; }\nfn b() {}\n";
        let m = node_merge("x.rs", b, o, t);
        assert_eq!(m.nodes.len(), 1);
        assert_eq!(m.nodes[0].why, "deleted on one side, changed on the other");
        // Deleted on one side and left alone on the other: gone.
        let m = node_merge("x.rs", b, o, b);
        assert!(m.conflicts.is_empty());
        assert_eq!(text(&m), "fn b() {}\n");
    }

    #[test]
    fn moved_declarations_or_unknown_languages_merge_by_line() {
        let b = "fn a() {}\nfn b() {}\n";
        let o = "fn b() {}\nfn a() {}\n";
        let t = "fn a() { 1; }\nfn b() {}\n";
        assert!(!node_merge("x.rs", b, o, t).by_nodes);
        assert!(!node_merge("x.txt", b, b, t).by_nodes);
    }

    #[test]
    fn refresh_keeps_a_clean_line_merge_and_merges_by_node_where_lines_conflict() {
        let b = "fn a() {\n    1\n}\nfn b() {\n    2\n}\n";
        // Both sides changed a, on lines apart: the line merge is clean and kept.
        let o = "fn a() {\n    // o\n    1\n}\nfn b() {\n    2\n}\n";
        let t = "fn a() {\n    1\n} // t\nfn b() {\n    2\n}\n";
        let m = merge3_file(
            "x.rs",
            b.as_bytes(),
            o.as_bytes(),
            t.as_bytes(),
            BothChanged::ByLine,
        )
        .expect("merge");
        assert!(m.conflicts.is_empty() && !m.by_nodes);
        let b = "fn a() -> u8 { 1 }\nfn b() -> u8 { 2 }\n";
        let o = "fn a() -> u8 { 10 }\nfn b() -> u8 { 2 }\n";
        let t = "fn a() -> u8 { 1 }\nfn b() -> u8 { 20 }\n";
        let m = merge3_file(
            "x.rs",
            b.as_bytes(),
            o.as_bytes(),
            t.as_bytes(),
            BothChanged::ByLine,
        )
        .expect("merge");
        assert!(m.conflicts.is_empty() && m.by_nodes);
    }
}
