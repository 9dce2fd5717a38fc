//! Signed previews (issue 48): with `astedit.signPreviews` or `--sign` the preview
//! commit, its before commit and campaign state commits are signed by git at staging;
//! `list`, `show` and the trust gate read git's own verification (`%G?`), against
//! `gpg.ssh.allowedSignersFile` (valid-after/valid-before at the commit's time) and
//! `gpg.ssh.revocationFile`. Real ssh keys, made by `ssh-keygen` in the test's HOME.

use std::path::Path;
use std::path::PathBuf;

use crate::util::TestRepo;

/// Makes an ed25519 key `name` (no passphrase) in `dir`; returns the private key's path.
pub(crate) fn keygen(dir: &Path, name: &str) -> PathBuf {
    let key = dir.join(name);
    let out = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen runs (install openssh-client)");
    assert!(
        out.status.success(),
        "ssh-keygen: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    key
}

/// The public key line of private key `key`.
pub(crate) fn public(key: &Path) -> String {
    let text = std::fs::read_to_string(key.with_extension("pub")).expect("public key");
    text.trim().to_string()
}

/// A repository that signs with alice's key and allows her (`alice@example.com`).
struct Signing {
    repo: TestRepo,
    alice: PathBuf,
    allowed: PathBuf,
}

impl Signing {
    fn new() -> Signing {
        let repo = TestRepo::new();
        repo.write("src/a.js", "foo(1);\nfoo(2);\n");
        repo.commit_all("init");
        let alice = keygen(repo.home(), "alice");
        let allowed = repo.home().join("allowed_signers");
        std::fs::write(&allowed, format!("alice@example.com {}\n", public(&alice))).expect("write");
        repo.git(&["config", "gpg.format", "ssh"]);
        repo.git(&["config", "user.signingKey", &alice.to_string_lossy()]);
        repo.git(&[
            "config",
            "gpg.ssh.allowedSignersFile",
            &allowed.to_string_lossy(),
        ]);
        Signing {
            repo,
            alice,
            allowed,
        }
    }

    /// Stages an edit (`extra` flags after `edit`); its id.
    fn stage(&self, extra: &[&str]) -> String {
        let mut args = vec!["--json", "edit", "-p", "foo($A)", "-r", "bar($A)"];
        args.extend_from_slice(extra);
        let out = self.repo.run(&args);
        out.assert_code(0);
        out.json()["id"].as_str().expect("id").to_string()
    }

    /// The `signature` of the only pending preview in `list --json`.
    fn listed(&self) -> serde_json::Value {
        let out = self.repo.run(&["--json", "list"]);
        out.assert_code(0);
        let v = out.json();
        crate::contract::validate(&self.repo, "list", &v);
        v["previews"][0]["signature"].clone()
    }
}

/// Whether `git verify-commit` accepts `rev`.
fn git_verifies(repo: &TestRepo, rev: &str) -> bool {
    repo.git_output(&["verify-commit", rev]).code == 0
}

/// Whether the commit object `rev` carries a signature header.
fn has_signature(repo: &TestRepo, rev: &str) -> bool {
    repo.git(&["cat-file", "commit", rev])
        .lines()
        .take_while(|l| !l.is_empty())
        .any(|l| l.starts_with("gpgsig"))
}

#[test]
fn a_preview_staged_with_signing_on_is_signed_by_git_and_shown_good() {
    let s = Signing::new();
    s.repo.git(&["config", "astedit.signPreviews", "true"]);
    let id = s.stage(&[]);
    let p = format!("refs/astedit/{id}");
    // git itself vouches for both commits of the preview.
    assert!(git_verifies(&s.repo, &p), "the preview commit is signed");
    assert!(
        git_verifies(&s.repo, &format!("{p}^")),
        "and its before commit"
    );
    // Journal events are never signed.
    assert!(!has_signature(&s.repo, "refs/astedit-journal"));

    let sig = s.listed();
    assert_eq!(sig["status"], "good", "{sig}");
    assert_eq!(sig["trusted"], true);
    assert_eq!(sig["signer"], "alice@example.com");
    assert!(sig["key"]
        .as_str()
        .is_some_and(|k| k.starts_with("SHA256:")));

    let out = s.repo.run(&["show", &id]);
    out.assert_code(0);
    let line = format!(
        "signed by alice@example.com (ssh key {}): good\n",
        sig["key"].as_str().expect("key")
    );
    assert!(out.stdout.contains(&line), "{}", out.stdout);
    let v = s.repo.run(&["--json", "show", &id]).json();
    crate::contract::validate(&s.repo, "show", &v);
    assert_eq!(v["preview"]["signature"]["status"], "good");

    // The MCP `previews` tool gives it too, in its rows and its text.
    let mut server = crate::mcp::Server::start(&s.repo);
    server.handshake("2025-06-18", "signing-client");
    let listed = server.call("previews", serde_json::json!({"action": "list"}));
    assert_eq!(
        listed["structuredContent"]["previews"][0]["signature"]["status"],
        "good"
    );
    let shown = server.call("previews", serde_json::json!({"action": "show", "id": id}));
    assert_eq!(
        shown["structuredContent"]["preview"]["signature"]["trusted"],
        true
    );
    assert!(
        shown["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains(&line)),
        "{shown}"
    );
    server.finish();

    // The content is what an unsigned stage makes: apply writes it.
    s.repo.run(&["apply", &id]).assert_code(0);
    assert_eq!(s.repo.read_string("src/a.js"), "bar(1);\nbar(2);\n");
}

#[test]
fn sign_flag_signs_one_stage_and_without_it_nothing_is_signed() {
    let s = Signing::new();
    let unsigned = s.stage(&[]);
    assert!(!has_signature(&s.repo, &format!("refs/astedit/{unsigned}")));
    assert_eq!(s.listed()["status"], "unsigned");
    let out = s.repo.run(&["show", &unsigned]);
    assert!(!out.stdout.contains("signed"), "{}", out.stdout);
    s.repo.run(&["discard", &unsigned]).assert_code(0);

    let signed = s.stage(&["--sign"]);
    assert!(git_verifies(&s.repo, &format!("refs/astedit/{signed}")));
    assert_eq!(s.listed()["status"], "good");

    // A refresh signs its successor when signing is on.
    s.repo
        .write("src/a.js", "// moved on\n\n\n\n\nfoo(1);\nfoo(2);\n");
    let out = s.repo.run(&["--json", "refresh", "--sign", &signed]);
    out.assert_code(0);
    let successor = out.json()["successor"]
        .as_str()
        .expect("successor")
        .to_string();
    assert!(git_verifies(&s.repo, &format!("refs/astedit/{successor}")));
}

#[test]
fn the_parts_of_a_split_are_signed_when_signing_is_on() {
    let s = Signing::new();
    s.repo.write("src/b.js", "foo(3);\n");
    s.repo.commit_all("b");
    s.repo.git(&["config", "astedit.signPreviews", "true"]);
    let id = s.stage(&[]);
    // A partial apply splits the preview: the remainder stays pending, signed.
    let out = s.repo.run(&["--json", "apply", &id, "--", "src/a.js"]);
    out.assert_code(0);
    let v = out.json();
    let remainder = v["split"]["remainder"].as_str().expect("remainder");
    assert!(
        git_verifies(&s.repo, &format!("refs/astedit/{remainder}")),
        "{v}"
    );
    assert_eq!(s.listed()["status"], "good");
}

#[test]
fn a_signer_not_allowed_at_the_commit_time_is_not_trusted() {
    let s = Signing::new();
    let id = s.stage(&["--sign"]);
    let alice = public(&s.alice);
    let bob = public(&keygen(s.repo.home(), "bob"));
    let allow = |text: String| std::fs::write(&s.allowed, text).expect("write");

    // Taken out of the allowed signers: untrusted from then on.
    allow(format!("bob@example.com {bob}\n"));
    let sig = s.listed();
    assert_eq!(sig["status"], "unknown-key", "{sig}");
    assert_eq!(sig["trusted"], false);
    assert!(s
        .repo
        .run(&["show", &id])
        .stdout
        .contains(": unknown key\n"));

    // Allowed only before the commit's time (the tests pin it to 2026-01-01).
    allow(format!(
        "alice@example.com valid-before=\"20250101\" {alice}\n"
    ));
    assert_eq!(s.listed()["status"], "expired-key");
    // ...or only after it.
    allow(format!(
        "alice@example.com valid-after=\"20270101\" {alice}\n"
    ));
    assert_eq!(s.listed()["status"], "expired-key");
    // Valid over the commit's time: good again.
    allow(format!(
        "alice@example.com valid-after=\"20250101\",valid-before=\"20270101\" {alice}\n"
    ));
    assert_eq!(s.listed()["status"], "good");

    // The time is the commit's, not the clock's: a preview committed in 2001 by a key
    // allowed until 2002 is good today.
    s.repo.run(&["discard", &id]).assert_code(0);
    let old = s.repo.run_with(
        ".",
        &["--json", "edit", "--sign", "-p", "foo($A)", "-r", "bar($A)"],
        &[("GIT_COMMITTER_DATE", "2001-06-01T00:00:00Z")],
        None,
    );
    old.assert_code(0);
    let old = format!("refs/astedit/{}", old.json()["id"].as_str().expect("id"));
    let year = s
        .repo
        .git(&["log", "-1", "--format=%cd", "--date=format:%Y", &old]);
    assert_eq!(year.trim(), "2001");
    allow(format!(
        "alice@example.com valid-before=\"20020101\" {alice}\n"
    ));
    assert_eq!(s.listed()["status"], "good");
    allow(format!("alice@example.com {alice}\n"));

    // Revoked.
    let revoked = s.repo.home().join("revoked_keys");
    std::fs::write(&revoked, format!("{alice}\n")).expect("write");
    s.repo.git(&[
        "config",
        "gpg.ssh.revocationFile",
        &revoked.to_string_lossy(),
    ]);
    let sig = s.listed();
    assert_eq!(sig["status"], "revoked-key", "{sig}");
    assert_eq!(sig["trusted"], false);
    s.repo.git(&["config", "--unset", "gpg.ssh.revocationFile"]);

    // Nobody allowed at all.
    s.repo
        .git(&["config", "--unset", "gpg.ssh.allowedSignersFile"]);
    assert_eq!(s.listed()["status"], "not-allowed");
}

#[test]
fn an_altered_signed_preview_is_a_bad_signature() {
    let s = Signing::new();
    let id = s.stage(&["--sign"]);
    // The same commit, signature and all, with its summary changed; filed under its
    // own id as a fetched preview would be.
    let raw = s
        .repo
        .git(&["cat-file", "commit", &format!("refs/astedit/{id}")]);
    let forged = raw.replacen("astedit edit:", "astedit edit (forged):", 1);
    assert_ne!(raw, forged);
    let path = s.repo.home().join("forged");
    std::fs::write(&path, forged).expect("write");
    let new = s
        .repo
        .git(&["hash-object", "-t", "commit", "-w", &path.to_string_lossy()])
        .trim()
        .to_string();
    s.repo
        .git(&["update-ref", "-d", &format!("refs/astedit/{id}")]);
    s.repo
        .git(&["update-ref", &format!("refs/astedit/{}", &new[..12]), &new]);
    let sig = s.listed();
    assert_eq!(sig["status"], "bad", "{sig}");
    assert_eq!(sig["trusted"], false);
    // A checker that cannot run is not taken for a bad signature, nor trusted.
    let missing = s.repo.home().join("no-such-ssh-keygen");
    s.repo
        .git(&["config", "gpg.ssh.program", &missing.to_string_lossy()]);
    let sig = s.listed();
    assert_eq!(sig["status"], "error", "{sig}");
    assert_eq!(sig["trusted"], false);
}

#[test]
fn a_signing_failure_fails_the_stage_and_leaves_no_ref() {
    let s = Signing::new();
    let missing = s.repo.home().join("no-such-key");
    s.repo
        .git(&["config", "user.signingKey", &missing.to_string_lossy()]);
    let before = s.repo.snapshot();
    let out = s
        .repo
        .run(&["--json", "edit", "-p", "foo($A)", "-r", "bar($A)", "--sign"]);
    out.assert_code(2);
    let v = out.json();
    assert_eq!(v["error"]["code"], "signing-failed", "{v}");
    assert!(s.repo.astedit_refs().is_empty(), "nothing staged");
    assert_eq!(s.repo.snapshot(), before, "no file touched");
    // The config asks for it just as well: the same refusal.
    s.repo.git(&["config", "astedit.signPreviews", "true"]);
    let out = s.repo.run(&["edit", "-p", "foo($A)", "-r", "bar($A)"]);
    out.assert_code(2);
    assert!(out.stderr.contains("cannot sign"), "{}", out.stderr);
    assert!(s.repo.astedit_refs().is_empty());
}

#[test]
fn campaign_state_commits_are_signed_when_signing_is_on() {
    let s = Signing::new();
    // A checkout of the campaign's, staged in place (no forge needed).
    let target = TestRepo::new();
    target.write("x.ts", "console.log(1);\n");
    target.commit_all("init");
    let spec = s.repo.home().join("campaign.toml");
    let text = format!(
        "name = \"signed\"\n[change]\nops = [{{ pattern = \"console.log($A)\", rewrite = \
         \"logger.info($A)\" }}]\nlang = \"ts\"\n[pr]\nbranch = \"astedit/signed\"\n\
         title = \"t\"\n[[repos]]\npath = \"{}\"\n",
        target.path().display()
    );
    std::fs::write(&spec, text).expect("write");
    let spec = spec.to_string_lossy().into_owned();
    s.repo.git(&["config", "astedit.signPreviews", "true"]);
    s.repo
        .run(&["--json", "campaign", "stage", &spec])
        .assert_code(0);
    let state = "refs/astedit-campaign/signed";
    assert!(git_verifies(&s.repo, state), "the state commit is signed");

    // Without signing, the next state commit is not.
    s.repo.git(&["config", "astedit.signPreviews", "false"]);
    target.write("x.ts", "console.log(2);\n");
    target.commit_all("moved on");
    let before = s.repo.git(&["rev-parse", state]);
    s.repo
        .run(&["--json", "campaign", "stage", &spec])
        .assert_code(0);
    assert_ne!(s.repo.git(&["rev-parse", state]), before, "a new state");
    assert!(!has_signature(&s.repo, state));
    assert!(
        git_verifies(&s.repo, &format!("{state}^")),
        "the old one stays"
    );
}

/// Stages `run -- sh -c SCRIPT` in `repo` (with `extra` flags); its id.
fn stage_run(repo: &TestRepo, extra: &[&str], script: &str) -> String {
    let mut args = vec!["--json", "run"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "sh", "-c", script]);
    let out = repo.run(&args);
    out.assert_code(0);
    out.json()["id"].as_str().expect("id").to_string()
}

/// How many times the staged command ran (one line a run in `marker`).
fn runs(marker: &Path) -> usize {
    std::fs::read_to_string(marker)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn a_fetched_command_preview_runs_again_only_when_signed_by_an_allowed_signer() {
    // Clone A signs with alice's key; its previews are fetched into a fresh clone B.
    let a = Signing::new();
    a.repo.write("n.txt", "one\ntwo\n");
    a.repo.commit_all("n");
    let marks = tempfile::tempdir().expect("tempdir");
    let marker = marks.path().join("ran");
    let script = format!(
        "echo ran >> '{}' && sed -i s/one/ONE/ n.txt",
        marker.display()
    );
    let signed = stage_run(&a.repo, &["--sign"], &script);
    let unsigned = stage_run(&a.repo, &[], &script);
    let bob = keygen(a.repo.home(), "bob");
    a.repo
        .git(&["config", "user.signingKey", &bob.to_string_lossy()]);
    let by_bob = stage_run(&a.repo, &["--sign"], &script);
    assert_eq!(runs(&marker), 3);
    assert!(git_verifies(&a.repo, &format!("refs/astedit/{signed}")));

    let b = TestRepo::new();
    let from = a.repo.path().to_string_lossy().into_owned();
    b.git(&["pull", "-q", &from, "main"]);
    b.git(&["fetch", "-q", &from, "refs/astedit/*:refs/astedit/*"]);
    let allowed = b.home().join("allowed_signers");
    let alice = public(&a.alice);
    let allow = |text: String| std::fs::write(&allowed, text).expect("write");
    allow(format!("alice@example.com {alice}\n"));
    b.git(&[
        "config",
        "gpg.ssh.allowedSignersFile",
        &allowed.to_string_lossy(),
    ]);
    // The tree moves on, so a refresh has something to re-derive.
    b.write("n.txt", "one\ntwo\nthree\n");

    let refused = |id: &str, why: &str| {
        let out = b.run(&["--json", "refresh", id]);
        out.assert_code(4);
        assert_eq!(
            out.json()["error"]["code"],
            "untrusted-preview",
            "{why}: {}",
            out.stdout
        );
        assert_eq!(runs(&marker), 3, "{why}: the command did not run");
    };
    refused(&unsigned, "unsigned");
    refused(&by_bob, "signed by a key B does not allow");

    let listed = b.run(&["--json", "list"]).json();
    let row = listed["previews"]
        .as_array()
        .expect("previews")
        .iter()
        .find(|p| p["id"] == signed.as_str())
        .expect("the signed preview is listed")
        .clone();
    assert_eq!(row["signature"]["trusted"], true, "{row}");
    assert_eq!(row["origin"], "signed", "{row}");
    assert_eq!(row["vouched_by"], "alice@example.com", "{row}");
    // Taken out of B's allowed signers later: untrusted from then on.
    allow(String::new());
    refused(&signed, "its key was removed");
    // Allowed only until before the commit's time.
    allow(format!(
        "alice@example.com valid-before=\"20250101\" {alice}\n"
    ));
    refused(&signed, "its key expired before the commit");

    allow(format!("alice@example.com {alice}\n"));
    let out = b.run(&["--json", "refresh", &signed]);
    out.assert_code(0);
    assert_eq!(runs(&marker), 4, "refresh ran the command again");
    let successor = out.json()["successor"]
        .as_str()
        .expect("successor")
        .to_string();
    b.run(&["apply", &successor]).assert_code(0);
    assert_eq!(b.read_string("n.txt"), "ONE\ntwo\nthree\n");
}
