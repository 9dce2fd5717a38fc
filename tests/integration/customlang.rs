//! `customLanguages` (ast-grep's schema): a tree-sitter grammar built as a shared
//! library is loaded and used by `scan`, `grep` and `edit`; a library that is missing,
//! not a library, or lacks the symbol is refused with exit 2 and a message.

use std::path::PathBuf;
use std::process::Command;

use crate::suppress::findings;
use crate::util::TestRepo;

/// tree-sitter-json's generated parser (a dependency of ast-grep-language, so its
/// sources are in cargo's registry wherever this crate builds).
fn json_parser_c() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let src = home.join("registry").join("src");
    let mut found = Vec::new();
    for index in std::fs::read_dir(&src).into_iter().flatten().flatten() {
        for krate in std::fs::read_dir(index.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = krate.file_name().to_string_lossy().into_owned();
            if name.starts_with("tree-sitter-json-") {
                let c = krate.path().join("src").join("parser.c");
                if c.is_file() {
                    found.push(c);
                }
            }
        }
    }
    found.sort();
    found
        .pop()
        .unwrap_or_else(|| panic!("no tree-sitter-json parser.c under {}", src.display()))
}

fn have_cc() -> bool {
    Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Compiles `sources` into the shared library `out`.
fn build_library(out: &std::path::Path, sources: &[PathBuf]) {
    let include = sources[0].parent().expect("src folder").to_path_buf();
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O0", "-o"])
        .arg(out)
        .arg("-I")
        .arg(&include)
        .args(sources)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc failed");
}

/// A project whose `*.myj` files are JSON parsed by a grammar it ships as a library,
/// under its own language name.
fn project() -> Option<TestRepo> {
    if !have_cc() {
        eprintln!("SKIPPED: no C compiler (cc) to build the custom grammar");
        return None;
    }
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.path().join("lib")).expect("mkdir");
    build_library(&repo.path().join("lib/myjson.so"), &[json_parser_c()]);
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\ncustomLanguages:\n  myjson:\n    libraryPath: lib/myjson.so\n    \
         languageSymbol: tree_sitter_json\n    extensions: [myj]\n",
    );
    repo.write(
        "rules/no-true.yml",
        "id: no-true\nlanguage: myjson\nseverity: error\nmessage: no true\n\
         rule: {pattern: 'true'}\nfix: 'false'\n",
    );
    repo.write("conf/a.myj", "{\"debug\": true,\n \"list\": [1, true]}\n");
    repo.write("b.json", "{\"debug\": true}\n");
    repo.write(".gitignore", "lib/\n");
    repo.commit_all("project");
    // Loading a library runs its code: allowed for this repository (consent.rs).
    repo.run(&["allow"]).assert_code(0);
    Some(repo)
}

#[test]
fn a_custom_language_is_loaded_and_scanned_and_fixed() {
    let Some(repo) = project() else { return };
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(1);
    // Only the custom-language file: b.json is built-in JSON, which the rule is not for.
    assert_eq!(
        findings(&out.json()),
        [
            "conf/a.myj no-true 1:11 error",
            "conf/a.myj no-true 2:14 error"
        ]
    );
    let out = repo.run(&["scan", "--apply"]);
    out.assert_code(1);
    assert_eq!(
        repo.read_string("conf/a.myj"),
        "{\"debug\": false,\n \"list\": [1, false]}\n"
    );
    repo.run(&["scan", "--check"]).assert_code(0);
    repo.run(&["undo"]).assert_code(0);
    assert_eq!(
        repo.read_string("conf/a.myj"),
        "{\"debug\": true,\n \"list\": [1, true]}\n"
    );
}

#[test]
fn grep_and_edit_use_the_projects_custom_language() {
    let Some(repo) = project() else { return };
    // By its extension…
    let out = repo.run(&["grep", "-p", "true", "-l", "myjson"]);
    out.assert_code(0);
    assert!(out.stdout.contains("conf/a.myj"), "{}", out.stdout);
    assert!(!out.stdout.contains("b.json"), "{}", out.stdout);
    // …with -c naming the config from elsewhere.
    let out = repo.run_in(
        "conf",
        &["grep", "-p", "true", "-c", "../sgconfig.yml", "--json"],
    );
    out.assert_code(0);
    let v = out.json();
    let files: Vec<String> = v["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .map(|x| format!("{} {}", x["path"], x["lang"]))
        .collect();
    assert_eq!(files, ["\"a.myj\" \"myjson\""; 2], "{v}");
    let out = repo.run(&[
        "edit", "-p", "true", "-r", "null", "-l", "myjson", "--apply",
    ]);
    out.assert_code(0);
    assert_eq!(
        repo.read_string("conf/a.myj"),
        "{\"debug\": null,\n \"list\": [1, null]}\n"
    );
    assert_eq!(repo.read_string("b.json"), "{\"debug\": true}\n");
}

#[test]
fn a_custom_language_library_that_cannot_be_loaded_is_refused() {
    let repo = TestRepo::new();
    let config = |lib: &str, symbol: &str| {
        format!(
            "ruleDirs: [rules]\ncustomLanguages:\n  mylang:\n    libraryPath: {lib}\n{symbol}    \
             extensions: [my]\n"
        )
    };
    repo.write(
        "rules/r.yml",
        "id: r\nlanguage: mylang\nrule: {pattern: x}\n",
    );
    repo.write("a.my", "x\n");
    repo.commit_all("p");
    let refused = |repo: &TestRepo, args: &[&str], words: &[&str]| {
        let mut all = args.to_vec();
        all.push("--custom-languages=allow");
        let out = repo.run(&all);
        out.assert_code(2);
        let text = out.stderr.clone();
        for w in words {
            assert!(text.contains(w), "{w:?} not in {text}");
        }
        assert!(!text.contains("panicked"), "{text}");
    };
    // Missing.
    repo.write("sgconfig.yml", config("mylang.so", ""));
    refused(
        &repo,
        &["scan"],
        &["custom language 'mylang'", "'mylang.so'"],
    );
    refused(&repo, &["grep", "-p", "x"], &["custom language 'mylang'"]);
    let out = repo.run(&["--json", "scan", "--custom-languages", "allow"]);
    out.assert_code(2);
    assert_eq!(
        out.json()["error"]["code"],
        "custom-language",
        "{}",
        out.stdout
    );
    // Not a shared object.
    repo.write("mylang.so", "not a library");
    refused(
        &repo,
        &["scan"],
        &["custom language 'mylang'", "'mylang.so'"],
    );
    if !have_cc() {
        eprintln!("SKIPPED (rest): no C compiler (cc) to build a library");
        return;
    }
    // A real library without the symbol (tree_sitter_mylang by default).
    let c = repo.path().join("empty.c");
    std::fs::write(&c, "int not_a_grammar(void) { return 0; }\n").expect("write");
    build_library(&repo.path().join("mylang.so"), &[c]);
    refused(&repo, &["scan"], &["no symbol 'tree_sitter_mylang'"]);
    repo.write(
        "sgconfig.yml",
        config("mylang.so", "    languageSymbol: other_symbol\n"),
    );
    refused(&repo, &["scan"], &["no symbol 'other_symbol'"]);
    // A grammar of an ABI this tree-sitter cannot read.
    let c = repo.path().join("old.c");
    std::fs::write(
        &c,
        "struct L { unsigned version; } l = { 9 };\n\
         const void *tree_sitter_mylang(void) { return &l; }\n",
    )
    .expect("write");
    build_library(&repo.path().join("mylang.so"), &[c]);
    repo.write("sgconfig.yml", config("mylang.so", ""));
    refused(&repo, &["scan"], &["ABI version is 9"]);
    // A symbol that returns no language at all (issue 35): refused, not a crash.
    let c = repo.path().join("null.c");
    std::fs::write(&c, "const void *tree_sitter_mylang(void) { return 0; }\n").expect("write");
    build_library(&repo.path().join("mylang.so"), &[c]);
    refused(
        &repo,
        &["scan"],
        &["'tree_sitter_mylang' returned no language"],
    );
    refused(
        &repo,
        &["grep", "-p", "x"],
        &["'tree_sitter_mylang' returned no language"],
    );
}

/// `astedit.customLanguages allow`, wherever it is set (global, system, the
/// repository's own config, `git -c`), no longer loads a library by itself: it allowed
/// whatever library any later checkout names. Only a consent to the library's digest
/// does (consent.rs).
#[test]
fn the_old_config_switch_no_longer_loads_a_library() {
    let Some(repo) = project() else { return };
    repo.run(&["allow", "--revoke"]).assert_code(0);
    let global = repo.home().join("global.gitconfig");
    std::fs::write(&global, "[astedit]\n\tcustomLanguages = allow\n").expect("write");
    let global_path = global.display().to_string();
    let system = [
        ("GIT_CONFIG_GLOBAL", global_path.as_str()),
        ("GIT_CONFIG_SYSTEM", global_path.as_str()),
        ("GIT_CONFIG_NOSYSTEM", "0"),
    ];
    repo.git(&["config", "astedit.customLanguages", "allow"]);
    let command_line = [("GIT_CONFIG_PARAMETERS", "'astedit.customLanguages'='allow'")];
    for env in [&system[..1], &system[1..], &[][..], &command_line[..]] {
        let out = repo.run_with(".", &["--json", "scan"], env, None);
        out.assert_code(2);
        assert!(
            out.json()["error"]
                .to_string()
                .contains("customLanguages, which is not loaded"),
            "{env:?}: {}",
            out.stdout
        );
    }
    repo.run(&["allow"]).assert_code(0);
    repo.run_with(".", &["scan"], &system, None).assert_code(1);
}

#[test]
fn custom_languages_are_not_loaded_unless_allowed() {
    let Some(repo) = project() else { return };
    repo.run(&["allow", "--revoke"]).assert_code(0);
    // As ast-grep's default (ignore): not loaded, said so, and a rule in one is refused.
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(2);
    let message = out.json()["error"].to_string();
    assert!(
        message.contains("customLanguages, which is not loaded"),
        "{message}"
    );
    assert!(message.contains("git astedit allow"), "{message}");
    let out = repo.run(&["grep", "-p", "true", "-l", "myjson"]);
    out.assert_code(2);
    assert!(out.stderr.contains("myjson"), "{}", out.stderr);
    // Without a rule in it, the scan runs and notes it.
    std::fs::remove_file(repo.path().join("rules/no-true.yml")).expect("rm");
    repo.write(
        "rules/other.yml",
        "id: other\nlanguage: json\nseverity: error\nrule: {pattern: 'true'}\n",
    );
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(1);
    let notices = out.json()["notices"].to_string();
    assert!(
        notices.contains("customLanguages: myjson (lib/myjson.so, sha256:"),
        "{notices}"
    );
    // Allowed for one run, by the flag (ast-grep's spelling).
    let out = repo.run(&[
        "grep",
        "-p",
        "true",
        "-l",
        "myjson",
        "--custom-languages=allow",
    ]);
    out.assert_code(0);
    // ignore wins over a consent; trust and revoke say what to type instead.
    repo.run(&["allow"]).assert_code(0);
    let out = repo.run(&[
        "grep",
        "-p",
        "true",
        "-l",
        "myjson",
        "--custom-languages",
        "ignore",
    ]);
    out.assert_code(2);
    for (value, want) in [
        ("trust", "git astedit allow"),
        ("revoke", "git astedit allow --revoke"),
    ] {
        let out = repo.run(&["scan", &format!("--custom-languages={value}")]);
        out.assert_code(2);
        assert!(out.stderr.contains(want), "{}", out.stderr);
    }
    let out = repo.run(&["scan", "--custom-languages=maybe"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("use allow, ignore or sha256:DIGEST"),
        "{}",
        out.stderr
    );
}

/// A custom language's cached results are keyed by its library's bytes: after the
/// library changes under the same name and path, the next scan computes again (its
/// cache is written anew) instead of reusing the old grammar's results.
#[test]
fn a_changed_grammar_library_misses_the_cache() {
    let Some(repo) = project() else { return };
    let cache = repo.path().join(".git/astedit/cache");
    // The result buckets and the plan (the scan's memo of its whole answer is written
    // by the first scan that asks git, the second here).
    let snapshot = || -> Vec<(PathBuf, Vec<u8>)> {
        let mut all: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&cache)
            .expect("cache folder")
            .filter(|e| {
                let name = e.as_ref().map(|e| e.file_name()).unwrap_or_default();
                !name.to_string_lossy().contains("-memo-")
            })
            .map(|e| {
                let path = e.expect("entry").path();
                let bytes = std::fs::read(&path).expect("read bucket");
                (path, bytes)
            })
            .collect();
        all.sort();
        all
    };
    let first = repo.run(&["--json", "scan"]);
    first.assert_code(1);
    let filled = snapshot();
    // Warm, same library: every file hits, nothing is written.
    repo.run(&["--json", "scan"]).assert_code(1);
    assert_eq!(snapshot(), filled);
    // The same grammar's library with other bytes (as a rebuild gives): a miss.
    let mut lib = std::fs::OpenOptions::new()
        .append(true)
        .open(repo.path().join("lib/myjson.so"))
        .expect("open library");
    std::io::Write::write_all(&mut lib, b"\0rebuilt").expect("append");
    drop(lib);
    // Other bytes: allowed again (consent is keyed by them too).
    repo.run(&["allow"]).assert_code(0);
    let again = repo.run(&["--json", "scan"]);
    again.assert_code(1);
    assert_eq!(findings(&again.json()), findings(&first.json()));
    assert_ne!(snapshot(), filled, "the new library's results were stored");
}
