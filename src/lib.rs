/*!
git-astedit: structural search and rewrites, agent patches and codemod rules, staged as
previews made of git objects and applied atomically with a stale check, undoable.

The data path runs one way: [`files`] picks the files → an engine ([`rewrite`],
[`patch`], [`scan`]) turns them into a [`change::ChangeSet`] → [`txn`] stores it as a
preview and later applies it to the work tree.

Above the engines sit the layers the two front ends (the CLI and the MCP server, both
in the binary's `src/cli/`) share: [`ops`] sequences engines and [`txn`] where one
command needs several calls, [`report`] holds every JSON shape (`Serialize +
JsonSchema`, with `schema_version`) and its schema, and [`render`] turns results into
text (diffs, stats, git-style path quoting). The front ends parse arguments, call the
library, and print a report; they hold no gix calls and start no processes.
*/

pub mod alloc;
pub mod cache;
pub mod cancel;
pub mod change;
pub mod diff;
pub mod edit;
pub mod error;
pub mod files;
#[doc(hidden)]
pub mod fuzzing;
pub mod grep;
pub mod lang;
pub mod levels;
pub mod ops;
pub mod patch;
pub mod pipeline;
pub mod progress;
pub mod render;
pub mod repo;
pub mod report;
pub mod rewrite;
pub mod scan;
pub mod select;
pub mod supervise;
pub mod text;
pub mod txn;
pub mod worker;

pub use error::Error;
pub use error::Exit;

/// The version recorded in preview metadata.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
