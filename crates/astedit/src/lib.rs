/*!
`astedit`: git-astedit as a library. Stage a code rewrite as a *preview made of git
objects* (a commit under `refs/astedit/<id>`, no work-tree file touched), show its diff,
apply it as one atomic checkout that refuses when a touched file changed since, undo it
from the journal, or discard it — from a Rust program, without the CLI.

This crate is the one stable surface: its public signatures hold only its own types (no
gix, ast-grep or serde types), so a bump of those does not break an embedder. The other
`astedit-*` crates are git-astedit's layers; their API is internal and unstable.

What the CLI enforces holds here too:
- **The repository lock.** Every write takes the lock `git astedit` takes, so a library
  call and a CLI command (or another process) never interleave an apply; with
  [`Options::lock_wait`] a write waits for the lock instead of failing at once.
- **Recovery.** [`Repository::open`] first finishes or rolls back an apply a crash
  interrupted, as every command does; [`Repository::take_notes`] says what it did.
- **Identity.** The [`Identity`] given at open (an agent's `name/version`, or a harness
  session) is recorded with every event in the journal, beside the git user.
- **Consent to run programs.** Nothing the library does runs a program unless the
  [`Programs`] policy allows it (the default refuses): a `verify` command, a formatter
  the project's `astedit.toml` names. A refused call fails with code `run-not-allowed`
  and changes nothing.

# Example

```no_run
use astedit::{Edit, Identity, Options, Repository};

let repo = Repository::open_with(
    "path/to/repo",
    Options::new().identity(Identity::agent("my-harness/1.0")),
)?;
let staged = repo.stage(&Edit::replace("src/lib.rs", "old_name", "new_name").reason("rename"))?;
let id = staged.id.expect("something to change");
print!("{}", staged.diff);
let applied = repo.apply(&id, &Default::default())?;
assert_eq!(applied.written, ["src/lib.rs"]);
repo.undo(&id, Some("changed my mind"))?;
# Ok::<(), astedit::Error>(())
```

`examples/edit_tool.rs` is the same loop shaped as an agent harness's edit tool.
*/
#![deny(missing_docs)]

mod facade;

pub use facade::edit::Edit;
pub use facade::error::Error;
pub use facade::repository::Repository;
pub use facade::settings::ApplyOptions;
pub use facade::settings::Identity;
pub use facade::settings::Options;
pub use facade::settings::Programs;
pub use facade::types::Action;
pub use facade::types::Event;
pub use facade::types::Origin;
pub use facade::types::Preview;
pub use facade::types::Resolved;
pub use facade::types::Staged;

/// The version of git-astedit this library is.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
