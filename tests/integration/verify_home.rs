//! `verify` where the project lives (issue 53, item 5): the check's worktree borrows the
//! checkout's `node_modules` (a symlink, removed after), and nothing else of the user's.
//!
//! The TypeScript case needs `tsc`: `ASTEDIT_TSC`, else `tsc` on PATH; without it that
//! test says so and stops (`.ci/run` does not install TypeScript).

use crate::util::TestRepo;

/// A TypeScript project whose dependency `lib` is installed (untracked, ignored) in the
/// checkout's `node_modules`, and in a workspace package's; a pending rewrite of `a.ts`.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", "node_modules/\n");
    repo.write("package.json", "{\"name\": \"top\"}\n");
    repo.write(
        "a.ts",
        "import { greet } from \"lib\";\nconst n: number = 1;\nfoo(greet(n));\n",
    );
    repo.write("web/package.json", "{\"name\": \"web\"}\n");
    repo.write("web/b.ts", "foo(2);\n");
    repo.commit_all("base");
    repo.write(
        "node_modules/lib/index.d.ts",
        "export declare function greet(n: number): string;\n",
    );
    repo.write("node_modules/lib/package.json", "{\"name\": \"lib\"}\n");
    repo.write("web/node_modules/w/index.js", "web's\n");
    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0);
    repo
}

#[test]
fn the_checkouts_node_modules_is_seen_by_the_check_and_left_as_it_was() {
    let repo = project();
    let before = repo.snapshot();
    let out = repo.run(&[
        "--json",
        "verify",
        "--",
        "sh",
        "-c",
        "cat node_modules/lib/index.d.ts web/node_modules/w/index.js && grep -c bar a.ts web/b.ts \
         && echo \"${CARGO_TARGET_DIR-no Cargo target}\"",
    ]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(
        v["output"],
        "export declare function greet(n: number): string;\nweb's\na.ts:1\nweb/b.ts:1\n\
         no Cargo target\n"
    );
    assert_eq!(v["notes"], serde_json::json!([]));
    crate::contract::validate(&repo, "verify", &v);
    // The links went with the worktree; what they pointed to is still there.
    assert_eq!(repo.snapshot(), before);
    assert_eq!(
        repo.read_string("node_modules/lib/package.json"),
        "{\"name\": \"lib\"}\n"
    );
    assert_eq!(repo.read_string("web/node_modules/w/index.js"), "web's\n");
}

#[test]
fn a_check_that_writes_into_node_modules_is_told_of() {
    let repo = project();
    let out = repo.run(&[
        "verify",
        "--",
        "sh",
        "-c",
        "echo cache > node_modules/.tool-cache",
    ]);
    out.assert_code(0);
    assert!(
        out.stderr.contains(
            "note: the check wrote into your node_modules (the checkout's, linked into the worktree)"
        ),
        "{}",
        out.stderr
    );
    // It did write there: the folder is the user's, not a copy.
    assert_eq!(repo.read_string("node_modules/.tool-cache"), "cache\n");
    // Removing the link does not remove what it points to.
    let out = repo.run(&["--json", "verify", "--", "rm", "node_modules"]);
    out.assert_code(0);
    assert!(repo.exists("node_modules/lib/index.d.ts"));
}

#[test]
fn a_preview_that_writes_under_node_modules_gets_no_link() {
    let repo = TestRepo::new();
    repo.write("package.json", "{}\n");
    repo.write("node_modules/vendored/x.js", "foo(1);\n");
    repo.commit_all("base: a tracked node_modules");
    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0);
    // The worktree has the base's tracked folder and the preview's change, no link.
    let out = repo.run(&[
        "--json",
        "verify",
        "--",
        "sh",
        "-c",
        "test ! -L node_modules && cat node_modules/vendored/x.js",
    ]);
    out.assert_code(0);
    assert_eq!(out.json()["output"], "bar(1);\n");
}

/// `tsc`, from `ASTEDIT_TSC` or PATH.
fn tsc() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("ASTEDIT_TSC")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .map(|d| d.join("tsc"))
                .find(|p| p.is_file())
        });
    if found.is_none() {
        eprintln!("tsc not found (ASTEDIT_TSC, PATH): the TypeScript check is skipped");
    }
    found
}

#[test]
fn tsc_resolves_the_checkouts_types() {
    let Some(tsc) = tsc() else { return };
    let tsc = tsc.to_str().unwrap();
    let repo = project();
    repo.write(
        "a.ts",
        "import { greet } from \"lib\";\nconst n: number = 1;\nconsole.log(greet(n));\n",
    );
    repo.commit_all("a.ts type-checks");
    repo.run(&["edit", "-p", "greet($A)", "-r", "greet(String($A))"])
        .assert_code(0);
    // The rewrite is a type error only tsc with lib's declarations can see.
    let out = repo.run(&[
        "--json", "verify", "--", tsc, "--noEmit", "--strict", "a.ts",
    ]);
    out.assert_code(1);
    let v = out.json();
    let output = v["output"].as_str().unwrap();
    assert!(output.contains("a.ts(3,19): error TS2345"), "{output}");
    assert!(!output.contains("Cannot find module"), "{output}");
}

/// A Cargo crate with an ignored `target/` the user built (a marker file in it); a
/// pending rewrite of `src/main.rs`.
fn crate_project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", "target/\n");
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    repo.write(
        "src/main.rs",
        "fn main() {\n    foo(1);\n}\n\nfn foo(_: i32) {}\n\nfn bar(_: i32) {}\n",
    );
    repo.commit_all("base");
    repo.write("target/debug/marker", "the user's\n");
    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0);
    repo
}

/// Where verify keeps its Cargo target folder.
fn kept(repo: &TestRepo) -> std::path::PathBuf {
    std::fs::canonicalize(repo.path().join(".git"))
        .unwrap()
        .join("astedit/verify-target")
}

#[test]
fn a_cargo_check_gets_a_target_folder_of_its_own_seeded_once_and_kept() {
    let repo = crate_project();
    let look = "echo \"$CARGO_TARGET_DIR\"; cat \"$CARGO_TARGET_DIR/debug/marker\"; \
                ls \"$CARGO_TARGET_DIR/debug\"; echo built > \"$CARGO_TARGET_DIR/debug/by-check\"";
    // The user's own CARGO_TARGET_DIR (their target/) is where the seed comes from, and
    // is never the check's.
    let out = repo.run_with(
        ".",
        &["--json", "verify", "--", "sh", "-c", look],
        &[("CARGO_TARGET_DIR", "target")],
        None,
    );
    out.assert_code(0);
    let v = out.json();
    let kept = kept(&repo);
    assert_eq!(
        v["output"],
        format!("{}\nthe user's\nmarker\n", kept.display())
    );
    let notes = v["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let note = notes[0].as_str().unwrap();
    assert!(
        note.starts_with(
            "seeded verify's Cargo target folder .git/astedit/verify-target from target/ (1 file, "
        ),
        "{note}"
    );
    assert!(
        note.contains("reflinked") || note.contains("copied: this file system has no reflinks"),
        "{note}"
    );
    crate::contract::validate(&repo, "verify", &v);
    // The user's target/ is as it was; the check's file is in the kept folder.
    assert!(!repo.exists("target/debug/by-check"));
    assert_eq!(
        std::fs::read_to_string(kept.join("debug/by-check")).unwrap(),
        "built\n"
    );
    // Seeded once: a later build of the user's is not copied again, and what the check
    // built is still there.
    repo.write("target/debug/marker", "rebuilt by the user\n");
    let out = repo.run(&["--json", "verify", "--", "sh", "-c", look]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(
        v["output"],
        format!("{}\nthe user's\nby-check\nmarker\n", kept.display())
    );
    assert_eq!(v["notes"], serde_json::json!([]));
    assert_eq!(
        repo.read_string("target/debug/marker"),
        "rebuilt by the user\n"
    );
}

#[test]
fn cargo_check_builds_in_the_kept_folder_and_never_in_the_users_target() {
    // The cargo running this test, and its rustc (the test's HOME has no toolchain).
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let rustc = std::path::Path::new(&cargo).with_file_name("rustc");
    let rustc = if rustc.is_file() {
        rustc.display().to_string()
    } else {
        "rustc".into()
    };
    let repo = crate_project();
    let before = crate::util::files_under(&repo.path().join("target"));
    let check = || {
        repo.run_with(
            ".",
            &["--json", "verify", "--", &cargo, "check", "--offline"],
            &[("RUSTC", &rustc)],
            None,
        )
    };
    for _ in 0..2 {
        let out = check();
        out.assert_code(0);
        let v = out.json();
        assert!(
            v["output"]
                .as_str()
                .unwrap()
                .contains("Checking demo v0.1.0"),
            "{}",
            v["output"]
        );
    }
    assert!(kept(&repo).join("debug/.fingerprint").is_dir());
    assert_eq!(
        crate::util::files_under(&repo.path().join("target")),
        before
    );
    // A preview that does not build fails in the kept folder too.
    repo.run(&["discard"]).assert_code(0);
    repo.run(&["edit", "-p", "foo($A)", "-r", "baz($A)", "src/main.rs"])
        .assert_code(0);
    let out = check();
    out.assert_code(1);
    assert!(
        out.json()["output"]
            .as_str()
            .unwrap()
            .contains("cannot find function `baz`"),
        "{}",
        out.stdout
    );
}

/// A repository whose own check (`! grep -Hn 'bad(' *.js`: each use a diagnostic,
/// `a.js:2:bad(1);`) already fails on the base, with a preview of `edit -p PATTERN -r
/// REWRITE`.
fn failing_base(pattern: &str, rewrite: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.js", "foo(1);\nbad(1);\n");
    repo.write("b.js", "ok(2);\n");
    repo.commit_all("base: one bad call");
    repo.run(&["edit", "-p", pattern, "-r", rewrite])
        .assert_code(0);
    repo
}

const LINT: &[&str] = &["sh", "-c", "! grep -Hn 'bad(' *.js"];

fn verify_new_only(repo: &TestRepo) -> crate::util::Output {
    let mut args = vec!["--json", "verify", "--new-only", "--"];
    args.extend_from_slice(LINT);
    repo.run(&args)
}

#[test]
fn new_only_passes_a_preview_that_keeps_the_bases_failure_as_it_is() {
    // Lines added above the bad call move it: its position is not part of the line.
    let repo = failing_base("foo($A)", "foo($A);\nfoo($A + 1)");
    let mut plain = vec!["verify", "--"];
    plain.extend_from_slice(LINT);
    repo.run(&plain).assert_code(1);
    let out = verify_new_only(&repo);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(v["passed"], true);
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["output"], "a.js:3:bad(1);\n");
    assert_eq!(
        v["new_only"],
        serde_json::json!({
            "base_check": {"passed": false, "exit_code": 1, "timed_out": false,
                           "cached": false, "diagnostics": 1},
            "added": []
        })
    );
    crate::contract::validate(&repo, "verify", &v);
    // The base's run is kept: the next check of the same command at the same base
    // takes it.
    let out = verify_new_only(&repo);
    out.assert_code(0);
    assert_eq!(out.json()["new_only"]["base_check"]["cached"], true);
    // In text, the verdict says the failure is the base's.
    let mut args = vec!["verify", "--new-only", "--"];
    args.extend_from_slice(LINT);
    let out = repo.run(&args);
    out.assert_code(0);
    assert!(
        out.stderr
            .contains("passed: `sh -c '! grep -Hn '\\''bad('\\'' *.js'` exited 1")
            && out.stderr.contains("adding nothing to the base's failure"),
        "{}",
        out.stderr
    );
}

#[test]
fn new_only_fails_a_preview_that_adds_a_diagnostic_and_prints_it() {
    let repo = failing_base("ok($A)", "bad($A)");
    let out = verify_new_only(&repo);
    out.assert_code(1);
    let v = out.json();
    assert_eq!(v["passed"], false);
    assert_eq!(
        v["new_only"]["added"],
        serde_json::json!(["b.js:1:bad(2);"])
    );
    assert_eq!(v["new_only"]["base_check"]["passed"], false);
    let mut args = vec!["verify", "--new-only", "--"];
    args.extend_from_slice(LINT);
    let out = repo.run(&args);
    out.assert_code(1);
    assert!(
        out.stderr.contains(
            "fails too (1 diagnostic line); the preview adds 1 line:\n  b.js:1:bad(2);\n"
        ),
        "{}",
        out.stderr
    );
    // A base that passes: every failure of the preview's is its own.
    let repo = TestRepo::new();
    repo.write("a.js", "ok(1);\n");
    repo.commit_all("base: clean");
    repo.run(&["edit", "-p", "ok($A)", "-r", "bad($A)"])
        .assert_code(0);
    let out = verify_new_only(&repo);
    out.assert_code(1);
    let v = out.json();
    assert_eq!(v["new_only"]["base_check"]["passed"], true);
    assert_eq!(
        v["new_only"]["added"],
        serde_json::json!(["a.js:1:bad(1);"])
    );
}

#[test]
fn new_only_runs_nothing_on_the_base_when_the_preview_passes() {
    let repo = failing_base("bad($A)", "good($A)");
    let out = verify_new_only(&repo);
    out.assert_code(0);
    assert_eq!(
        out.json()["new_only"],
        serde_json::json!({"base_check": null, "added": []})
    );
    assert!(!repo.path().join(".git/astedit/verify-base").exists());
}

#[test]
fn tsc_new_only_on_a_base_with_a_type_error() {
    let Some(tsc) = tsc() else { return };
    let tsc = tsc.to_str().unwrap();
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "const broken: number = \"one\";\nfunction f(n: number): number {\n  return n;\n}\nf(1);\n",
    );
    repo.commit_all("base: a type error already");
    let check = [
        "--json",
        "verify",
        "--new-only",
        "--",
        tsc,
        "--noEmit",
        "--strict",
        "a.ts",
    ];
    // A line added above the base's error moves it, and adds none.
    repo.run(&["edit", "-p", "f($A)", "-r", "f($A);\nf($A + 1)"])
        .assert_code(0);
    let out = repo.run(&check);
    out.assert_code(0);
    assert_eq!(out.json()["new_only"]["base_check"]["passed"], false);
    repo.run(&["discard"]).assert_code(0);
    // A call with a string adds one.
    repo.run(&["edit", "-p", "f($A)", "-r", "f(String($A))"])
        .assert_code(0);
    let out = repo.run(&check);
    out.assert_code(1);
    let v = out.json();
    let added = v["new_only"]["added"].as_array().unwrap();
    assert_eq!(added.len(), 1, "{added:?}");
    assert!(
        added[0]
            .as_str()
            .unwrap()
            .starts_with("a.ts(5,3): error TS2345"),
        "{added:?}"
    );
    assert_eq!(v["new_only"]["base_check"]["cached"], true);
}
