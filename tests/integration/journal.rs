//! A long journal: `log` shows its newest page and stops reading there, `log -n 0` and
//! `log ID` still see every event, and `list` is unchanged by the journal's length.

use crate::util::TestRepo;

/// Events added on top of the real ones: more than `log`'s default page of 200.
const OLD_EVENTS: usize = 260;

/// A repository with one real staged-then-discarded preview, then `OLD_EVENTS`
/// staged/discarded events written as the tool writes them (a journal commit per
/// event: the previous event and the preview as parents, the event as JSON in the
/// message, the empty tree), then one real pending preview. Returns the repo, the
/// discarded id, the pending id and the journal commit of the oldest synthetic event.
fn long_journal() -> (TestRepo, String, String, String) {
    let t = TestRepo::new();
    t.write("a.ts", "console.log(1);\n");
    t.commit_all("init");
    let first = t.run(&[
        "--json",
        "edit",
        "-p",
        "console.log($A)",
        "-r",
        "logger.info($A)",
    ]);
    let first = first.assert_code(0).json()["id"]
        .as_str()
        .expect("id")
        .to_string();
    t.run(&["discard", &first]).assert_code(0);
    let empty_tree = t.git(&["hash-object", "-t", "tree", "-w", "/dev/null"]);
    let mut tip = t
        .git(&["rev-parse", "refs/astedit-journal"])
        .trim()
        .to_string();
    let mut oldest = String::new();
    for i in 0..OLD_EVENTS {
        // Each event names a preview commit of its own, as staging would.
        let p = t
            .git(&[
                "commit-tree",
                empty_tree.trim(),
                "-m",
                &format!("preview {i}"),
            ])
            .trim()
            .to_string();
        let event = serde_json::json!({
            "event": if i % 2 == 0 { "staged" } else { "discarded" },
            "id": &p[..12],
            "commit": p,
            "time": 1_767_225_600 + i as i64,
            "files": ["a.ts"],
            "who": "Test Committer <committer@example.com>",
            "kind": "edit",
        });
        tip = t
            .git(&[
                "commit-tree",
                empty_tree.trim(),
                "-p",
                &tip,
                "-p",
                &p,
                "-m",
                &event.to_string(),
            ])
            .trim()
            .to_string();
        if i == 0 {
            oldest = tip.clone();
        }
    }
    t.git(&["update-ref", "refs/astedit-journal", &tip]);
    let pending = t.run(&["--json", "edit", "-p", "console.log($A)", "-r", "warn($A)"]);
    let pending = pending.assert_code(0).json()["id"]
        .as_str()
        .expect("id")
        .to_string();
    (t, first, pending, oldest)
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

#[test]
fn log_shows_the_newest_page_of_a_long_journal_unchanged() {
    let (t, first, pending, _) = long_journal();
    let total = OLD_EVENTS + 3;
    let all = t.run(&["log", "-n", "0"]);
    let all = lines(&all.assert_code(0).stdout).to_vec();
    assert_eq!(all.len(), total, "every event, one line each");
    assert!(all[0].contains(&pending) && all[0].contains("staged"));
    assert!(all[total - 1].contains(&first) && all[total - 1].contains("staged"));

    let page = t.run(&["log"]);
    let page = lines(&page.assert_code(0).stdout).to_vec();
    assert_eq!(page.len(), 201);
    assert_eq!(
        page[..200],
        all[..200],
        "the page is the newest 200 lines as they were"
    );
    assert_eq!(
        page[200],
        "… older events not shown (--max-count 200); `git astedit log -n 0` shows them all"
    );
    let five = t.run(&["log", "-n", "5"]);
    assert_eq!(
        lines(&five.assert_code(0).stdout),
        all[..5]
            .iter()
            .copied()
            .chain([
                "… older events not shown (--max-count 5); `git astedit log -n 0` shows them all"
            ])
            .collect::<Vec<_>>()
    );
    let exact = t.run(&["log", "-n", &total.to_string()]);
    assert_eq!(
        lines(&exact.assert_code(0).stdout),
        all,
        "no trailer when nothing is left out"
    );

    let json_all = t.run(&["--json", "log", "-n", "0"]).assert_code(0).json();
    let json_page = t.run(&["--json", "log"]).assert_code(0).json();
    assert_eq!(json_all["capped"], false);
    assert_eq!(json_page["capped"], true);
    let (events_all, events_page) = (
        json_all["events"].as_array().expect("events"),
        json_page["events"].as_array().expect("events"),
    );
    assert_eq!(events_all.len(), total);
    assert_eq!(events_page[..], events_all[..200]);

    // An id still finds its events at the journal's start.
    let old = t.run(&["log", &first]);
    let old = lines(&old.assert_code(0).stdout).to_vec();
    assert_eq!(old.len(), 2, "{old:?}");
    assert!(old[0].contains("discarded") && old[1].contains("staged"));
}

#[test]
fn the_default_page_never_reads_the_older_events() {
    let (t, _, _, oldest) = long_journal();
    // The oldest synthetic event's object goes missing: whatever reads the whole
    // journal now fails, and the default page, far above it, does not notice.
    let path = t
        .path()
        .join(".git/objects")
        .join(&oldest[..2])
        .join(&oldest[2..]);
    std::fs::remove_file(&path).expect("the journal commit is a loose object");
    let page = t.run(&["log"]);
    assert_eq!(lines(&page.assert_code(0).stdout).len(), 201);
    t.run(&["--json", "log", "-n", "10"]).assert_code(0);
    let all = t.run(&["log", "-n", "0"]);
    assert_ne!(
        all.code, 0,
        "the whole journal cannot be read: {}",
        all.stdout
    );
    assert!(all.stderr.contains(&oldest), "{}", all.stderr);
}

#[test]
fn list_is_unchanged_by_the_journals_length() {
    let t = TestRepo::new();
    t.write("a.ts", "console.log(1);\n");
    t.commit_all("init");
    let pending = t.run(&["--json", "edit", "-p", "console.log($A)", "-r", "warn($A)"]);
    pending.assert_code(0);
    let short_text = t.run(&["list"]).assert_code(0).stdout.clone();
    let short_json = t.run(&["--json", "list"]).assert_code(0).json();
    // The same pending preview, under a journal 260 events longer.
    let (long, _, id, _) = long_journal();
    let long_text = long.run(&["list"]).assert_code(0).stdout.clone();
    let long_json = long.run(&["--json", "list"]).assert_code(0).json();
    assert_eq!(lines(&long_text).len(), 1, "{long_text}");
    assert!(long_text.starts_with(&id));
    assert_eq!(lines(&short_text).len(), 1);
    // Same columns, apart from the id and the time.
    let cols = |s: &str| {
        s.split("  ")
            .skip(2)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(cols(&long_text), cols(&short_text));
    let strip = |mut v: serde_json::Value| {
        for row in v["previews"].as_array_mut().expect("previews") {
            let row = row.as_object_mut().expect("row");
            for volatile in ["id", "commit", "time", "staged_at"] {
                row.remove(volatile);
            }
        }
        v
    };
    assert_eq!(strip(long_json), strip(short_json));
}
