/*!
`astedit-render`: part of git-astedit's library, one layer of it.

Printers over reports: diffs, stats, path quoting, the text the CLI prints. It may
use every crate below it.

Its API is internal to git-astedit and unstable: embedders use the `astedit`
crate. Lower crates' modules are re-exported at this root so that paths inside
the layer read as they did in the single crate (`crate::error::Error`).
*/

#[doc(no_inline)]
pub use astedit_base::{
    alloc, cancel, change, diff, error, lang, levels, pipeline, progress, supervise, text,
};
#[doc(no_inline)]
pub use astedit_base::{Error, Exit, VERSION};
#[doc(no_inline)]
pub use astedit_engine::{edit, grep, patch, rewrite, scan};
#[doc(no_inline)]
pub use astedit_ops::{fuzzing, ops};
#[doc(no_inline)]
pub use astedit_repo::{cache, files, repo, select, worker};
#[doc(no_inline)]
pub use astedit_report::report;
#[doc(no_inline)]
pub use astedit_txn::txn;

pub mod render;
