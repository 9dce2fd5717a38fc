//! Integration tests: a new user's first hour — the README's examples in a repository
//! that also holds Markdown, YAML, JSON and TOML, pathspecs that match nothing, the
//! differences from ast-grep, and the papercuts of issue 13.

use crate::util::TestRepo;

/// A repository like most: code plus a README, CI YAML, JSON and TOML, each holding
/// code-looking text (a README example, a YAML command) that is no code.
fn mixed_repo(code: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "README.md",
        "# Demo\n\n```js\nconsole.log(x)\n```\n\nCall `x.unwrap()` or console.log(y).\n",
    );
    repo.write(
        ".github/workflows/ci.yml",
        "run: console.log(1) && x.unwrap()\n",
    );
    repo.write(
        "package.json",
        "{\"scripts\": {\"log\": \"console.log(1)\"}}\n",
    );
    repo.write("Cargo.toml", "[package]\nname = \"x.unwrap()\"\n");
    repo.write("docs/page.html", "<p>console.log(z) and a.unwrap()</p>\n");
    for (path, text) in code {
        repo.write(path, text);
    }
    repo.commit_all("init");
    repo
}

fn staged_id(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("Staged preview "))
        .and_then(|rest| rest.split('.').next())
        .unwrap_or_else(|| panic!("no id in:\n{stdout}"))
        .to_string()
}

/// The paths a preview touches.
fn preview_paths(repo: &TestRepo, id: &str) -> Vec<String> {
    let r = format!("refs/astedit/{id}");
    repo.git(&["diff", "--name-only", &format!("{r}~"), &r])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn readme_edit_example_stages_in_a_repository_with_markdown_yaml_json_toml() {
    let repo = mixed_repo(&[
        ("src/app.ts", "console.log(\"total\", n);\nconsole.log();\n"),
        ("src/util.js", "export const f = () => console.log(a);\n"),
    ]);
    let before = repo.snapshot();
    let out = repo.run(&[
        "edit",
        "-p",
        "console.log($$$A)",
        "-r",
        "logger.debug($$$A)",
    ]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert_eq!(preview_paths(&repo, &id), ["src/app.ts", "src/util.js"]);
    assert_eq!(
        repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:src/app.ts")]),
        "logger.debug(\"total\", n);\nlogger.debug();\n"
    );
    // One warning names the skipped languages and why.
    let notes: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("skipping"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", out.stderr);
    for lang in ["Markdown", "Yaml", "Json", "Html"] {
        assert!(notes[0].contains(lang), "{lang} not named: {}", notes[0]);
    }
    assert!(notes[0].contains("only text in"), "{}", notes[0]);
    assert_eq!(repo.snapshot(), before, "edit wrote to the work tree");
    repo.fsck();

    // The same in JSON: the skipped languages are listed, the preview staged.
    repo.run(&["discard", &id]).assert_code(0);
    let json = repo
        .run(&[
            "--json",
            "edit",
            "-p",
            "console.log($$$A)",
            "-r",
            "logger.debug($$$A)",
        ])
        .assert_code(0)
        .json();
    assert!(json["id"].is_string(), "{json}");
    let langs: Vec<&str> = json["skipped_languages"]
        .as_array()
        .expect("skipped_languages")
        .iter()
        .filter_map(|l| l["lang"].as_str())
        .collect();
    assert_eq!(langs.len(), 4, "{json}");
}

#[test]
fn readme_unwrap_example_stages_in_a_rust_repository_with_a_readme() {
    let repo = mixed_repo(&[(
        "src/main.rs",
        "fn main() -> Result<(), E> {\n    let v = read().unwrap();\n    Ok(())\n}\n",
    )]);
    let out = repo.run(&["edit", "-p", "$A.unwrap()", "-r", "$A?"]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert_eq!(preview_paths(&repo, &id), ["src/main.rs"]);
    assert!(repo
        .git(&[
            "cat-file",
            "blob",
            &format!("refs/astedit/{id}:src/main.rs")
        ])
        .contains("let v = read()?;"),);
}

#[test]
fn grep_skips_languages_where_the_pattern_is_only_text() {
    let repo = mixed_repo(&[("src/app.ts", "console.log(1);\n")]);
    let out = repo.run(&["grep", "-p", "console.log($$$A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "src/app.ts:1:1: console.log(1)\n");
    assert_eq!(
        out.stderr
            .lines()
            .filter(|l| l.contains("skipping"))
            .count(),
        1,
        "{}",
        out.stderr
    );
    // Without metavariables too: a Markdown paragraph is no code.
    let out = repo.run(&["grep", "-p", "console.log(y)"]);
    out.assert_code(1);
    assert_eq!(out.stdout, "");
    // Forcing the language takes a text pattern as asked…
    let out = repo.run(&["grep", "-l", "md", "-p", "# Demo"]);
    assert_ne!(out.code, 2, "{}", out.stderr);
    // …but metavariables that Markdown reads as text are an error there.
    let out = repo.run(&["grep", "-l", "md", "-p", "$A.unwrap()"]);
    out.assert_code(2);
    assert!(out.stderr.contains("Markdown"), "{}", out.stderr);
}

#[test]
fn a_template_check_is_only_done_for_the_languages_kept() {
    let repo = mixed_repo(&[("src/app.ts", "foo(1);\n")]);
    // The template's $A is undefined nowhere that counts: TS defines it.
    repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"])
        .assert_code(0);
    // A real undefined metavariable is still refused.
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($B)"]);
    out.assert_code(2);
    assert!(out.stderr.contains("$B"), "{}", out.stderr);
}

#[test]
fn a_pattern_never_matches_a_missing_token() {
    let repo = TestRepo::new();
    // `a?.b` is real; the line below it lacks a `)` that the parser invents.
    repo.write("a.ts", "const v = a?.b;\nlet y = foo(x;\nfoo(z);\n");
    repo.commit_all("init");
    let out = repo.run(&["grep", "-p", "foo($A)"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.ts:3:1: foo(z)\n");
    let out = repo.run(&["grep", "-p", "$A?.$B"]);
    out.assert_code(0);
    assert_eq!(out.stdout, "a.ts:1:11: a?.b\n");
    let out = repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"]);
    out.assert_code(0);
    let id = staged_id(&out.stdout);
    assert_eq!(
        repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:a.ts")]),
        "const v = a?.b;\nlet y = foo(x;\nbar(z);\n"
    );
}
