//! A failed tool call in the server's words: the hint a model can act on (tool calls,
//! not CLI flags), the call to make next, what the exit class means; then the text
//! block and the JSON, both made by [`crate::render::error`].

use crate::error::Exit;
use crate::report::ErrorReport;
use crate::Error;

/// The text block and the JSON text block of the `isError` result of a call of `tool`
/// that failed with `err`.
/// `arguments` are the failed call's own, which `next` repeats (changed where it can
/// say how).
pub fn result(err: &Error, tool: &str, arguments: &serde_json::Value) -> (String, String) {
    let mut report = ErrorReport::new(err);
    report.error.hint = tool_hint(err);
    let text = super::super::error::tool_text(&report, &error_paths(err), meaning(err.exit()));
    let json = super::super::error::tool_json(report, next_call(err, tool, arguments));
    (text, json)
}

/// What an exit class means for the caller, in words a model can act on.
pub fn meaning(exit: Exit) -> &'static str {
    match exit {
        Exit::Ok => "done",
        Exit::NothingFound => "nothing found or nothing to do",
        Exit::BadInput => "bad input: fix the arguments and call again",
        Exit::Stale => {
            "stale: files changed since the preview was staged; nothing was written — resolve with refresh: true, or stage a fresh preview"
        }
        Exit::Refused => "refused for safety (a path outside the tree, under .git/, or an overwrite); nothing was written",
        Exit::Unplaceable => {
            "the patch could not be placed (no match, or more than one); nothing was staged — add context lines or fix them"
        }
        Exit::Locked => "locked: another git astedit is writing this repository; retry shortly",
        Exit::Internal => "internal or environment error",
    }
}

/// The hint in the tool's own words: the engines' hints name CLI flags and commands,
/// which a model calling tools cannot use.
pub fn tool_hint(err: &Error) -> Option<String> {
    let details = err.details().unwrap_or_default();
    let first = |key: &str| {
        details[key][0]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| "ID".into())
    };
    Some(match err.code() {
        "only-undone-pending" => format!(
            "an undone preview is applied again only by name: resolve {{\"action\": \"apply\", \"id\": \"{}\", \"reason\": …}}",
            first("undone")
        ),
        "no-pending-preview" => "stage a preview with ast_edit or apply_patch first".into(),
        "nothing-to-undo" => "nothing was applied; resolve with action \"apply\" applies a preview".into(),
        "unknown-id" | "preview-gone" | "bad-id" | "ambiguous-id" => {
            "previews (action \"list\") shows the pending previews and their ids; pass one as id"
                .into()
        }
        "already-applied" => "it is applied already; undo with its id takes it back".into(),
        "bad-pattern" => {
            "a pattern must be valid code in the file's language; set the lang field to force one"
                .into()
        }
        "undefined-metavariable" => {
            "every $NAME in the rewrite must appear in the pattern (use $$$NAME for a sequence); \
             fix the op and call again"
                .into()
        }
        "unsafe-path" | "refused" | "protected-path" => {
            "paths must stay inside the work tree (relative, no `..`, not under .git, not \
             through a symlink); fix the path and call again"
                .into()
        }
        "unknown-language" => match err.hint() {
            Some(h) => format!("set lang to a known language ({h})"),
            None => "set lang to a known language".into(),
        },
        "pathspec-no-match" => {
            "paths are relative to the repository root; `**` spans directories (src/**/*.ts)"
                .into()
        }
        "other-staged-changes" => {
            "the index holds other staged changes: commit or unstage them first, or resolve without commit"
                .into()
        }
        "stale" => format!(
            "the files changed since the preview was staged: call resolve again with \
             \"refresh\": true to re-derive it on the current files (applied only if it makes the \
             same changes), or stage it again with ast_edit/apply_patch (preview {})",
            details["id"].as_str().unwrap_or("ID")
        ),
        "refresh-conflict" => "a file was edited where the preview changes it: read the \
             conflicts named, then stage the change again with ast_edit or apply_patch on the \
             current files"
            .into(),
        "refresh-differs" => format!(
            "the refreshed preview {} makes different changes: look at it with previews \
             {{\"action\": \"show\", \"id\": \"{}\"}}, then resolve it by id",
            details["successor"].as_str().unwrap_or("ID"),
            details["successor"].as_str().unwrap_or("ID")
        ),
        "locked" | "ref-locked" | "stale-lock" => {
            "another git astedit is writing this repository: call again in a few seconds \
             (retry_after_seconds in next)"
                .into()
        }
        "unfinished" | "recovery-pending" => {
            "an interrupted apply waits for a person: files named here were changed while it \
             ran; tell the user, who resolves it with git astedit's recover command"
                .into()
        }
        "verify-failed" => format!(
            "the verify command failed in a worktree of preview {}, which stays pending and \
             unwritten; error.details.output holds the end of its output: fix the cause and \
             stage again, or resolve with a passing verify",
            details["id"].as_str().unwrap_or("ID")
        ),
        "usage" => "see the tool's inputSchema for its fields".into(),
        "stale-read" | "unknown-blob" => format!(
            "read {{\"path\": \"{}\"}} again (error.details.changed_since_read shows what \
             changed), then edit with the blob and lines it returns",
            details["path"].as_str().unwrap_or("PATH")
        ),
        "cancelled" => {
            "the request was cancelled (or stdin closed) before it finished; call again to redo it"
                .into()
        }
        _ => return err.hint(),
    })
}

/// The call to make next, for a machine: a tool and its arguments, always an object
/// (`…` where the caller must fill in; the failed call's own `arguments` when it is
/// to be made again), with `change` saying in words what to change in them when that
/// is not known here, or a retry after some seconds.
pub fn next_call(
    err: &Error,
    tool: &str,
    arguments: &serde_json::Value,
) -> Option<serde_json::Value> {
    use serde_json::json;
    let details = err.details().unwrap_or_default();
    let id = details["id"].as_str();
    let same = match arguments {
        serde_json::Value::Object(_) => arguments.clone(),
        _ => json!({}),
    };
    Some(match err.code() {
        "stale" => json!({"tool": "resolve", "arguments": {
            "action": "apply", "id": id, "refresh": true, "reason": "…"}}),
        "refresh-differs" => json!({"tool": "previews", "arguments": {
            "action": "show", "id": details["successor"]}}),
        "refresh-conflict" => json!({"tool": tool, "arguments": same,
            "change": "stage the change again on the current files (read them first)"}),
        "only-undone-pending" => json!({"tool": "resolve", "arguments": {
            "action": "apply", "id": details["undone"][0], "reason": "…"}}),
        "unknown-id" | "preview-gone" | "bad-id" | "ambiguous-id" | "id-required" => {
            json!({"tool": "previews", "arguments": {"action": "list"}})
        }
        "no-pending-preview" => json!({"tool": "ast_edit", "arguments": {"ops": "…"},
            "change": "stage a preview first"}),
        "locked" | "ref-locked" | "stale-lock" => {
            json!({"tool": tool, "arguments": same, "retry_after_seconds": 2})
        }
        "cancelled" => json!({"tool": tool, "arguments": same}),
        "unknown-language" if details["suggestion"].is_string() => {
            let mut fixed = same;
            fixed["lang"] = details["suggestion"].clone();
            json!({"tool": tool, "arguments": fixed})
        }
        "stale-read" | "unknown-blob" => json!({"tool": "read", "arguments": {
            "path": details["path"]}}),
        "text-not-found" | "no-match" => return Some(near_miss_call(&details)),
        "text-not-unique" => json!({"tool": "replace", "arguments": {
            "path": details["path"], "old_string": details["old_string"],
            "new_string": "…", "replace_all": true},
            "or": "old_string with more surrounding lines, so that it matches one of the lines named"}),
        "bad-pattern"
        | "bad-import"
        | "pattern-does-not-parse"
        | "undefined-metavariable"
        | "unknown-language"
        | "usage"
        | "pathspec-no-match"
        | "unsafe-path"
        | "refused"
        | "protected-path"
        | "patch-syntax"
        | "patch-empty"
        | "patch-empty-update"
        | "ambiguous-match"
        | "bad-edit"
        | "anchor-not-found"
        | "ambiguous-anchor"
        | "missing-file"
        | "file-exists"
        | "overlapping-matches"
        | "unsafe-argument"
        | "bad-range"
        | "bad-blob"
        | "not-readable" => {
            json!({"tool": tool, "arguments": same, "change": "as the message and hint say"})
        }
        _ => return None,
    })
}

/// The call after a text that could not be placed: a `replace` of the closest region
/// when its text is in the file once (a call that would work, once `new_string` is
/// filled in), else a `read` of the file.
fn near_miss_call(details: &serde_json::Value) -> serde_json::Value {
    use serde_json::json;
    let near = &details["near"];
    match near["text"].as_str() {
        Some(text) if details["near_unique"] == true => json!({"tool": "replace", "arguments": {
            "path": details["path"],
            "old_string": text.strip_suffix('\n').unwrap_or(text),
            "new_string": "…"},
            "lines": [near["start"], near["end"]]}),
        _ => json!({"tool": "read", "arguments": {"path": details["path"]}}),
    }
}

/// The paths an error is about, from its details (stale paths, conflicts, a refusal).
pub fn error_paths(err: &Error) -> Vec<String> {
    let details = err.details().unwrap_or_default();
    let mut out = Vec::new();
    for key in ["paths", "conflicts", "files"] {
        for p in details[key].as_array().into_iter().flatten() {
            if let Some(p) = p["path"].as_str().or_else(|| p.as_str()) {
                if !out.iter().any(|o| o == p) {
                    out.push(p.to_string());
                }
            }
        }
    }
    if let Some(p) = details["path"].as_str() {
        out.push(p.to_string());
    }
    out
}
