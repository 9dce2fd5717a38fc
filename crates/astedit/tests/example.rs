//! `examples/edit_tool.rs`, built and run as a harness would run it: against a real
//! repository, its output and the bytes on disk checked.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

mod common;
use common::git;
use common::repo_with;

/// The example's binary: `cargo test` builds every example of the package beside the
/// test binaries (`target/debug/examples/`); when a narrower command left it out, it is
/// built here.
fn example() -> PathBuf {
    let deps = std::env::current_exe().expect("test binary");
    let profile = deps.parent().and_then(Path::parent).expect("target/debug");
    let exe = profile
        .join("examples")
        .join(format!("edit_tool{}", std::env::consts::EXE_SUFFIX));
    if !exe.exists() {
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--quiet",
                "-p",
                "astedit",
                "--example",
                "edit_tool",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo");
        assert!(status.success(), "cargo build --example edit_tool");
    }
    exe
}

fn repo() -> tempfile::TempDir {
    repo_with(&[("app.py", "x = 1\nprint(x)\n")])
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(example())
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("run the example");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("utf-8");
    (out.status.success(), text(out.stdout), text(out.stderr))
}

#[test]
fn the_edit_tool_stages_shows_applies_and_undoes_an_edit() {
    let dir = repo();
    let path = dir.path().to_str().unwrap();
    let (ok, out, err) = run(&[path, "app.py", "print(x)", "print(x + 1)"]);
    assert!(ok, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("staged "), "{out}");
    assert!(lines[0].ends_with(": 1 replacement in 1 file"), "{out}");
    assert!(out.contains("\n-print(x)\n+print(x + 1)\n"), "{out}");
    assert!(out.contains("\napplied "), "{out}");
    assert!(out.contains(": wrote app.py\n"), "{out}");
    assert!(out.contains(": restored app.py\n"), "{out}");
    // The journal, newest first, with the harness session's identity.
    let journal: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("journal: "))
        .collect();
    assert_eq!(journal.len(), 3, "{out}");
    for (line, event) in journal.iter().zip(["undone", "applied", "staged"]) {
        assert!(line.starts_with(&format!("journal: {event} ")), "{line}");
        assert!(line.contains(" by edit-tool-example/session:"), "{line}");
    }
    // Undone: the file is as committed, and the preview can be applied again.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.py")).unwrap(),
        "x = 1\nprint(x)\n"
    );
    assert_eq!(git(dir.path(), &["status", "--porcelain"]), "");
}

#[test]
fn the_edit_tool_with_only_a_repository_stages_a_rules_fix() {
    let dir = repo();
    let (ok, out, err) = run(&[dir.path().to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("\n-x = 1\n-print(x)\n+y = 1\n+print(y)\n"),
        "{out}"
    );
    assert!(out.contains(": wrote app.py\n"), "{out}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.py")).unwrap(),
        "x = 1\nprint(x)\n"
    );
}

#[test]
fn the_edit_tool_reports_a_bad_edit_with_its_code_and_changes_nothing() {
    let dir = repo();
    let path = dir.path().to_str().unwrap();
    let (ok, out, err) = run(&[path, "app.py", "not there", "y"]);
    assert!(!ok, "{out}");
    assert!(err.starts_with("edit_tool: error["), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.py")).unwrap(),
        "x = 1\nprint(x)\n"
    );
    assert_eq!(git(dir.path(), &["for-each-ref", "refs/astedit/"]), "");
}
