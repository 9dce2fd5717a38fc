//! The `git-astedit` binary: parse arguments, run one command, render its result or
//! error once, and turn it into the process exit code.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    // SAFETY: first thing in the process, before any tree-sitter object exists.
    unsafe { git_astedit::alloc::give_tree_sitter_mimalloc() };
    // Re-executed to supervise a user's command (`run`, `verify`): nothing else runs.
    if let Some(code) = git_astedit::supervise::main_if_asked() {
        return code;
    }
    cli::main()
}
