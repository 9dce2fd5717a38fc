//! Integration tests: `patch`.
//!
//! The scenario suites (the two external ones under `../shared/acceptance/apply-patch`
//! and ours under `fixtures/patch`) share one layout: `input/`, `patch.txt`,
//! `expected/`, and for ours an optional `assert.txt`. The engine runs in-process for
//! every scenario; a few tests drive the binary in a real repository for the wiring.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use git_astedit::change::ChangeSet;
use git_astedit::change::FileMode;
use git_astedit::error::Classify;
use git_astedit::patch;

#[allow(unused_imports)]
use crate::util::TestRepo;

/// The external suites, found by path (never copied into the repository).
fn acceptance_dir() -> PathBuf {
    match std::env::var_os("ASTEDIT_ACCEPTANCE") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/acceptance/apply-patch"),
    }
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/patch")
}

/// Every regular file under `dir` with its bytes; empty folders do not count.
fn tree_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).expect("under root");
                let rel = rel.to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in tree_files(from) {
        let dest = to.join(&rel);
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
        std::fs::write(dest, bytes).expect("write");
    }
}

/// Writes a change set into a folder: what `txn::apply` will do, minus the safety.
fn write_changes(root: &Path, changes: &ChangeSet) {
    use std::os::unix::fs::PermissionsExt;
    for c in &changes.changes {
        let p = root.join(&c.path);
        match &c.after {
            Some(f) => {
                std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
                std::fs::write(&p, &f.bytes).expect("write");
                let mode = if f.mode == FileMode::Executable {
                    0o755
                } else {
                    0o644
                };
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("chmod");
            }
            None => std::fs::remove_file(&p).expect("remove"),
        }
    }
}

/// What a scenario's optional `assert.txt` demands, one `key: value` a line.
#[derive(Default)]
struct Asserts {
    error: Option<String>,
    message: Vec<String>,
    levels: Vec<String>,
    drifted: Option<usize>,
}

fn read_asserts(dir: &Path) -> Asserts {
    let mut a = Asserts::default();
    let Ok(text) = std::fs::read_to_string(dir.join("assert.txt")) else {
        return a;
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (k, v) = line
            .split_once(':')
            .expect("assert.txt lines are `key: value`");
        let v = v.trim().to_string();
        match k.trim() {
            "error" => a.error = Some(v),
            "message-contains" => a.message.push(v),
            "level" => a.levels.push(v),
            "drifted" => a.drifted = Some(v.parse().expect("drifted: N")),
            other => panic!("unknown assert key {other} in {}", dir.display()),
        }
    }
    a
}

/// Runs one scenario through the engine; returns a failure description.
fn run_scenario(dir: &Path, refuse_expected: bool) -> Result<(), String> {
    let patch_text = std::fs::read(dir.join("patch.txt")).map_err(|e| e.to_string())?;
    let patch_text = String::from_utf8_lossy(&patch_text).into_owned();
    let input = tree_files(&dir.join("input"));
    let expected = tree_files(&dir.join("expected"));
    let asserts = read_asserts(dir);
    let must_fail = asserts.error.is_some() || (refuse_expected && input == expected);

    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    copy_tree(&dir.join("input"), work.path());
    let tree = patch::FsTree::new(work.path());
    let result = patch::resolve_text(&patch_text, &tree, "");
    let message;
    match &result {
        Ok(r) => {
            if must_fail {
                return Err(format!(
                    "expected a refusal, got {} change(s)",
                    r.changes.changes.len()
                ));
            }
            write_changes(work.path(), &r.changes);
            let report = serde_json::to_value(&r.report).map_err(|e| e.to_string())?;
            message = report.to_string();
            for level in &asserts.levels {
                if !r.report.chunks().any(|c| c.level.name() == level) {
                    return Err(format!("no chunk placed at level {level}: {message}"));
                }
            }
            if let Some(n) = asserts.drifted {
                let got: usize = r.report.chunks().map(|c| c.drifted.len()).sum();
                if got != n {
                    return Err(format!("expected {n} drifted lines, got {got}: {message}"));
                }
            }
        }
        Err(e) => {
            message = e.to_string();
            if !must_fail {
                return Err(format!("refused ({}): {e}", e.code()));
            }
            if message.trim().is_empty() {
                return Err("refused without a message".into());
            }
            if let Some(code) = &asserts.error {
                if e.code() != code {
                    return Err(format!("expected error {code}, got {}: {e}", e.code()));
                }
            }
        }
    }
    if std::env::var_os("ASTEDIT_VERBOSE").is_some() {
        eprintln!("== {}\n{message}", dir.display());
    }
    for want in &asserts.message {
        if !message.contains(want.as_str()) {
            return Err(format!("message lacks `{want}`: {message}"));
        }
    }
    let got = tree_files(work.path());
    if got != expected {
        let mut diff = String::new();
        for (k, v) in &expected {
            match got.get(k) {
                None => diff.push_str(&format!("  missing {k}\n")),
                Some(g) if g != v => diff.push_str(&format!(
                    "  {k}: got {:?}, want {:?}\n",
                    String::from_utf8_lossy(g),
                    String::from_utf8_lossy(v)
                )),
                _ => {}
            }
        }
        for k in got.keys().filter(|k| !expected.contains_key(*k)) {
            diff.push_str(&format!("  unexpected {k}\n"));
        }
        return Err(format!("tree differs from expected/:\n{diff}"));
    }
    Ok(())
}

fn scenario_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("patch.txt").is_file())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn run_suite(dir: &Path, refuse_expected: bool) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let dirs = scenario_dirs(dir);
    for d in &dirs {
        if let Err(e) = run_scenario(d, refuse_expected) {
            let name = d.file_name().unwrap_or_default().to_string_lossy();
            failures.push(format!("{name}: {e}"));
        }
    }
    (dirs.len(), failures)
}

#[test]
fn acceptance_suites() {
    let root = acceptance_dir();
    if !root.is_dir() {
        eprintln!(
            "SKIPPED: acceptance suites not found at {} (set ASTEDIT_ACCEPTANCE)",
            root.display()
        );
        return;
    }
    let divergences: Vec<String> = std::fs::read_to_string(root.join("divergences.txt"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    let mut all_failures = Vec::new();
    let mut total = 0;
    for suite in ["codex", "omos"] {
        let dir = root.join(suite);
        for d in scenario_dirs(&dir) {
            total += 1;
            let name = d
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let outcome = if divergences.contains(&name) {
                run_divergence(&d)
            } else {
                run_scenario(&d, true)
            };
            if let Err(e) = outcome {
                all_failures.push(format!("{suite}/{name}: {e}"));
            }
        }
    }
    assert!(
        total >= 50,
        "only {total} scenarios found under {}",
        root.display()
    );
    assert!(
        all_failures.is_empty(),
        "{} of {total} scenarios failed:\n{}",
        all_failures.len(),
        all_failures.join("\n")
    );
    eprintln!("acceptance: {total} scenarios passed");
}

/// A deliberate divergence from Codex: the input tree must stay as it is, with a
/// refusal that says why.
fn run_divergence(dir: &Path) -> Result<(), String> {
    let patch_text = std::fs::read_to_string(dir.join("patch.txt")).map_err(|e| e.to_string())?;
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    copy_tree(&dir.join("input"), work.path());
    let before = tree_files(work.path());
    let tree = patch::FsTree::new(work.path());
    match patch::resolve_text(&patch_text, &tree, "") {
        Ok(r) => Err(format!(
            "expected a refusal, got {} change(s)",
            r.changes.changes.len()
        )),
        Err(e) if e.to_string().trim().is_empty() => Err("refused without a message".into()),
        Err(e) if std::env::var_os("ASTEDIT_VERBOSE").is_some() => {
            eprintln!("== {} (divergence)\n{e}", dir.display());
            Ok(())
        }
        Err(_) if tree_files(work.path()) != before => Err("the tree changed".into()),
        Err(_) => Ok(()),
    }
}

#[test]
fn own_fixtures() {
    let dir = fixtures_dir();
    let (count, failures) = run_suite(&dir, false);
    assert!(count >= 6, "only {count} fixtures under {}", dir.display());
    assert!(
        failures.is_empty(),
        "{} of {count} fixtures failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn binary_stages_a_preview_and_writes_nothing() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\ntwo\n");
    repo.commit_all("init");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** End Patch\n";
    let out = repo.run_with(".", &["patch", "--json", "-"], &[], Some(patch.as_bytes()));
    out.assert_code(0);
    let v = out.json();
    assert!(v["id"].is_string(), "{v}");
    assert_eq!(v["ops"][0]["chunks"][0]["level"], "exact", "{v}");
    assert_eq!(repo.read_string("a.txt"), "one\ntwo\n");
    assert_eq!(repo.astedit_refs().len(), 1);
}

#[test]
fn binary_apply_writes_the_tree() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\r\ntwo\r\n");
    repo.commit_all("init");
    repo.write(
        "p.txt",
        "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n+three\n*** End Patch\n",
    );
    let out = repo.run(&["patch", "p.txt", "--apply", "--reason", "test"]);
    out.assert_code(0);
    assert_eq!(repo.read_string("a.txt"), "one\r\nTWO\r\nthree\r\n");
}

#[test]
fn binary_refusals_use_their_exit_codes() {
    let repo = TestRepo::new();
    repo.write("a.txt", "x\nx\n");
    repo.commit_all("init");
    let cases: [(&str, i32, &str); 4] = [
        (
            "*** Begin Patch\n*** Frobnicate\n*** End Patch\n",
            2,
            "patch-syntax",
        ),
        (
            "*** Begin Patch\n*** Add File: a.txt\n+y\n*** End Patch\n",
            4,
            "file-exists",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch\n",
            5,
            "ambiguous-match",
        ),
        (
            "*** Begin Patch\n*** Delete File: ../up\n*** End Patch\n",
            4,
            "unsafe-path",
        ),
    ];
    for (patch, code, name) in cases {
        let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
        out.assert_code(code);
        assert_eq!(out.json()["error"]["code"], name, "{}", out.stdout);
    }
    assert_eq!(repo.read_string("a.txt"), "x\nx\n");
    assert!(!repo.exists("../up"));
}

#[test]
fn binary_paths_are_relative_to_the_current_folder() {
    let repo = TestRepo::new();
    repo.write("sub/a.txt", "one\n");
    repo.commit_all("init");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n";
    let out = repo.run_with(
        "sub",
        &["patch", "--json", "--apply"],
        &[],
        Some(patch.as_bytes()),
    );
    out.assert_code(0);
    assert_eq!(repo.read_string("sub/a.txt"), "ONE\n");
}

/// The suites as their README runs them: each scenario in a fresh repository through
/// `git astedit patch --apply` (committed or not, alternately), the work tree compared
/// with `expected/` byte for byte.
#[test]
fn acceptance_suites_through_the_binary() {
    let root = acceptance_dir();
    if !root.is_dir() {
        eprintln!("SKIPPED: acceptance suites not found at {}", root.display());
        return;
    }
    let divergences = std::fs::read_to_string(root.join("divergences.txt")).unwrap_or_default();
    let mut failures = Vec::new();
    let mut total = 0;
    for suite in ["codex", "omos"] {
        for (i, d) in scenario_dirs(&root.join(suite)).iter().enumerate() {
            let base = d.file_name().unwrap_or_default().to_string_lossy();
            let diverges = divergences.lines().any(|l| l.trim() == base);
            total += 1;
            let repo = TestRepo::new();
            copy_tree(&d.join("input"), repo.path());
            if i % 2 == 0 && !tree_files(repo.path()).is_empty() {
                repo.commit_all("input");
            }
            let before = tree_files(repo.path());
            let patch_text = std::fs::read(d.join("patch.txt")).expect("patch.txt");
            let out = repo.run_with(".", &["patch", "--apply", "-"], &[], Some(&patch_text));
            // A divergence from Codex: we refuse, so the input must stay as it was.
            let expected = if diverges {
                before.clone()
            } else {
                tree_files(&d.join("expected"))
            };
            let got = tree_files(repo.path());
            let name = format!("{suite}/{base}");
            if got != expected {
                failures.push(format!(
                    "{name}: tree differs (exit {}): {}",
                    out.code, out.stderr
                ));
            } else if expected == before && out.code == 0 {
                failures.push(format!("{name}: expected a refusal, exit 0"));
            } else if out.code != 0 && out.stderr.trim().is_empty() {
                failures.push(format!("{name}: refused without a message"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} scenarios failed through the binary:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn binary_move_keeps_the_executable_bit() {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    repo.write("run.sh", "#!/bin/sh\necho hi\n");
    let p = repo.path().join("run.sh");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    repo.commit_all("init");
    let patch = "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n-echo hi\n+echo bye\n*** End Patch\n";
    let out = repo.run_with(".", &["patch", "--apply"], &[], Some(patch.as_bytes()));
    out.assert_code(0);
    assert!(!repo.exists("run.sh"));
    let meta = std::fs::metadata(repo.path().join("bin/run.sh")).expect("moved file");
    assert_ne!(meta.permissions().mode() & 0o111, 0, "executable bit lost");
    assert_eq!(repo.read_string("bin/run.sh"), "#!/bin/sh\necho bye\n");
}

#[test]
fn binary_refuses_paths_through_a_symlink() {
    let repo = TestRepo::new();
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.txt"), "keep\n").expect("write");
    std::os::unix::fs::symlink(outside.path(), repo.path().join("link")).expect("symlink");
    let patch =
        "*** Begin Patch\n*** Update File: link/secret.txt\n@@\n-keep\n+gone\n*** End Patch\n";
    let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
    out.assert_code(4);
    assert_eq!(out.json()["error"]["code"], "unsafe-path");
    let add = "*** Begin Patch\n*** Add File: link/new.txt\n+x\n*** End Patch\n";
    repo.run_with(".", &["patch"], &[], Some(add.as_bytes()))
        .assert_code(4);
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).expect("read"),
        "keep\n"
    );
    assert!(!outside.path().join("new.txt").exists());
}

#[test]
fn binary_already_applied_patch_stages_nothing() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\nTWO\n");
    repo.commit_all("init");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** End Patch\n";
    let out = repo.run_with(".", &["patch", "--json"], &[], Some(patch.as_bytes()));
    out.assert_code(0);
    let v = out.json();
    assert!(v["id"].is_null(), "{v}");
    assert_eq!(v["ops"][0]["chunks"][0]["level"], "already-applied", "{v}");
    assert!(repo.astedit_refs().is_empty());
}
