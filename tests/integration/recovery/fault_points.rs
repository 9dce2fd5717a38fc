//! A folder swapped for a symlink and a file edited after a crash at every fault point
//! of an apply and of an undo: no write outside, no silent overwrite.

use super::files_under;
use super::stage;
use super::swap_for_symlink;
use super::with_fault;
use super::RECORD;
use crate::util::TestRepo;

/// The fault points of a run, and whether each lies past the point of no return.
const POINTS: [(&str, bool); 10] = [
    ("after-record", false),
    ("after-mkdir", false),
    ("after-tempfiles", false),
    ("after-commit", true),
    ("after-rename:1", true),
    ("after-rename:2", true),
    ("after-rename:3", true),
    ("after-renames", true),
    ("after-deletes", true),
    ("after-journal", true),
];

/// The crash test of the issue, for one fault point of an apply (or of the undo of an
/// applied preview): a touched folder is swapped for a symlink to a folder outside the
/// tree (holding files of the same names) and a touched file is edited before recovery
/// runs. Nothing outside may be written and the edit may not be overwritten, whether
/// recovery finishes, rolls back or is abandoned.
fn crash_with_a_symlink_and_an_edit(op: &str, point: &str, committed: bool) {
    let t = TestRepo::new();
    t.write("a.js", "a();\n");
    t.write("d/f.js", "f();\n");
    t.write("d/gone.js", "gone();\n");
    t.commit_all("init");
    let outside = tempfile::tempdir().expect("tempdir");
    for name in ["f.js", "gone.js", "new.js", "keep.txt"] {
        std::fs::write(outside.path().join(name), "outside\n").expect("write");
    }
    let outside_before = files_under(outside.path());
    stage(
        &t,
        &[
            ("a.js", Some("A();\n")),
            ("d/f.js", Some("F();\n")),
            ("d/gone.js", None),
            ("d/new.js", Some("new();\n")),
            ("n/new.js", Some("new();\n")),
        ],
    );
    if op == "undo" {
        t.run(&["apply"]).assert_code(0);
    }
    let out = with_fault(&t, &[op], point);
    assert!(
        out.stderr.contains("fault injected"),
        "{op} {point}: {}",
        out.stderr
    );
    swap_for_symlink(&t, "d", outside.path());
    t.write("a.js", "precious\n");

    let out = t.run(&["list"]);
    out.assert_code(0);
    let case = format!("{op} {point}");
    assert_eq!(
        files_under(outside.path()),
        outside_before,
        "{case}: written outside the tree"
    );
    assert_eq!(t.read_string("a.js"), "precious\n", "{case}: overwritten");
    // The moved folder holds either side of each file, never anything torn.
    let f = t.read_string("d.real/f.js");
    assert!(f == "f();\n" || f == "F();\n", "{case}: {f:?}");
    if !committed || point == "after-journal" {
        assert!(!t.exists(RECORD), "{case}: {}", out.stderr);
        return;
    }
    assert!(t.exists(RECORD), "{case}: the record is kept");
    assert!(out.stderr.contains("unfinished"), "{case}: {}", out.stderr);
    // Finishing and abandoning reach through nothing either.
    t.run(&["recover", "--finish"]).assert_code(3);
    t.run(&["recover", "--abandon"]).assert_code(0);
    assert_eq!(files_under(outside.path()), outside_before, "{case}");
    assert_eq!(t.read_string("a.js"), "precious\n", "{case}");
    // n/new.js is back on the run's starting side: absent before an apply, present
    // before an undo.
    assert_eq!(t.exists("n/new.js"), op == "undo", "{case}");
    assert!(!t.exists(RECORD), "{case}");
    t.fsck();
}

#[test]
fn at_every_fault_point_of_an_apply_no_write_outside_and_no_silent_overwrite() {
    for (point, committed) in POINTS {
        crash_with_a_symlink_and_an_edit("apply", point, committed);
    }
}

#[test]
fn at_every_fault_point_of_an_undo_no_write_outside_and_no_silent_overwrite() {
    for (point, committed) in POINTS {
        crash_with_a_symlink_and_an_edit("undo", point, committed);
    }
}

#[test]
fn an_undo_interrupted_then_edited_is_left_alone_too() {
    let t = TestRepo::new();
    t.write("a.js", "a();\n");
    t.write("b.js", "b();\n");
    t.commit_all("init");
    stage(&t, &[("a.js", Some("A();\n")), ("b.js", Some("B();\n"))]);
    t.run(&["apply"]).assert_code(0);
    with_fault(&t, &["undo"], "after-commit");
    t.write("b.js", "mine\n");
    let out = t.run(&["log"]);
    out.assert_code(0);
    assert!(out.stderr.contains("undo"), "{}", out.stderr);
    assert_eq!(t.read_string("a.js"), "a();\n");
    assert_eq!(t.read_string("b.js"), "mine\n");
    t.run(&["recover", "--abandon"]).assert_code(0);
    assert_eq!(t.read_string("a.js"), "A();\n", "back to the applied side");
    assert_eq!(t.read_string("b.js"), "mine\n");
}
