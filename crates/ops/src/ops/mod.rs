/*!
Library operations: what the front ends (the CLI in `src/cli/`, the MCP server in
`src/cli/mcp/`) call between parsing arguments and printing a report
(`arguments → request → ops → report → printer`, DESIGN §7a). The front ends hold no
gix calls and start no processes; the sequencing of engines and [`crate::txn`] lives
here, and the shapes they print live in [`crate::report`].
*/

pub mod agent_hook;
pub mod apply;
pub mod baseline;
pub mod cache;
pub mod campaign;
pub mod consent;
pub mod discard;
pub mod edit;
pub mod editor;
pub mod fmt;
pub mod forge;
pub mod gc;
pub mod grep;
pub mod hook;
pub mod input;
pub mod inspect;
pub mod lane;
pub mod lines;
pub mod list;
pub mod log;
pub mod lsp;
pub mod merge;
pub mod notcode;
pub mod ruletest;
pub mod run;
pub mod verify;
pub mod worktree;
/// Cancellation lives in the base layer; this is the path the front ends knew.
pub use crate::cancel;
pub mod patch;
pub mod pr;
pub mod preview;
pub mod recipe;
pub mod recover;
pub mod refresh;
pub mod replace;
pub mod review;
pub mod rule_form;
pub mod scaffold;
pub mod scan;
pub mod session;
pub mod show;
pub mod split;
pub mod stage;
pub mod steps;
pub mod trust;
pub mod undo;
