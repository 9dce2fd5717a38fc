//! The output contract: every `--json` output validates against `git astedit schema`,
//! errors (clap's too) have one shape, a closed pipe ends a run quietly, names are
//! quoted as git quotes them, and an undone preview is applied only by its id.

use std::io::Read;
use std::process::Stdio;

use crate::util::TestRepo;

/// Validates `value` against the schema `git astedit schema COMMAND` prints.
#[track_caller]
pub(crate) fn validate(repo: &TestRepo, command: &str, value: &serde_json::Value) {
    let schema = repo.run(&["schema", command]);
    schema.assert_code(0);
    let schema = schema.json();
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("schema of {command} does not compile: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{command} --json does not fit its schema:\n{}\n{value:#}",
        errors.join("\n")
    );
    assert_eq!(value["schema_version"], 2, "{value}");
}

/// Runs `args` (with `--json`), checks the exit code and validates the output.
#[track_caller]
fn checked(repo: &TestRepo, command: &str, args: &[&str], code: i32) -> serde_json::Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let out = repo.run(&full);
    out.assert_code(code);
    let value = out.json();
    validate(repo, command, &value);
    value
}

fn setup() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/a.js", "foo(1, 2);\nfoo(3);\n");
    repo.write("src/b.js", "bar(1);\n");
    repo.commit_all("init");
    repo
}

#[test]
fn every_json_output_fits_the_schema() {
    let repo = setup();
    // grep, with byte ranges and captures.
    let v = checked(&repo, "grep", &["grep", "-p", "foo($A, $$$REST)"], 0);
    let m = &v["matches"][0];
    assert_eq!(m["start_byte"], 0);
    assert_eq!(m["end_byte"], 9);
    assert_eq!(m["meta_variables"]["single"]["A"]["text"], "1");
    assert_eq!(m["meta_variables"]["single"]["A"]["start_byte"], 4);
    assert_eq!(m["meta_variables"]["multi"]["REST"][0]["text"], "2");
    checked(&repo, "grep", &["grep", "-p", "nothing_here($A)"], 1);
    checked(&repo, "grep", &["grep", "-p", "foo("], 2);

    // edit, list, show, apply, undo, discard, log, gc.
    let v = checked(
        &repo,
        "edit",
        &["edit", "-p", "foo($A)", "-r", "baz($A)", "--reason", "r"],
        0,
    );
    let id = v["id"].as_str().expect("id").to_string();
    checked(&repo, "edit", &["edit", "-p", "nope($A)", "-r", "x"], 1);
    let v = checked(&repo, "list", &["list"], 0);
    assert_eq!(v["previews"][0]["files"][0], "src/a.js");
    assert_eq!(v["previews"][0]["file_count"], 1);
    assert!(v["previews"][0]["time"]
        .as_str()
        .is_some_and(|t| t.ends_with('Z')));
    checked(&repo, "show", &["show", &id], 0);
    checked(&repo, "show", &["show", "--stat", &id], 0);
    checked(&repo, "show", &["show", "abcdef"], 2);
    let v = checked(&repo, "apply", &["apply", &id], 0);
    assert_eq!(v["state"], "applied");
    let v = checked(&repo, "undo", &["undo"], 0);
    assert_eq!(v["state"], "pending");
    checked(&repo, "undo", &["undo"], 1);
    // refresh: current, then refreshed, then a conflict; apply --refresh.
    let v = checked(&repo, "refresh", &["refresh", &id], 0);
    assert_eq!(v["state"], "current");
    repo.write("src/a.js", "foo(1, 2);\nfoo(3);\nother();\n");
    let v = checked(&repo, "refresh", &["refresh", &id], 0);
    let id = v["successor"].as_str().expect("successor").to_string();
    repo.write("src/a.js", "foo(1, 2);\nfoo(4);\nother();\n");
    let v = checked(&repo, "refresh", &["refresh", &id], 3);
    assert_eq!(v["error"]["code"], "refresh-conflict");
    repo.write("src/a.js", "foo(1, 2);\nfoo(3);\n");
    let v = checked(&repo, "apply", &["apply", "--refresh", &id], 0);
    assert_eq!(v["refreshed"]["replacements_now"], 1);
    let id = v["id"].as_str().expect("id").to_string();
    checked(&repo, "undo", &["undo"], 0);
    checked(&repo, "discard", &["discard", &id, "--reason", "no"], 0);
    let v = checked(&repo, "log", &["log"], 0);
    assert!(v["events"][0]["files"].is_array());
    assert!(v["events"][0]["time"]
        .as_str()
        .is_some_and(|t| t.ends_with('Z')));
    checked(&repo, "gc", &["gc"], 0);
    checked(&repo, "gc", &["gc", "--expire", "soon"], 2);

    // allow: nothing named, then a formatter listed, allowed, and a refusal's error.
    checked(&repo, "allow", &["allow"], 0);
    repo.write("astedit.toml", "[fmt]\njavascript = \"cat\"\n");
    let v = checked(&repo, "allow", &["allow", "--list"], 0);
    assert_eq!(v["commands"][0]["allowed"], false, "{v}");
    let v = checked(
        &repo,
        "error",
        &["edit", "-p", "foo($A)", "-r", "x", "--fmt"],
        4,
    );
    assert_eq!(v["error"]["code"], "command-not-allowed", "{v}");
    let v = checked(&repo, "allow", &["allow"], 0);
    assert_eq!(v["commands"][0]["allowed"], true, "{v}");
    checked(&repo, "allow", &["allow", "--revoke"], 0);
    std::fs::remove_file(repo.path().join("astedit.toml")).expect("rm");

    // patch.
    let patch =
        "*** Begin Patch\n*** Update File: src/b.js\n@@\n-bar(1);\n+bar(2);\n*** End Patch\n";
    std::fs::write(repo.path().join("p.patch"), patch).expect("write");
    let v = checked(&repo, "patch", &["patch", "p.patch"], 0);
    let pid = v["id"].as_str().expect("id").to_string();
    checked(&repo, "apply", &["apply", &pid, "--commit"], 0);

    // scan.
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"no-bar\"\nlanguage = \"javascript\"\nrule.pattern = \"bar($A)\"\nfix = \"qux($A)\"\nmessage = \"no bar\"\nseverity = \"warning\"\n",
    );
    checked(&repo, "scan", &["scan"], 0);
    checked(&repo, "scan", &["scan", "--check"], 1);
    let v = checked(&repo, "scan", &["scan", "--stage"], 0);
    let sid = v["id"].as_str().expect("scan id").to_string();
    // review: the groups, a page of sites, a batch of decisions, an unknown key.
    let v = checked(&repo, "review", &["review", &sid], 0);
    assert_eq!(v["sites"], 1, "{v}");
    let key = v["groups"][0]["key"].as_str().expect("key").to_string();
    checked(&repo, "review", &["review", &sid, "--sites", &key], 0);
    let v = checked(&repo, "review", &["review", &sid, "--accept", &key], 0);
    assert_eq!(v["accepted"], 1, "{v}");
    let v = checked(&repo, "review", &["review", &sid, "--accept", "nope"], 2);
    assert_eq!(v["error"]["code"], "unknown-review-target");

    // merge (two previews over disjoint paths), hook.
    let v = checked(&repo, "edit", &["edit", "-p", "foo($A)", "-r", "q($A)"], 0);
    let eid = v["id"].as_str().expect("id").to_string();
    checked(&repo, "merge", &["merge", &sid, &eid], 0);
    checked(&repo, "hook", &["hook", "install"], 0);
    let v = checked(&repo, "recover", &["recover"], 0);
    assert!(v["unfinished"].is_null(), "{v}");
    checked(
        &repo,
        "resolve",
        &["resolve", "discard", "--reason", "merged instead"],
        0,
    );
    checked(&repo, "resolve", &["resolve", "apply", "ffff"], 2);

    // A clap usage error under --json: JSON on stdout, exit 2.
    let v = checked(&repo, "grep", &["grep"], 2);
    assert_eq!(v["error"]["code"], "usage");
    let v = checked(&repo, "error", &["no-such-command"], 2);
    assert_eq!(v["error"]["exit"], 2);
    repo.fsck();
}

#[test]
fn schema_command_lists_every_command_and_refuses_unknown_ones() {
    let repo = TestRepo::new();
    let all = repo.run(&["schema"]);
    all.assert_code(0);
    let all = all.json();
    for name in [
        "grep", "edit", "patch", "scan", "list", "show", "apply", "undo", "log",
    ] {
        assert!(all["$defs"][name].is_object(), "{name}");
    }
    let text = all.to_string();
    assert!(!text.contains("\"uint"), "non-standard formats: {text}");
    repo.run(&["schema", "frobnicate"]).assert_code(2);
}

/// `git astedit schema` is one JSON Schema document: a validator loads it, every
/// command's output is `$defs.<command>`, and real outputs fit both that and the whole.
#[test]
fn the_bare_schema_is_one_document_real_outputs_fit() {
    let repo = setup();
    let doc = repo.run(&["schema"]);
    doc.assert_code(0);
    let doc = doc.json();
    assert_eq!(
        doc["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let whole = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&doc)
        .unwrap_or_else(|e| panic!("the schema does not compile: {e}"));
    // The same document, entered at one command.
    let of = |command: &str| {
        let mut entry = doc.clone();
        let root = entry.as_object_mut().expect("an object");
        root.remove("anyOf");
        root.insert("$ref".into(), format!("#/$defs/{command}").into());
        jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&entry)
            .unwrap_or_else(|e| panic!("$defs.{command} does not compile: {e}"))
    };
    let runs: &[(&str, &[&str], i32)] = &[
        ("grep", &["grep", "-p", "foo($A)"], 0),
        ("edit", &["edit", "-p", "foo($A)", "-r", "bar($A)"], 0),
        ("list", &["list"], 0),
        ("show", &["show"], 0),
        ("apply", &["apply"], 0),
        ("log", &["log"], 0),
        ("recover", &["recover"], 0),
        ("gc", &["gc"], 0),
        ("error", &["apply", "nosuchid"], 2),
    ];
    for (command, args, code) in runs {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        let out = repo.run(&full);
        out.assert_code(*code);
        let value = out.json();
        let errors: Vec<String> = of(command)
            .iter_errors(&value)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{command}: {errors:?}\n{value:#}");
        assert!(whole.is_valid(&value), "{command}: {value:#}");
    }
    // A report of one command does not fit another's entry.
    let grep = repo.run(&["--json", "grep", "-p", "foo($A)"]).json();
    assert!(!of("log").is_valid(&grep));
}

#[test]
fn usage_errors_without_json_stay_text() {
    let repo = TestRepo::new();
    let out = repo.run(&["grep"]);
    out.assert_code(2);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(out.stderr.contains("error:"), "{}", out.stderr);
}

/// Runs `args` with stdout into a pipe whose reader takes one line and closes it.
fn head_one(repo: &TestRepo, args: &[&str]) -> (i32, String, String) {
    let mut child = repo
        .command(".", args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap_or(0) == 1 {
        first.push(byte[0]);
        if byte[0] == b'\n' {
            break;
        }
    }
    drop(stdout);
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let status = child.wait().expect("wait");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&first).into_owned(),
        stderr,
    )
}

#[test]
fn a_closed_pipe_ends_grep_show_and_log_quietly() {
    let repo = TestRepo::new();
    // Enough output that the writer meets the closed pipe before it is done.
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&format!("foo({i});\n"));
    }
    for f in 0..60 {
        repo.write(&format!("f{f:02}.js"), &text);
    }
    repo.commit_all("init");
    let (code, first, stderr) = head_one(&repo, &["grep", "-p", "foo($A)", "--max-count", "0"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(first.starts_with("f00.js:1:1: foo(0)"), "{first}");
    assert!(stderr.is_empty(), "{stderr}");

    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0);
    let (code, first, stderr) = head_one(&repo, &["show"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(first.starts_with("preview "), "{first}");
    assert!(stderr.is_empty(), "{stderr}");
    for _ in 0..3 {
        let id = repo.run(&["--json", "list"]).json()["previews"][0]["id"]
            .as_str()
            .expect("id")
            .to_string();
        repo.run(&["apply", &id]).assert_code(0);
        repo.run(&["undo", &id]).assert_code(0);
    }
    let (code, _, stderr) = head_one(&repo, &["log"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn names_with_control_characters_are_quoted_in_text_output() {
    let repo = TestRepo::new();
    repo.write("tab\there.js", "foo(1);\n");
    repo.write("new\nline.js", "foo(2);\n");
    repo.write("plain.js", "foo(3);\n");
    let out = repo.run(&["grep", "-p", "foo($A)"]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("\"new\\nline.js\":1:1: foo(2)\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("\"tab\\there.js\":1:1: foo(1)\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("plain.js:1:1: foo(3)\n"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.lines().count(), 3, "{}", out.stdout);
    // JSON keeps the names as they are.
    let v = repo.run(&["--json", "grep", "-p", "foo($A)"]).json();
    let paths: Vec<&str> = v["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .filter_map(|m| m["path"].as_str())
        .collect();
    assert!(paths.contains(&"new\nline.js"), "{paths:?}");
}

#[test]
fn an_undone_preview_is_applied_again_only_by_its_id() {
    let repo = setup();
    let v = repo
        .run(&["--json", "edit", "-p", "foo($A)", "-r", "baz($A)"])
        .json();
    let id = v["id"].as_str().expect("id").to_string();
    repo.run(&["apply"]).assert_code(0);
    repo.run(&["undo"]).assert_code(0);
    let before = repo.snapshot();
    // No id: refused, naming the undone preview; nothing written.
    let out = repo.run(&["--json", "apply"]);
    out.assert_code(2);
    let v = out.json();
    assert_eq!(v["error"]["code"], "only-undone-pending");
    assert_eq!(v["error"]["details"]["undone"][0], id.as_str());
    assert_eq!(repo.snapshot(), before);
    repo.run(&["discard"]).assert_code(2);
    // A fresh preview is picked over it.
    let fresh = repo
        .run(&["--json", "edit", "-p", "bar($A)", "-r", "qux($A)"])
        .json();
    let fresh = fresh["id"].as_str().expect("id").to_string();
    let v = repo.run(&["--json", "apply"]).json();
    assert_eq!(v["id"], fresh.as_str());
    // Named, it applies.
    let v = repo.run(&["--json", "apply", &id]).json();
    assert_eq!(v["id"], id.as_str());
    assert_eq!(repo.read_string("src/a.js"), "foo(1, 2);\nbaz(3);\n");
    repo.fsck();
}

/// The front ends are adapters: no gix calls and no child processes in `src/cli/`
/// (the library's `ops`, engines and `txn` do that work).
#[test]
fn front_ends_hold_no_gix_calls_and_start_no_processes() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).expect("read src/cli").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli"),
        &mut files,
    );
    assert!(files.len() > 10);
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        // The pager is the front end's own child (DESIGN 7a: front ends own the pager),
        // and so is the browser `review` opens on its page.
        let allowed: &[&str] =
            if f.ends_with("src/cli/pager.rs") || f.ends_with("src/cli/browser.rs") {
                &["process::Command", "Command::new("]
            } else {
                &[]
            };
        for banned in ["gix::", "use gix", "process::Command", "Command::new("]
            .into_iter()
            .filter(|b| !allowed.contains(b))
        {
            assert!(
                !text.contains(banned),
                "{} uses {banned}: front ends call the library instead",
                f.display()
            );
        }
    }
}
