/*!
The protocol side of `git astedit mcp`: the tool catalog (schemas, annotations) and
an `rmcp` [`ServerHandler`] that runs each call on the blocking pool.

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
use rmcp::handler::server::common::schema_for_input;
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
use rmcp::model::ToolAnnotations;
use rmcp::service::RequestContext;
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::ServerHandler;
use rmcp::ServiceExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::tools;
use super::tools::Call;
use super::tools::Done;
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
/// With `allow_run`, the catalog offers the `run` tool (it executes commands).
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
    /// What this connection staged: a no-id `resolve` only ever means one of these.
    session: Arc<Session>,
    /// stdin is at its end: every call in flight is cancelled.
    closed: Arc<AtomicBool>,
}

/// The four annotation hints, all set explicitly (their defaults are the pessimistic
/// ones, and clients decide on confirmations from them).
fn hints(title: &str, read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        // Only the local repository is touched: a closed world.
        .open_world(false)
}

fn tool<I: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    annotations: ToolAnnotations,
) -> Tool {
    // Our input types are structs, so the schema root is an object; fall back to an
    // open object rather than failing the whole catalog.
    let input = schema_for_input::<I>().unwrap_or_else(|_| {
        let mut o = serde_json::Map::new();
        o.insert("type".into(), serde_json::json!("object"));
        Arc::new(o)
    });
    let title = annotations.title.clone();
    // Standard keywords and formats only (no `format: "uint"`), as the CLI's schemas.
    let mut input = (*input).clone();
    let mut value = serde_json::Value::Object(std::mem::take(&mut input));
    git_astedit::report::schema::standardize(&mut value);
    let struct_name = std::any::type_name::<I>().rsplit("::").next().unwrap_or("");
    declare_aliases(&mut value, struct_name);
    if let Some(props) = value.get_mut("properties").and_then(|p| p.as_object_mut()) {
        props.insert(
            super::budget::MAX_BYTES_ARG.into(),
            serde_json::json!({
                "description": "The most bytes this result may take (its text and structured \
                    content together; default 65536, at least 2048). What does not fit is cut, \
                    and the result says what and how to get the rest.",
                "type": "integer",
                "minimum": super::budget::MIN_RESULT_BYTES,
                "default": super::budget::DEFAULT_RESULT_BYTES,
            }),
        );
    }
    let input = match value {
        serde_json::Value::Object(o) => Arc::new(o),
        _ => Arc::new(serde_json::Map::new()),
    };
    // The output schema is the report's, exactly as `git astedit schema` prints it.
    let output = match git_astedit::report::schema::of::<O>() {
        serde_json::Value::Object(o) => Arc::new(o),
        _ => Arc::new(serde_json::Map::new()),
    };
    let mut t = Tool::new(name, description, input)
        .with_raw_output_schema(output)
        .with_annotations(annotations);
    t.title = title;
    t
}

/// The names the input types accept besides their own (serde `alias`es, for callers of
/// the seed tools), per type: (type, field, alias). The schemas forbid unknown fields,
/// so a client that validates its arguments first could not send these unless they
/// are declared: each is, as a `deprecated` property of the field's schema.
/// `aliases_in_the_schemas_are_accepted` (tests/integration/mcp.rs) calls each.
const ALIASES: &[(&str, &str, &str)] = &[
    ("GrepInput", "pattern", "pat"),
    ("GrepInput", "paths", "path"),
    ("GrepInput", "max_results", "limit"),
    ("GrepInput", "offset", "skip"),
    ("OpInput", "pattern", "pat"),
    ("OpInput", "rewrite", "out"),
    ("EditInput", "paths", "path"),
    ("EditInput", "id", "stagedId"),
    ("EditInput", "id", "staged_id"),
    ("AstApplyInput", "id", "previewId"),
    ("PrInput", "id", "previewId"),
    ("ResolveExtra", "preview_id", "previewId"),
    ("ReplaceInput", "path", "file_path"),
    ("WriteInput", "path", "file_path"),
];

/// Enum values accepted besides the declared ones: (type, value, alias).
const VALUE_ALIASES: &[(&str, &str, &str)] = &[("ResolveAction", "discard", "reject")];

/// Adds [`ALIASES`] and [`VALUE_ALIASES`] to the input schema of `root` (the tool's
/// input type) and its `$defs`.
fn declare_aliases(schema: &mut serde_json::Value, root: &str) {
    fn add(object: &mut serde_json::Value, name: &str) {
        for (_, field, alias) in ALIASES.iter().filter(|(t, ..)| *t == name) {
            let Some(props) = object.get_mut("properties").and_then(|p| p.as_object_mut()) else {
                continue;
            };
            let Some(mut declared) = props.get(*field).cloned() else {
                continue;
            };
            if let Some(o) = declared.as_object_mut() {
                o.insert("deprecated".into(), true.into());
                o.insert(
                    "description".into(),
                    format!("Deprecated alias of `{field}`.").into(),
                );
            }
            props.entry(alias.to_string()).or_insert(declared);
            // A required field may come under either name: one of them is required.
            let required = object
                .get_mut("required")
                .and_then(|r| r.as_array_mut())
                .and_then(|r| {
                    let at = r.iter().position(|f| f == *field)?;
                    r.remove(at);
                    Some(r.is_empty())
                });
            if let Some(now_empty) = required {
                if now_empty {
                    if let Some(o) = object.as_object_mut() {
                        o.remove("required");
                    }
                }
                // Each branch names its property too: strict validators (Ajv's
                // `strictRequired`) refuse a `required` of an undeclared name.
                let either = serde_json::json!({
                    "anyOf": [
                        {"properties": {*field: {}}, "required": [field]},
                        {"properties": {*alias: {}}, "required": [alias]},
                    ]
                });
                if let Some(o) = object.as_object_mut() {
                    let all = o.entry("allOf").or_insert_with(|| serde_json::json!([]));
                    if let Some(all) = all.as_array_mut() {
                        all.push(either);
                    }
                }
            }
        }
        for (_, value, alias) in VALUE_ALIASES.iter().filter(|(t, ..)| *t == name) {
            if let Some(variants) = object.get_mut("oneOf").and_then(|v| v.as_array_mut()) {
                if variants.iter().any(|v| v["const"] == *value) {
                    variants.push(serde_json::json!({
                        "const": alias,
                        "type": "string",
                        "deprecated": true,
                        "description": format!("Deprecated alias of `{value}`."),
                    }));
                }
            }
        }
    }
    add(schema, root);
    if let Some(defs) = schema.get_mut("$defs").and_then(|d| d.as_object_mut()) {
        for (name, def) in defs.iter_mut() {
            add(def, name);
        }
    }
}

/// A tool's arguments as the client sent them.
type Arguments = Option<serde_json::Map<String, serde_json::Value>>;

/// One tool: its name (written here only), its catalog entry and its call.
struct Route {
    name: &'static str,
    /// Offered (and callable) only with `--allow-run`.
    needs_run: bool,
    tool: fn(&'static str) -> Tool,
    call: fn(&Call, Arguments, &str) -> Result<Done, Error>,
}

/// Every tool, in the catalog's order.
const ROUTES: &[Route] = &[
    Route {
        name: "ast_grep",
        needs_run: false,
        tool: |name| {
            tool::<tools::GrepInput, git_astedit::report::GrepReport>(
                name,
                "Structural code search with an ast-grep pattern over the repository's work tree \
                 (tracked and untracked-not-ignored files). Returns `path:line:col: text` per match, \
                 capped at max_results (default 200); says when capped and how many there are in all. \
                 Reads only.",
                hints("Structural search", true, false, true),
            )
        },
        call: |call, arguments, name| tools::ast_grep(call, args(name, arguments)?),
    },
    Route {
        name: "ast_edit",
        needs_run: false,
        tool: |name| {
            tool::<tools::EditInput, git_astedit::report::StageReport>(
                name,
                "Stage a structural rewrite (one or more pattern → rewrite ops) as a preview kept in \
                 git. The work tree is NOT changed: returns the preview id, a summary, per-file counts \
                 and the diff (capped). Apply or discard it with `resolve`.",
                // Destructive: its seed-style `apply: true` / `action: "apply"` write files.
                hints("Stage a structural rewrite", false, true, false),
            )
        },
        call: |call, arguments, name| tools::ast_edit(call, args(name, arguments)?),
    },
    Route {
        name: "apply_patch",
        needs_run: false,
        tool: |name| {
            tool::<tools::PatchInput, git_astedit::report::StageReport>(
                name,
                "Stage a `*** Begin Patch` … `*** End Patch` patch (Add/Update/Delete File, @@ \
                 chunks, *** Move to) as a preview. Each chunk must fit exactly one place (tolerating \
                 whitespace and typographic drift, with bounded rescues that are reported); otherwise \
                 nothing is staged and the error names the chunk and candidate lines. The work tree is \
                 NOT changed: apply or discard the preview with `resolve`.",
                hints("Stage a patch", false, false, false),
            )
        },
        call: |call, arguments, name| tools::apply_patch(call, args(name, arguments)?),
    },
    Route {
        name: "previews",
        needs_run: false,
        tool: |name| {
            tool::<tools::PreviewsInput, tools::PreviewsOutput>(
                name,
                "List pending previews (action `list`, newest first) or show one (action `show`: \
                 metadata, per-file line counts, diff capped at max_diff_lines). Reads only.",
                hints("List or show previews", true, false, true),
            )
        },
        call: |call, arguments, name| tools::previews(call, args(name, arguments)?),
    },
    Route {
        name: "resolve",
        needs_run: false,
        tool: |name| {
            tool::<tools::ResolveInput, git_astedit::report::ResolveReport>(
                name,
                "Apply or discard a pending preview (the newest when no id is given); a reason is \
                 required and journalled with your client name. `apply` first checks that every \
                 touched file still holds what the preview was computed from: if any changed, nothing \
                 is written and the error names the files (call again with `refresh: true` to \
                 re-derive it on the current files and apply when the counts agree). `paths` \
                 applies part of it. The write is atomic and can be undone with `undo`.",
                hints("Apply or discard a preview", false, true, false),
            )
        },
        call: |call, arguments, name| tools::resolve(call, args(name, arguments)?),
    },
    Route {
        name: "undo",
        needs_run: false,
        tool: |name| {
            tool::<tools::UndoInput, git_astedit::report::ResolveReport>(
                name,
                "Undo an applied transaction (the newest applied one when no id is given): restores \
                 what the apply replaced, after checking that the files still hold what was applied \
                 (otherwise nothing is written and the error names the files).",
                hints("Undo an applied transaction", false, true, false),
            )
        },
        call: |call, arguments, name| tools::undo(call, args(name, arguments)?),
    },
    Route {
        name: "pr",
        needs_run: false,
        tool: |name| {
            tool::<tools::PrInput, git_astedit::report::PrReport>(
                name,
                "Open a GitHub pull request for a transaction (applied, or still pending), as \
                 `git astedit pr`: pushes a branch `astedit/<id>` holding exactly its changes on top \
                 of the commit it was staged on (a commit with Astedit-* trailers naming you), then \
                 runs `gh pr create` (a draft unless ready). Calling it again reports the existing \
                 pull request. Needs the `gh` CLI logged in and a remote you may push to; journalled \
                 with your client name.",
                // Pushes and opens a PR on GitHub: outside the repository, and not undone by undo.
                ToolAnnotations::with_title("Open a pull request")
                    .read_only(false)
                    .destructive(true)
                    .idempotent(true)
                    .open_world(true),
            )
        },
        call: |call, arguments, name| tools::pr(call, args(name, arguments)?),
    },
    Route {
        name: "read",
        needs_run: false,
        tool: |name| {
            tool::<tools::ReadInput, git_astedit::report::ReadReport>(
                name,
                "Read a file's lines (numbered; a range with start/end, cut at the byte budget) with \
                 the blob id of its content: the address edit_lines takes. Reads only (the blob is \
                 kept in git's object database so a later edit can merge from it).",
                hints("Read a file's lines", true, false, true),
            )
        },
        call: |call, arguments, name| tools::read(call, args(name, arguments)?),
    },
    Route {
        name: "edit_lines",
        needs_run: false,
        tool: |name| {
            tool::<tools::EditLinesInput, git_astedit::report::StageReport>(
                name,
                "Stage replacements of line ranges of a file as a preview, the ranges counted in the \
                 blob `read` returned. If the file changed since the read, the edit is re-placed onto \
                 it by a three-way merge (and the result says so); if it changed where the ranges \
                 are, nothing is staged (stale-read: read again). The work tree is NOT changed: \
                 apply or discard the preview with `resolve`.",
                hints("Stage line edits", false, false, false),
            )
        },
        call: |call, arguments, name| tools::edit_lines(call, args(name, arguments)?),
    },
    Route {
        name: "replace",
        needs_run: false,
        tool: |name| {
            tool::<tools::ReplaceInput, git_astedit::report::StageReport>(
                name,
                "Stage exact-text replacements in one file as a preview (the Edit/MultiEdit shape): \
                 old_string must occur exactly once (or set replace_all); `edits` makes several in \
                 order, all or nothing. When old_string is not found, the error shows the closest \
                 lines, where they differ and a `next` replace that would work; when it occurs more \
                 than once, the line of each. `blob` (from `read`) pins the text the edit was made \
                 from: a file changed since is merged three-way. The work tree is NOT changed unless \
                 `apply` is set: apply or discard the preview with `resolve`.",
                hints("Stage text replacements", false, true, false),
            )
        },
        call: |call, arguments, name| tools::replace(call, args(name, arguments)?),
    },
    Route {
        name: "write",
        needs_run: false,
        tool: |name| {
            tool::<tools::WriteInput, git_astedit::report::StageReport>(
                name,
                "Stage a whole file, created or replaced, as a preview (the Write shape). `blob` \
                 (from `read`) pins the content it was written from: if the file changed since, the \
                 other change is merged in three-way, or nothing is staged (stale-read) where they \
                 collide, so a write from a stale read never drops another agent's edit. The work \
                 tree is NOT changed unless `apply` is set: apply or discard with `resolve`.",
                hints("Stage a whole file", false, true, false),
            )
        },
        call: |call, arguments, name| tools::write(call, args(name, arguments)?),
    },
    Route {
        name: "ast_apply",
        needs_run: false,
        tool: |name| {
            tool::<tools::AstApplyInput, git_astedit::report::ResolveReport>(
                name,
                "Legacy name of `resolve`, kept for older callers: `action` (apply or discard), \
                 `previewId`, optional `reason`. Prefer `resolve`.",
                hints("Apply or discard a preview (legacy)", false, true, false),
            )
        },
        call: |call, arguments, name| tools::ast_apply(call, args(name, arguments)?),
    },
    Route {
        name: "run",
        needs_run: true,
        tool: |name| {
            tool::<tools::RunInput, git_astedit::report::StageReport>(
                name,
                "Run a command (a formatter, a fixer: argv, no shell) in a temporary worktree              holding the work tree's files, and stage what it changed there (new, changed,              deleted files, modes) as a preview. The work tree is NOT changed: returns the              preview id, how the command ended, the end of its output and the diff; apply or              discard it with `resolve`. A command that exits non-zero stages nothing unless              allow_failure; one that writes under .git is refused.",
                // It executes a program: anything it does outside its worktree is outside.
                ToolAnnotations::with_title("Run a command and stage its changes")
                    .read_only(false)
                    .destructive(false)
                    .idempotent(false)
                    .open_world(true),
            )
        },
        call: |call, arguments, name| tools::run(call, args(name, arguments)?),
    },
];

fn catalog(allow_run: bool) -> Vec<Tool> {
    ROUTES
        .iter()
        .filter(|r| allow_run || !r.needs_run)
        .map(|r| (r.tool)(r.name))
        .collect()
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

/// Reads a tool's arguments; a mismatch is the model's to fix, so it is a usage error.
fn args<T: DeserializeOwned>(
    name: &str,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<T, Error> {
    let value = serde_json::Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|e| {
        UsageError(format!(
            "invalid arguments for {name}: {e}; see the tool's inputSchema"
        ))
        .into()
    })
}

/// Runs one tool to completion on the current (blocking) thread. A `--allow-run`
/// tool is reached only when the catalog offers it: calls of tools not in it are
/// refused before dispatch.
fn dispatch(name: &str, call: &Call, arguments: Arguments) -> Result<Done, Error> {
    match ROUTES.iter().find(|r| r.name == name) {
        Some(route) => (route.call)(call, arguments, name),
        None => Err(UsageError(format!("unknown tool '{name}'")).into()),
    }
}

/// The `isError` result of a failed call: what happened first (with the files it is
/// about on that first line), then what to do; then the same as JSON, with `next`
/// (see [`git_astedit::render::agent::error`]).
fn error_result(err: &Error, tool: &str) -> CallToolResult {
    let (text, json) = git_astedit::render::agent::error::result(err, tool);
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
        let mut arguments = request.arguments;
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
                return Ok(CallToolResponse::Complete(error_result(&err, &name)));
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
            Err(err) => error_result(&err, &request.name),
        };
        Ok(CallToolResponse::Complete(result))
    }
}
