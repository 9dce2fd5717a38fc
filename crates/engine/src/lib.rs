/*!
`astedit-engine`: part of git-astedit's library, one layer of it.

The engines: structural rewrites, agent patches, search, the edit formats and
rule scans. They turn files into change sets and know nothing of git objects,
printers or operations. It may use `astedit-base` and `astedit-repo`.

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
pub use astedit_repo::{cache, files, repo, select, worker};

pub mod edit;
pub mod grep;
pub mod patch;
pub mod rewrite;
pub mod scan;
