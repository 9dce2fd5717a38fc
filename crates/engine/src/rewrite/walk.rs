/*!
Finding a pattern's matches by walking the tree in C (`walk.c`): the same nodes in the
same order as ast-grep-core's `find_all`, but only the nodes of a kind the pattern can
match ever reach Rust. On `$F($$$A)` over Python the cursor walk of `find_all` was 15 %
of the instructions of a search; see `walk.c` for why it is cheaper there.
*/

use std::ffi::c_void;

use ast_grep_core::matcher::kind_utils;
use ast_grep_core::matcher::MatcherExt;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use ast_grep_core::MatchStrictness;
use ast_grep_core::Matcher;
use ast_grep_core::Node;
use ast_grep_core::NodeMatch;
use ast_grep_core::Pattern;
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

    /// Writes `node`'s visible children (as a tree cursor steps through them) to
    /// `out`, at most `capacity`, and returns how many there are; `usize::MAX` when it
    /// ran out of memory.
    fn astedit_children(node: TSNode, out: *mut TSNode, capacity: usize) -> usize;
}

extern "C" fn push(context: *mut c_void, node: TSNode) {
    // SAFETY: `context` is the `Vec` `candidates` passes, borrowed for the walk.
    let nodes = unsafe { &mut *context.cast::<Vec<TSNode>>() };
    nodes.push(node);
}

/// The kinds `matcher` can match as a bitmap for `astedit_walk` (`None`: any kind).
fn kind_bitmap<M: Matcher>(matcher: &M) -> Option<Vec<u64>> {
    matcher.potential_kinds().map(|kinds| {
        let mut words = vec![0u64; kinds.iter().max().map_or(1, |last| last / 64 + 1)];
        for kind in kinds.iter() {
            if let Some(word) = words.get_mut(kind / 64) {
                *word |= 1 << (kind % 64);
            }
        }
        words
    })
}

/// The nodes under (and with) `root`'s root that `matcher`'s kinds allow, in pre-order.
/// None when the walk ran out of memory.
fn candidates<L: LanguageExt, M: Matcher>(
    root: &AstGrep<StrDoc<L>>,
    matcher: &M,
) -> Option<Vec<TSNode>> {
    let bitmap = kind_bitmap(matcher);
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

/// Whether [`find_shaped`] can stand in for ast-grep-core's `Pattern` matcher on
/// `pattern`: it decides as `Pattern::match_node` does but keeps no metavariable
/// environment, so only where none is needed to decide: ast-grep's default (smart)
/// strictness, a root node of one kind (not a metavariable, not ERROR, which
/// matches any kind), and no metavariable named twice (a second `$A` must equal
/// what the first captured). Callers use it where the captures are not read either.
pub fn shaped(pattern: &Pattern) -> bool {
    if !matches!(pattern.strictness, MatchStrictness::Smart) {
        return false;
    }
    match &pattern.node {
        PatternNode::Internal { kind_id, .. } if !kind_utils::is_error_kind(*kind_id) => {}
        _ => return false,
    }
    let mut single = Vec::new();
    let mut multi = Vec::new();
    let mut stack = vec![&pattern.node];
    while let Some(node) = stack.pop() {
        match node {
            PatternNode::Internal { children, .. } => stack.extend(children),
            PatternNode::MetaVar {
                meta_var: MetaVariable::Capture(name, _),
            } => single.push(name),
            PatternNode::MetaVar {
                meta_var: MetaVariable::MultiCapture(name),
            } => multi.push(name),
            PatternNode::MetaVar { .. } | PatternNode::Terminal { .. } => {}
        }
    }
    [single, multi].into_iter().all(|mut names| {
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        names.len() == all
    })
}

/// The nodes `pattern` matches in `root`, in `find_all`'s order, for a pattern
/// [`shaped`] allows: the C walk hands each node of the pattern's kind to [`Shape`]
/// as it reaches it (the node's children are then still in the cache, and the walk
/// goes into them next), which lists children with `astedit_children` into one
/// buffer instead of a new tree cursor per node and builds no environment. On
/// `$F($$$A)` over Python ast-grep-core's matcher was 7 % of a search, most of it
/// cursor steps.
pub fn find_shaped<'r, L: LanguageExt>(
    root: &'r AstGrep<StrDoc<L>>,
    pattern: &'r Pattern,
) -> Box<dyn Iterator<Item = Node<'r, StrDoc<L>>> + 'r> {
    let mut walk = ShapedWalk {
        shape: Shape {
            src: root.get_text().as_bytes(),
            buffer: Vec::new(),
        },
        goal: &pattern.node,
        found: Vec::new(),
    };
    let kinds = kind_bitmap(pattern);
    let top = root.root().get_inner_node().into_raw();
    // SAFETY: `top` is a node of `root`'s tree, alive for the call; the bitmap has
    // its length's bits; `visit_shaped` gets `walk` back, which nothing else touches
    // meanwhile.
    let complete = unsafe {
        astedit_walk(
            top,
            kinds.as_ref().map_or(std::ptr::null(), |k| k.as_ptr()),
            kinds.as_ref().map_or(0, |k| k.len() * 64),
            visit_shaped,
            (&mut walk as *mut ShapedWalk<'_>).cast(),
        )
    };
    if !complete {
        // Out of memory in C: the cursor walk still works (or fails the Rust way).
        let all: Vec<_> = root
            .root()
            .find_all(pattern)
            .map(|m| m.get_node().clone())
            .collect();
        return Box::new(all.into_iter());
    }
    Box::new(walk.found.into_iter().filter_map(move |(raw, decided)| {
        // SAFETY: the walk made `raw` from `root`'s tree, which outlives 'r.
        let node = root.adopt(unsafe { tree_sitter::Node::from_raw(raw) });
        // Undecided (`astedit_children` ran out of memory): ast-grep-core decides.
        (decided || pattern.match_node(node.clone()).is_some()).then_some(node)
    }))
}

/// [`find_shaped`]'s state through the walk.
struct ShapedWalk<'s> {
    shape: Shape<'s>,
    goal: &'s PatternNode,
    /// The nodes that matched (`true`) or that could not be decided (`false`).
    found: Vec<(TSNode, bool)>,
}

extern "C" fn visit_shaped(context: *mut c_void, node: TSNode) {
    // SAFETY: `context` is the `ShapedWalk` `find_shaped` passes, borrowed for the walk.
    let walk = unsafe { &mut *context.cast::<ShapedWalk<'_>>() };
    match walk.shape.step(walk.goal, node) {
        Ok(Step::Matched) => walk.found.push((node, true)),
        Ok(_) => {}
        Err(_) => {
            walk.shape.buffer.clear();
            walk.found.push((node, false));
        }
    }
}

/// Compares pattern nodes with tree nodes, with smart strictness and no environment.
///
/// ast-grep-core's `match_node_impl` and the sequence functions under it, step for
/// step: the same candidates skipped, the same ellipsis ends probed, so the same
/// nodes match. With no environment its aggregator always agrees, and smart
/// strictness never skips a pattern node, which leaves three outcomes of a step.
struct Shape<'s> {
    src: &'s [u8],
    /// The children of the nodes being compared, a parent's before its children's:
    /// each comparison lists its node's children at the end and truncates them after.
    buffer: Vec<TSNode>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Matched,
    SkipCandidate,
    NoMatch,
}

/// Why a sequence comparison stopped short.
enum Stop {
    NoMatch,
    /// `astedit_children` ran out of memory: nothing was decided.
    OutOfMemory,
}

/// What a sequence comparison does after an ellipsis (`$$$`, `$$$A`) was looked at.
enum Flow {
    /// The rest of the candidates went to the ellipsis: the sequences match.
    Done,
    /// An ellipsis followed by another took one candidate: look at the next.
    Again,
    /// Compare the next pattern node with the next candidate as usual.
    Next,
}

fn is_ellipsis(node: &PatternNode) -> bool {
    matches!(
        node,
        PatternNode::MetaVar {
            meta_var: MetaVariable::Multiple | MetaVariable::MultiCapture(_)
        }
    )
}

impl Shape<'_> {
    /// ast-grep-core's `match_node_impl` with smart strictness.
    fn step(&mut self, goal: &PatternNode, raw: TSNode) -> Result<Step, Stop> {
        // SAFETY: `raw` is a node of the tree being searched, alive for the search.
        let node = unsafe { tree_sitter::Node::from_raw(raw) };
        Ok(match goal {
            PatternNode::Terminal {
                text,
                is_named,
                kind_id,
            } => {
                if kind_utils::are_kinds_matching(*kind_id, node.kind_id())
                    && (!is_named || self.src.get(node.byte_range()) == Some(text.as_bytes()))
                {
                    Step::Matched
                } else if node.is_extra() || !node.is_named() {
                    Step::SkipCandidate
                } else {
                    Step::NoMatch
                }
            }
            PatternNode::MetaVar { meta_var } => match meta_var {
                _ if node.is_extra() => Step::SkipCandidate,
                MetaVariable::Capture(_, true) | MetaVariable::Dropped(true)
                    if !node.is_named() =>
                {
                    Step::NoMatch
                }
                _ => Step::Matched,
            },
            PatternNode::Internal { kind_id, children } => {
                if !kind_utils::are_kinds_matching(*kind_id, node.kind_id()) {
                    return Ok(Step::NoMatch);
                }
                let start = self.buffer.len();
                self.list_children(raw)?;
                let end = self.buffer.len();
                let matched = self.sequence(children, start, end);
                self.buffer.truncate(start);
                match matched {
                    Ok(()) => Step::Matched,
                    Err(Stop::NoMatch) => Step::NoMatch,
                    Err(stop) => return Err(stop),
                }
            }
        })
    }

    /// Appends `raw`'s children to the buffer.
    fn list_children(&mut self, raw: TSNode) -> Result<(), Stop> {
        let start = self.buffer.len();
        let mut room = 16;
        loop {
            self.buffer.reserve(room);
            let spare = self.buffer.capacity() - start;
            // SAFETY: `raw` is a node of the searched tree; C writes at most `spare`
            // nodes into the buffer's spare capacity and says how many it has.
            let count =
                unsafe { astedit_children(raw, self.buffer.as_mut_ptr().add(start), spare) };
            if count == usize::MAX {
                return Err(Stop::OutOfMemory);
            }
            if count <= spare {
                // SAFETY: the first `count` nodes after `start` were written.
                unsafe { self.buffer.set_len(start + count) };
                return Ok(());
            }
            room = count;
        }
    }

    /// ast-grep-core's `match_nodes_impl_recursive`: `goals` against the candidates
    /// `buffer[at..end]`.
    fn sequence(&mut self, goals: &[PatternNode], mut at: usize, end: usize) -> Result<(), Stop> {
        let mut goal = 0;
        if at == end {
            return Err(Stop::NoMatch);
        }
        loop {
            match self.ellipsis(goals, &mut goal, &mut at, end)? {
                Flow::Done => return Ok(()),
                Flow::Again => continue,
                Flow::Next => {}
            }
            self.single(goals, &mut goal, &mut at, end)?;
            if goal < goals.len() {
                goal += 1;
                at = (at + 1).min(end);
            }
            if goal == goals.len() {
                // Smart strictness takes any trailing candidates.
                return Ok(());
            }
            if at == end {
                return Err(Stop::NoMatch);
            }
        }
    }

    /// ast-grep-core's `may_match_ellipsis_impl`.
    fn ellipsis(
        &mut self,
        goals: &[PatternNode],
        goal: &mut usize,
        at: &mut usize,
        end: usize,
    ) -> Result<Flow, Stop> {
        let Some(current) = goals.get(*goal) else {
            return Ok(Flow::Done);
        };
        if !is_ellipsis(current) {
            return Ok(Flow::Next);
        }
        *goal += 1;
        // Unnamed tokens after an ellipsis are left to it (`f($$$A)`'s `)`).
        while goals.get(*goal).is_some_and(PatternNode::is_trivial) {
            *goal += 1;
        }
        let Some(next) = goals.get(*goal) else {
            return Ok(Flow::Done);
        };
        if is_ellipsis(next) {
            *at += 1;
            return if *at == end {
                Err(Stop::NoMatch)
            } else {
                Ok(Flow::Again)
            };
        }
        // The ellipsis ends before the first candidate the next pattern node matches.
        loop {
            if self.step(next, self.buffer[*at])? == Step::Matched {
                return Ok(Flow::Next);
            }
            *at += 1;
            if *at == end {
                return Err(Stop::NoMatch);
            }
        }
    }

    /// ast-grep-core's `match_single_node_while_skip_trivial` with smart strictness.
    fn single(
        &mut self,
        goals: &[PatternNode],
        goal: &mut usize,
        at: &mut usize,
        end: usize,
    ) -> Result<(), Stop> {
        loop {
            if *at == end {
                // Out of candidates with a pattern node left, and not an ellipsis
                // (`ellipsis` saw to that), which ast-grep-core would let go unmatched.
                return Err(Stop::NoMatch);
            }
            match self.step(&goals[*goal], self.buffer[*at])? {
                Step::Matched => return Ok(()),
                Step::SkipCandidate => *at += 1,
                Step::NoMatch => return Err(Stop::NoMatch),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;

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

    /// `find_shaped` finds exactly the nodes `find_all` does (same ranges, same
    /// order) with ast-grep-core's own matcher.
    fn shaped_agrees(pattern: &str, lang: Lang, src: &str) -> usize {
        let compiled = Pattern::try_new(pattern, lang).expect("pattern compiles");
        assert!(shaped(&compiled), "{pattern:?} is for find_shaped");
        let root = lang.ast_grep(src);
        let theirs: Vec<_> = root.root().find_all(&compiled).map(|m| m.range()).collect();
        let ours: Vec<_> = find_shaped(&root, &compiled).map(|n| n.range()).collect();
        assert_eq!(ours, theirs, "pattern {pattern:?} on {src:?}");
        theirs.len()
    }

    #[test]
    fn shaped_matching_decides_as_ast_grep_core() {
        let py = "f()\nf(a)\nf(a, b,)\nf(*a, **k)\nf(x for x in y)\nf(# c\n  a, # d\n  b)\n\
                  g.h(1)(2)\nprint(f(f(1)))\n@d(4)\nclass C(B(5)):\n    pass\nx = f'{p(3)}'\n";
        assert_eq!(shaped_agrees("$F($$$A)", Lang::Python, py), 13);
        for pattern in [
            "f($A)",
            "f($A, $B)",
            "f($$$)",
            "f($$$A, b)",
            "f(a, $$$A)",
            "f($$$A, $$$B)",
            "f($_, $$$)",
            "$F($A, $$$B, k=$C)",
            "$O.$M($$$A)",
            "print($$$A)",
        ] {
            shaped_agrees(pattern, Lang::Python, py);
            shaped_agrees(
                pattern,
                Lang::Python,
                "f(a, b, c)\nf(b)\nf(a)\nf(1, k=2)\nf(1, 2, k=3)\n",
            );
        }
        let ts = "const a = f(g(1), (x) => h(x)); new C(d(2)); `${t(3)}`; a?.b(4)!;\n\
                  f(/* x */ a, // y\n  b);\nfoo(a, b,);\nclass A { get b() {} c() {} }\n\
                  function r() { if (a) return; return b; }\n";
        for pattern in [
            "$F($$$A)",
            "foo($A, $B)",
            "f($A, $B)",
            "$A?.b($$$)",
            "class $C { $$$B }",
            "const $A = $F($$$)",
            "return $A",
            "return $_",
            "if ($A) return $B",
        ] {
            shaped_agrees(pattern, Lang::TypeScript, ts);
        }
        let rs =
            "fn g() { let s = S { f }; s.f.h(/* c */ 1); m!(x); a.unwrap(); b.c().unwrap(); }\n\
                  impl T for U { fn f(&self) -> u8 { 1 } }\n";
        for pattern in [
            "$A.unwrap()",
            "$A.$B($$$C)",
            "let $A = $B;",
            "fn $F(&self) -> $T { $$$B }",
        ] {
            shaped_agrees(pattern, Lang::Rust, rs);
        }
    }

    #[test]
    fn shaped_matching_of_long_lists() {
        // A long argument list is a deep tree of hidden repetition nodes, deeper than
        // `astedit_children`'s first stack; the last argument ends an ellipsis late.
        let long = format!("f({}b)\n", "a, ".repeat(70_000));
        assert_eq!(shaped_agrees("$F($$$A)", Lang::Python, &long), 1);
        assert_eq!(shaped_agrees("f($$$A, b)", Lang::Python, &long), 1);
        assert_eq!(shaped_agrees("f($$$A, c)", Lang::Python, &long), 0);
    }

    #[test]
    fn shaped_leaves_out_what_needs_captures() {
        let py = |p: &str| Pattern::try_new(p, Lang::Python).expect("pattern compiles");
        // A metavariable named twice must capture equal nodes.
        assert!(!shaped(&py("$A($A)")));
        assert!(!shaped(&py("f($$$A, $$$A)")));
        // A root metavariable matches any kind.
        assert!(!shaped(&py("$A")));
        assert!(shaped(&py("$A($B)")));
        assert!(shaped(&py("$_($_)")));
        let relaxed = py("f($A)").with_strictness(ast_grep_core::MatchStrictness::Relaxed);
        assert!(!shaped(&relaxed));
    }
}
