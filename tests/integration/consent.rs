//! Consent for the commands a repository's files name (issue 48 item 5), built as the
//! attack was: a fresh clone whose astedit.toml names a committed `./tools/fmt.sh`
//! that leaves a marker, and a sgconfig.yml whose custom language is a library that
//! leaves one when loaded. Nothing runs until `git astedit allow` (or the run's own
//! `--allow-fmt=sha256:…`) allowed that very command; a changed one asks again.

use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;

use crate::util::TestRepo;

/// The formatter an attacker commits: it leaves a line in `$HOME/marker`, then
/// passes the file through.
const FMT: &str = "#!/bin/sh\necho ran >> \"$HOME/marker\"\ncat\n";

/// A project whose astedit.toml names `./tools/fmt.sh` for Python, cloned fresh.
fn cloned_project() -> TestRepo {
    let upstream = TestRepo::new();
    upstream.write("tools/fmt.sh", FMT);
    let script = upstream.path().join("tools/fmt.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    upstream.write(
        "astedit.toml",
        "[fmt]\npython = \"./tools/fmt.sh {path}\"\n",
    );
    upstream.write(
        "rules/new.yml",
        "id: new\nlanguage: python\nrule:\n  pattern: old($A)\nfix: new($A)\n",
    );
    upstream.write("a.py", "y = old(2)\n");
    upstream.commit_all("a project with a formatter");
    let clone = TestRepo::new();
    let from = upstream.path().display().to_string();
    clone.git(&["fetch", "-q", "--", &from, "main"]);
    clone.git(&["reset", "-q", "--hard", "FETCH_HEAD"]);
    assert!(clone.path().join("tools/fmt.sh").is_file());
    clone
}

fn marker(repo: &TestRepo) -> usize {
    std::fs::read_to_string(repo.home().join("marker"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// Checks a refusal: exit 4, code `command-not-allowed`, the exact command and its digest in
/// the message, the ways to allow it in the hint.
#[track_caller]
fn assert_refused(out: &crate::util::Output, command: &str, digest: &str) {
    out.assert_code(4);
    let v = out.json();
    let error = &v["error"];
    assert_eq!(error["code"], "command-not-allowed", "{v}");
    let message = error["message"].as_str().unwrap_or("");
    assert!(message.contains(command), "{message}");
    assert!(message.contains(digest), "{message}");
    let hint = error["hint"].as_str().unwrap_or("");
    assert!(hint.contains("git astedit allow"), "{hint}");
    assert!(hint.contains(&format!("--allow-fmt={digest}")), "{hint}");
    assert_eq!(error["details"]["commands"][0]["digest"], digest, "{v}");
}

/// The digest `allow --list` gives the one formatter, and whether it is allowed.
fn listed(repo: &TestRepo) -> (String, bool) {
    let out = repo.run(&["allow", "--list", "--json"]);
    out.assert_code(0);
    let v = out.json();
    let c = &v["commands"][0];
    assert_eq!(c["kind"], "fmt", "{v}");
    assert_eq!(c["command"], "./tools/fmt.sh {path}", "{v}");
    assert_eq!(c["files"], serde_json::json!(["./tools/fmt.sh"]), "{v}");
    let digest = c["digest"].as_str().expect("digest").to_string();
    (digest, c["allowed"] == true)
}

/// The MCP `ast_edit` tool with `fmt: true`, on a server allowed to run programs.
fn mcp_edit(repo: &TestRepo) -> serde_json::Value {
    let mut s = crate::mcp::Server::start_args(repo, &["--allow-run"]);
    s.handshake("2025-06-18", "consent-test");
    s.call(
        "ast_edit",
        serde_json::json!({"fmt": true, "ops": [{"pattern": "old($A)", "rewrite": "new($A)"}]}),
    )
}

#[test]
fn a_clones_formatter_runs_only_once_allowed() {
    let repo = cloned_project();
    let (digest, allowed) = listed(&repo);
    assert!(!allowed);
    let edit = ["--json", "edit", "-p", "old($A)", "-r", "new($A)", "--fmt"];
    let check = ["--json", "scan", "--check", "-c", "rules/new.yml", "--fmt"];
    // Refused, before anything ran or was staged.
    assert_refused(&repo.run(&edit), "./tools/fmt.sh {path}", &digest);
    assert_refused(&repo.run(&check), "./tools/fmt.sh {path}", &digest);
    let stage = ["--json", "scan", "--stage", "-c", "rules/new.yml", "--fmt"];
    assert_refused(&repo.run(&stage), "./tools/fmt.sh {path}", &digest);
    // The MCP tool's `fmt: true` asks the same consent (even with --allow-run).
    let reply = mcp_edit(&repo);
    assert_eq!(reply["isError"], true, "{reply}");
    assert_eq!(
        crate::mcp::error_json(&reply)["error"]["code"],
        "command-not-allowed",
        "{reply}"
    );
    assert_eq!(marker(&repo), 0);
    assert!(repo.astedit_refs().is_empty(), "{:?}", repo.astedit_refs());
    // Listing records nothing.
    assert!(!repo.path().join(".git/astedit/allowed").exists());
    // Allowed: it runs, under the CLI and the MCP tool.
    let out = repo.run(&["allow"]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("./tools/fmt.sh {path}"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(&digest), "{}", out.stdout);
    assert!(out.stdout.contains("allowed now"), "{}", out.stdout);
    assert_eq!(listed(&repo), (digest.clone(), true));
    repo.run(&edit).assert_code(0);
    assert_eq!(marker(&repo), 1);
    repo.run(&check).assert_code(1);
    assert_eq!(marker(&repo), 2);
    let reply = mcp_edit(&repo);
    assert_eq!(reply["isError"], false, "{reply}");
    assert_eq!(marker(&repo), 3);
    // Again with nothing new: said so, nothing recorded.
    let out = repo.run(&["allow", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["changed"], serde_json::json!([]));
    // The script changes (a pull request edits it): asked again.
    repo.write("tools/fmt.sh", format!("{FMT}# more\n"));
    let (changed, allowed) = listed(&repo);
    assert_ne!(changed, digest);
    assert!(!allowed);
    assert_refused(&repo.run(&edit), "./tools/fmt.sh {path}", &changed);
    assert_eq!(marker(&repo), 3);
    repo.run(&["allow", &changed]).assert_code(0);
    repo.run(&edit).assert_code(0);
    assert_eq!(marker(&repo), 4);
    // The command changes: asked again.
    repo.write(
        "astedit.toml",
        "[fmt]\npython = \"./tools/fmt.sh --quiet {path}\"\n",
    );
    let out = repo.run(&edit);
    out.assert_code(4);
    assert!(out.stdout.contains("./tools/fmt.sh --quiet {path}"));
    assert_eq!(marker(&repo), 4);
    // Revoked: refused again.
    repo.write(
        "astedit.toml",
        "[fmt]\npython = \"./tools/fmt.sh {path}\"\n",
    );
    repo.run(&edit).assert_code(0);
    assert_eq!(marker(&repo), 5);
    let out = repo.run(&["allow", "--revoke", "--json"]);
    out.assert_code(0);
    assert_eq!(out.json()["commands"][0]["allowed"], false);
    repo.run(&edit).assert_code(4);
    assert_eq!(marker(&repo), 5);
}

#[test]
fn allow_fmt_pins_the_one_command_a_ci_job_reviewed() {
    let repo = cloned_project();
    let (digest, _) = listed(&repo);
    let check = |allow: &str| {
        repo.run(&[
            "--json",
            "scan",
            "--check",
            "-c",
            "rules/new.yml",
            "--fmt",
            &format!("--allow-fmt={allow}"),
        ])
    };
    // Another digest: refused, and the refusal names the right one.
    let wrong = format!("sha256:{}", "0".repeat(64));
    assert_refused(&check(&wrong), "./tools/fmt.sh {path}", &digest);
    assert_eq!(marker(&repo), 0);
    // Not a digest: a usage error.
    let out = check("./tools/fmt.sh");
    out.assert_code(2);
    assert_eq!(out.json()["error"]["code"], "usage");
    // The right one: it runs, for this run only (nothing recorded).
    check(&digest).assert_code(1);
    assert_eq!(marker(&repo), 1);
    let out = repo.run(&[
        "--json",
        "edit",
        "-p",
        "old($A)",
        "-r",
        "new($A)",
        "--fmt",
        &format!("--allow-fmt={digest}"),
    ]);
    out.assert_code(0);
    assert_eq!(marker(&repo), 2);
    assert!(!repo.path().join(".git/astedit/allowed").exists());
    assert_eq!(listed(&repo), (digest.clone(), false));
    // A pull request that edits the script is refused with the pinned digest.
    repo.write("tools/fmt.sh", format!("{FMT}touch \"$HOME/pwned\"\n"));
    let out = check(&digest);
    out.assert_code(4);
    assert_eq!(marker(&repo), 2);
    assert!(!repo.home().join("pwned").exists());
}

#[test]
fn refresh_runs_a_recorded_formatter_only_as_allowed_now() {
    let repo = cloned_project();
    repo.run(&["allow"]).assert_code(0);
    let out = repo.run(&[
        "--json", "edit", "-p", "old($A)", "-r", "new($A)", "--fmt", "a.py",
    ]);
    out.assert_code(0);
    let id = out.json()["id"].as_str().expect("id").to_string();
    assert_eq!(marker(&repo), 1);
    // The script changes after staging, and the file goes stale.
    repo.write("tools/fmt.sh", format!("{FMT}# changed\n"));
    repo.write("a.py", "x = 0\ny = old(2)\n");
    let out = repo.run(&["--json", "refresh", &id]);
    out.assert_code(4);
    assert_eq!(
        out.json()["error"]["code"],
        "command-not-allowed",
        "{}",
        out.stdout
    );
    assert_eq!(marker(&repo), 1);
    repo.run(&["allow"]).assert_code(0);
    repo.run(&["--json", "refresh", &id]).assert_code(0);
    assert_eq!(marker(&repo), 2);
}

fn have_cc() -> bool {
    Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Builds `lib/mylang.so`: a library whose loading leaves a line in `$HOME/marker`
/// (its constructor runs at `dlopen`, before any symbol is looked up).
fn build_marker_library(repo: &TestRepo, extra: &str) {
    let c = repo.path().join("lib.c");
    std::fs::write(
        &c,
        format!(
            "#include <stdio.h>\n#include <stdlib.h>\n\
             __attribute__((constructor)) static void hit(void) {{\n\
             char p[4096]; snprintf(p, sizeof p, \"%s/marker\", getenv(\"HOME\"));\n\
             FILE *f = fopen(p, \"a\"); if (f) {{ fputs(\"loaded\\n\", f); fclose(f); }} }}\n\
             {extra}\n"
        ),
    )
    .expect("write");
    std::fs::create_dir_all(repo.path().join("lib")).expect("mkdir");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O0", "-o"])
        .arg(repo.path().join("lib/mylang.so"))
        .arg(&c)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc failed");
    std::fs::remove_file(&c).expect("rm");
}

#[test]
fn a_custom_language_library_is_loaded_only_with_consent_to_its_bytes() {
    if !have_cc() {
        eprintln!("SKIPPED: no C compiler (cc) to build a library");
        return;
    }
    let repo = TestRepo::new();
    repo.write(
        "sgconfig.yml",
        "ruleDirs: [rules]\ncustomLanguages:\n  mylang:\n    libraryPath: lib/mylang.so\n    \
         extensions: [my]\n",
    );
    repo.write(
        "rules/r.yml",
        "id: r\nlanguage: json\nrule: {pattern: 'true'}\n",
    );
    repo.write("a.json", "true\n");
    build_marker_library(&repo, "");
    repo.commit_all("a project with a custom language");
    // Not loaded; the notice names the library and its digest.
    let out = repo.run(&["--json", "scan"]);
    out.assert_code(0);
    assert_eq!(marker(&repo), 0);
    let v = repo.run(&["allow", "--list", "--json"]).json();
    let c = &v["commands"][0];
    assert_eq!(c["kind"], "custom-language", "{v}");
    assert_eq!(c["command"], "lib/mylang.so", "{v}");
    let digest = c["digest"].as_str().expect("digest").to_string();
    assert!(out.stdout.contains(&digest), "{}", out.stdout);
    // The old switch no longer loads it, from the repository's config or `git -c`.
    repo.git(&["config", "astedit.customLanguages", "allow"]);
    repo.run(&["scan"]);
    repo.run_with(
        ".",
        &["scan"],
        &[("GIT_CONFIG_PARAMETERS", "'astedit.customLanguages'='allow'")],
        None,
    );
    assert_eq!(marker(&repo), 0);
    // Another digest for the run: not loaded.
    let wrong = format!("--custom-languages=sha256:{}", "0".repeat(64));
    repo.run(&["scan", &wrong]);
    assert_eq!(marker(&repo), 0);
    // Its digest for the run: loaded (then refused: it is no grammar).
    let out = repo.run(&["scan", &format!("--custom-languages={digest}")]);
    out.assert_code(2);
    assert!(out.stderr.contains("no symbol"), "{}", out.stderr);
    assert_eq!(marker(&repo), 1);
    // Allowed: loaded.
    repo.run(&["allow"]).assert_code(0);
    repo.run(&["scan"]).assert_code(2);
    assert_eq!(marker(&repo), 2);
    // Other bytes at the same path: not loaded until allowed again.
    build_marker_library(&repo, "int changed(void) { return 1; }");
    repo.run(&["scan"]).assert_code(0);
    assert_eq!(marker(&repo), 2);
    repo.run(&["allow"]).assert_code(0);
    repo.run(&["scan"]).assert_code(2);
    assert_eq!(marker(&repo), 3);
    // `ignore` in the config still loads none.
    repo.git(&["config", "astedit.customLanguages", "ignore"]);
    repo.run(&["scan"]).assert_code(0);
    assert_eq!(marker(&repo), 3);
}
