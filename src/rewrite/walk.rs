/*!
Finding a pattern's matches by walking the tree in C (`walk.c`): the same nodes in the
same order as ast-grep-core's `find_all`, but only the nodes of a kind the pattern can
match ever reach Rust. On `$F($$$A)` over Python the cursor walk of `find_all` was 15 %
of the instructions of a search; see `walk.c` for why it is cheaper there.
*/

use std::ffi::c_void;

use ast_grep_core::matcher::MatcherExt;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use ast_grep_core::Matcher;
use ast_grep_core::NodeMatch;
use tree_sitter::ffi::TSNode;

extern "C" {
    /// Calls `visit(context, node)` on every visible node under `root` (and `root`) in
    /// pre-order whose kind is set in the bitmap `kinds` of `kind_bits` bits (null:
    /// every node). False when it ran out of memory.
    fn astedit_walk(
        root: TSNode,
        kinds: *const u64,
        kind_bits: usize,
        visit: extern "C" fn(*mut c_void, TSNode),
        context: *mut c_void,
    ) -> bool;
}

extern "C" fn push(context: *mut c_void, node: TSNode) {
    // SAFETY: `context` is the `Vec` `candidates` passes, borrowed for the walk.
    let nodes = unsafe { &mut *context.cast::<Vec<TSNode>>() };
    nodes.push(node);
}

/// The nodes under (and with) `root`'s root that `matcher`'s kinds allow, in pre-order.
/// None when the walk ran out of memory.
fn candidates<L: LanguageExt, M: Matcher>(
    root: &AstGrep<StrDoc<L>>,
    matcher: &M,
) -> Option<Vec<TSNode>> {
    let bitmap: Option<Vec<u64>> = matcher.potential_kinds().map(|kinds| {
        let mut words = vec![0u64; kinds.iter().max().map_or(1, |last| last / 64 + 1)];
        for kind in kinds.iter() {
            if let Some(word) = words.get_mut(kind / 64) {
                *word |= 1 << (kind % 64);
            }
        }
        words
    });
    let (kinds, kind_bits) = match &bitmap {
        Some(words) => (words.as_ptr(), words.len() * 64),
        None => (std::ptr::null(), 0),
    };
    let mut nodes: Vec<TSNode> = Vec::new();
    let top = root.root().get_inner_node().into_raw();
    // SAFETY: `top` is a node of `root`'s tree, alive for the call; the bitmap has
    // `kind_bits` bits; `push` gets `nodes` back, which nothing else touches meanwhile.
    let complete = unsafe {
        astedit_walk(
            top,
            kinds,
            kind_bits,
            push,
            (&mut nodes as *mut Vec<TSNode>).cast(),
        )
    };
    complete.then_some(nodes)
}

/// The matches of `matcher` in `root`, in `find_all`'s order, matched as they are
/// taken: a match holds its metavariable environment, and a file with tens of
/// thousands of calls would otherwise hold all of them at once (+14 MB peak on the py
/// corpus when they were collected first).
pub fn find_all<'r, 'm, L, M>(
    root: &'r AstGrep<StrDoc<L>>,
    matcher: &'m M,
) -> Box<dyn Iterator<Item = NodeMatch<'r, StrDoc<L>>> + 'm>
where
    'r: 'm,
    L: LanguageExt,
    M: Matcher,
{
    let Some(nodes) = candidates(root, matcher) else {
        // Out of memory in C: the cursor walk still works (or fails the Rust way).
        let all: Vec<_> = root.root().find_all(matcher).collect();
        return Box::new(all.into_iter());
    };
    Box::new(nodes.into_iter().filter_map(move |raw| {
        // SAFETY: the walk made `raw` from `root`'s tree, which outlives 'r.
        let node = unsafe { tree_sitter::Node::from_raw(raw) };
        matcher.match_node(root.adopt(node))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use ast_grep_core::Pattern;

    /// The C walk and `find_all` agree, match for match, in order.
    fn agree(pattern: &str, lang: Lang, src: &str) -> usize {
        let compiled = Pattern::try_new(pattern, lang).expect("pattern compiles");
        let root = lang.ast_grep(src);
        let walked: Vec<_> = root
            .root()
            .find_all(&compiled)
            .map(|m| {
                (
                    m.range(),
                    m.get_node().kind().to_string(),
                    m.text().to_string(),
                )
            })
            .collect();
        let ours: Vec<_> = find_all(&root, &compiled)
            .map(|m| {
                (
                    m.range(),
                    m.get_node().kind().to_string(),
                    m.text().to_string(),
                )
            })
            .collect();
        assert_eq!(ours, walked, "pattern {pattern:?} on {src:?}");
        walked.len()
    }

    #[test]
    fn calls_at_every_depth_in_pre_order() {
        let py = "def f(x):\n    return g(h(x), *[k(y) for y in x], key=lambda z: z(1))\n\nprint(f(f(1)))  # c(2)\nx = f'{p(3)}'\n@d(4)\nclass C(B(5)):\n    pass\n";
        assert_eq!(agree("$F($$$A)", Lang::Python, py), 10);
        let ts = "const a = f(g(1), (x) => h(x)); new C(d(2)); `${t(3)}`; a?.b(4)!;\n";
        assert!(agree("$F($$$A)", Lang::TypeScript, ts) >= 5);
    }

    #[test]
    fn aliased_hidden_and_extra_nodes() {
        // TypeScript and Rust alias many nodes (type_identifier, field_identifier,
        // shorthand properties); comments are extras inside any node.
        let ts = "interface I { a: T; }\nconst { a, b: c } = o; type U = A<B>;\nf(/* x */ a, // y\n  b);\n";
        agree("$A", Lang::TypeScript, ts);
        agree("$F($$$A)", Lang::TypeScript, ts);
        let rs = "struct S { f: T }\nfn g() { let s = S { f }; s.f.h(/* c */ 1); m!(x); }\n";
        agree("$A", Lang::Rust, rs);
        agree("$A.$B($$$C)", Lang::Rust, rs);
        agree("$X", Lang::Python, "a = 1\n# c\nif a:\n    b(a)\n");
    }

    #[test]
    fn broken_empty_and_deep_files() {
        agree("$F($$$A)", Lang::Python, "broken(1, \nf(2\n)) ]\n");
        agree("$F($$$A)", Lang::Python, "");
        agree("$F($$$A)", Lang::JavaScript, "f(");
        // Deeper than the walk's first stack allocation.
        let deep = format!("x = {}1{}\n", "f(".repeat(300), ")".repeat(300));
        assert_eq!(agree("$F($$$A)", Lang::Python, &deep), 300);
        let chain = format!(
            "x = {}\n",
            (0..400)
                .map(|i| format!("a{i}"))
                .collect::<Vec<_>>()
                .join(" + ")
        );
        agree("$A + $B", Lang::Python, &chain);
    }
}
