//! The workspace's checkouts are never worked in unless they are the campaign's own and
//! clean: a user's checkout, a clone with changes, a forged path, a killed clone.

use std::path::Path;

use crate::campaign_world::*;

/// Every file under `dir` (the git folder's HEAD, refs and index included, objects
/// left out) with its bytes, and what `git status` says of it: a folder a campaign
/// must not touch is compared with this before and after.
fn folder_state(w: &World, dir: &Path) -> (Vec<(String, Vec<u8>)>, String, String) {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read_dir")
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(root).expect("inside").display().to_string();
            if rel == ".git/objects" || rel == ".git/logs" {
                continue;
            }
            if e.file_type().expect("type").is_dir() {
                walk(root, &p, out);
            } else {
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    let status = w.git_in(
        dir,
        &[
            "status",
            "--porcelain",
            "--ignored",
            "--untracked-files=all",
        ],
    );
    let refs = w.git_in(dir, &["for-each-ref"]);
    (files, status, refs)
}

/// A user's own work in a checkout: a change to a tracked file, an ignored `.env`,
/// an untracked file.
fn dirty_up(dir: &Path) {
    std::fs::write(
        dir.join("src/app.ts"),
        "console.log(2); // mine, not committed\n",
    )
    .expect("write");
    std::fs::write(dir.join(".env"), "TOKEN=do-not-lose-me\n").expect("write");
    std::fs::write(dir.join("notes.txt"), "untracked notes\n").expect("write");
}

/// Issue 35 item 1: `stage --workspace ~/src` with a spec naming `app` must not take
/// the user's own `~/src/app` for its clone: it is refused, and its uncommitted
/// change, ignored `.env` and untracked file are there byte for byte.
#[test]
fn a_same_named_user_checkout_in_the_workspace_is_refused_and_left_whole() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    let mine = Path::new(&ws).join("app");
    std::fs::create_dir_all(&ws).expect("mkdir");
    let bare = w.root.path().join("app.git").display().to_string();
    w.state
        .git(&["clone", "-q", "--", &bare, &mine.display().to_string()]);
    dirty_up(&mine);
    let before = folder_state(&w, &mine);
    for _ in 0..2 {
        let out = w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws]);
        out.assert_code(1);
        let r = out.json();
        let note = r["outcomes"][0]["note"].as_str().expect("note");
        assert!(note.contains("(not-campaign-clone)"), "{note}");
        assert!(note.contains(&mine.display().to_string()), "{note}");
        assert_eq!(folder_state(&w, &mine), before);
    }
    // A clean checkout of the user's is not ours either.
    w.git_in(&mine, &["stash", "-q", "--include-untracked"]);
    let before = folder_state(&w, &mine);
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(1);
    assert_eq!(folder_state(&w, &mine), before);
    // Another workspace gets a clone of its own, marked.
    let ws2 = w.root.path().join("ws2");
    w.run(&[
        "--json",
        "campaign",
        "stage",
        &spec,
        "--workspace",
        &ws2.display().to_string(),
    ])
    .assert_code(0);
    assert!(ws2.join("app/.git/astedit-campaign-clone").is_file());
}

/// Issue 35 item 1: a campaign's own clone that someone worked in is refused, not
/// cleaned: `refresh` after the base moved leaves the work where it is.
#[test]
fn a_campaign_clone_with_changes_is_refused_not_cleaned() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    let clone = Path::new(&ws).join("app");
    dirty_up(&clone);
    let before = folder_state(&w, &clone);
    w.push(
        "app",
        "main",
        &[("src/new.ts", "console.log(3);\n")],
        "more",
    );
    let out = w.run(&["--json", "campaign", "refresh", &spec]);
    let r = out.json();
    let note = r["outcomes"][0]["note"].as_str().expect("note");
    assert!(note.contains("(dirty-clone)"), "{note}");
    assert!(note.contains("notes.txt"), "{note}");
    let (files, status, _) = folder_state(&w, &clone);
    // Only the fetch moved refs; the work tree and what git says of it are the same.
    assert_eq!(status, before.1);
    let tree = |f: &[(String, Vec<u8>)]| -> Vec<(String, Vec<u8>)> {
        f.iter()
            .filter(|(p, _)| !p.starts_with(".git/"))
            .cloned()
            .collect()
    };
    assert_eq!(tree(&files), tree(&before.0));
    // Once the work is gone, the same refresh goes through.
    w.git_in(&clone, &["checkout", "-q", "--", "."]);
    std::fs::remove_file(clone.join(".env")).expect("rm");
    std::fs::remove_file(clone.join("notes.txt")).expect("rm");
    let out = w.run(&["--json", "campaign", "refresh", &spec]);
    out.assert_code(0);
    assert_eq!(out.json()["outcomes"][0]["action"], "refreshed", "{out:?}");
}

/// Issue 35 item 1: the state is shared (pushed, collected from shards); a `checkout`
/// in it naming the user's own checkout is never where refresh or publish work.
#[test]
fn a_forged_checkout_path_in_the_state_is_never_worked_in() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws])
        .assert_code(0);
    // The user's own checkout (World::bare made it, origin the same bare repository).
    let mine = w.root.path().join("src").join("app");
    dirty_up(&mine);
    let before = folder_state(&w, &mine);
    forge_state(&w, "app", |e| {
        e["checkout"] = mine.display().to_string().into();
    });
    w.push(
        "app",
        "main",
        &[("src/new.ts", "console.log(3);\n")],
        "more",
    );
    let out = w.run(&["--json", "campaign", "refresh", &spec]);
    out.assert_code(0);
    assert_eq!(out.json()["outcomes"][0]["action"], "refreshed", "{out:?}");
    assert_eq!(folder_state(&w, &mine), before);
    // Publish pushes from the workspace's clone; the user's checkout gets no branch.
    w.run(&["--json", "campaign", "publish", &spec])
        .assert_code(0);
    assert_eq!(folder_state(&w, &mine), before);
    assert_eq!(
        w.bare_show("app", "astedit/log-to-logger:src/new.ts"),
        "logger.info(3);\n"
    );
    // With a workspace that has no clone of it, nothing runs anywhere.
    let elsewhere = w.root.path().join("elsewhere").display().to_string();
    w.push(
        "app",
        "main",
        &[("src/more.ts", "console.log(4);\n")],
        "again",
    );
    let out = w.run(&[
        "--json",
        "campaign",
        "refresh",
        &spec,
        "--workspace",
        &elsewhere,
    ]);
    let note = out.json()["outcomes"][0]["note"].clone();
    assert!(
        note.as_str().unwrap_or("").contains("(no-campaign-clone)"),
        "{out:?}"
    );
    assert_eq!(folder_state(&w, &mine), before);
}

/// Issue 35 item 8: a `campaign stage` killed outright while `git clone` runs takes
/// the clone with it (a parent-death signal): no clone goes on to race the rerun. A
/// stand-in `git` first on PATH holds each clone (its pid written) before the real one.
#[cfg(target_os = "linux")]
#[test]
fn a_stage_killed_during_git_clone_takes_the_clone_with_it() {
    let (w, spec) = app_world();
    let ws = w.workspace();
    let real = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .expect("which git");
    let real = String::from_utf8(real.stdout).expect("utf8");
    let pid_file = w.root.path().join("clone.pid");
    let went_on = w.root.path().join("clone-went-on");
    let stub = w.gh.path().join("bin/git");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\nif [ \"$1\" = clone ]; then echo $$ > '{}'; sleep 30; : > '{}'; fi\nexec '{}' \"$@\"\n",
            pid_file.display(),
            went_on.display(),
            real.trim()
        ),
    )
    .expect("stub");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut child = w
        .command(&["campaign", "stage", &spec, "--workspace", &ws])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    w.wait_for(|| std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')));
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .parse()
        .expect("pid");
    child.kill().expect("kill");
    child.wait().expect("wait");
    w.wait_for(|| !crate::util::process_running(pid));
    assert!(
        !went_on.exists(),
        "the held clone went on after its run was killed"
    );
    std::fs::remove_file(&stub).expect("rm stub");
    let out = w.run(&["--json", "campaign", "stage", &spec, "--workspace", &ws]);
    out.assert_code(0);
    assert_eq!(out.json()["outcomes"][0]["action"], "staged", "{out:?}");
    assert!(Path::new(&ws)
        .join("app/.git/astedit-campaign-clone")
        .is_file());
}
