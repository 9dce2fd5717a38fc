//! The layer table of issue 28 and a module's row in it.

/// The layers of issue 28, lowest first; an import may only go down (or stay within
/// its layer, between different modules, without closing a cycle). Every top-level
/// module under `src/` has a row; a submodule has its top-level module's layer,
/// except `cli::mcp` (the server, the second front end).
pub(crate) const LAYERS: &[(&str, Layer)] = &[
    // 1. base: errors, the change set and its flags, text helpers, cancellation,
    //    progress, the worker pipeline, the allocator. The library root (`lib.rs`)
    //    only declares and re-exports.
    ("", Layer::Base),
    ("alloc", Layer::Base),
    ("cancel", Layer::Base),
    ("change", Layer::Base),
    ("diff", Layer::Base),
    ("error", Layer::Base),
    ("lang", Layer::Base),
    ("levels", Layer::Base),
    ("pipeline", Layer::Base),
    ("progress", Layer::Base),
    ("supervise", Layer::Base),
    ("text", Layer::Base),
    // 2. the repository, which files, the `-i` selection interface, the per-file loop.
    ("repo", Layer::Repo),
    ("files", Layer::Repo),
    ("cache", Layer::Repo),
    ("select", Layer::Repo),
    // The per-file loop of grep, edit and scan (cache, reading, order, progress).
    ("worker", Layer::Repo),
    // 3. engines: they know nothing of git objects, printers or operations.
    ("rewrite", Layer::Engine),
    ("patch", Layer::Engine),
    ("grep", Layer::Engine),
    ("edit", Layer::Engine),
    ("scan", Layer::Engine),
    // 4. previews, journal, lock, apply/undo, recovery, gc, index.
    ("txn", Layer::Txn),
    // 5. data only: the typed reports and their schema.
    ("report", Layer::Report),
    // 6. every command and tool as one call; all sequencing of engines and txn.
    ("ops", Layer::Ops),
    // The fuzz targets' entry points (`fuzz/`): one call into an engine or a txn
    // reader each, as an operation would make it.
    ("fuzzing", Layer::Ops),
    // 7. printers over reports (today also diffs, stats, path quoting: see the
    //    baseline for what that costs).
    ("render", Layer::Render),
    // 8. front ends, side by side: the binary (`main.rs`, `cli/`) and the server.
    ("main", Layer::FrontEnd),
    ("cli", Layer::FrontEnd),
    ("cli::mcp", Layer::FrontEnd),
    // The library's façade (`crates/astedit`, issue 49): a front end for Rust programs,
    // as thin as the CLI (arguments → request → op → its own report types).
    ("facade", Layer::FrontEnd),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Layer {
    Base = 1,
    Repo = 2,
    Engine = 3,
    Txn = 4,
    Report = 5,
    Ops = 6,
    Render = 7,
    FrontEnd = 8,
}

impl Layer {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Layer::Base => "base",
            Layer::Repo => "repo/files/select",
            Layer::Engine => "engines",
            Layer::Txn => "txn",
            Layer::Report => "report",
            Layer::Ops => "ops",
            Layer::Render => "render",
            Layer::FrontEnd => "front ends",
        }
    }
    pub(crate) const ALL: [Layer; 8] = [
        Layer::Base,
        Layer::Repo,
        Layer::Engine,
        Layer::Txn,
        Layer::Report,
        Layer::Ops,
        Layer::Render,
        Layer::FrontEnd,
    ];
}

/// The layer of a module: the row of its longest listed prefix.
pub(crate) fn layer_of(module: &str) -> Option<Layer> {
    LAYERS
        .iter()
        .filter(|(m, _)| module == *m || (!m.is_empty() && module.starts_with(&format!("{m}::"))))
        .max_by_key(|(m, _)| m.len())
        .map(|(_, l)| *l)
}

/// Whether `module` is a front end (the CLI or the server).
pub(crate) fn is_front_end(module: &str) -> bool {
    layer_of(module) == Some(Layer::FrontEnd)
}
