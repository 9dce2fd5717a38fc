//! The workspace's crates against the guide's layer table (issue 49): `cargo metadata`
//! lists each member's dependencies, and a crate may depend only on crates of a lower
//! layer; the façade `astedit` on `astedit-ops` alone. The compiler refuses an import
//! of a crate not depended on; this keeps the manifests themselves in order.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;

/// Each member and its layer, as the design chapter's Layout table gives them.
const CRATES: &[(&str, u8)] = &[
    ("astedit-base", 1),
    ("astedit-repo", 2),
    ("astedit-engine", 3),
    ("astedit-txn", 4),
    ("astedit-report", 5),
    ("astedit-ops", 6),
    ("astedit-render", 7),
    ("git-astedit", 8),
    ("astedit", 8),
];

/// The members and the members each depends on (normal and build dependencies; a
/// test may use any crate), from `cargo metadata`.
fn members() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .filter_map(|d| d["name"].as_str())
                .filter(|d| names.contains(*d))
                .map(str::to_string)
                .collect();
            (p["name"].as_str().unwrap_or_default().to_string(), deps)
        })
        .collect()
}

fn layer(name: &str) -> Option<u8> {
    CRATES.iter().find(|(n, _)| *n == name).map(|(_, l)| *l)
}

#[test]
fn every_crate_depends_only_on_crates_below_it() {
    let members = members();
    let listed: BTreeSet<&str> = CRATES.iter().map(|(n, _)| *n).collect();
    let found: BTreeSet<&str> = members.keys().map(String::as_str).collect();
    assert_eq!(
        found, listed,
        "the workspace's members are not the layer table's"
    );
    let mut problems = Vec::new();
    for (name, deps) in &members {
        let own = layer(name).expect("listed");
        for dep in deps {
            let theirs = layer(dep).expect("listed");
            if theirs >= own {
                problems.push(format!(
                    "{name} (layer {own}) depends on {dep} (layer {theirs})"
                ));
            }
        }
    }
    let facade: Vec<&str> = members["astedit"].iter().map(String::as_str).collect();
    if facade != ["astedit-ops"] {
        problems.push(format!(
            "the façade astedit depends on {facade:?}, not astedit-ops alone"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_design_chapter_names_every_crate_with_its_layer() {
    let design =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/design.md"))
            .expect("read the design chapter");
    for (name, layer) in CRATES {
        let row = format!("{layer} {name} ");
        assert!(
            design.lines().any(|l| l.starts_with(&row)),
            "docs/src/design.md's Layout table has no row `{row}…`"
        );
    }
}
