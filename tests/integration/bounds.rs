//! Inputs that would take all memory (issue 21 item 7) end in a typed error, exit 2,
//! under a memory limit: no abort, no backtrace.

use crate::util::TestRepo;

/// An abort under the limit prints a backtrace or "memory allocation failed".
#[track_caller]
fn assert_clean(out: &crate::util::Output) {
    for bad in ["panicked", "memory allocation", "backtrace", "SIGABRT"] {
        assert!(
            !out.stderr.contains(bad),
            "not a clean error ({bad}):\n{}",
            out.stderr
        );
    }
}

#[test]
fn a_fix_that_matches_its_own_output_stops_at_the_growth_bound() {
    let repo = TestRepo::new();
    repo.write("x.js", "let a = b + c;\n");
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"grow\"\nlanguage = \"javascript\"\n\
         rule = { kind = \"identifier\" }\nfix = \"logger.debug($$$)\"\n",
    );
    repo.commit_all("init");
    let out = repo.run_limited(&["--json", "scan", "--check"], None);
    out.assert_code(2);
    assert_clean(&out);
    let err = &out.json()["error"];
    assert_eq!(err["code"], "rewrite-too-large", "{err}");
    assert!(err["message"].as_str().unwrap_or("").contains("'grow'"), "{err}");
    assert_eq!(repo.read_string("x.js"), "let a = b + c;\n");
}
