//! Tests of the checker itself, on small made-up trees.

use std::collections::BTreeSet;

use crate::fake;
use crate::graph::check;
use crate::layer_ratchet::ratchet;
use crate::layers::layer_of;
use crate::layers::Layer;
use crate::scanner::module_of;
use crate::scanner::tokenize;
use crate::scanner::Tok;

/// A small clean tree: a front end over ops over txn over base.
pub(crate) fn clean_tree() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "lib.rs",
            "pub mod error;\npub mod txn;\npub mod ops;\npub mod render;\n",
        ),
        ("error.rs", "pub struct Error;\n"),
        (
            "txn/mod.rs",
            "mod store;\npub use store::find;\nuse crate::error::Error;\n",
        ),
        (
            "txn/store.rs",
            "use super::super::error::Error;\npub fn find() {}\n",
        ),
        (
            "ops/mod.rs",
            "use crate::{error::Error, txn::{self, find}};\npub fn run() { txn::find(); }\n",
        ),
        ("render/mod.rs", "pub fn plural() {}\n"),
        ("main.rs", "mod cli;\nfn main() { cli::main() }\n"),
        (
            "cli/mod.rs",
            "use git_astedit::ops;\n// use git_astedit::txn; (a comment)\n\
             const S: &str = \"git_astedit::txn::find\";\npub fn main() { ops::run(); }\n",
        ),
    ]
}

#[test]
fn checker_passes_a_clean_tree() {
    let report = check(&fake(&clean_tree()));
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
    assert!(report.cycles.is_empty());
}

#[test]
fn checker_fails_on_an_inserted_upward_import() {
    let mut tree = clean_tree();
    // txn (layer 4) reaching up to render (layer 7), in a grouped `pub(crate) use`.
    tree[2] = (
        "txn/mod.rs",
        "mod store;\npub use store::find;\n\npub(crate) use crate::{error::Error, render::plural};\n",
    );
    let report = check(&fake(&tree));
    let keys: Vec<&str> = report.violations.keys().map(String::as_str).collect();
    assert_eq!(keys, ["up src/txn/mod.rs -> render"]);
    let msg = &report.violations["up src/txn/mod.rs -> render"];
    assert!(
        msg.starts_with("txn (txn) imports render (render): up a layer"),
        "{msg}"
    );
    assert!(
        msg.contains("src/txn/mod.rs:4: crate::render::plural"),
        "{msg}"
    );
    assert_eq!(report.upward, 1);
    // And the ratchet turns it into a failure against today's (empty) baseline.
    let (new, gone) = ratchet(&report, &BTreeSet::new());
    assert_eq!(new.len(), 1);
    assert!(gone.is_empty());
}

#[test]
fn checker_fails_on_a_cycle_and_names_both_sides() {
    let mut tree = clean_tree();
    // A path in an expression through `super::`, closing txn::store → txn::journal → back.
    tree[2] = (
        "txn/mod.rs",
        "mod store;\nmod journal;\npub use store::find;\n",
    );
    tree.push(("txn/journal.rs", "pub fn log() { super::store::find(); }\n"));
    tree[3] = (
        "txn/store.rs",
        "pub fn find() {}\nfn f() {\n    let _ = crate::txn::journal::log;\n}\n",
    );
    let report = check(&fake(&tree));
    assert_eq!(
        report.cycles,
        [vec!["txn::journal".to_string(), "txn::store".to_string()]]
    );
    let keys: BTreeSet<&str> = report.violations.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        BTreeSet::from([
            "cycle src/txn/journal.rs -> txn::store",
            "cycle src/txn/store.rs -> txn::journal",
        ])
    );
    assert!(report.violations["cycle src/txn/store.rs -> txn::journal"]
        .contains("src/txn/store.rs:3: crate::txn::journal::log"));
}

/// The loop issue 36 found: ops::refresh took an engine function through ops::patch's
/// re-export while ops::patch called ops::refresh. Resolved to the defining file only,
/// the edge refresh → patch vanished and the loop with it; the facade counts too.
#[test]
fn checker_fails_on_a_loop_through_a_re_export() {
    let mut tree = clean_tree();
    tree[4] = (
        "ops/mod.rs",
        "pub mod patch;\npub mod refresh;\npub fn run() {}\n",
    );
    tree.push(("patch/mod.rs", "pub mod meta;\n"));
    tree.push(("patch/meta.rs", "pub fn preview_meta() {}\n"));
    tree.push((
        "ops/patch.rs",
        "pub use crate::patch::meta::preview_meta;\npub fn run() { super::refresh::record(); }\n",
    ));
    tree.push((
        "ops/refresh.rs",
        "pub fn record() {}\nfn again() { super::patch::preview_meta(); }\n",
    ));
    let report = check(&fake(&tree));
    assert_eq!(
        report.cycles,
        [vec!["ops::patch".to_string(), "ops::refresh".to_string()]]
    );
    let msg = &report.violations["cycle src/ops/refresh.rs -> ops::patch"];
    assert!(
        msg.contains("src/ops/refresh.rs:2: super::patch::preview_meta"),
        "{msg}"
    );
    // Taken from the engine itself, the name closes no loop.
    let last = tree.len() - 1;
    tree[last] = (
        "ops/refresh.rs",
        "pub fn record() {}\nfn again() { crate::patch::meta::preview_meta(); }\n",
    );
    let report = check(&fake(&tree));
    assert!(report.cycles.is_empty(), "{:?}", report.cycles);
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
}

#[test]
fn checker_fails_on_a_front_end_calling_txn_and_on_a_stale_baseline() {
    let mut tree = clean_tree();
    tree.push((
        "cli/undo.rs",
        "use git_astedit::txn;\npub fn run() { txn::find(); git_astedit::ops::run(); }\n",
    ));
    let report = check(&fake(&tree));
    let keys: BTreeSet<&str> = report.violations.keys().map(String::as_str).collect();
    // The `use` and the call through its alias (which lands in txn::store, the file
    // the re-export names).
    assert_eq!(
        keys,
        BTreeSet::from([
            "front src/cli/undo.rs -> txn",
            "front src/cli/undo.rs -> txn::store"
        ])
    );
    assert_eq!(report.front_end_reaches, 2);
    let baseline: BTreeSet<String> = keys
        .iter()
        .map(|k| k.to_string())
        .chain(["up src/txn/mod.rs -> render".to_string()])
        .collect();
    let (new, gone) = ratchet(&report, &baseline);
    assert!(new.is_empty(), "{new:?}");
    assert_eq!(gone, ["up src/txn/mod.rs -> render"]);
}

#[test]
fn checker_fails_on_a_printer_opening_the_repository() {
    let mut tree = clean_tree();
    tree.push(("repo.rs", "pub struct Repo;\n"));
    tree[5] = ("render/mod.rs", "pub fn plural(_: &crate::repo::Repo) {}\n");
    let report = check(&fake(&tree));
    let keys: Vec<&str> = report.violations.keys().map(String::as_str).collect();
    assert_eq!(keys, ["git src/render/mod.rs -> repo"]);
}

#[test]
fn tokenizer_skips_comments_strings_and_lifetimes() {
    let toks = tokenize(
        "/* crate::qa /* nested */ crate::qb */ let s = r#\"crate::qc \"q\"\"#; \
         let c = '\"'; let q = '\\''; let u = '\\u{27}'; fn f<'l>(x: &'l str) {} // crate::qd\nb\"crate::qe\"; crate::f",
    );
    let idents: Vec<String> = toks
        .iter()
        .filter_map(|(t, _)| match t {
            Tok::Ident(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    assert!(
        !idents
            .iter()
            .any(|s| ["qa", "qb", "qc", "qd", "qe"].contains(&s.as_str())),
        "{idents:?}"
    );
    assert_eq!(toks.last().map(|t| t.1), Some(2));
    assert!(idents.ends_with(&["crate".to_string(), "f".to_string()]));
}

#[test]
fn modules_of_files() {
    assert_eq!(module_of("txn/apply.rs"), "txn::apply");
    assert_eq!(module_of("txn/mod.rs"), "txn");
    assert_eq!(module_of("cli/mcp.rs"), "cli::mcp");
    assert_eq!(module_of("cli/mcp/tools.rs"), "cli::mcp::tools");
    assert_eq!(module_of("lib.rs"), "");
    assert_eq!(layer_of("cli::mcp::tools"), Some(Layer::FrontEnd));
    assert_eq!(layer_of("ops::refresh::scan"), Some(Layer::Ops));
    assert_eq!(layer_of(""), Some(Layer::Base), "the library root's row");
    assert_eq!(layer_of("nowhere"), None, "an unlisted module has no layer");
}
