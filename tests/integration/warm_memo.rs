//! Integration tests: a report-mode scan through the result cache answers a second run
//! over an unchanged tree from its memo of the whole answer (issue 55 item 3), where git
//! keeps an untracked cache and where it keeps neither it nor fsmonitor (plain: the scan
//! asks `git status` anyway, but for the first scan of a rule set), and any change behind a filled memo — a tracked file, an
//! untracked one (new, or changed again while git's answer stays the same), an ignored
//! rule file, a flag — gives the answer a scan without the cache gives. No memo is kept
//! where one could not stand for the tree: an untracked folder git reports whole, an
//! attribute source, `core.autocrlf`, a submodule, an index without checksum.
//! `ASTEDIT_DEBUG_CACHE=1` makes the scan say whether it answered from the memo.

use std::path::Path;
use std::path::PathBuf;

use crate::cache::age;
use crate::util::Output;
use crate::util::TestRepo;

const RULE: &str = "id: no-print\nlanguage: python\nseverity: warning\nmessage: print $$$A\nrule: {pattern: print($$$A)}\n";
const FROM_MEMO: &str = "git-astedit: scan answered from its memo\n";
const NO_MEMO: &str = "git-astedit: scan no memo of this tree: listed and looked up\n";

/// What git keeps that makes its `status` cheaper: its untracked cache, or nothing
/// (plain).
#[derive(Debug, Clone, Copy)]
enum Mode {
    UntrackedCache,
    Plain,
}

/// A rule project whose rule folder git ignores (a rule file edit changes nothing git
/// reports), Python files committed, git set up as `mode` says, every entry old.
fn repo(mode: Mode) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("sgconfig.yml", "ruleDirs: [rules]\n");
    repo.write(".gitignore", "rules/\n");
    repo.write("rules/py.yml", RULE);
    repo.write("a.py", "print(1)\n");
    repo.write("sub/b.py", "print(2)\nx = 2\n");
    repo.commit_all("init");
    match mode {
        Mode::UntrackedCache => {
            repo.git(&["config", "core.untrackedCache", "true"]);
            repo.git(&["update-index", "--untracked-cache"]);
        }
        Mode::Plain => {
            repo.git(&["config", "core.untrackedCache", "false"]);
            repo.git(&["update-index", "--no-untracked-cache"]);
        }
    }
    age(&repo);
    repo
}

/// `scan` with the cache in `dir` (`None`: `--no-cache`), `flags` after `scan`; with
/// `debug`, the memo's line on stderr.
fn scan(repo: &TestRepo, dir: Option<&Path>, flags: &[&str], debug: bool) -> Output {
    let dir = dir.map(|d| d.display().to_string());
    let mut args = match &dir {
        Some(d) => vec!["--cache-dir", d.as_str()],
        None => vec!["--no-cache"],
    };
    args.push("scan");
    args.extend_from_slice(flags);
    let env: &[(&str, &str)] = match debug {
        true => &[("ASTEDIT_DEBUG_CACHE", "1")],
        false => &[],
    };
    repo.run_with(".", &args, env, None)
}

/// The scan through the memo's cache, which must say `how` it answered and otherwise
/// print, byte for byte, what a scan without the cache prints.
fn answers(repo: &TestRepo, dir: &Path, flags: &[&str], how: &str, what: &str) -> Output {
    let cold = scan(repo, None, flags, false);
    let warm = scan(repo, Some(dir), flags, true);
    assert_eq!(warm.code, cold.code, "{what}: exit\n{}", warm.stderr);
    assert_eq!(warm.stdout, cold.stdout, "{what}: stdout");
    let (said, rest) = warm.stderr.split_at(how.len().min(warm.stderr.len()));
    assert_eq!(said, how, "{what}: how it answered\n{}", warm.stderr);
    assert_eq!(rest, cold.stderr, "{what}: stderr");
    warm
}

/// How the first scan into an empty cache folder answers: where git keeps an untracked
/// cache it is asked, and no memo is found; in plain mode the first scan of a rule set
/// (its plan not yet in the cache) walks the tree without asking git, and says nothing.
fn first(mode: Mode) -> &'static str {
    match mode {
        Mode::UntrackedCache => NO_MEMO,
        Mode::Plain => "",
    }
}

/// A cache folder whose memo of `flags`' scan is filled (and used).
fn filled(repo: &TestRepo, mode: Mode, flags: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    answers(repo, &dir, flags, first(mode), "first");
    if let Mode::Plain = mode {
        answers(repo, &dir, flags, NO_MEMO, "second, git asked");
    }
    answers(repo, &dir, flags, FROM_MEMO, "filled");
    (cache, dir)
}

/// Each test `fn name(mode) { … }` runs once per mode: `name::untracked_cache` and
/// `name::plain`.
macro_rules! in_each_mode {
    ($($(#[doc = $doc:literal])* fn $name:ident($mode:ident) $body:block)*) => {$(
        $(#[doc = $doc])*
        mod $name {
            use super::*;

            fn body($mode: Mode) $body

            #[test]
            fn untracked_cache() {
                body(Mode::UntrackedCache);
            }

            #[test]
            fn plain() {
                body(Mode::Plain);
            }
        }
    )*};
}

in_each_mode! {
fn an_unchanged_tree_is_answered_from_the_memo_in_every_format(mode) {
    let repo = repo(mode);
    for flags in [
        &[][..],
        &["--json"][..],
        &["--json=stream"][..],
        &["--format=sarif"][..],
    ] {
        let (_cache, dir) = filled(&repo, mode, flags);
        let again = answers(&repo, &dir, flags, FROM_MEMO, "again");
        assert!(
            again.stdout.contains("print"),
            "{flags:?}: {}",
            again.stdout
        );
    }
}

fn a_tracked_file_changed_behind_a_filled_memo_is_scanned(mode) {
    let repo = repo(mode);
    let (_cache, dir) = filled(&repo, mode, &[]);
    repo.write("a.py", "print(1)\nprint(16)\n");
    let after = answers(&repo, &dir, &[], NO_MEMO, "tracked file changed");
    assert!(after.stdout.contains("print 16"), "{}", after.stdout);
    // Its new answer is remembered once the change is old enough.
    std::thread::sleep(std::time::Duration::from_millis(3100));
    answers(&repo, &dir, &[], NO_MEMO, "settled");
    answers(&repo, &dir, &[], FROM_MEMO, "remembered");
}

fn an_untracked_file_added_behind_a_filled_memo_is_scanned(mode) {
    let repo = repo(mode);
    let (_cache, dir) = filled(&repo, mode, &[]);
    repo.write("new.py", "print(17)\n");
    let after = answers(&repo, &dir, &[], NO_MEMO, "untracked file added");
    assert!(after.stdout.contains("print 17"), "{}", after.stdout);
}

/// git's answer does not change when a file it reports as modified or untracked
/// changes again: the memo's stat data of that file do.
fn a_reported_file_changed_again_is_scanned_again(mode) {
    let repo = repo(mode);
    repo.write("a.py", "print(1)\nprint(18)\n");
    repo.write("new.py", "print(19)\n");
    // Changed long enough before the scan for the memo to be written.
    std::thread::sleep(std::time::Duration::from_millis(3100));
    let (_cache, dir) = filled(&repo, mode, &[]);
    let before = repo.git(&["status", "--porcelain=v2"]);
    repo.write("a.py", "print(1)\nprint(20)\n");
    assert_eq!(repo.git(&["status", "--porcelain=v2"]), before);
    let after = answers(&repo, &dir, &[], NO_MEMO, "modified file changed again");
    assert!(after.stdout.contains("print 20"), "{}", after.stdout);
    assert!(!after.stdout.contains("print 18"), "{}", after.stdout);
    repo.write("new.py", "print(21)\n");
    assert_eq!(repo.git(&["status", "--porcelain=v2"]), before);
    let after = answers(&repo, &dir, &[], NO_MEMO, "untracked file changed again");
    assert!(after.stdout.contains("print 21"), "{}", after.stdout);
}

/// The rule files are part of the memo's query by content, also where git does not
/// see them (here: ignored). Edited, they are a rule set not yet planned: in plain
/// mode its first scan walks without asking git.
fn an_ignored_rule_file_edited_behind_a_filled_memo_gives_the_new_answer(mode) {
    let repo = repo(mode);
    let (_cache, dir) = filled(&repo, mode, &[]);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    repo.write("rules/py.yml", RULE.replace("print $$$A", "said $$$A"));
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    let after = answers(&repo, &dir, &[], first(mode), "rule file edited");
    assert!(after.stdout.contains("said 1"), "{}", after.stdout);
}

/// A flag that changes the answer (a severity, a glob, a rule left out) is a
/// different query: the memo of the run without it does not answer.
fn a_flag_changed_behind_a_filled_memo_gives_the_new_answer(mode) {
    let repo = repo(mode);
    let (_cache, dir) = filled(&repo, mode, &[]);
    let error = answers(&repo, &dir, &["--error"], NO_MEMO, "--error");
    assert!(error.stdout.contains("error"), "{}", error.stdout);
    let globs = answers(&repo, &dir, &["--globs", "!sub/**"], NO_MEMO, "--globs");
    assert!(!globs.stdout.contains("print 2"), "{}", globs.stdout);
    answers(&repo, &dir, &["--off"], NO_MEMO, "--off");
    // And each is remembered as its own query.
    answers(&repo, &dir, &["--error"], FROM_MEMO, "--error again");
    answers(&repo, &dir, &[], FROM_MEMO, "no flag again");
}

/// git reports a new untracked folder whole (`-unormal`): its files are walked, not
/// named by git, and one may change while git's answer stays the same. No memo is
/// kept while it is there.
fn an_untracked_folder_is_never_remembered(mode) {
    let repo = repo(mode);
    let (_cache, dir) = filled(&repo, mode, &[]);
    repo.write("new/c.py", "print(22)\n");
    let after = answers(&repo, &dir, &[], NO_MEMO, "untracked folder added");
    assert!(after.stdout.contains("print 22"), "{}", after.stdout);
    answers(&repo, &dir, &[], NO_MEMO, "untracked folder again");
    repo.write("new/c.py", "print(23)\n");
    let after = answers(&repo, &dir, &[], NO_MEMO, "file in it changed");
    assert!(after.stdout.contains("print 23"), "{}", after.stdout);
}

/// An attribute source may make a file's bytes differ from its blob: git's own
/// (`info/attributes`), added behind a filled memo, or a `.gitattributes` git does
/// not see (ignored) in a folder of a tracked file. The memo does not answer, and
/// none is written while one is there.
fn an_attribute_source_keeps_no_memo(mode) {
    let repo = repo(mode);
    let (_cache, dir) = filled(&repo, mode, &[]);
    repo.write(".git/info/attributes", "*.py text\n");
    answers(&repo, &dir, &[], NO_MEMO, "info/attributes added");
    answers(&repo, &dir, &[], NO_MEMO, "info/attributes again");
    std::fs::remove_file(repo.path().join(".git/info/attributes")).expect("rm");
    answers(&repo, &dir, &[], FROM_MEMO, "info/attributes gone");
    repo.write(".git/info/exclude", ".gitattributes\n");
    repo.write("sub/.gitattributes", "*.py text\n");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    answers(&repo, &dir, &[], NO_MEMO, "ignored .gitattributes added");
    answers(&repo, &dir, &[], NO_MEMO, "ignored .gitattributes again");
}

/// `core.autocrlf` may make a file's bytes differ from its blob: no memo.
fn autocrlf_keeps_no_memo(mode) {
    let repo = repo(mode);
    repo.git(&["config", "core.autocrlf", "true"]);
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    answers(&repo, &dir, &[], first(mode), "autocrlf first");
    answers(&repo, &dir, &[], NO_MEMO, "autocrlf");
    answers(&repo, &dir, &[], NO_MEMO, "autocrlf again");
}

/// git's answer leaves submodules out (`--ignore-submodules=all`): with one in the
/// index, no memo.
fn a_submodule_keeps_no_memo(mode) {
    let repo = repo(mode);
    let head = repo.git(&["rev-parse", "HEAD"]);
    let link = format!("160000,{},module", head.trim());
    repo.git(&["update-index", "--add", "--cacheinfo", &link]);
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    answers(&repo, &dir, &[], first(mode), "submodule first");
    answers(&repo, &dir, &[], NO_MEMO, "submodule");
    answers(&repo, &dir, &[], NO_MEMO, "submodule again");
}

/// An index written without its checksum (`index.skipHash`) says nothing of what
/// it holds by its last bytes: no memo.
fn an_index_without_checksum_keeps_no_memo(mode) {
    let repo = repo(mode);
    repo.git(&["config", "index.skipHash", "true"]);
    repo.git(&["update-index", "--force-write-index"]);
    let index = std::fs::read(repo.path().join(".git/index")).expect("index");
    assert_eq!(index[index.len() - 20..], [0; 20], "no checksum");
    let cache = tempfile::tempdir().expect("tempdir");
    let dir = cache.path().join("c");
    answers(&repo, &dir, &[], first(mode), "skipHash first");
    answers(&repo, &dir, &[], NO_MEMO, "skipHash");
    answers(&repo, &dir, &[], NO_MEMO, "skipHash again");
}
}
