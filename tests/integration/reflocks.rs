//! Integration tests: what a SIGKILL inside a ref transaction leaves (the locks of
//! `refs/astedit*`, a refresh swap half done, our `index.lock`), cleared by the next
//! command; and locks that are not ours, named with the command that clears them.

use crate::util::log_events;
use crate::util::TestRepo;

fn edit(t: &TestRepo, from: &str, to: &str) -> String {
    let out = t.run(&["edit", "-p", from, "-r", to, "--json"]);
    out.assert_code(0);
    out.json()["id"].as_str().expect("id").to_string()
}

/// Three committed files, each calling `foo(a, b)`, and a pending preview swapping them.
fn three() -> (TestRepo, String) {
    let t = TestRepo::new();
    for n in 0..3 {
        t.write(
            &format!("f{n}.js"),
            format!("function h{n}() {{\n  return 1;\n}}\nfoo({n}, k);\n"),
        );
    }
    t.commit_all("init");
    let id = edit(&t, "foo($A, $B)", "foo($B, $A)");
    (t, id)
}

fn pending(t: &TestRepo) -> Vec<String> {
    let out = t.run(&["list", "--json"]);
    out.assert_code(0);
    out.json()["previews"]
        .as_array()
        .expect("previews")
        .iter()
        .map(|p| p["id"].as_str().expect("id").to_string())
        .collect()
}

fn intents(t: &TestRepo) -> Vec<String> {
    std::fs::read_dir(t.path().join(".git/astedit-refs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

fn all_notes(t: &TestRepo) -> String {
    let out = t.run(&["log", "--json", "-n", "0"]);
    out.assert_code(0);
    out.json()["events"]
        .as_array()
        .expect("events")
        .iter()
        .flat_map(|e| e["notes"].as_array().cloned().unwrap_or_default())
        .map(|n| n.as_str().unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Makes a file of the preview stale in a way a refresh re-derives (whitespace only).
fn touch_up(t: &TestRepo) {
    t.write("f1.js", "function h1() {\n    return 1;\n}\n\nfoo(1, k);\n");
}

/// A refresh killed with every ref lock taken and nothing committed: the old preview
/// stays pending, and the next command removes the locks (journalled).
#[test]
fn a_refresh_killed_holding_its_ref_locks_leaves_the_old_preview_and_no_lock() {
    let (t, old) = three();
    touch_up(&t);
    let journal = t.git(&["rev-parse", "refs/astedit-journal"]);
    t.kill_at(&["refresh", &old], "refs-locked");
    let locks = t.lock_files();
    assert!(
        locks.contains(&"refs/astedit-journal.lock".to_string())
            && locks.contains(&format!("refs/astedit/{old}.lock")),
        "{locks:?}"
    );
    assert_eq!(intents(&t).len(), 1);
    let out = t.run(&["list"]);
    out.assert_code(0);
    assert!(out.stderr.contains("ref-lock-broken"), "{}", out.stderr);
    assert_eq!(pending(&t), vec![old.clone()]);
    assert_eq!(t.lock_files(), Vec::<String>::new());
    assert!(intents(&t).is_empty());
    assert_eq!(t.git(&["rev-parse", "refs/astedit-journal"]), journal);
    // Writers work again, and the first event carries the note.
    let out = t.run(&["refresh", &old, "--json"]);
    out.assert_code(0);
    assert!(
        all_notes(&t).contains("ref-lock-broken"),
        "{}",
        all_notes(&t)
    );
    t.fsck();
}

/// The state a SIGKILL between gix's commits leaves (the issue's "both pending"): the
/// journal moved and the successor's ref is in place, the old ref and its lock are
/// still there. The next command completes the swap: exactly the successor pending.
#[test]
fn a_refresh_swap_killed_half_way_is_completed_by_the_next_command() {
    for journal_only in [false, true] {
        let (t, old) = three();
        touch_up(&t);
        t.kill_at(&["refresh", &old], "refs-locked");
        let git = t.path().join(".git");
        let new_lock = t
            .lock_files()
            .into_iter()
            .find(|l| l.starts_with("refs/astedit/") && *l != format!("refs/astedit/{old}.lock"))
            .expect("the successor's lock");
        let new = new_lock
            .trim_start_matches("refs/astedit/")
            .trim_end_matches(".lock")
            .to_string();
        // What gix's commit does first, in order: the journal, then the successor.
        std::fs::rename(
            git.join("refs/astedit-journal.lock"),
            git.join("refs/astedit-journal"),
        )
        .expect("commit the journal");
        if !journal_only {
            std::fs::rename(git.join(&new_lock), git.join(format!("refs/astedit/{new}")))
                .expect("commit the successor");
            let refs = t.astedit_refs();
            assert_eq!(refs.len(), 2, "both pending before recovery: {refs:?}");
        }
        let out = t.run(&["list", "--json"]);
        out.assert_code(0);
        assert!(out.stderr.contains("completed it"), "{}", out.stderr);
        assert_eq!(
            pending(&t),
            vec![new.clone()],
            "journal only: {journal_only}"
        );
        assert_eq!(t.astedit_refs(), vec![format!("refs/astedit/{new}")]);
        assert_eq!(t.lock_files(), Vec::<String>::new());
        assert!(intents(&t).is_empty());
        let events = log_events(&t.run(&["log", "--json"]).json());
        assert_eq!(events[0], ("refreshed".to_string(), old.clone()));
        let shown = t.run(&["show", &old]);
        shown.assert_code(2);
        assert!(shown.stderr.contains(&new), "{}", shown.stderr);
        t.run(&["apply", &new]).assert_code(0);
        t.fsck();
    }
}

/// Kills during `edit`, `gc` and a partial apply's split, each inside its ref
/// transaction: the next writer works (no hand-deleted lock) and fsck is clean.
#[test]
fn kills_inside_edit_gc_and_split_leave_no_lock_that_blocks_writers() {
    // edit: the staging transaction (journal + the new preview's ref).
    let (t, first) = three();
    t.kill_at(
        &["edit", "-p", "foo($A, $B)", "-r", "bar($A, $B)"],
        "refs-locked",
    );
    assert!(t
        .lock_files()
        .contains(&"refs/astedit-journal.lock".to_string()));
    let second = edit(&t, "foo($A, $B)", "baz($A, $B)");
    assert_eq!(t.lock_files(), Vec::<String>::new());
    let ids = pending(&t);
    assert!(ids.contains(&first) && ids.contains(&second), "{ids:?}");
    t.fsck();

    // gc: expiring a preview (journal + deleting its ref).
    t.kill_at(&["gc", "--expire", "now"], "refs-locked");
    assert!(!t.lock_files().is_empty());
    let out = t.run(&["gc", "--expire", "now", "--json"]);
    out.assert_code(0);
    assert_eq!(pending(&t), Vec::<String>::new());
    assert_eq!(t.lock_files(), Vec::<String>::new());
    t.fsck();

    // A partial apply's split (parent out, both parts in, one transaction).
    let (t, id) = three();
    t.kill_at(&["apply", &id, "--", "f0.js"], "refs-locked");
    assert!(t.lock_files().contains(&format!("refs/astedit/{id}.lock")));
    let out = t.run(&["apply", &id, "--", "f0.js"]);
    out.assert_code(0);
    assert_eq!(
        t.read_string("f0.js"),
        "function h0() {\n  return 1;\n}\nfoo(k, 0);\n"
    );
    assert_eq!(t.lock_files(), Vec::<String>::new());
    assert_eq!(pending(&t).len(), 1, "the remainder");
    t.fsck();
}

/// A lock no run of ours explains (git's own, or a crashed git's) is never removed:
/// writers exit 6 naming the file and the command that clears it.
#[test]
fn a_ref_lock_that_is_not_ours_is_named_with_the_command_to_clear_it() {
    let (t, id) = three();
    let lock = t.path().join(".git/refs/astedit-journal.lock");
    std::fs::write(&lock, "").expect("lock");
    let out = t.run(&["discard", &id, "--json"]);
    out.assert_code(6);
    let v = out.json();
    assert_eq!(v["error"]["code"], "ref-locked", "{v}");
    let hint = v["error"]["hint"].as_str().expect("hint");
    assert!(
        hint.contains("rm '") && hint.contains("refs/astedit-journal.lock"),
        "{hint}"
    );
    assert!(lock.exists());
    let status = t.run(&["recover", "--status", "--json"]);
    status.assert_code(0);
    let locks = status.json()["locks"].clone();
    assert!(
        locks[0]["path"]
            .as_str()
            .expect("path")
            .ends_with("refs/astedit-journal.lock"),
        "{locks}"
    );
    std::fs::remove_file(&lock).expect("rm");
    t.run(&["discard", &id]).assert_code(0);
}

/// `apply --commit` killed at its HEAD update (after the work tree and the journal,
/// before HEAD and the index): our `index.lock` is named by `recover --status` and
/// removed by the next command, so `git add` works; the ref locks go too.
#[test]
fn an_index_lock_left_by_a_killed_commit_is_reported_and_removed() {
    let (t, id) = three();
    t.kill_at(&["apply", &id, "--commit"], "refs-locked:head");
    assert!(t.exists(".git/index.lock"));
    let add = t.git_output(&["add", "f0.js"]);
    assert_ne!(add.code, 0, "git add is blocked meanwhile");
    let status = t.run(&["recover", "--status"]);
    status.assert_code(0);
    assert!(status.stdout.contains("index.lock"), "{}", status.stdout);
    assert!(
        status
            .stdout
            .contains("next git astedit command removes it"),
        "{}",
        status.stdout
    );
    let out = t.run(&["list"]);
    out.assert_code(0);
    assert!(out.stderr.contains("index-lock-removed"), "{}", out.stderr);
    assert_eq!(t.lock_files(), Vec::<String>::new());
    // The journal's made_commit is true now: HEAD has it and the index matches.
    let made = made_commit(&t);
    assert_eq!(t.git(&["rev-parse", "HEAD"]).trim(), made);
    assert!(
        out.stderr.contains("made-commit-completed"),
        "{}",
        out.stderr
    );
    assert_eq!(t.git(&["status", "--porcelain"]), "");
    t.git(&["add", "f0.js"]);
    t.fsck();
}

fn made_commit(t: &TestRepo) -> String {
    let log = t.run(&["log", "--json"]).json();
    log["events"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["event"] == "applied")
        .and_then(|e| e["made_commit"].as_str())
        .expect("made_commit")
        .to_string()
}

/// `apply --commit` killed past its point of no return, before any rename: recovery
/// finishes the work tree and then HEAD and the index, so made_commit is on HEAD.
#[test]
fn recovery_of_a_killed_commit_puts_its_commit_on_head() {
    let (t, id) = three();
    let before = t.git(&["rev-parse", "HEAD"]);
    t.kill_at(&["apply", &id, "--commit"], "after-commit");
    assert_eq!(t.git(&["rev-parse", "HEAD"]), before);
    let out = t.run(&["list"]);
    out.assert_code(0);
    assert!(
        out.stderr.contains("made-commit-completed"),
        "{}",
        out.stderr
    );
    let made = made_commit(&t);
    assert_eq!(t.git(&["rev-parse", "HEAD"]).trim(), made);
    assert_eq!(t.git(&["rev-parse", "HEAD~"]), before);
    assert_eq!(t.git(&["status", "--porcelain"]), "");
    assert_eq!(t.lock_files(), Vec::<String>::new());
    t.fsck();
}

/// Hand-made bad refs under `refs/astedit/` (a blob, a commit that is not a preview, a
/// preview whose tree holds a gitlink, a preview under another name): every command
/// skips them and `list` says so; `discard ID` removes one, `gc` the rest, journalled.
#[test]
fn bad_refs_are_skipped_reported_and_removed_by_discard_and_gc() {
    let (t, good) = three();
    let good_commit = t.git(&["rev-parse", &format!("refs/astedit/{good}")]);
    let good_commit = good_commit.trim();
    let blob = t.git_output(&["hash-object", "-w", "--stdin"]);
    let _ = blob;
    let blob = {
        let mut cmd = std::process::Command::new("git");
        t.env(&mut cmd);
        let out = cmd
            .current_dir(t.path())
            .args(["hash-object", "-w", "f0.js"])
            .output()
            .expect("git");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    t.git(&["update-ref", "refs/astedit/blobby", &blob]);
    t.git(&["update-ref", "refs/astedit/0000headcommit", "HEAD"]);
    t.git(&["update-ref", "refs/astedit/othername", good_commit]);
    // A copy of the good preview whose after tree holds a gitlink.
    let message = t.git(&["log", "-1", "--format=%B", good_commit]);
    let head = t.git(&["rev-parse", "HEAD"]);
    let tree = {
        let mut cmd = std::process::Command::new("git");
        t.env(&mut cmd);
        let mut child = cmd
            .current_dir(t.path())
            .args(["mktree"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("mktree");
        use std::io::Write as _;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(format!("160000 commit {}\tsub\n", head.trim()).as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("mktree");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let parent = t.git(&["rev-parse", &format!("{good_commit}~")]);
    let linked = t.git(&["commit-tree", &tree, "-p", parent.trim(), "-m", &message]);
    let linked = linked.trim();
    let linked_id = &linked[..12];
    t.git(&["update-ref", &format!("refs/astedit/{linked_id}"), linked]);

    let out = t.run(&["list"]);
    out.assert_code(0);
    assert!(out.stdout.contains(&good), "{}", out.stdout);
    for name in ["blobby", "0000headcommit", "othername", linked_id] {
        assert!(
            out.stderr.contains(&format!("refs/astedit/{name}")),
            "{name}: {}",
            out.stderr
        );
    }
    assert!(out.stderr.contains("submodule"), "{}", out.stderr);
    let v = t.run(&["list", "--json"]).json();
    assert_eq!(v["previews"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(
        v["unreadable_refs"].as_array().map(Vec::len),
        Some(4),
        "{v}"
    );
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(4), "{v}");
    // The good preview still shows and applies without its id.
    t.run(&["show"]).assert_code(0);
    // discard of a bad one removes it.
    let out = t.run(&["discard", "blobby", "--json"]);
    out.assert_code(0);
    assert!(!t
        .astedit_refs()
        .contains(&"refs/astedit/blobby".to_string()));
    t.run(&["apply"]).assert_code(0);
    // gc removes the rest, each journalled.
    let out = t.run(&["gc", "--json"]);
    out.assert_code(0);
    assert_eq!(
        out.json()["removed_refs"].as_array().map(Vec::len),
        Some(3),
        "{}",
        out.stdout
    );
    assert_eq!(t.astedit_refs(), Vec::<String>::new());
    let notes = all_notes(&t);
    assert_eq!(notes.matches("bad-ref-removed").count(), 4, "{notes}");
    t.run(&["list"]).assert_code(0);
    t.fsck();
}

/// A repository lock that cannot be judged (taken on another host; an empty file)
/// is never broken, and the error gives the exact command that clears it.
#[test]
fn an_unjudgeable_repository_lock_names_the_command_that_clears_it() {
    let (t, id) = three();
    let lock = t.path().join(".git/astedit.lock");
    for body in [
        r#"{"pid":1,"host":"elsewhere.example","time":1,"op":"apply"}"#,
        "",
    ] {
        std::fs::write(&lock, body).expect("lock");
        let old = std::process::Command::new("touch")
            .args(["-d", "1 minute ago"])
            .arg(&lock)
            .status()
            .expect("touch");
        assert!(old.success());
        let out = t.run(&["discard", &id, "--json"]);
        out.assert_code(6);
        let v = out.json();
        let hint = v["error"]["hint"].as_str().expect("hint");
        assert!(
            hint.contains(&format!(
                "rm '{}'",
                lock.canonicalize().expect("abs").display()
            )),
            "{body:?}: {hint}"
        );
        assert!(lock.exists(), "never broken automatically");
    }
    std::fs::remove_file(&lock).expect("rm");
    t.run(&["discard", &id]).assert_code(0);
}

/// A live transaction's locks are never broken: while an `edit` holds its ref locks
/// (paused inside the transaction), other commands leave them, and it finishes.
/// `recover --status` names a killed one's locks as the next command's to clear.
#[test]
fn a_live_transactions_locks_are_left_alone() {
    use std::io::BufRead as _;
    let (t, first) = three();
    let mut child = t
        .command(
            ".",
            &["edit", "-p", "foo($A, $B)", "-r", "bar($A, $B)", "--json"],
        )
        .env("GIT_ASTEDIT_FAULT", "pause:refs-locked:2500")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    assert!(lines.any(|l| l.is_ok_and(|l| l.contains("paused at"))));
    let locks = t.lock_files();
    assert!(
        locks.contains(&"refs/astedit-journal.lock".to_string()),
        "{locks:?}"
    );
    let out = t.run(&["list"]);
    out.assert_code(0);
    assert!(!out.stderr.contains("ref-lock-broken"), "{}", out.stderr);
    assert_eq!(
        t.lock_files(),
        locks,
        "a live transaction's locks were touched"
    );
    // A writer meanwhile meets the lock: exit 6 naming it, nothing broken.
    let out = t.run(&["discard", &first, "--json"]);
    out.assert_code(6);
    assert_eq!(out.json()["error"]["code"], "ref-locked", "{}", out.stdout);
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(pending(&t).len(), 2);
    assert_eq!(t.lock_files(), Vec::<String>::new());
    assert!(intents(&t).is_empty());

    t.kill_at(&["discard", &first], "refs-locked");
    let status = t.run(&["recover", "--status"]);
    status.assert_code(0);
    assert!(
        status.stdout.contains("refs/astedit-journal.lock")
            && status
                .stdout
                .contains("next git astedit command removes it"),
        "{}",
        status.stdout
    );
    t.run(&["discard", &first]).assert_code(0);
    assert_eq!(t.lock_files(), Vec::<String>::new());
    t.fsck();
}
