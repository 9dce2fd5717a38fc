//! A timing of the engine on a tree of Rust files, run by hand (ignored).
use super::*;

/// Not a test: times the engine on every `.rs` file under `$BENCH_DIR`.
/// `BENCH_DIR=~/.cargo/registry/src cargo test -p astedit-engine --lib rewrite::tests::bench -- --ignored --nocapture`
#[test]
#[ignore]
fn bench_rust_tree() {
    use std::time::Instant;
    let Some(dir) = std::env::var_os("BENCH_DIR") else {
        return;
    };
    let mut files = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                if let Ok(s) = std::fs::read_to_string(&p) {
                    files.push(s);
                }
            }
        }
    }
    files.retain(|s| s.contains("unwrap"));
    files.truncate(400);
    let lang = Lang::Rust;
    let pattern = ast_grep_core::Pattern::try_new("$A.unwrap()", lang).expect("p");
    let fix = ast_grep_core::replacer::TemplateFix::try_new("$A.expect(\"x\")", &lang).expect("f");
    let rw = Rewriter::new(&ops(&[("$A.unwrap()", "$A.expect(\"x\")")]), lang).expect("rw");
    for _round in 0..2 {
        let t = Instant::now();
        let mut n = 0;
        for src in &files {
            let root = parse(src, lang).expect("parse");
            n += root
                .root()
                .find_all(&pattern)
                .map(|m| m.make_edit(&pattern, &fix).inserted_text.len())
                .filter(|&len| len > 0)
                .count();
        }
        eprintln!("parse + find_all + make_edit: {n} edits {:?}", t.elapsed());
        let t = Instant::now();
        let mut n = 0;
        for src in &files {
            n += usize::from(
                parse(src, lang)
                    .expect("parse")
                    .root()
                    .get_inner_node()
                    .has_error(),
            );
        }
        eprintln!("parse only: {n} with errors {:?}", t.elapsed());
        let t = Instant::now();
        let mut n = 0;
        let mut changed = 0;
        for src in &files {
            if let Some(out) = rw.rewrite(src).expect("rewrite") {
                n += out.replacements.len();
                changed += 1;
            }
        }
        eprintln!(
            "Rewriter::rewrite: {n} replacements in {changed} files {:?}",
            t.elapsed()
        );
    }
}
