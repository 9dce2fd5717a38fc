//! Code actions, commands and hover.
//!
//! * A quick fix per finding whose rule has a fix: the replacement `scan --apply`
//!   makes at that match (`expandStart`/`expandEnd` included).
//! * "Fix all RULE in this file" and `source.fixAll.astedit`: the text `scan --apply`
//!   would write for the document (every fix, re-run until it settles), as one edit.
//! * "Stage all fixes in the workspace as a preview": `scan --stage` through the same
//!   operation, journalled with the editor's name; the preview's apply, discard and
//!   undo are commands, offered as actions while the preview is this connection's.

use git_astedit::ops;
use git_astedit::ops::lsp::Checked;
use git_astedit::report::FindingRow;
use lsp_types as lsp;
use serde_json::Value;

use super::server::Server;
use super::text::minimal_edit;
use super::text::Lines;

pub const STAGE_ALL: &str = "astedit.stageAll";
pub const APPLY: &str = "astedit.apply";
pub const DISCARD: &str = "astedit.discard";
pub const UNDO: &str = "astedit.undo";
pub const COMMANDS: [&str; 4] = [STAGE_ALL, APPLY, DISCARD, UNDO];

/// `source.fixAll.astedit`: every fix in the file (for fix-on-save).
const FIX_ALL: &str = "source.fixAll.astedit";
/// The preview actions.
const PREVIEW: &str = "source.astedit";

pub fn kinds() -> Vec<lsp::CodeActionKind> {
    vec![
        lsp::CodeActionKind::QUICKFIX,
        lsp::CodeActionKind::new(FIX_ALL),
        lsp::CodeActionKind::new(PREVIEW),
    ]
}

/// Whether the client's `only` lets actions of `kind` through (a listed kind covers
/// its sub-kinds: `source` covers `source.fixAll.astedit`).
fn wanted(only: Option<&Vec<lsp::CodeActionKind>>, kind: &str) -> bool {
    only.is_none_or(|only| {
        only.iter().any(|o| {
            let o = o.as_str();
            kind == o || kind.strip_prefix(o).is_some_and(|r| r.starts_with('.'))
        })
    })
}

fn overlaps(a: &lsp::Range, b: &lsp::Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

impl Server {
    pub(super) fn code_actions(
        &mut self,
        p: &lsp::CodeActionParams,
    ) -> Vec<lsp::CodeActionOrCommand> {
        let uri = p.text_document.uri.clone();
        // A document `scan` would not look at (ignored, outside the repository): no
        // actions at all, as it has no diagnostics.
        let Some(path) = self
            .repo_path(uri.as_str())
            .filter(|path| self.workspace.looks_at(&self.repo, path))
        else {
            return Vec::new();
        };
        let only = p.context.only.as_ref();
        let mut actions = Vec::new();
        let checked: Vec<Checked> = self
            .findings_of(uri.as_str())
            .map(<[Checked]>::to_vec)
            .unwrap_or_default();
        let rows: Vec<&FindingRow> = checked.iter().map(|c| &c.row).collect();
        if let Some(doc) = self.docs.get(uri.as_str()) {
            let text = doc.text.clone();
            let lines = Lines::new(&text);
            if wanted(only, lsp::CodeActionKind::QUICKFIX.as_str()) {
                let mut rules: Vec<String> = Vec::new();
                for c in &checked {
                    let row = &c.row;
                    let diagnostic = super::server::diagnostic(c, &text, &lines, &uri);
                    if !overlaps(&diagnostic.range, &p.range) {
                        continue;
                    }
                    if let Some(action) = quick_fix(row, &text, &lines, &uri, diagnostic) {
                        actions.push(action);
                        if !rules.contains(&row.rule) {
                            rules.push(row.rule.clone());
                        }
                    }
                }
                for rule in rules {
                    let count = rows.iter().filter(|r| r.rule == rule).count();
                    if count < 2 {
                        continue;
                    }
                    if let Some(edit) = self.fix_edit(&uri, &path, &text, Some(&rule)) {
                        actions.push(action(
                            format!("Fix all `{rule}` in this file ({count})"),
                            lsp::CodeActionKind::QUICKFIX,
                            edit,
                        ));
                    }
                }
            }
            if wanted(only, FIX_ALL) && rows.iter().any(|r| r.fixable) {
                if let Some(edit) = self.fix_edit(&uri, &path, &text, None) {
                    actions.push(action(
                        "Fix all git-astedit findings in this file".into(),
                        lsp::CodeActionKind::new(FIX_ALL),
                        edit,
                    ));
                }
            }
        }
        if wanted(only, PREVIEW) {
            actions.extend(self.preview_actions());
        }
        actions
    }

    /// The edit that turns the document into what `scan --apply` would write.
    fn fix_edit(
        &self,
        uri: &lsp::Uri,
        path: &str,
        text: &str,
        rule: Option<&str>,
    ) -> Option<lsp::WorkspaceEdit> {
        let after = self.workspace.fix(&self.repo, path, text, rule).ok()??;
        let (range, new_text) = minimal_edit(text, &after);
        Some(workspace_edit(uri, vec![lsp::TextEdit { range, new_text }]))
    }

    /// Stage-all, and the apply, discard and undo of this connection's previews.
    fn preview_actions(&self) -> Vec<lsp::CodeActionOrCommand> {
        let mut out = vec![command_action(
            "Stage all fixes in the workspace as a preview (git-astedit)".into(),
            STAGE_ALL,
            Vec::new(),
        )];
        if let Some(id) = self.staged.last() {
            out.push(command_action(
                format!("Apply preview {id}"),
                APPLY,
                vec![Value::String(id.clone())],
            ));
            out.push(command_action(
                format!("Discard preview {id}"),
                DISCARD,
                vec![Value::String(id.clone())],
            ));
        }
        if let Some(id) = self.applied.last() {
            out.push(command_action(
                format!("Undo {id}"),
                UNDO,
                vec![Value::String(id.clone())],
            ));
        }
        out
    }

    /// `workspace/executeCommand`: runs the command and answers. Stage-all reports
    /// work-done progress to the client's token and stops when cancelled (its
    /// `$/cancelRequest`, the progress's cancel, or the client going away): nothing is
    /// staged and the answer is `RequestCancelled`.
    pub(super) fn command(&mut self, id: lsp_server::RequestId, p: &lsp::ExecuteCommandParams) {
        let token = p.work_done_progress_params.work_done_token.as_ref();
        let cancel = self.cancel_for(&id, token);
        let title = match p.command.as_str() {
            STAGE_ALL => "Staging all fixes as a preview",
            _ => "git-astedit",
        };
        self.progress(token, super::server::begin(title));
        let result = self.execute(p, &cancel);
        let said = match &result {
            Ok(_) => None,
            Err(_) if cancel.is_cancelled() => Some("cancelled; nothing was staged".to_string()),
            Err(e) => Some(e.clone()),
        };
        self.progress(token, super::server::end(said));
        match result {
            Ok(result) => self.reply(id.clone(), result),
            Err(_) if cancel.is_cancelled() => self.reply_err(
                id.clone(),
                lsp_server::ErrorCode::RequestCanceled,
                "cancelled; nothing was staged",
            ),
            Err(e) => {
                self.show(lsp::MessageType::ERROR, e.clone());
                self.reply_err(id.clone(), lsp_server::ErrorCode::RequestFailed, &e);
            }
        }
        self.forget(&id, token);
    }

    /// Runs a command; the error is a sentence for the user.
    fn execute(
        &mut self,
        p: &lsp::ExecuteCommandParams,
        cancel: &git_astedit::cancel::Cancel,
    ) -> Result<Value, String> {
        let id = p
            .arguments
            .first()
            .and_then(Value::as_str)
            .map(str::to_string);
        // Every command writes (a preview, the work tree, the journal): a run left
        // unfinished is refused, as the CLI refuses it.
        let (repo, _) = ops::session::open(&self.repo.cwd, true).map_err(|e| e.to_string())?;
        let agent = self.agent.clone();
        let reason = Some("from the editor".to_string());
        match p.command.as_str() {
            STAGE_ALL => {
                let report = ops::lsp::stage_all(&repo, &self.configs, agent, cancel)
                    .map_err(|e| e.to_string())?;
                let Some(id) = report.id.clone() else {
                    self.show(lsp::MessageType::INFO, "git-astedit: nothing to fix".into());
                    return Ok(Value::Null);
                };
                let summary = report.summary.clone().unwrap_or_default();
                let files: Vec<String> = report
                    .files
                    .iter()
                    .flatten()
                    .map(|f| f.repo_path.clone())
                    .collect();
                self.staged.retain(|s| *s != id);
                self.staged.push(id.clone());
                self.show(
                    lsp::MessageType::INFO,
                    format!(
                        "git-astedit: staged preview {id}: {summary}. Review it with `git astedit show {id}`; apply, discard or undo it from the code actions."
                    ),
                );
                Ok(serde_json::json!({ "id": id, "summary": summary, "files": files }))
            }
            APPLY => {
                let id = self.target(&repo, id)?;
                let buffers = self.open_buffers(&repo, Some(&id), false)?;
                let request = ops::apply::ApplyRequest::whole(
                    Some(id),
                    ops::apply::ApplyOptions {
                        reason,
                        agent,
                        ..Default::default()
                    },
                );
                // As `git astedit apply ID`: a reviewed preview's decisions are obeyed.
                let report =
                    ops::review::apply::run(&repo, &request, cancel).map_err(|e| e.to_string())?;
                self.staged.retain(|s| *s != report.id);
                self.applied.push(report.id.clone());
                self.follow(buffers, &report.written, &report.deleted);
                let what = match &report.review {
                    // What the decisions did (the part left pending), as the CLI says it.
                    Some(_) => {
                        use git_astedit::render::TextReport;
                        let text = report.text(&Default::default()).stdout();
                        text.trim_end().replace('\n', " ")
                    }
                    None => format!(
                        "applied {} ({} files written).",
                        report.id,
                        report.written.len() + report.deleted.len()
                    ),
                };
                self.show(
                    lsp::MessageType::INFO,
                    format!(
                        "git-astedit: {what} Undo it from the code actions or with `git astedit undo {}`.",
                        report.id
                    ),
                );
                serde_json::to_value(&report).map_err(|e| e.to_string())
            }
            DISCARD => {
                let id = self.target(&repo, id)?;
                let request = ops::discard::DiscardRequest {
                    id: Some(id),
                    reason,
                    agent,
                };
                let report = ops::discard::run(&repo, &request).map_err(|e| e.to_string())?;
                self.staged.retain(|s| *s != report.id);
                serde_json::to_value(&report).map_err(|e| e.to_string())
            }
            UNDO => {
                let id = id.or_else(|| self.applied.last().cloned());
                let buffers = self.open_buffers(&repo, id.as_deref(), true)?;
                let request = ops::undo::UndoRequest {
                    id,
                    reason,
                    agent,
                    index: false,
                };
                let report = ops::undo::run(&repo, &request).map_err(|e| e.to_string())?;
                self.applied.retain(|s| *s != report.id);
                // Pending again: offered for apply again.
                if report.state == git_astedit::report::PreviewState::Pending {
                    self.staged.retain(|s| *s != report.id);
                    self.staged.push(report.id.clone());
                }
                self.follow(buffers, &report.written, &report.deleted);
                self.show(
                    lsp::MessageType::INFO,
                    format!("git-astedit: undid {}", report.id),
                );
                serde_json::to_value(&report).map_err(|e| e.to_string())
            }
            other => Err(format!("git-astedit has no command {other}")),
        }
    }

    /// The open documents an apply of preview `id` (with `undo`, the undo of
    /// transaction `id`) touches, each as (repository path, URI, text): their text is
    /// the file's on disk. One with unsaved edits refuses the command, naming it,
    /// before anything is written.
    fn open_buffers(
        &self,
        repo: &git_astedit::repo::Repo,
        id: Option<&str>,
        undo: bool,
    ) -> Result<Vec<(String, String, String)>, String> {
        let open: Vec<(String, &str, &str)> = self
            .docs
            .iter()
            .filter_map(|(uri, doc)| Some((self.repo_path(uri)?, uri.as_str(), doc.text.as_str())))
            .collect();
        let paths: Vec<(String, &str)> = open.iter().map(|(p, _, t)| (p.clone(), *t)).collect();
        let buffers = ops::lsp::buffers(repo, id, undo, &paths).map_err(|e| e.to_string())?;
        if !buffers.unsaved.is_empty() {
            let verb = if undo { "undo" } else { "apply" };
            return Err(format!(
                "git-astedit: refused to {verb}: {} has unsaved changes in the editor, and the {verb} would write the file behind them. Save (`:w`) or revert (`:edit!`) it, then {verb} again; nothing was written.",
                buffers.unsaved.join(", ")
            ));
        }
        Ok(buffers
            .follow
            .into_iter()
            .filter_map(|(path, text)| {
                let uri = open.iter().find(|(p, _, _)| *p == path)?.1.to_string();
                Some((path, uri, text))
            })
            .collect())
    }

    /// Sends the open documents that held the disk's text before an apply or undo
    /// the change it wrote (`workspace/applyEdit`, one request), so the editor's
    /// buffers hold what the disk holds; the editor's `didChange` then brings their
    /// diagnostics. A document the change deleted, or a client that cannot apply
    /// edits, leaves the buffer behind the disk: the user is told to reload it.
    fn follow(
        &mut self,
        before: Vec<(String, String, String)>,
        written: &[String],
        deleted: &[String],
    ) {
        let mut edits = Vec::new();
        let mut paths = Vec::new();
        let mut behind = Vec::new();
        for (path, uri, old) in before {
            if deleted.contains(&path) || !self.applies_edits {
                behind.push(path);
                continue;
            }
            if !written.contains(&path) {
                continue;
            }
            let Ok(new) = std::fs::read_to_string(self.repo.workdir.join(&path)) else {
                behind.push(path);
                continue;
            };
            let (Ok(uri), false) = (uri.parse::<lsp::Uri>(), new == old) else {
                continue;
            };
            let version = self.docs.get(uri.as_str()).map(|d| d.version);
            let (range, new_text) = minimal_edit(&old, &new);
            edits.push((uri, version, lsp::TextEdit { range, new_text }));
            paths.push(path);
        }
        if !edits.is_empty() {
            let edit = if self.versioned_edits {
                let edits = edits
                    .into_iter()
                    .map(|(uri, version, edit)| lsp::TextDocumentEdit {
                        text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                            uri,
                            version,
                        },
                        edits: vec![lsp::OneOf::Left(edit)],
                    })
                    .collect();
                lsp::WorkspaceEdit {
                    document_changes: Some(lsp::DocumentChanges::Edits(edits)),
                    ..Default::default()
                }
            } else {
                lsp::WorkspaceEdit {
                    changes: Some(edits.into_iter().map(|(u, _, e)| (u, vec![e])).collect()),
                    ..Default::default()
                }
            };
            let id =
                self.request::<lsp::request::ApplyWorkspaceEdit>(lsp::ApplyWorkspaceEditParams {
                    label: Some("git-astedit".into()),
                    edit,
                });
            self.edits_sent.insert(id, paths);
        }
        if !behind.is_empty() {
            self.show(
                lsp::MessageType::WARNING,
                format!(
                    "git-astedit: {} changed on disk under the editor: reload (`:edit!` in Vim).",
                    behind.join(", ")
                ),
            );
        }
        self.refresh_pulled();
    }

    /// The preview a command without an id means: the newest this connection staged.
    fn target(&self, repo: &git_astedit::repo::Repo, id: Option<String>) -> Result<String, String> {
        match id {
            Some(id) => Ok(id),
            None => ops::session::target(repo, &self.staged, ops::session::Tool::Resolve)
                .map_err(|e| e.to_string()),
        }
    }

    /// The rule, message, note and fix of the findings under the cursor.
    pub(super) fn hover(&mut self, p: &lsp::HoverParams) -> Option<lsp::Hover> {
        let uri = p.text_document_position_params.text_document.uri.clone();
        let pos = p.text_document_position_params.position;
        let rows: Vec<FindingRow> = self
            .findings_of(uri.as_str())?
            .iter()
            .map(|c| c.row.clone())
            .collect();
        let text = &self.docs.get(uri.as_str())?.text;
        let lines = Lines::new(text);
        let mut parts = Vec::new();
        let mut range = None;
        for row in &rows {
            let r = lines.range(text, (row.line, row.column), (row.end_line, row.end_column));
            if !(r.start <= pos && pos <= r.end) {
                continue;
            }
            range.get_or_insert(r);
            parts.push(hover_text(row, self.workspace.rule(&row.rule)));
        }
        if parts.is_empty() {
            return None;
        }
        Some(lsp::Hover {
            contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: parts.join("\n\n---\n\n"),
            }),
            range,
        })
    }
}

/// A finding's hover: its rule and severity, message, note, link and fix.
fn hover_text(row: &FindingRow, rule: Option<ops::lsp::RuleInfo>) -> String {
    let mut s = format!(
        "**{}** ({}): {}",
        row.rule,
        row.severity.as_str(),
        row.message
    );
    if let Some(note) = &row.note {
        s.push_str(&format!("\n\n{note}"));
    }
    if let Some(fix) = &row.fix {
        let shown = if fix.inserted.is_empty() {
            "Fix: delete it".to_string()
        } else {
            format!("Fix: replace it with\n\n```\n{}\n```", fix.inserted)
        };
        s.push_str(&format!("\n\n{shown}"));
    }
    if let Some(url) = rule.and_then(|r| r.url) {
        s.push_str(&format!("\n\n[{}]({url})", row.rule));
    }
    s
}

/// The quick fix of one finding, when its rule has a fix.
fn quick_fix(
    row: &FindingRow,
    text: &str,
    lines: &Lines,
    uri: &lsp::Uri,
    diagnostic: lsp::Diagnostic,
) -> Option<lsp::CodeActionOrCommand> {
    let fix = row.fix.as_ref()?;
    let range = lines.range(
        text,
        (fix.start_line, fix.start_column),
        (fix.end_line, fix.end_column),
    );
    let edit = workspace_edit(
        uri,
        vec![lsp::TextEdit {
            range,
            new_text: fix.inserted.clone(),
        }],
    );
    Some(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
        title: format!("Fix `{}`: {}", row.rule, row.message),
        kind: Some(lsp::CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![diagnostic]),
        edit: Some(edit),
        is_preferred: Some(true),
        ..Default::default()
    }))
}

fn workspace_edit(uri: &lsp::Uri, edits: Vec<lsp::TextEdit>) -> lsp::WorkspaceEdit {
    lsp::WorkspaceEdit {
        changes: Some([(uri.clone(), edits)].into_iter().collect()),
        ..Default::default()
    }
}

fn action(
    title: String,
    kind: lsp::CodeActionKind,
    edit: lsp::WorkspaceEdit,
) -> lsp::CodeActionOrCommand {
    lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
        title,
        kind: Some(kind),
        edit: Some(edit),
        ..Default::default()
    })
}

fn command_action(title: String, command: &str, arguments: Vec<Value>) -> lsp::CodeActionOrCommand {
    lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
        title: title.clone(),
        kind: Some(lsp::CodeActionKind::new(PREVIEW)),
        command: Some(lsp::Command {
            title,
            command: command.into(),
            arguments: Some(arguments),
        }),
        ..Default::default()
    })
}
