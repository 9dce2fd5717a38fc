/*!
`git astedit mcp`: a Model Context Protocol server on stdio for coding agents.

A thin adapter, like the CLI: tool arguments → the same library calls as the commands
(`grep::grep`, `edit::edit`, `ops::patch`, `txn::stage`/`apply`/`undo`/`discard`) → the
same typed reports (`git_astedit::report`), whose JSON Schemas are the tools' output
schemas. [`stdio`] checks each input line first (16 MiB limit, JSON parse errors).
Agents get the same transactions a person gets: nothing
pending lives in this process's memory, every write goes through the repository lock
inside `txn`, and every event lands in the journal with the client's name/version
beside the git identity.

The protocol is the official SDK's (`rmcp`), which speaks both lifecycles: the
stateless revision (2026-07-28: no handshake, `server/discover`, client context in
each request's `_meta`) and the older `initialize` handshake (2024-11-05 through
2025-11-25). [`server`] is the protocol glue; [`tools`] holds the tools as plain
synchronous functions over a freshly opened repository, so they can be tested and
reasoned about without the protocol.
*/

use git_astedit::error::Exit;
use git_astedit::Error;

use super::Ctx;

#[cfg(feature = "mcp")]
mod budget;
#[cfg(feature = "mcp")]
mod catalog;
mod server;
#[cfg(feature = "mcp")]
mod stdio;
#[cfg(feature = "mcp")]
mod tools;

/// Serve the Model Context Protocol on stdio (for Claude Code, Codex, OpenCode, …).
///
/// Tools: ast_grep, ast_edit, apply_patch, previews, resolve, undo (and run, with
/// --allow-run). Only protocol
/// messages are written to stdout; the repository is the one around the current
/// folder (or -C DIR). See docs/src/agents.md for registering it with a client.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The most bytes one tool result may take (text and structured content together);
    /// a call's `max_bytes` overrides it. What does not fit is cut and said
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024)]
    pub max_result_bytes: usize,

    /// Offer the `run` tool, which runs commands an agent chooses (in a temporary
    /// worktree, staging what they change); off by default
    #[arg(long)]
    pub allow_run: bool,
}

#[cfg(feature = "mcp")]
pub fn run(ctx: &mut Ctx, args: McpArgs) -> Result<Exit, Error> {
    // Open (and recover) once up front so that a server started outside a repository
    // fails at once with the usual message instead of on every call.
    let workdir = ctx.repo()?.workdir.clone();
    server::serve(workdir, args.max_result_bytes, args.allow_run)?;
    Ok(Exit::Ok)
}

#[cfg(not(feature = "mcp"))]
pub fn run(_ctx: &mut Ctx, _args: McpArgs) -> Result<Exit, Error> {
    Err(git_astedit::error::UsageError(
        "this git-astedit was built without the `mcp` feature; rebuild with default features"
            .into(),
    )
    .into())
}
