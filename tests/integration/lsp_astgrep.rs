//! `git astedit lsp` beside `ast-grep lsp` on the two public ast-grep projects of
//! `../shared/acceptance/ast-grep-projects`: every snippet of their rule tests (valid
//! and invalid) and every Rust source file is opened in both servers, and the
//! diagnostics pushed for each document must be the same (rule id, range, severity).
//! ast-grep 0.51.1 counts columns in code points; its columns are turned into UTF-16
//! units (the protocol's) before comparing.
//!
//! Needs an `ast-grep` binary: `ASTEDIT_AST_GREP`, else `ast-grep` on PATH (`.ci/run`
//! installs it from npm when it can); skipped with a message without one, unless
//! ASTEDIT_REQUIRE_AST_GREP is set.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use serde_json::json;
use serde_json::Value;

use crate::lsp::Client;
use crate::util::TestRepo;

fn projects_dir() -> PathBuf {
    match std::env::var_os("ASTEDIT_AST_GREP_PROJECTS") {
        Some(p) => PathBuf::from(p),
        None => {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/acceptance/ast-grep-projects")
        }
    }
}

/// [`ast_grep`], or `None` after saying the test is skipped (a failure instead when
/// ASTEDIT_REQUIRE_AST_GREP is set).
pub(crate) fn ast_grep_or_skip() -> Option<PathBuf> {
    let found = ast_grep();
    if found.is_none() {
        assert!(
            std::env::var_os("ASTEDIT_REQUIRE_AST_GREP").is_none(),
            "ast-grep is required but not found (ASTEDIT_AST_GREP, PATH)"
        );
        eprintln!("skipped: no ast-grep binary (set ASTEDIT_AST_GREP)");
    }
    found
}

fn ast_grep() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ASTEDIT_AST_GREP") {
        return Some(PathBuf::from(p));
    }
    let found = std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|p| p.join("ast-grep"))
        .find(|p| p.is_file())?;
    // Another program of that name (`sg` is shadow-utils' on Debian) is not it.
    let version = std::process::Command::new(&found)
        .arg("--version")
        .output()
        .ok()?;
    String::from_utf8_lossy(&version.stdout)
        .starts_with("ast-grep")
        .then_some(found)
}

/// Every file under `dir` whose name ends with one of `exts`, sorted.
fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    crate::util::files_under(dir)
        .into_iter()
        .filter(|p| exts.iter().any(|x| p.to_string_lossy().ends_with(x)))
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
}

fn yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_multiple::<Value>(&text).unwrap_or_default()
}

/// The documents to open: (repository path, language id, text).
fn documents(root: &Path) -> Vec<(String, String, String)> {
    let config = &yaml_docs(&root.join("sgconfig.yml"))[0];
    let mut language: BTreeMap<String, String> = BTreeMap::new();
    for dir in config["ruleDirs"].as_array().unwrap() {
        for f in files(&root.join(dir.as_str().unwrap()), &[".yml", ".yaml"]) {
            for doc in yaml_docs(&f) {
                if let (Some(id), Some(lang)) = (doc["id"].as_str(), doc["language"].as_str()) {
                    language.insert(id.to_string(), lang.to_lowercase());
                }
            }
        }
    }
    let mut docs = Vec::new();
    for test in config["testConfigs"].as_array().into_iter().flatten() {
        let dir = root.join(test["testDir"].as_str().unwrap());
        for f in files(&dir, &[".yml", ".yaml"]) {
            if f.to_string_lossy().contains("__snapshots__") {
                continue;
            }
            for case in yaml_docs(&f) {
                let Some(lang) = case["id"].as_str().and_then(|id| language.get(id)) else {
                    continue;
                };
                let ext = match lang.as_str() {
                    "javascript" => "js",
                    "typescript" => "ts",
                    "tsx" => "tsx",
                    "rust" => "rs",
                    other => other,
                };
                for kind in ["valid", "invalid"] {
                    for (i, code) in case[kind].as_array().into_iter().flatten().enumerate() {
                        docs.push((
                            format!("cases/{}/{kind}-{i}.{ext}", case["id"].as_str().unwrap()),
                            lang.clone(),
                            code.as_str().unwrap_or("").to_string(),
                        ));
                    }
                }
            }
        }
    }
    for f in files(root, &[".rs"]) {
        let path = f.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        docs.push((path, "rust".into(), text));
    }
    docs
}

/// UTF-16 units of the first `points` code points of line `line` of `text`.
fn utf16(text: &str, line: u64, points: u64) -> u64 {
    let l = text.split('\n').nth(line as usize).unwrap_or("");
    l.chars()
        .take(points as usize)
        .map(char::len_utf16)
        .sum::<usize>() as u64
}

type Rows = Vec<(String, u64, u64, u64, u64, u64)>;

/// Opens every document in the server `cmd` and collects what it pushes, per path.
fn diagnostics_of(
    cmd: std::process::Command,
    root: &Path,
    docs: &[(String, String, String)],
    code_points: bool,
) -> BTreeMap<String, Rows> {
    let mut c = Client::spawn(cmd);
    let r = c.request(
        "initialize",
        json!({"processId": null, "rootUri": format!("file://{}", root.display()), "capabilities": {}}),
    );
    assert!(r["result"].is_object(), "{r}");
    c.notify("initialized", json!({}));
    let mut out = BTreeMap::new();
    for (path, lang, text) in docs {
        let uri = format!("file://{}/{path}", root.display());
        c.open(&uri, lang, text);
        let mut rows = c
            .diagnostics(&uri)
            .iter()
            .map(|d| {
                let r = &d["range"];
                let at = |p: &Value| {
                    let (line, ch) = (
                        p["line"].as_u64().unwrap(),
                        p["character"].as_u64().unwrap(),
                    );
                    (
                        line,
                        if code_points {
                            utf16(text, line, ch)
                        } else {
                            ch
                        },
                    )
                };
                let (sl, sc) = at(&r["start"]);
                let (el, ec) = at(&r["end"]);
                let code = d["code"].as_str().unwrap_or("").to_string();
                (code, sl, sc, el, ec, d["severity"].as_u64().unwrap_or(0))
            })
            .collect::<Rows>();
        // The order of diagnostics at one place is not the protocol's business.
        rows.sort();
        out.insert(path.clone(), rows);
        c.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }
    out
}

#[test]
fn diagnostics_equal_ast_greps_on_the_acceptance_projects() {
    let Some(ast_grep) = ast_grep_or_skip() else {
        return;
    };
    let projects = projects_dir();
    if !projects.is_dir() {
        eprintln!("skipped: no {}", projects.display());
        return;
    }
    for name in ["codemods", "lading"] {
        let repo = TestRepo::new();
        copy_dir(&projects.join(name), repo.path());
        let docs = documents(repo.path());
        let mut theirs = std::process::Command::new(&ast_grep);
        theirs.arg("lsp").current_dir(repo.path());
        let theirs = diagnostics_of(theirs, repo.path(), &docs, true);
        let ours = diagnostics_of(repo.command(".", &["lsp"]), repo.path(), &docs, false);
        let found: usize = theirs.values().map(Vec::len).sum();
        eprintln!(
            "{name}: {} documents, {found} diagnostics from ast-grep",
            docs.len()
        );
        assert!(
            found > 0 && docs.len() > 100,
            "{name}: too little to compare"
        );
        let differing: Vec<String> = theirs
            .iter()
            .filter(|(path, rows)| ours.get(*path) != Some(*rows))
            .map(|(path, rows)| {
                format!(
                    "{path}:\n  ast-grep {rows:?}\n  ours     {:?}",
                    ours.get(path)
                )
            })
            .collect();
        assert!(differing.is_empty(), "{name}:\n{}", differing.join("\n"));
    }
}
