/*!
`astedit-base`: part of git-astedit's library, one layer of it.

Base types every layer shares: the error enum and its exit codes, the change set and
its flags, languages, levels, text helpers, cancellation, progress, the worker
pipeline, the allocator. It uses no other crate of the workspace.

Its API is internal to git-astedit and unstable: embedders use the `astedit`
crate. Lower crates' modules are re-exported at this root so that paths inside
the layer read as they did in the single crate (`crate::error::Error`).
*/

pub mod alloc;
pub mod cancel;
pub mod change;
pub mod diff;
pub mod error;
pub mod lang;
pub mod levels;
pub mod pipeline;
pub mod progress;
pub mod supervise;
pub mod text;

pub use error::Error;
pub use error::Exit;

/// The version recorded in preview metadata.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
