//! The module graph and the rules over it: edges through re-exports, Tarjan's cycles,
//! upward, front-end and printer imports.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use crate::layers::is_front_end;
use crate::layers::layer_of;
use crate::layers::Layer;
use crate::scanner::module_of;
use crate::scanner::scan_file;
use crate::scanner::Scanned;
use crate::SourceFile;

/// One import from a file's module to another module.
#[derive(Clone, Debug)]
pub(crate) struct Edge {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) written: String,
    pub(crate) from: String,
    pub(crate) to: String,
}

/// What the checker found.
#[derive(Default, Debug)]
pub(crate) struct Report {
    /// Baseline key → the first occurrence, for the message.
    pub(crate) violations: BTreeMap<String, String>,
    /// Strongly connected components of more than one module.
    pub(crate) cycles: Vec<Vec<String>>,
    pub(crate) upward: usize,
    pub(crate) front_end_reaches: usize,
}

/// The module a resolved path lands in: follow re-exports to the defining file,
/// then take the deepest known module the path names.
pub(crate) fn target_module(
    abs: &[String],
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
    depth: usize,
) -> String {
    let mut best = String::new();
    let mut len = 0;
    for k in 1..=abs.len() {
        let m = abs[..k].join("::");
        if modules.contains(&m) {
            best = m;
            len = k;
        }
    }
    if depth < 8 {
        if let Some(name) = abs.get(len) {
            if let Some(target) = reexports.get(&best).and_then(|r| r.get(name)) {
                let mut next = target.clone();
                next.extend(abs[len + 1..].iter().cloned());
                if next != abs {
                    return target_module(&next, modules, reexports, depth + 1);
                }
            }
        }
    }
    best
}

/// The facades a resolved path goes through: each module whose re-export
/// [`target_module`] follows, in order.
pub(crate) fn facades(
    abs: &[String],
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut path = abs.to_vec();
    for _ in 0..8 {
        let Some(len) = (1..=path.len())
            .rev()
            .find(|k| modules.contains(&path[..*k].join("::")))
        else {
            break;
        };
        let best = path[..len].join("::");
        let Some(target) = path
            .get(len)
            .and_then(|name| reexports.get(&best).and_then(|r| r.get(name)))
        else {
            break;
        };
        let mut next = target.clone();
        next.extend(path[len + 1..].iter().cloned());
        if next == path {
            break;
        }
        out.push(best);
        path = next;
    }
    out
}

pub(crate) fn is_descendant(module: &str, of: &str) -> bool {
    of.is_empty() || module.starts_with(&format!("{of}::"))
}

/// The module graph's edges (a module's edges into its own submodules left out).
pub(crate) fn edges(files: &[SourceFile]) -> Vec<Edge> {
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&f.path)).collect();
    let scanned: Vec<(String, Scanned)> = files
        .iter()
        .map(|f| (f.path.clone(), scan_file(f, &modules)))
        .collect();
    let reexports: BTreeMap<String, BTreeMap<String, Vec<String>>> = scanned
        .iter()
        .map(|(p, s)| (module_of(p), s.aliases.clone()))
        .collect();
    let mut out = Vec::new();
    for (path, s) in &scanned {
        let from = module_of(path);
        for r in &s.refs {
            let to = target_module(&r.abs, &modules, &reexports, 0);
            // A name taken through another module's re-export depends on that
            // module too (a sibling reaching back through a facade closes a loop the
            // defining file alone would hide); a parent is its children's facade.
            let through = facades(&r.abs, &modules, &reexports)
                .into_iter()
                .filter(|f| !is_descendant(&from, f) && !is_descendant(f, &from));
            for to in through.chain([to]) {
                if to == from || is_descendant(&to, &from) {
                    continue;
                }
                out.push(Edge {
                    file: path.clone(),
                    line: r.line,
                    written: r.written.clone(),
                    from: from.clone(),
                    to,
                });
            }
        }
    }
    out
}

/// Tarjan's strongly connected components, each sorted, in a stable order.
pub(crate) fn tarjan(
    nodes: &BTreeSet<String>,
    adj: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<Vec<String>> {
    struct State<'a> {
        adj: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        on_stack: BTreeSet<&'a str>,
        stack: Vec<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(ws) = s.adj.get(v) {
            for w in ws {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on_stack.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().expect("on the stack");
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            comp.sort();
            s.out.push(comp);
        }
    }
    let mut s = State {
        adj,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        on_stack: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// Runs every rule over a source tree.
pub(crate) fn check(files: &[SourceFile]) -> Report {
    let mut report = Report::default();
    let edges = edges(files);
    let nodes: BTreeSet<String> = files.iter().map(|f| module_of(&f.path)).collect();
    let mut adj: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in &edges {
        adj.entry(e.from.clone()).or_default().insert(e.to.clone());
    }
    for m in &nodes {
        if layer_of(m).is_none() {
            report.violations.insert(
                format!("unlisted module {m}"),
                format!("module {m} has no row in LAYERS (tests/architecture/layers.rs)"),
            );
        }
    }
    let comps: Vec<Vec<String>> = tarjan(&nodes, &adj)
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect();
    let comp_of: BTreeMap<&str, usize> = comps
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.iter().map(move |m| (m.as_str(), i)))
        .collect();
    // Keyed by kind, file and imported module (a baseline line); each key lists every
    // line and name of the file that makes the import.
    let mut found: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    let mut up = BTreeSet::new();
    let mut front = BTreeSet::new();
    for e in &edges {
        let (Some(lf), Some(lt)) = (layer_of(&e.from), layer_of(&e.to)) else {
            continue;
        };
        let at = format!("src/{}:{}: {}", e.file, e.line, e.written);
        let edge = format!("src/{} -> {}", e.file, e.to);
        let mut add = |kind: &str, why: String| {
            let entry = found
                .entry(format!("{kind} {edge}"))
                .or_insert_with(|| (why, Vec::new()));
            if !entry.1.contains(&at) {
                entry.1.push(at.clone());
            }
        };
        if lt > lf {
            up.insert((e.file.clone(), e.written.clone()));
            add(
                "up",
                format!(
                    "{} ({}) imports {} ({}): up a layer",
                    e.from,
                    lf.name(),
                    e.to,
                    lt.name()
                ),
            );
        }
        if let (Some(a), Some(b)) = (comp_of.get(e.from.as_str()), comp_of.get(e.to.as_str())) {
            if a == b {
                add(
                    "cycle",
                    format!(
                        "{} imports {}: closes a cycle of {}",
                        e.from,
                        e.to,
                        comps[*a].join(", ")
                    ),
                );
            }
        }
        // DESIGN §7: rendering never touches git (the repository's settings reach a
        // printer as plain values).
        if lf == Layer::Render && (lt == Layer::Txn || e.to == "repo" || e.to.starts_with("repo::"))
        {
            add(
                "git",
                format!(
                    "printer {} imports {}: rendering never touches git",
                    e.from, e.to
                ),
            );
        }
        if is_front_end(&e.from) && matches!(lt, Layer::Txn | Layer::Engine) {
            front.insert((e.file.clone(), e.written.clone()));
            add(
                "front",
                format!(
                    "front end {} calls {} ({}) directly: go through ops",
                    e.from,
                    e.to,
                    lt.name()
                ),
            );
        }
    }
    for (key, (why, mut at)) in found {
        at.sort_by_key(|a| {
            let mut parts = a.splitn(3, ':');
            let file = parts.next().unwrap_or_default().to_string();
            let line: usize = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
            (file, line)
        });
        report
            .violations
            .insert(key, format!("{why}\n      {}", at.join("\n      ")));
    }
    report.upward = up.len();
    report.front_end_reaches = front.len();
    report.cycles = comps;
    report
}
