//! The `git-astedit` binary: parse arguments, run one command, render its result or
//! error once, and turn it into the process exit code.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
