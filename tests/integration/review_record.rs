//! `review` reading the record of sites a scan's staging made (issue 50: a 10,000-site
//! preview grouped in no more time than staging took): the same groups as re-deriving
//! them, byte for byte; a record that does not make the stored after side (forged, or
//! stale) and a preview with none re-derived; decisions kept across `refresh`.

use crate::util::TestRepo;

/// 12 files of `var` declarations (one of several names, whose fix drops the others;
/// a helper whose nested `var` a later pass fixes), and one file with a `var` inside a
/// string the rule does not touch. The rule: `var $A = $B` → `let $A = $B`.
fn corpus() -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..12 {
        let mut s = String::new();
        for j in 0..6 {
            s.push_str(&format!("var a{j} = f({i}, {j});\n"));
        }
        if i % 4 == 0 {
            s.push_str("var x = 1, y = 2;\n");
        }
        if i % 5 == 0 {
            s.push_str("var h = (function () {\n    var inner = 1;\n    return inner;\n})();\n");
        }
        repo.write(&format!("src/m{i:02}.js"), s);
    }
    repo.write("src/s.js", "const s = \"var q = 1\";\nvar z = 3;\n");
    repo.write(
        "rules/let.yml",
        "id: use-let\nlanguage: JavaScript\nrule:\n  pattern: var $A = $B\nfix: let $A = $B\n",
    );
    repo.commit_all("init");
    repo
}

fn review(repo: &TestRepo, id: &str) -> serde_json::Value {
    repo.run(&["--json", "review", id]).assert_code(0).json()
}

/// The review without what names the preview or says how its sites were found.
fn grouped(v: &serde_json::Value) -> String {
    let mut v = v.clone();
    let o = v.as_object_mut().expect("an object");
    for k in ["preview", "derived", "notes"] {
        o.remove(k);
    }
    serde_json::to_string_pretty(&v).expect("json")
}

/// A copy of preview `id` (the same trees and message) whose before commit has the
/// record `record` (a blob's bytes) as its parent, or no parent when `None`: an older
/// preview, or one fetched with a forged record. Its id.
fn copy(repo: &TestRepo, id: &str, record: Option<&[u8]>) -> String {
    let p = repo.git(&["rev-parse", &format!("refs/astedit/{id}")]);
    let p = p.trim();
    let tree = |rev: &str| {
        repo.git(&["rev-parse", &format!("{rev}^{{tree}}")])
            .trim()
            .to_string()
    };
    let raw = repo.git(&["cat-file", "commit", p]);
    let message = &raw[raw.find("\n\n").expect("a message") + 2..];
    let msg = repo.path().join(".git/copy-message");
    std::fs::write(&msg, message).expect("write the message");
    let mut b_args = vec!["commit-tree".to_string(), tree(&format!("{p}^"))];
    if let Some(record) = record {
        let blob_file = repo.path().join(".git/copy-record");
        std::fs::write(&blob_file, record).expect("write the record");
        let blob = repo.git(&["hash-object", "-w", blob_file.to_str().expect("utf-8")]);
        let listing = repo.path().join(".git/copy-tree");
        std::fs::write(&listing, format!("100644 blob {}\tsites\n", blob.trim())).expect("tree");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("git mktree < '{}'", listing.display()))
            .current_dir(repo.path())
            .output()
            .expect("mktree");
        let s_tree = String::from_utf8(out.stdout).expect("utf-8");
        let s = repo.git(&["commit-tree", s_tree.trim(), "-m", "astedit sites: forged"]);
        b_args.extend(["-p".to_string(), s.trim().to_string()]);
    }
    b_args.extend(["-m".to_string(), "astedit before: copy".to_string()]);
    let b_args: Vec<&str> = b_args.iter().map(String::as_str).collect();
    let b = repo.git(&b_args);
    let p2 = repo.git(&[
        "commit-tree",
        &tree(p),
        "-p",
        b.trim(),
        "-F",
        msg.to_str().expect("utf-8"),
    ]);
    let p2 = p2.trim();
    repo.git(&["update-ref", &format!("refs/astedit/{}", &p2[..12]), p2]);
    p2[..12].to_string()
}

/// The record preview `id` was staged with.
fn record_of(repo: &TestRepo, id: &str) -> String {
    repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}~2:sites")])
}

#[test]
fn the_staging_record_gives_the_groups_re_deriving_gives_byte_for_byte() {
    let repo = corpus();
    let id = crate::codemods::scan_stage(&repo, "rules/let.yml");
    let recorded = review(&repo, &id);
    assert_eq!(recorded["derived"], "recorded", "{recorded:#}");
    assert_eq!(recorded["notes"], serde_json::json!([]), "{recorded:#}");
    // 12 × 6 plain, 3 lists, 3 helpers (two fixes, one site), `z` in s.js.
    assert_eq!(recorded["sites"], 79, "{recorded:#}");
    let groups = recorded["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 3, "{recorded:#}");
    let record = record_of(&repo, &id);
    assert!(record.starts_with("astedit-sites 1\nlabel \"rule:use-let\"\n"));
    assert_eq!(record.matches("\nfile ").count(), 13, "{record}");
    // The same preview with no record: re-derived, the same groups.
    let old = copy(&repo, &id, None);
    let rerun = review(&repo, &old);
    assert_eq!(rerun["derived"], "rerun", "{rerun:#}");
    assert_eq!(grouped(&rerun), grouped(&recorded));
    // And every site of every group, listed.
    for g in groups {
        let key = g["key"].as_str().expect("key");
        let list = |id: &str| {
            repo.run(&["--json", "review", id, "--sites", key])
                .assert_code(0)
                .stdout
                .replace(id, "ID")
        };
        assert_eq!(list(&id), list(&old).replace(&old, "ID"));
    }
}

#[test]
fn a_record_that_does_not_make_the_after_side_is_re_derived() {
    let repo = corpus();
    let id = crate::codemods::scan_stage(&repo, "rules/let.yml");
    let recorded = review(&repo, &id);
    let record = record_of(&repo, &id);
    // One site of src/m01.js one byte longer (a stale or forged record): that file is
    // re-derived, the other files' records are kept.
    let head = "file \"src/m01.js\" 6\n";
    let m01 = record.find(head).expect("m01") + head.len();
    let line_end = m01 + record[m01..].find('\n').expect("a line");
    let fields: Vec<&str> = record[m01..line_end].split(' ').collect();
    let longer = format!(
        "{} {} {} {}",
        fields[0],
        fields[1].parse::<usize>().expect("len") + 1,
        fields[2],
        fields[3]
    );
    let stale = format!("{}{longer}{}", &record[..m01], &record[line_end..]);
    let forged_copy = copy(&repo, &id, Some(stale.as_bytes()));
    let v = review(&repo, &forged_copy);
    assert_eq!(v["derived"], "recorded", "{v:#}");
    assert_eq!(
        v["notes"],
        serde_json::json!([
            "the record of sites staged with the preview does not make the after side of 1 \
             file: re-derived"
        ]),
        "{v:#}"
    );
    assert_eq!(grouped(&v), grouped(&recorded));
    // Not a record at all: every file re-derived, and no note (there is nothing to
    // refuse file by file).
    let junk = copy(
        &repo,
        &id,
        Some(b"astedit-sites 1\nfile \"src/m01.js\" 9\n"),
    );
    let v = review(&repo, &junk);
    assert_eq!(v["derived"], "rerun", "{v:#}");
    assert_eq!(grouped(&v), grouped(&recorded));
}

#[test]
fn decisions_on_a_recorded_review_survive_a_refresh_after_an_unrelated_commit() {
    let repo = corpus();
    let id = crate::codemods::scan_stage(&repo, "rules/let.yml");
    let v = review(&repo, &id);
    assert_eq!(v["derived"], "recorded", "{v:#}");
    // The usual change accepted, the lists' group rejected.
    let usual = v["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find(|g| g["outlier"].is_null())
        .expect("the usual change");
    let usual_key = usual["key"].as_str().expect("key").to_string();
    let usual_count = usual["count"].as_u64().expect("count");
    let lists = v["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find(|g| g["template"].as_str().is_some_and(|t| t.contains("-, y")))
        .unwrap_or_else(|| panic!("the lists' group in {v:#}"));
    let lists_key = lists["key"].as_str().expect("key").to_string();
    repo.run(&[
        "review", &id, "--accept", &usual_key, "--reject", &lists_key,
    ])
    .assert_code(0);
    // Unrelated: a header above one file's declarations.
    let m03 = format!("// header\n{}", repo.read_string("src/m03.js"));
    repo.write("src/m03.js", m03);
    repo.commit_all("unrelated");
    let r = repo.run(&["--json", "refresh", &id]).assert_code(0).json();
    let new = r["successor"].as_str().expect("successor").to_string();
    let after = review(&repo, &new);
    assert_eq!(after["accepted"], usual_count, "{after:#}");
    assert_eq!(after["rejected"], 3, "{after:#}");
    assert_eq!(after["undecided"], 79 - usual_count - 3, "{after:#}");
}
