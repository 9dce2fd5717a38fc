//! The server's tools: one table ([`ROUTES`]) gives each tool's name, its catalog
//! entry (description, annotations, schemas with the deprecated aliases declared) and
//! its call; [`catalog`] and [`dispatch`] read it, so a new tool is one row here and
//! its body in `tools/`.

use std::sync::Arc;

use git_astedit::error::UsageError;
use git_astedit::Error;
use rmcp::handler::server::common::schema_for_input;
use rmcp::model::Tool;
use rmcp::model::ToolAnnotations;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::tools;
use super::tools::Call;
use super::tools::Done;

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
        // One of several reports (`lane`): each an object, so the whole is one too, as
        // MCP wants an output schema's root to say.
        serde_json::Value::Object(mut o) => {
            if o.contains_key("anyOf") && !o.contains_key("type") {
                o.insert("type".into(), serde_json::json!("object"));
            }
            Arc::new(o)
        }
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
/// `aliases_in_the_schemas_are_accepted` (tests/integration/mcp/protocol.rs) calls each.
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
pub(super) type Arguments = Option<serde_json::Map<String, serde_json::Value>>;

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
        name: "log",
        needs_run: false,
        tool: |name| {
            tool::<tools::LogInput, git_astedit::report::LogReport>(
                name,
                "The journal, newest first: who staged, applied or undid what, when and why. With \
                 `session`, only what that agent's session did (its hook edits, shell commands and \
                 applies), each change with its files, lines added and removed, and the tool; \
                 `diff: true` adds each change's diff. Reads only.",
                hints("Read the journal", true, false, true),
            )
        },
        call: |call, arguments, name| tools::log(call, args(name, arguments)?),
    },
    Route {
        name: "lane",
        needs_run: false,
        tool: |name| {
            tool::<tools::LaneInput, tools::LaneOutput>(
                name,
                "Lanes, one work tree per agent (`git astedit lane`): `start` makes lane `name` \
                 at HEAD and returns its folder, for a sub-agent to work in without waiting for \
                 anyone's turn; `list` gives each lane with what it changed and what of that this \
                 work tree does not hold; `merge` brings `names` back as one preview staged here, \
                 merged by syntax node (two lanes that changed different functions of one file \
                 merge cleanly; one function changed in two is a conflict naming it, nothing \
                 staged), to apply with `resolve`; `drop` removes a lane, refused while it holds \
                 changes not merged here unless `force`.",
                hints("Start, list, merge or drop lanes", false, true, false),
            )
        },
        call: |call, arguments, name| tools::lane(call, args(name, arguments)?),
    },
    Route {
        name: "review",
        needs_run: false,
        tool: |name| {
            tool::<tools::ReviewInput, tools::ReviewToolOutput>(
                name,
                "Review a pending preview by group instead of hunk by hunk: its sites (one match's \
                 replacement each) grouped by rule or op and change, with a count, files and one \
                 representative diff per group, outliers (changes that differ from their rule's \
                 usual one) first. `decide` records decisions by group key (or site id, or `all`) \
                 in one call, under your client's name; `resolve` apply then applies the accepted \
                 sites, drops the rejected ones and leaves the undecided ones pending.",
                hints("Review a preview by group", false, false, true),
            )
        },
        call: |call, arguments, name| tools::review(call, args(name, arguments)?),
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
                 from: a file changed since is merged three-way and staged with a warning. The work \
                 tree is NOT changed unless `apply` is set, and never when the blob was outdated: \
                 the merged edit is then staged, `applied` is false and `not_applied` says why. \
                 Apply or discard a staged preview with `resolve`.",
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
                 tree is NOT changed unless `apply` is set, and never when the blob was outdated: \
                 the merged content is then staged, `applied` is false and `not_applied` says \
                 why. Apply or discard a staged preview with `resolve`.",
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
        name: "ast_steps",
        needs_run: false,
        tool: |name| {
            tool::<tools::StepsInput, git_astedit::report::StageReport>(
                name,
                "Run the ordered [[steps]] of the repository's astedit.toml (each a rule set or \
                 pattern → rewrite ops, with imports), each on the tree the steps before it \
                 produced, and stage the result as ONE preview; a step's `export` hands the values \
                 it captured to later steps (a rename with every importer across files). The work \
                 tree is NOT changed: returns the preview id, what each step did and the diff \
                 (capped). Apply or discard it with `resolve`.",
                hints("Stage several steps as one preview", false, false, false),
            )
        },
        call: |call, arguments, name| tools::ast_steps(call, args(name, arguments)?),
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

pub(super) fn catalog(allow_run: bool) -> Vec<Tool> {
    ROUTES
        .iter()
        .filter(|r| allow_run || !r.needs_run)
        .map(|r| (r.tool)(r.name))
        .collect()
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
pub(super) fn dispatch(name: &str, call: &Call, arguments: Arguments) -> Result<Done, Error> {
    match ROUTES.iter().find(|r| r.name == name) {
        Some(route) => (route.call)(call, arguments, name),
        None => Err(UsageError(format!("unknown tool '{name}'")).into()),
    }
}
