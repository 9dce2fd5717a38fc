/*!
The protocol side of `git astedit mcp` (the tools themselves are the table in
`catalog.rs`): an `rmcp` [`ServerHandler`] that runs each call on the blocking pool.

Lifecycles: `rmcp` (3.11) implements both the stateless 2026-07-28 revision — a
request may come first with its protocol version, client info and capabilities in
`_meta`, and `server/discover` answers without a handshake — and the `initialize`
handshake of 2024-11-05 … 2025-11-25. We advertise every revision the SDK knows.
The client's identity for the journal is read per request (`_meta` first, then the
handshake's `clientInfo`), because in the stateless revision nothing may be inferred
from an earlier request on the same connection.

Faults: an unknown tool or a fault of the server itself is a JSON-RPC error; anything
a model can fix or act on — arguments that do not fit the schema (SEP-1303), stale
files, an ambiguous id, a lock held by another apply — is a tool result with
`isError: true` whose text starts with what happened and what to do.

Concurrency: calls run at once (each on tokio's blocking pool, over a freshly opened
repository); those that write take the repository lock inside `txn`, so of two applies
of one preview exactly one wins and the other is told why.

Cancellation: each call gets a [`Cancel`] that turns true when rmcp cancels the
request's token (`notifications/cancelled`) or when the stdin reader reaches the end of
input. Without the second, a call in flight at EOF would run to its end (the runtime
waits for blocking tasks) and its result would be dropped; with it, searches and
stagings stop between files and nothing half-made is left (see `ops::cancel`).
*/

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::ops::cancel::Cancel;
use git_astedit::Error;
use rmcp::model::CallToolRequestParams;
use rmcp::model::CallToolResponse;
use rmcp::model::CallToolResult;
use rmcp::model::ContentBlock;
use rmcp::model::Implementation;
use rmcp::model::ListToolsResult;
use rmcp::model::PaginatedRequestParams;
use rmcp::model::ServerCapabilities;
use rmcp::model::ServerConfig;
use rmcp::model::Tool;
use rmcp::service::RequestContext;
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::ServerHandler;
use rmcp::ServiceExt;

use super::catalog::catalog;
use super::catalog::dispatch;
use super::tools::Call;
use super::tools::Session;

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot start the MCP server's runtime")]
    Runtime(#[source] std::io::Error),
    #[error("the MCP session failed: {0}")]
    Session(String),
}

impl git_astedit::error::Classify for ServeError {
    fn code(&self) -> &'static str {
        "mcp-server"
    }
    fn exit(&self) -> Exit {
        Exit::Internal
    }
}

const INSTRUCTIONS: &str = "git-astedit: structural search and rewrites for this git repository, \
staged as previews kept in git. Search with ast_grep; stage a rewrite with ast_edit or a \
`*** Begin Patch` patch with apply_patch, exact text with replace (old_string/new_string) or a \
whole file with write, or line ranges of a file you read (read gives lines \
and a blob id) with edit_lines (the work tree is unchanged); inspect with previews; \
then resolve with action apply (stale-checked, atomic) or discard, always with a reason; \
without an id, resolve means the newest preview this session staged. \
undo takes an applied transaction back. Paths are relative to the repository root. Every \
step is journalled with your client name.";

/// How long a call waits for the repository lock another writer holds (another
/// session resolving at once) before it fails with `retry_after`.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Serves MCP on stdin/stdout until the client closes stdin.
/// With `allow_run`, the catalog offers the `run` tool (it executes commands), and the
/// calls may run programs (`resolve`'s refresh and verify, `fmt`).
pub fn serve(workdir: PathBuf, budget: usize, allow_run: bool) -> Result<(), Error> {
    git_astedit::ops::session::wait_for_lock(LOCK_WAIT);
    // One thread drives the protocol; tool work runs on the blocking pool, so calls
    // still overlap (and can contend for the repository lock, as they should).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    // Set by the stdin reader at end of input: calls still running are cancelled
    // then, not run to an end whose result nobody reads.
    let closed = Arc::new(AtomicBool::new(false));
    let server = Server {
        workdir: Arc::new(workdir),
        budget,
        tools: Arc::new(catalog(allow_run)),
        allow_run,
        session: Arc::new(Session::default()),
        closed: closed.clone(),
    };
    runtime.block_on(async move {
        let (input, output, framed) = super::stdio::Framed::start(closed);
        let session = async {
            let service = match server.serve((input, output)).await {
                Ok(s) => s,
                // A client that leaves before saying anything is not an error.
                Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
                Err(e) => return Err(ServeError::Session(e.to_string())),
            };
            service
                .waiting()
                .await
                .map(|_| ())
                .map_err(|e| ServeError::Session(e.to_string()))
        };
        let result = session.await;
        framed.finish().await;
        result
    })?;
    Ok(())
}

#[derive(Clone)]
struct Server {
    workdir: Arc<PathBuf>,
    /// The byte budget of a result when a call does not set its own ([`super::budget`]).
    budget: usize,
    tools: Arc<Vec<Tool>>,
    /// Started with `--allow-run`: every call's requests say whether programs may run
    /// (`ops::trust` checks it), beside the catalog that offers `run` only then.
    allow_run: bool,
    /// What this connection staged: a no-id `resolve` only ever means one of these.
    session: Arc<Session>,
    /// stdin is at its end: every call in flight is cancelled.
    closed: Arc<AtomicBool>,
}

/// `text` with control characters (and backslashes, so the escape is unambiguous)
/// written as Rust-style escapes: `evil\nline` stays one line.
fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\\' || c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The `isError` result of a failed call: what happened first (with the files it is
/// about on that first line), then what to do; then the same as JSON, with `next`
/// (see [`git_astedit::render::agent::error`]).
fn error_result(err: &Error, tool: &str, arguments: &serde_json::Value) -> CallToolResult {
    let (text, json) = git_astedit::render::agent::error::result(err, tool, arguments);
    // Not `structuredContent`: clients validate that against the tool's output schema,
    // which describes success; a strict one would turn the error into a protocol fault
    // and the model would never read the hint. The JSON goes in a second text block.
    CallToolResult::error(vec![ContentBlock::text(text), ContentBlock::text(json)])
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "git-astedit",
                git_astedit::VERSION.to_string(),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name: Cow<'static, str> = request.name.clone();
        if !self.tools.iter().any(|t| t.name == name) {
            return Err(McpError::invalid_params(
                format!("unknown tool '{name}'"),
                Some(serde_json::json!({
                    "tools": self.tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>()
                })),
            ));
        }
        // Per request: the stateless revision carries it in `_meta`, the handshake
        // revisions in `initialize`'s clientInfo.
        // Escaped: a client name is untrusted text that ends up in the journal and in
        // `git astedit log`, where a newline would forge a line.
        let agent = context.client_info().map(|c| {
            format!(
                "{}/{}",
                escape_controls(&c.name),
                escape_controls(&c.version)
            )
        });
        let workdir = self.workdir.clone();
        let session = self.session.clone();
        let allow_run = self.allow_run;
        let mut arguments = request.arguments;
        // An error's `next` repeats the call's arguments.
        let given = arguments
            .clone()
            .map_or(serde_json::Value::Null, serde_json::Value::Object);
        // `max_bytes` is every tool's and no tool's own: taken here, held here.
        let budget = match arguments
            .as_mut()
            .and_then(|a| a.remove(super::budget::MAX_BYTES_ARG))
        {
            None | Some(serde_json::Value::Null) => Ok(self.budget),
            Some(v) => v
                .as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                .ok_or(v),
        };
        let budget = match budget {
            Ok(b) => b.max(super::budget::MIN_RESULT_BYTES),
            Err(v) => {
                let err: Error = UsageError(format!(
                    "invalid arguments for {name}: max_bytes must be a whole number of bytes, \
                     not {v}"
                ))
                .into();
                return Ok(CallToolResponse::Complete(error_result(
                    &err, &name, &given,
                )));
            }
        };
        // Cancelled by `notifications/cancelled` for this request (rmcp cancels its
        // token; the reply is then not sent) or by the end of stdin.
        let cancel = {
            let request = context.ct.clone();
            let closed = self.closed.clone();
            Cancel::when(move || request.is_cancelled() || closed.load(Ordering::SeqCst))
        };
        let outcome = tokio::task::spawn_blocking(move || {
            let call = Call {
                workdir: workdir.as_path(),
                budget,
                agent,
                session: &session,
                cancel,
                allow_run,
            };
            dispatch(&name, &call, arguments)
        })
        .await
        .map_err(|e| {
            McpError::internal_error(format!("the {} call failed: {e}", request.name), None)
        })?;
        let result = match outcome {
            Ok(mut done) => {
                super::budget::fit(&mut done, budget);
                let mut r = CallToolResult::success(vec![ContentBlock::text(done.text)]);
                r.structured_content = Some(done.value);
                r
            }
            Err(err) => error_result(&err, &request.name, &given),
        };
        Ok(CallToolResponse::Complete(result))
    }
}
