/*!
The house's layers, kept by a test (issue 28, DESIGN §7a): it reads `src/` and each layer
crate's `crates/NAME/src/` (a path below is under one of them), maps every
file to a module, collects every import of a crate module (`use crate::…` trees,
`git_astedit::…` from the binary, `super::`/`self::` paths, child modules named
directly, and paths in expressions through the aliases a file's `use`s bind), and
fails on

* an import that goes **up** a layer of [`LAYERS`];
* an import that closes a **cycle** between modules (Tarjan's strongly connected
  components over the module graph; each edge inside a component of more than one
  module is reported);
* a **front end** (`cli/`, `cli/mcp/`) that reaches `txn` or an engine directly
  instead of going through `ops`;
* a printer (`render`) that imports `repo` or `txn` (DESIGN §7: rendering never
  touches git).

Today's code has violations; they are listed in `tests/architecture/baseline.txt`. The
test fails on any violation not in the baseline and on any baseline entry that no
longer occurs, so the list can only shrink (a ratchet). Run

```text
cargo test --test architecture -- --ignored --nocapture figures
```

for the figures (files and lines per layer, cycles, upward imports), and set
`ARCH_BASELINE=write` to drop the baseline lines that no longer occur (it adds none).

The same ratchet holds function length (issue 36): no `fn` in `src/` over 150 lines, from
`fn` to its closing brace, but for those listed with their length in
`tests/architecture/long_functions.txt`, which may only shrink. And file length (issue
49): no Rust file over 1,000 lines, test modules included, but for those listed in
`tests/architecture/long_files.txt`, which may only shrink. That cap walks every `.rs`
file of `src/`, of each crate under `crates/` (sources, tests, examples, build
scripts), of `tests/`, `bench/` and `fuzz/`; it leaves out folders of data rather than
Rust we compile (`tests/data/`, `tests/fuzz_regressions/`, `tests/js/`, build output,
npm packages) and does not walk the top-level `fixtures/` (patch scenarios' inputs).

The scanner is small and hand-written: it drops comments, strings and char literals,
tokenizes identifiers and `::`, and reads use trees and paths. What it resolves:

* a file's module: `src/txn/apply.rs` → `txn::apply`, `src/txn/mod.rs` → `txn`,
  `src/cli/mcp.rs` → `cli::mcp`, `src/lib.rs` → the library root, `src/main.rs` →
  `main` (the binary's root; `crate::cli` there and in `src/cli/` is `cli`);
* `super` and `self` relative to the module (inline `mod x { … }` blocks counted);
* a path through a module's re-export (`pub use store::find` in `txn/mod.rs`) to the
  file that defines the name, so `crate::txn::find` is an edge to `txn::store`, and to
  the re-exporting module as well unless it is an ancestor of the importer (a sibling
  reaching back through a facade closes a loop; issue 36);
* the target of a path is the deepest file module it names (`crate::render::plural`
  → `render`, an inline `mod style` included).

A module's edges into its own submodules (declaring, re-exporting, calling them) are
not counted: a parent is its children's facade. Everything else is, test code
included (a test module's imports are imports too). A module missing from
[`LAYERS`] is a violation of its own.

A baseline line is a kind, a file and the module it imports (`up src/txn/index.rs ->
render`): the ratchet counts couplings, not call sites, so another call of an
already-listed module from the same file does not fail, and a line goes only when the
file no longer imports that module at all. The failure message names every line and
name behind a line.

The test is one binary, `cargo test --test architecture`, in files by concern:
`layers.rs` (the table), `scanner.rs` (tokens, use trees, paths), `graph.rs` (edges,
cycles, the rules), `layer_ratchet.rs` (the baseline and the tests over today's tree),
`function_length.rs`, `file_length.rs`, and `checker_tests.rs` (the checker on made-up trees).
*/

use std::path::Path;

mod checker_tests;
mod crates;
mod file_length;
mod function_length;
mod graph;
mod layer_ratchet;
mod layers;
mod scanner;

// ------------------------------------------------------------------ the tree

/// One file of the source tree: its path under `src/` and its text.
#[derive(Clone, Debug)]
pub(crate) struct SourceFile {
    pub(crate) path: String,
    pub(crate) text: String,
}

/// Every `.rs` file of `src/` and of each crate's `src/` (its `lib.rs` left out), path
/// taken under that `src/`.
pub(crate) fn read_src() -> Vec<SourceFile> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<SourceFile>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read src/")
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let path = p
                    .strip_prefix(root)
                    .expect("under src/")
                    .to_string_lossy()
                    .replace('\\', "/");
                let text = std::fs::read_to_string(&p).expect("read a source file");
                out.push(SourceFile { path, text });
            }
        }
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.join("src");
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    // The layers' crates (issue 49): a file's path is taken under its crate's `src/`, so
    // `crates/txn/src/txn/index.rs` is `txn/index.rs`, the module `txn::index`, as it was
    // in the single crate. A crate's `lib.rs` only declares its modules and re-exports
    // the lower crates' (the compiler holds those edges), so it is left out.
    let mut crates: Vec<_> = std::fs::read_dir(manifest.join("crates"))
        .expect("read crates/")
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    for src in crates {
        let mut files = Vec::new();
        walk(&src, &src, &mut files);
        out.extend(files.into_iter().filter(|f| f.path != "lib.rs"));
    }
    out
}

/// A made-up tree of (path, text) pairs, for the checker's own tests.
pub(crate) fn fake(files: &[(&str, &str)]) -> Vec<SourceFile> {
    files
        .iter()
        .map(|(p, t)| SourceFile {
            path: p.to_string(),
            text: t.to_string(),
        })
        .collect()
}
