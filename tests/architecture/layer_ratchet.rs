//! The layer baseline (`tests/architecture/baseline.txt`), the ratchet against it, the
//! tests over today's tree and the figures.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use crate::graph::check;
use crate::graph::Report;
use crate::layers::layer_of;
use crate::layers::Layer;
use crate::read_src;
use crate::scanner::module_of;

pub(crate) fn baseline_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/architecture/baseline.txt")
}

pub(crate) fn read_baseline() -> BTreeSet<String> {
    std::fs::read_to_string(baseline_path())
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The differences between a report and a baseline: new violations, entries gone.
pub(crate) fn ratchet(report: &Report, baseline: &BTreeSet<String>) -> (Vec<String>, Vec<String>) {
    let new = report
        .violations
        .iter()
        .filter(|(k, _)| !baseline.contains(*k))
        .map(|(k, v)| format!("{v}\n    baseline key: {k}"))
        .collect();
    let gone = baseline
        .iter()
        .filter(|k| !report.violations.contains_key(*k))
        .cloned()
        .collect();
    (new, gone)
}

pub(crate) const BASELINE_HEADER: &str = "\
# Known violations of the layer table in tests/architecture/layers.rs, on today's code.
# The architecture test fails on a violation not listed here and on a line that no
# longer occurs: remove lines as the redesign (issue 28) removes violations; never add.
# `ARCH_BASELINE=write cargo test --test architecture layers` drops the lines that no
# longer occur (it never adds one).
# Kinds: `up` an import up a layer; `cycle` an import inside a cycle of modules;
# `front` a front end calling txn or an engine directly; `git` a printer importing
# repo or txn. Then the importing file and the imported module (the test's failure
# message names every line and name).
";

#[test]
fn layers_hold_against_the_baseline() {
    let report = check(&read_src());
    if std::env::var("ARCH_BASELINE").as_deref() == Ok("write") {
        // Only ever shrinks: the lines still occurring, nothing new.
        let old = read_baseline();
        let mut text = BASELINE_HEADER.to_string();
        for k in report.violations.keys().filter(|k| old.contains(*k)) {
            writeln!(text, "{k}").expect("write to a string");
        }
        std::fs::create_dir_all(baseline_path().parent().expect("a parent")).expect("mkdir");
        std::fs::write(baseline_path(), text).expect("write the baseline");
        return;
    }
    let (new, gone) = ratchet(&report, &read_baseline());
    let mut msg = String::new();
    if !new.is_empty() {
        writeln!(
            msg,
            "{} new architecture violation(s) (not in tests/architecture/baseline.txt):",
            new.len()
        )
        .expect("write to a string");
        for v in &new {
            writeln!(msg, "  {v}").expect("write to a string");
        }
    }
    if !gone.is_empty() {
        writeln!(
            msg,
            "{} baseline entr(y/ies) no longer occur: remove them from \
             tests/architecture/baseline.txt (the list only shrinks):",
            gone.len()
        )
        .expect("write to a string");
        for g in &gone {
            writeln!(msg, "  {g}").expect("write to a string");
        }
    }
    assert!(msg.is_empty(), "{msg}");
}

/// Every module has a layer, and the front-end rule of `tests/integration/contract.rs`
/// (no gix calls, no processes in `src/cli/`) is still there beside this one.
#[test]
fn every_module_has_a_layer_and_the_gix_rule_stays() {
    for f in read_src() {
        let m = module_of(&f.path);
        assert!(layer_of(&m).is_some(), "{m} ({}) has no layer", f.path);
    }
    let contract = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/contract.rs"),
    )
    .expect("read tests/integration/contract.rs");
    assert!(
        contract.contains("fn front_ends_hold_no_gix_calls_and_start_no_processes()"),
        "the front ends' no-gix test is gone from tests/integration/contract.rs"
    );
}

/// Prints the figures of issue 28's closing note for today's tree.
#[test]
#[ignore = "prints figures; run with --ignored --nocapture"]
fn figures() {
    let files = read_src();
    let mut per: BTreeMap<Layer, (usize, usize)> = BTreeMap::new();
    for f in &files {
        let l = layer_of(&module_of(&f.path)).expect("a layer");
        let e = per.entry(l).or_default();
        e.0 += 1;
        e.1 += f.text.lines().count();
    }
    println!("layer               files  lines");
    for l in Layer::ALL {
        let (n, lines) = per.get(&l).copied().unwrap_or_default();
        println!("{:<18} {:>6} {:>6}", l.name(), n, lines);
    }
    let mut per_module: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for f in &files {
        let m = module_of(&f.path);
        let top = if m.starts_with("cli::mcp") {
            "cli::mcp".to_string()
        } else {
            m.split("::").next().unwrap_or_default().to_string()
        };
        let e = per_module.entry(top).or_default();
        e.0 += 1;
        e.1 += f.text.lines().count();
    }
    println!("top-level module    files  lines");
    for (m, (n, lines)) in &per_module {
        let m = if m.is_empty() { "(lib.rs)" } else { m };
        println!("{m:<18} {n:>6} {lines:>6}");
    }
    let report = check(&files);
    let kinds = |kind: &str| {
        report
            .violations
            .keys()
            .filter(|k| k.starts_with(&format!("{kind} ")))
            .count()
    };
    println!(
        "baseline lines: {} up, {} cycle, {} front, {} git",
        kinds("up"),
        kinds("cycle"),
        kinds("front"),
        kinds("git")
    );
    println!(
        "cycles (SCCs of more than one module): {}",
        report.cycles.len()
    );
    for c in &report.cycles {
        println!("  {} modules: {}", c.len(), c.join(", "));
    }
    println!("upward imports (file, name): {}", report.upward);
    println!(
        "front-end calls of txn/engines (file, name): {}",
        report.front_end_reaches
    );
    for v in report.violations.values() {
        println!("  {v}");
    }
}
