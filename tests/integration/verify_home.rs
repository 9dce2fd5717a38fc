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
        "cat node_modules/lib/index.d.ts web/node_modules/w/index.js && grep -c bar a.ts web/b.ts",
    ]);
    out.assert_code(0);
    let v = out.json();
    assert_eq!(
        v["output"],
        "export declare function greet(n: number): string;\nweb's\na.ts:1\nweb/b.ts:1\n"
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
