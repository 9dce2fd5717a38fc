/*!
`astedit-repo`: part of git-astedit's library, one layer of it.

The repository and which files a command reads: opening it, listing and reading
files, the result cache, the `-i` selection interface and the per-file loop of
grep, edit and scan. It may use `astedit-base`.

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

pub mod cache;
pub mod files;
pub mod repo;
pub mod select;
pub mod worker;
