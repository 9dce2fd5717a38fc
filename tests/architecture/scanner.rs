//! The scanner: a hand-written tokenizer (comments, strings and char literals dropped)
//! and the reading of a file's use trees and paths into absolute crate paths.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use crate::SourceFile;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// Tokens with their 1-based line, comments, strings and char literals dropped.
pub(crate) fn tokenize(src: &str) -> Vec<(Tok, usize)> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let n = b.len();
    while i < n {
        let c = b[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && i + 1 < n && b[i + 1] == '/' {
            while i < n && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && i + 1 < n && b[i + 1] == '*' {
            let mut depth = 0;
            while i < n {
                if b[i] == '/' && i + 1 < n && b[i + 1] == '*' {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && i + 1 < n && b[i + 1] == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(&b, i + 1, &mut line);
        } else if (c == 'r' || c == 'b') && raw_string_start(&b, i).is_some() {
            let (hashes, start) = raw_string_start(&b, i).expect("checked");
            i = start;
            loop {
                if i >= n {
                    break;
                }
                if b[i] == '"' && (0..hashes).all(|k| b.get(i + 1 + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                if b[i] == '\n' {
                    line += 1;
                }
                i += 1;
            }
        } else if c == 'b' && i + 1 < n && b[i + 1] == '"' {
            i = skip_string(&b, i + 2, &mut line);
        } else if c == '\'' || (c == 'b' && i + 1 < n && b[i + 1] == '\'') {
            let q = if c == 'b' { i + 1 } else { i };
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if b.get(q + 1) == Some(&'\\') {
                // The escaped character may itself be a quote ('\'').
                let mut j = q + 3;
                while j < n && b[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if b.get(q + 2) == Some(&'\'') {
                i = q + 3;
            } else {
                // A lifetime or label: skip the quote, the identifier follows.
                i = q + 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < n && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            let word: String = b[start..i].iter().collect();
            // Raw identifiers: r#type.
            out.push((Tok::Ident(word), line));
        } else if c.is_ascii_digit() {
            while i < n && (b[i].is_alphanumeric() || b[i] == '_' || b[i] == '.') {
                // Stop a range `0..n` at its dots.
                if b[i] == '.' && b.get(i + 1) == Some(&'.') {
                    break;
                }
                i += 1;
            }
        } else if c == ':' && i + 1 < n && b[i + 1] == ':' {
            out.push((Tok::Path, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// `r"`, `r#"`, `br#"` …: the number of hashes and the index after the opening quote.
pub(crate) fn raw_string_start(b: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if b.get(j) == Some(&'b') {
        j += 1;
    }
    if b.get(j) != Some(&'r') {
        return None;
    }
    // An identifier ending in r or b (`for"` cannot occur, but `bar"` neither).
    if i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while b.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (b.get(j) == Some(&'"')).then_some((hashes, j + 1))
}

pub(crate) fn skip_string(b: &[char], mut i: usize, line: &mut usize) -> usize {
    while i < b.len() {
        match b[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            '\n' => {
                *line += 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    i
}

/// The module a file under `src/` holds.
pub(crate) fn module_of(path: &str) -> String {
    let p = path.strip_suffix(".rs").unwrap_or(path);
    let p = p.strip_suffix("/mod").unwrap_or(p);
    match p {
        "lib" => String::new(),
        p => p.replace('/', "::"),
    }
}

/// Whether the file belongs to the binary crate (its `crate::` is `main.rs`).
pub(crate) fn in_binary(path: &str) -> bool {
    path == "main.rs" || path.starts_with("cli/")
}

pub(crate) fn join(module: &str, seg: &str) -> String {
    if module.is_empty() {
        seg.to_string()
    } else {
        format!("{module}::{seg}")
    }
}

pub(crate) fn parent(module: &str) -> String {
    match module.rsplit_once("::") {
        Some((p, _)) => p.to_string(),
        None => String::new(),
    }
}

/// A reference to a crate item, as written, resolved to an absolute path.
#[derive(Clone, Debug)]
pub(crate) struct Ref {
    pub(crate) line: usize,
    /// The path as written (`super::store::find`, `crate::render::plural`).
    pub(crate) written: String,
    /// Absolute segments from the crate root (`["txn", "store", "find"]`).
    pub(crate) abs: Vec<String>,
}

/// What one file says: the imports (use trees, one leaf each) and the other paths.
#[derive(Default, Debug)]
pub(crate) struct Scanned {
    pub(crate) refs: Vec<Ref>,
    /// Names bound by `use` (alias → absolute path), for the module's re-exports and
    /// the file's own expression paths.
    pub(crate) aliases: BTreeMap<String, Vec<String>>,
}

/// Context for resolving the first segment of a path.
pub(crate) struct Resolver<'a> {
    /// The module of the file, plus the inline modules around the token.
    pub(crate) file_module: &'a str,
    pub(crate) binary: bool,
    pub(crate) modules: &'a BTreeSet<String>,
}

impl Resolver<'_> {
    /// Resolves written segments from module `here`; `None` for an external path.
    fn absolute(
        &self,
        here: &str,
        segs: &[String],
        aliases: &BTreeMap<String, Vec<String>>,
    ) -> Option<Vec<String>> {
        let first = segs.first()?;
        let mut base: String;
        let mut rest = &segs[1..];
        match first.as_str() {
            "crate" => base = String::new(),
            "git_astedit" if self.binary => base = String::new(),
            "self" => base = here.to_string(),
            "super" => {
                base = parent(here);
                while rest.first().map(String::as_str) == Some("super") {
                    base = parent(&base);
                    rest = &rest[1..];
                }
            }
            name => {
                // Through an alias only when it names a module (`use crate::txn;` then
                // `txn::stage`): an alias of an item adds nothing to its `use`.
                if let Some(target) = aliases
                    .get(name)
                    .filter(|t| self.modules.contains(&t.join("::")))
                {
                    let mut abs = target.clone();
                    abs.extend(rest.iter().cloned());
                    return Some(abs);
                }
                // A child module named directly (2018 uniform paths).
                let child = join(here, name);
                if self.modules.contains(&child)
                    || self.modules.contains(&join(self.file_module, name))
                {
                    base = if self.modules.contains(&child) {
                        child
                    } else {
                        join(self.file_module, name)
                    };
                } else {
                    return None;
                }
            }
        }
        let mut abs: Vec<String> = if base.is_empty() {
            Vec::new()
        } else {
            base.split("::").map(str::to_string).collect()
        };
        abs.extend(rest.iter().filter(|s| *s != "self").cloned());
        Some(abs)
    }
}

pub(crate) fn scan_file(file: &SourceFile, modules: &BTreeSet<String>) -> Scanned {
    let toks = tokenize(&file.text);
    let file_module = module_of(&file.path);
    let resolver = Resolver {
        file_module: &file_module,
        binary: in_binary(&file.path),
        modules,
    };
    let mut out = Scanned::default();
    // First pass: the use trees (they bind aliases used by the second).
    let mut uses: Vec<(usize, String, Vec<String>, Option<String>)> = Vec::new();
    {
        let mut inline: Vec<(String, usize)> = Vec::new();
        let mut depth = 0usize;
        let mut i = 0;
        while i < toks.len() {
            match &toks[i].0 {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if inline.last().is_some_and(|(_, d)| *d == depth) {
                        inline.pop();
                    }
                }
                Tok::Ident(w) if w == "mod" => {
                    if let (Some((Tok::Ident(name), _)), Some((Tok::Punct('{'), _))) =
                        (toks.get(i + 1), toks.get(i + 2))
                    {
                        inline.push((name.clone(), depth));
                    }
                }
                Tok::Ident(w) if w == "use" => {
                    let here = inline
                        .iter()
                        .fold(file_module.clone(), |m, (name, _)| join(&m, name));
                    let mut leaves = Vec::new();
                    let end = parse_use_tree(&toks, i + 1, Vec::new(), &mut leaves);
                    for (segs, alias, line) in leaves {
                        uses.push((line, here.clone(), segs, alias));
                    }
                    i = end;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
    let no_aliases = BTreeMap::new();
    for (line, here, segs, alias) in &uses {
        let Some(abs) = resolver.absolute(here, segs, &no_aliases) else {
            continue;
        };
        let bound = alias
            .clone()
            .or_else(|| segs.last().cloned())
            .filter(|n| n != "*" && n != "_");
        if let Some(name) = bound {
            out.aliases.insert(name, abs.clone());
        }
        out.refs.push(Ref {
            line: *line,
            written: segs.join("::"),
            abs,
        });
    }
    // Second pass: every other path of two segments or more.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Tok::Ident(w) if w == "use" => {
                // Already read; skip to its end.
                while i < toks.len() && toks[i].0 != Tok::Punct(';') {
                    i += 1;
                }
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Punct('{'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push((name.clone(), depth));
                }
            }
            Tok::Ident(first) => {
                // The start of a path: not preceded by `::` (a later segment).
                let preceded = i > 0 && toks[i - 1].0 == Tok::Path;
                if !preceded && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path) {
                    let line = toks[i].1;
                    let mut segs = vec![first.clone()];
                    let mut j = i + 1;
                    while toks.get(j).map(|t| &t.0) == Some(&Tok::Path) {
                        match toks.get(j + 1) {
                            Some((Tok::Ident(s), _)) => {
                                segs.push(s.clone());
                                j += 2;
                            }
                            _ => break,
                        }
                    }
                    let here = inline
                        .iter()
                        .fold(file_module.clone(), |m, (name, _)| join(&m, name));
                    if let Some(abs) = resolver.absolute(&here, &segs, &out.aliases) {
                        out.refs.push(Ref {
                            line,
                            written: segs.join("::"),
                            abs,
                        });
                    }
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Reads one use tree from `i`; pushes each leaf (segments, `as` alias, line); returns
/// the index after the closing `;` (or `}`/`,` for a nested tree).
pub(crate) fn parse_use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    mut prefix: Vec<String>,
    leaves: &mut Vec<(Vec<String>, Option<String>, usize)>,
) -> usize {
    let mut line;
    if toks.get(i).map(|t| &t.0) == Some(&Tok::Path) {
        // `use ::std::…`: an external crate.
        i += 1;
        prefix.push("::".into());
    }
    loop {
        match toks.get(i) {
            Some((Tok::Ident(s), l)) if s == "as" => {
                let alias = match toks.get(i + 1) {
                    Some((Tok::Ident(a), _)) => Some(a.clone()),
                    _ => None,
                };
                leaves.push((prefix, alias, *l));
                return i + 2;
            }
            Some((Tok::Ident(s), l)) => {
                line = *l;
                prefix.push(s.clone());
                i += 1;
                if toks.get(i).map(|t| &t.0) == Some(&Tok::Path) {
                    i += 1;
                    continue;
                }
                if !matches!(toks.get(i), Some((Tok::Ident(a), _)) if a == "as") {
                    leaves.push((prefix, None, line));
                    return i;
                }
            }
            Some((Tok::Punct('*'), l)) => {
                prefix.push("*".into());
                leaves.push((prefix, None, *l));
                return i + 1;
            }
            Some((Tok::Punct('{'), _)) => {
                i += 1;
                loop {
                    match toks.get(i) {
                        None => return i,
                        Some((Tok::Punct('}'), _)) => return i + 1,
                        Some((Tok::Punct(','), _)) => i += 1,
                        Some(_) => {
                            let before = i;
                            i = parse_use_tree(toks, i, prefix.clone(), leaves);
                            if i == before {
                                i += 1;
                            }
                        }
                    }
                }
            }
            _ => return i,
        }
    }
}
