//! The parse arena (`git_astedit::alloc::ParseArena`) with tree-sitter on mimalloc, as
//! in the binary. A test binary of its own: tree-sitter's allocator is process-wide
//! and must be switched before anything parses, which the library's unit tests (all in
//! one process, parsing on the system allocator) cannot do.

use std::sync::Once;

use ast_grep_core::tree_sitter::LanguageExt;
use git_astedit::alloc::ParseArena;
use git_astedit::lang::Lang as SupportLang;
use git_astedit::rewrite::FileMatches;
use git_astedit::rewrite::MatchText;
use git_astedit::rewrite::Query;

fn mimalloc_for_tree_sitter() {
    static SWITCH: Once = Once::new();
    // SAFETY: every test calls this first, so nothing has touched tree-sitter yet.
    SWITCH.call_once(|| unsafe { git_astedit::alloc::give_tree_sitter_mimalloc() });
}

/// Python with calls at every depth, broken bits, and non-ASCII text.
fn python(i: usize) -> String {
    let mut src = String::new();
    for j in 0..(i % 7 + 1) {
        src.push_str(&format!(
            "def f{j}(x):\n    return g(h(x, {i}), *[k(y) for y in x], key=lambda z: z({j}))\n\
             print('é{i}', f{j}(f{j}(1)))\n"
        ));
    }
    if i.is_multiple_of(3) {
        src.push_str("broken(1, \n");
    }
    src
}

fn search(query: &Query, src: &str) -> FileMatches {
    query.find_owned(src.to_string(), MatchText::FirstLine)
}

/// The same search without an arena: `find` parses with a shared parser on the heap.
fn reference(query: &Query, src: &str) -> FileMatches {
    let mut found = query.find(src);
    for m in &mut found.matches {
        m.text = m.text.split('\n').next().unwrap_or_default().to_string();
    }
    found
}

#[test]
fn searches_in_an_arena_find_what_searches_without_one_find() {
    mimalloc_for_tree_sitter();
    // SAFETY: nothing is made inside; this only asks whether arenas are on.
    let active = unsafe { ParseArena::open() }.is_active();
    assert!(active, "mimalloc serves tree-sitter, so arenas are real");
    let query = Query::new("$F($$$A)", SupportLang::Python).expect("pattern compiles");
    let mut total = 0;
    for i in 0..300 {
        let src = python(i);
        let (got, want) = (search(&query, &src), reference(&query, &src));
        assert_eq!(got.matches, want.matches, "file {i}");
        assert_eq!(got.has_parse_error, want.has_parse_error, "file {i}");
        total += got.matches.len();
    }
    assert!(total > 3000, "{total} matches");
}

#[test]
fn arenas_on_several_threads_at_once() {
    mimalloc_for_tree_sitter();
    let query = Query::new("$F($$$A)", SupportLang::Python).expect("pattern compiles");
    let counts: Vec<usize> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|t| {
                let query = &query;
                scope.spawn(move || {
                    (0..100)
                        .map(|i| search(query, &python(i * 4 + t)).matches.len())
                        .sum::<usize>()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker"))
            .collect()
    });
    let want: usize = (0..400)
        .map(|i| reference(&query, &python(i)).matches.len())
        .sum();
    assert_eq!(counts.iter().sum::<usize>(), want);
}

#[test]
fn a_panic_inside_an_arena_frees_the_tree_before_the_heap() {
    mimalloc_for_tree_sitter();
    let outcome = std::panic::catch_unwind(|| {
        // SAFETY: a fresh parser and its tree, both dropped by the unwinding before
        // the arena (declared first, dropped last).
        let arena = unsafe { ParseArena::open() };
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&SupportLang::Python.get_ts_language())
            .expect("language");
        let tree = parser.parse("f(x)\n", None).expect("tree");
        arena.pin(&tree);
        let calls = tree.root_node().child_count();
        panic!("on purpose, {calls} statements");
    });
    assert!(outcome.is_err());
    // The thread's allocations are back on the default heap and work as before.
    let query = Query::new("$F($$$A)", SupportLang::Python).expect("pattern compiles");
    assert_eq!(search(&query, "a(b(c))\n").matches.len(), 2);
}

#[test]
fn nested_arenas_restore_the_outer_one() {
    mimalloc_for_tree_sitter();
    let query = Query::new("$F($$$A)", SupportLang::Python).expect("pattern compiles");
    // SAFETY: only fresh parsers and their trees inside, all dropped inside.
    let outer = unsafe { ParseArena::open() };
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&SupportLang::Python.get_ts_language())
        .expect("language");
    let tree = parser.parse("f(x)\ng(y)\n", None).expect("tree");
    // An inner arena (a search) opens and closes while the outer tree lives.
    assert_eq!(search(&query, "a(b(c))\n").matches.len(), 2);
    // The outer tree is intact and still allocates in the outer arena.
    let again = parser.parse("f(x)\ng(y)\nh(z)\n", None).expect("tree");
    assert_eq!(tree.root_node().child_count(), 2);
    assert_eq!(again.root_node().child_count(), 3);
    drop((tree, again, parser));
    drop(outer);
}
