/*!
`astedit-txn`: part of git-astedit's library, one layer of it.

The preview transaction: previews as git objects, the journal, the repository
lock, apply and undo, recovery, gc and the index. It may use the base, repo and
engine crates.

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

pub mod txn;
