//! The user guide's examples are real output (issue 42). In `docs/src/**/*.md` and
//! `README.md`, a fenced block that follows a line `<!-- checked: FIXTURE -->` is a
//! terminal session: its lines starting with `$ ` are run in order by `sh -c` in one
//! fresh repository holding `fixtures/FIXTURE` (committed), with `git-astedit` on `PATH`
//! so that `git astedit …` works as for a user; the other lines are what they print,
//! stdout and stderr through one pipe as a terminal shows them. Exit codes are not
//! compared (the text says them).
//!
//! Compared after normalising both sides: a 12-, 40- or 64-digit hex id becomes `<idN>`
//! by order of first appearance in the block (preview ids hold the staging time), an
//! RFC 3339 time becomes `<time>`, a duration in seconds `<secs> s`, the temporary
//! repository's path `<repo>`; spaces at the ends of lines do not count. A line
//! that is only `…` stands for any number of lines (output cut for the page). A command
//! in a checked block names no preview id (it could not be known in advance): the
//! newest preview is the default of every command that takes one.
//!
//! `GIT_ASTEDIT_BLESS_DOCS=1 cargo test --test integration guide::` writes the actual
//! output into every block that no longer matches (review the diff); blocks that still
//! match, elisions included, are left as they are.
//!
//! Every other block with a line `$ git astedit …` must follow a line
//! `<!-- illustrative: WHY -->` (issue 52 item 6): an example is run, or says why not.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use crate::util::bin;
use crate::util::TestRepo;

const MARK: &str = "<!-- checked: ";
/// The repository's path as a blessed block shows it.
const SHOWN_REPO: &str = "/tmp/repo";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file of the guide.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("docs/src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A checked block: its fixture, and the line range of its body in the document.
struct Block {
    fixture: String,
    body: std::ops::Range<usize>,
}

fn blocks(lines: &[&str]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(rest) = lines[i].strip_prefix(MARK) else {
            i += 1;
            continue;
        };
        let fixture = rest.trim_end().trim_end_matches("-->").trim().to_string();
        assert!(
            lines.get(i + 1).is_some_and(|l| l.starts_with("```")),
            "line {}: a checked mark must be followed by a fence",
            i + 1
        );
        let start = i + 2;
        let len = lines[start..]
            .iter()
            .position(|l| l.starts_with("```"))
            .expect("unclosed fence");
        out.push(Block {
            fixture,
            body: start..start + len,
        });
        i = start + len + 1;
    }
    out
}

/// Runs the block's commands; returns the session as it should be written.
fn run_session(fixture: &str, body: &[&str]) -> (String, PathBuf) {
    let repo = TestRepo::new();
    let src = root().join("fixtures").join(fixture);
    assert!(src.is_dir(), "no fixture {}", src.display());
    copy_tree(&src, repo.path());
    repo.commit_all("fixture");
    // `git astedit` finds the binary on PATH, as for an installed one.
    let bin_dir = bin().parent().expect("bin dir").to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let mut session = String::new();
    let mut lines = body.iter();
    while let Some(line) = lines.next() {
        let Some(first) = line.strip_prefix("$ ") else {
            continue;
        };
        // A command continued on the next lines (`\` at the end) is run, and shown,
        // whole.
        let mut command = first.to_string();
        let mut shown = line.to_string();
        while command.ends_with('\\') {
            let Some(next) = lines.next() else { break };
            command.push('\n');
            command.push_str(next);
            shown.push('\n');
            shown.push_str(next);
        }
        let mut cmd = Command::new("sh");
        repo.env(&mut cmd);
        // The identity the journal shows, the same on every machine.
        cmd.env("PATH", &path)
            .env("GIT_AUTHOR_NAME", "Ada Lovelace")
            .env("GIT_AUTHOR_EMAIL", "ada@example.com")
            .env("GIT_COMMITTER_NAME", "Ada Lovelace")
            .env("GIT_COMMITTER_EMAIL", "ada@example.com")
            .current_dir(repo.path())
            .arg("-c")
            .arg(format!("exec 2>&1\n{command}\n"))
            .stdin(std::process::Stdio::null());
        let out = cmd.output().expect("sh");
        session.push_str(&shown);
        session.push('\n');
        session.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    let repo_path = repo.path().canonicalize().expect("repo path");
    (session, repo_path)
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The text with its unstable parts named (see the module docs).
fn normalise(text: &str, repo: &Path) -> String {
    let text = text
        .replace(&*repo.to_string_lossy(), "<repo>")
        .replace(SHOWN_REPO, "<repo>");
    let time = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
        .expect("regex");
    let text = time.replace_all(&text, "<time>");
    // A command's run time (`verify`), and the spaces that pad table columns.
    let secs = regex::Regex::new(r"\b\d+\.\d+ s\b").expect("regex");
    let text = secs.replace_all(&text, "<secs> s");
    let text: String = text
        .lines()
        .map(|l| l.trim_end().to_string() + "\n")
        .collect();
    let hex = regex::Regex::new(r"\b[0-9a-f]{12}([0-9a-f]{28}([0-9a-f]{24})?)?\b").expect("regex");
    let mut seen: Vec<String> = Vec::new();
    hex.replace_all(&text, |c: &regex::Captures| {
        let id = c[0].to_string();
        let n = match seen.iter().position(|s| *s == id) {
            Some(n) => n,
            None => {
                seen.push(id);
                seen.len() - 1
            }
        };
        format!("<id{}>", n + 1)
    })
    .into_owned()
}

/// Whether the actual lines fit the expected ones, where a line `…` takes any lines.
fn fits(expected: &[&str], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((&"…", rest)) => (0..=actual.len()).any(|skip| fits(rest, &actual[skip..])),
        Some((line, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a == line && fits(rest, more)),
    }
}

#[test]
fn every_checked_block_of_the_guide_is_what_the_commands_print() {
    let bless = std::env::var_os("GIT_ASTEDIT_BLESS_DOCS").is_some();
    let mut failures = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        let mut rewritten: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let mut changed = false;
        // Later blocks first, so that rewriting one keeps the earlier ranges.
        for block in blocks(&lines).into_iter().rev() {
            checked += 1;
            let body = &lines[block.body.clone()];
            let (actual, repo) = run_session(&block.fixture, body);
            let want = normalise(&body.join("\n"), &repo);
            let got = normalise(&actual, &repo);
            let want: Vec<&str> = want.lines().collect();
            let got_lines: Vec<&str> = got.lines().collect();
            if fits(&want, &got_lines) {
                continue;
            }
            let name = doc.strip_prefix(root()).unwrap_or(&doc).display();
            if bless {
                let shown = actual.replace(&*repo.to_string_lossy(), SHOWN_REPO);
                rewritten.splice(
                    block.body.clone(),
                    shown.lines().map(|l| l.trim_end().to_string()),
                );
                changed = true;
            } else {
                failures.push(format!(
                    "{name}:{}: the block differs from the output\n--- expected ---\n{}\n--- actual ---\n{}",
                    block.body.start + 1,
                    want.join("\n"),
                    got
                ));
            }
        }
        if changed {
            std::fs::write(&doc, rewritten.join("\n") + "\n").expect("write");
        }
    }
    assert!(checked >= 10, "only {checked} checked blocks found");
    assert!(
        failures.is_empty(),
        "{}\n(GIT_ASTEDIT_BLESS_DOCS=1 rewrites them)",
        failures.join("\n\n")
    );
}

/// The mark of a block that is not run, with why (a tool, a network or a scenario no
/// fixture holds).
const ILLUSTRATIVE: &str = "<!-- illustrative: ";

/// Every fenced block of `lines` with a line `$ git astedit …` that is neither checked
/// nor marked illustrative: (1-based line of the fence, its first command).
fn unmarked(lines: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("```") {
            i += 1;
            continue;
        }
        let start = i + 1;
        let len = lines[start..]
            .iter()
            .position(|l| l.starts_with("```"))
            .unwrap_or(lines.len() - start);
        let body = &lines[start..start + len];
        let command = body
            .iter()
            .find(|l| l.starts_with("$ ") && l.contains("git astedit"));
        let marked =
            i > 0 && (lines[i - 1].starts_with(MARK) || lines[i - 1].starts_with(ILLUSTRATIVE));
        if let (Some(command), false) = (command, marked) {
            out.push((i + 1, command.to_string()));
        }
        i = start + len + 1;
    }
    out
}

/// Issue 52 item 6: an example is run, or says why not, so a wrong one fails CI.
#[test]
fn every_example_that_runs_git_astedit_is_checked_or_says_why_not() {
    let mut missing = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        let name = doc
            .strip_prefix(root())
            .unwrap_or(&doc)
            .display()
            .to_string();
        for (line, command) in unmarked(&lines) {
            missing.push(format!("{name}:{line}: {command}"));
        }
    }
    assert!(
        missing.is_empty(),
        "blocks that run git astedit with neither `{MARK}FIXTURE -->` nor `{ILLUSTRATIVE}WHY -->` \
         before them:\n{}",
        missing.join("\n")
    );
}

#[test]
fn an_unmarked_example_is_found_and_a_marked_one_is_not() {
    let doc = [
        "<!-- checked: demo -->",
        "```console",
        "$ git astedit list",
        "```",
        "```console",
        "$ git astedit grep -p x",
        "```",
        "<!-- illustrative: needs ruff -->",
        "```text",
        "$ git astedit run -- ruff .",
        "```",
        "```sh",
        "git astedit list   # no prompt: a command to copy, not a session",
        "```",
    ];
    assert_eq!(unmarked(&doc), [(5, "$ git astedit grep -p x".to_string())]);
}

#[test]
fn the_normaliser_names_ids_in_order_and_the_ellipsis_takes_any_lines() {
    let repo = Path::new("/tmp/x");
    assert_eq!(
        normalise(
            "a 0123456789ab b 0123456789ab c ffffffffffff /tmp/x/f",
            repo
        ),
        "a <id1> b <id1> c <id2> <repo>/f\n"
    );
    assert_eq!(normalise("2026-12-02T17:16:16Z  ", repo), "<time>\n");
    assert!(fits(&["a", "…", "d"], &["a", "b", "c", "d"]));
    assert!(fits(&["a", "…"], &["a"]));
    assert!(!fits(&["a", "…", "d"], &["a", "b"]));
}
