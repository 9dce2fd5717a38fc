/*!
git-astedit: structural search and rewrites, agent patches and codemod rules, staged as
previews made of git objects and applied atomically with a stale check, undoable.

The library lives in the workspace's crates, one per layer (`crates/`): base, repo,
engine, txn, report, ops, render, lowest first; each may use only the crates below it.
The data path runs one way: [`files`] picks the files → an engine ([`rewrite`],
[`patch`], [`scan`]) turns them into a [`change::ChangeSet`] → [`txn`] stores it as a
preview and later applies it to the work tree. [`ops`] sequences engines and [`txn`]
where one command needs several calls, [`report`] holds every JSON shape and its
schema, and [`render`] turns results into text.

This crate is the binary's (`src/main.rs`, `src/cli/`: the CLI, the MCP server, the
language server); its library root re-exports the layers' modules under the paths they
had before the split, for the binary, the tests and the fuzz targets. Its API is
internal and unstable.
*/

pub use astedit_base::{
    alloc, cancel, change, diff, error, lang, levels, pipeline, progress, supervise, text,
};
pub use astedit_base::{Error, Exit, VERSION};
pub use astedit_engine::{edit, grep, patch, rewrite, scan};
#[doc(hidden)]
pub use astedit_ops::fuzzing;
pub use astedit_ops::ops;
pub use astedit_render::render;
pub use astedit_repo::{cache, files, repo, select, worker};
pub use astedit_report::report;
pub use astedit_txn::txn;
