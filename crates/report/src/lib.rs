/*!
`astedit-report`: part of git-astedit's library, one layer of it.

Data only: every typed report the commands and tools return, and its JSON Schema.
It may use the crates below it (base, repo, engine, txn).

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
pub use astedit_repo::{cache, files, repo, select, worker};
#[doc(no_inline)]
pub use astedit_txn::txn;

pub mod report;
