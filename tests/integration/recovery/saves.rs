//! A user's save during the run's renames: reported, put back or kept, never
//! overwritten, also when recovery finds it later.

use super::stage;
use super::with_fault;
use super::RECORD;
use crate::util::Output;
use crate::util::TestRepo;

/// A file saved after the point of no return, before its rename: left alone and
/// reported (exit 3), the rest applied, the run kept for `recover`. `settle` lets the
/// files age so that the stat stamp (not a re-read) is what catches it.
fn save_during_the_renames(settle: std::time::Duration) {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    t.commit_all("init");
    std::thread::sleep(settle);
    let id = stage(&t, &[("a.txt", Some("A\n")), ("b.txt", Some("B\n"))]);
    let child = t
        .command(".", &["apply", &id])
        .env("GIT_ASTEDIT_FAULT", "pause:after-commit:1500")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // The record's phase turns `committed` right before the pause.
    let record = t.path().join(RECORD);
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(&record).is_ok_and(|r| r.contains("\"committed\""))
        && start.elapsed().as_secs() < 30
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    t.write("b.txt", "saved meanwhile\n");
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("b.txt"), "{stderr}");
    assert!(stderr.contains("recover"), "{stderr}");
    assert_eq!(t.read_string("b.txt"), "saved meanwhile\n");
    assert_eq!(t.read_string("a.txt"), "A\n");
    assert!(t.exists(RECORD));
    assert!(
        !t.snapshot().iter().any(|(p, ..)| p.contains("astedit")),
        "temp file left: {:?}",
        t.snapshot()
    );
    let status = t.run(&["recover", "--status", "--json"]);
    assert_eq!(status.json()["unfinished"]["files"][1]["state"], "changed");
    t.run(&["recover", "--abandon"]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "a\n");
    assert_eq!(t.read_string("b.txt"), "saved meanwhile\n");
}

#[test]
fn a_file_saved_after_the_point_of_no_return_is_reported_not_overwritten() {
    save_during_the_renames(std::time::Duration::ZERO);
}

#[test]
fn a_settled_file_saved_after_the_point_of_no_return_is_caught_by_its_stamp() {
    save_during_the_renames(std::time::Duration::from_millis(2200));
}

/// How a test saves a file while a run is paused right after its last look at it.
#[derive(Clone, Copy, Debug)]
enum Save {
    /// Truncate and write the file itself, as most editors and `>` do.
    InPlace,
    /// Write a temp file and rename it over the target, as careful editors do.
    Rename,
}

impl Save {
    fn to(self, t: &TestRepo, path: &str, content: &str) {
        match self {
            Save::InPlace => t.write(path, content),
            Save::Rename => {
                let tmp = format!("{path}.editor-tmp");
                t.write(&tmp, content);
                std::fs::rename(t.path().join(&tmp), t.path().join(path)).expect("rename");
            }
        }
    }
}

/// Runs `args` paused at `point`, saves `path` there with `save`, and lets it go on.
fn save_in_the_last_instant(
    t: &TestRepo,
    args: &[&str],
    point: &str,
    path: &str,
    save: Save,
) -> Output {
    save_in_the_last_instant_with(t, args, point, path, save, &[])
}

/// [`save_in_the_last_instant`] with more environment for the run.
fn save_in_the_last_instant_with(
    t: &TestRepo,
    args: &[&str],
    point: &str,
    path: &str,
    save: Save,
    env: &[(&str, &str)],
) -> Output {
    use std::io::BufRead;
    let mut child = t
        .command(".", args)
        .envs(env.iter().copied())
        .env("GIT_ASTEDIT_FAULT", format!("pause:{point}:1500"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("stderr line");
        let paused = line.contains(&format!("paused at {point}"));
        seen.push(line);
        if paused {
            break;
        }
    }
    assert!(
        seen.iter().any(|l| l.contains("paused at")),
        "never paused at {point}: {seen:?}"
    );
    save.to(t, path, "saved in the last instant\n");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    seen.extend(rest);
    let out = child.wait_with_output().expect("wait");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: seen.join("\n"),
    }
}

/// The instant between the last look at a target and its replacement: a save made
/// there is never lost. The target is exchanged atomically with the new file, what it
/// held is looked at, and a save found there is put back (exit 3, the path named, the
/// run kept for `recover`). Both save styles, a settled stamp and a fresh one, a
/// rewrite and a removal.
#[test]
fn a_save_between_the_last_look_and_the_rename_is_put_back_and_named() {
    for (save, settle) in [
        (Save::InPlace, false),
        (Save::Rename, false),
        (Save::InPlace, true),
        (Save::Rename, true),
    ] {
        for removal in [false, true] {
            let t = TestRepo::new();
            t.write("a.txt", "a\n");
            t.write("b.txt", "b\n");
            t.commit_all("init");
            if settle {
                std::thread::sleep(std::time::Duration::from_millis(2200));
            }
            let b = if removal { None } else { Some("B\n") };
            let id = stage(&t, &[("a.txt", Some("A\n")), ("b.txt", b)]);
            let point = if removal {
                "before-remove:b.txt"
            } else {
                "before-rename:b.txt"
            };
            let case = format!("{save:?}, settled {settle}, removal {removal}");
            let out = save_in_the_last_instant(&t, &["apply", &id], point, "b.txt", save);
            assert_eq!(out.code, 3, "{case}: {}", out.stderr);
            assert!(out.stderr.contains("b.txt"), "{case}: {}", out.stderr);
            assert!(out.stderr.contains("put back"), "{case}: {}", out.stderr);
            assert_eq!(
                t.read_string("b.txt"),
                "saved in the last instant\n",
                "{case}: the save was lost"
            );
            assert_eq!(t.read_string("a.txt"), "A\n", "{case}");
            assert!(t.exists(RECORD), "{case}: the run waits for recover");
            assert!(
                !t.snapshot()
                    .iter()
                    .any(|(p, ..)| p.contains("astedit") || p.contains("editor-tmp")),
                "{case}: temp file left: {:?}",
                t.snapshot()
            );
            let status = t.run(&["recover", "--status", "--json"]);
            assert_eq!(
                status.json()["unfinished"]["files"][1]["state"],
                "changed",
                "{case}"
            );
            t.run(&["recover", "--abandon"]).assert_code(0);
            assert_eq!(t.read_string("a.txt"), "a\n", "{case}");
            assert_eq!(t.read_string("b.txt"), "saved in the last instant\n");
            t.git(&["fsck", "--no-progress"]);
        }
    }
}

/// Where the system has no atomic exchange, the old file is held open across the plain
/// rename: a save written into it in place in the last instant is found through the
/// descriptor, kept in `.git/astedit-saved/<id>/` and named (exit 3), never lost.
#[test]
fn without_an_exchange_a_save_in_the_last_instant_is_kept_and_named() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.write("b.txt", "b\n");
    t.commit_all("init");
    let id = stage(&t, &[("a.txt", Some("A\n")), ("b.txt", Some("B\n"))]);
    let out = save_in_the_last_instant_with(
        &t,
        &["apply", &id],
        "before-rename:b.txt",
        "b.txt",
        Save::InPlace,
        &[("GIT_ASTEDIT_NO_EXCHANGE", "1")],
    );
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("b.txt") && out.stderr.contains("kept at"),
        "{}",
        out.stderr
    );
    let kept = t.path().join(format!(".git/astedit-saved/{id}/b.txt"));
    assert_eq!(
        std::fs::read_to_string(&kept).expect("kept"),
        "saved in the last instant\n"
    );
    assert_eq!(t.read_string("a.txt"), "A\n");
    assert!(t.exists(RECORD), "the run waits for recover");
}

/// A run killed right after it exchanged a target with its new content, before looking
/// at what it replaced: recovery finds the displaced file beside the target and, since
/// it holds neither side (a save made in that instant), keeps it and says where.
#[test]
fn recovery_keeps_a_displaced_save_it_finds_beside_a_target() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    let id = stage(&t, &[("a.txt", Some("A\n"))]);
    // The state a kill leaves after the exchange: the target holds the new content,
    // the temp name what the target held, which here is a save of the user's.
    with_fault(&t, &["apply", &id], "after-commit");
    let temp = format!(".a.txt.astedit-{id}.tmp");
    assert!(t.exists(&temp), "the run's temp file");
    std::fs::rename(t.path().join(&temp), t.path().join("a.txt")).expect("rename");
    t.write(&temp, "a save of the user's\n");
    // Every command recovers first.
    let out = t.run(&["list"]);
    out.assert_code(0);
    assert_eq!(t.read_string("a.txt"), "A\n");
    assert!(!t.exists(&temp));
    let kept = t.path().join(format!(".git/astedit-saved/{id}/a.txt"));
    assert_eq!(
        std::fs::read_to_string(&kept).expect("kept"),
        "a save of the user's\n"
    );
    assert!(out.stderr.contains("astedit-saved"), "{}", out.stderr);
    let recovered = t.run(&["--json", "log"]).json();
    assert!(
        recovered.to_string().contains("astedit-saved"),
        "the journal names the kept file: {recovered}"
    );
}
