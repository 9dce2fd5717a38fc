//! The protocol loop: lifecycle, the open documents, and dispatch of each message to
//! a handler ([`super::actions`] for code actions, commands and hover).
//!
//! One thread handles messages in order. Diagnostics of changed documents are computed
//! when no message is waiting, so a burst of keystrokes costs one check of the last
//! text. A handler that panics is answered with an internal error and the server goes
//! on; a request the client cancelled before its turn is answered as cancelled.

use std::collections::BTreeSet;
use std::collections::HashMap;
use std::path::PathBuf;

use git_astedit::ops;
use git_astedit::ops::lsp::Checked;
use git_astedit::ops::lsp::Workspace;
use git_astedit::repo::Repo;
use lsp_server::ErrorCode;
use lsp_server::Message;
use lsp_server::Notification;
use lsp_server::Request;
use lsp_server::RequestId;
use lsp_server::Response;
use lsp_types as lsp;
use serde_json::Value;

use super::text::Doc;
use super::text::Lines;
use super::transport::Cancelled;
use super::transport::Incoming;
use super::transport::Out;
use super::transport::Transport;

/// What a diagnostic's `source` says.
pub const SOURCE: &str = "git-astedit";

/// The server's state between messages.
pub struct Server {
    pub(super) out: crossbeam_channel::Sender<Out>,
    /// What the client cancelled (noted by the reader as it reads).
    cancelled: Cancelled,
    pub(super) repo: Repo,
    pub(super) configs: Vec<PathBuf>,
    pub(super) workspace: Workspace,
    pub(super) docs: HashMap<String, Doc>,
    /// Findings of each open document, for the version they were computed for.
    pub(super) findings: HashMap<String, (i32, Vec<Checked>)>,
    /// Documents whose diagnostics are to be pushed.
    dirty: BTreeSet<String>,
    /// The client's `name/version`, journalled with what it stages and applies.
    pub(super) agent: Option<String>,
    /// Previews this connection staged, and transactions it applied, oldest first.
    pub(super) staged: Vec<String>,
    pub(super) applied: Vec<String>,
    /// The rule file that has a diagnostic of ours (a rule that does not load).
    broken_shown: Option<lsp::Uri>,
    /// The client pulls diagnostics (`textDocument/diagnostic`): push none.
    pulls: bool,
    /// The client can be told to pull again (`workspace/diagnostic/refresh`).
    refreshes: bool,
    /// The client lets us watch rule files (`workspace/didChangeWatchedFiles`).
    watches: bool,
    /// The client applies edits the server sends (`workspace/applyEdit`), and takes
    /// them with the document's version (`documentChanges`).
    pub(super) applies_edits: bool,
    pub(super) versioned_edits: bool,
    /// Our `workspace/applyEdit` requests not answered yet: the paths each changes.
    pub(super) edits_sent: HashMap<RequestId, Vec<String>>,
    next_request: i32,
    shut_down: bool,
}

/// How long the loop waits for a message, while the rules are unsettled, before it
/// compiles them all (no document needed them yet); see [`Workspace::settle`].
const SETTLE_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// What the loop does after a message.
enum Flow {
    Go,
    Exit,
}

/// Serves `transport` until the client exits or goes away.
pub fn serve(transport: Transport, repo: Repo, configs: Vec<PathBuf>, max_file_size: u64) {
    let mut workspace = Workspace::open(&repo, &configs);
    workspace.set_max_file_size(max_file_size);
    let mut server = Server {
        out: transport.outgoing.clone(),
        cancelled: transport.cancelled.clone(),
        repo,
        configs,
        workspace,
        docs: HashMap::new(),
        findings: HashMap::new(),
        dirty: BTreeSet::new(),
        agent: None,
        staged: Vec::new(),
        applied: Vec::new(),
        broken_shown: None,
        pulls: false,
        refreshes: false,
        watches: false,
        applies_edits: false,
        versioned_edits: false,
        edits_sent: HashMap::new(),
        next_request: 0,
        shut_down: false,
    };
    let mut initialized = false;
    while let Some(msg) = next(&mut server, &transport, initialized) {
        let flow = match msg {
            // As any notification: nothing before `initialize`, a panic caught.
            Incoming::Open(_) | Incoming::Change(_) if !initialized => Flow::Go,
            Incoming::Open(p) => server.guarded(|s| {
                s.did_open(p);
                Flow::Go
            }),
            Incoming::Change(p) => server.guarded(|s| {
                s.did_change(p);
                Flow::Go
            }),
            Incoming::Message(msg) => dispatch(&mut server, msg, &mut initialized),
        };
        if let Flow::Exit = flow {
            break;
        }
        if transport.incoming.is_empty() {
            server.push_diagnostics();
            // The first diagnostics are out: the other rules are compiled now.
            if !server.findings.is_empty() && transport.incoming.is_empty() {
                server.settle();
            }
        }
    }
    drop(server);
    transport.finish();
}

/// The next message; `None` once the client is gone (the end of stdin closes the
/// channel). While the rules are unsettled, a second without a message settles them.
fn next(server: &mut Server, transport: &Transport, initialized: bool) -> Option<Incoming> {
    if !server.workspace.is_unsettled() {
        return transport.incoming.recv().ok();
    }
    loop {
        match transport.incoming.recv_timeout(SETTLE_AFTER) {
            Ok(msg) => return Some(msg),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                if initialized {
                    server.settle();
                    return transport.incoming.recv().ok();
                }
            }
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// Hands a message to its handler.
fn dispatch(server: &mut Server, msg: Message, initialized: &mut bool) -> Flow {
    match msg {
        Message::Request(req) if server.cancelled.take(&req.id) => {
            server.reply_err(req.id, ErrorCode::RequestCanceled, "cancelled");
            Flow::Go
        }
        Message::Request(req) if !*initialized && req.method != "initialize" => {
            server.reply_err(
                req.id,
                ErrorCode::ServerNotInitialized,
                "initialize comes first",
            );
            Flow::Go
        }
        Message::Request(req) if req.method == "initialize" => {
            if *initialized {
                server.reply_err(req.id, ErrorCode::InvalidRequest, "already initialized");
            } else {
                *initialized = server.initialize(req);
            }
            Flow::Go
        }
        Message::Notification(n) if n.method == "exit" => Flow::Exit,
        Message::Notification(_) if !*initialized => Flow::Go,
        Message::Request(req) => server.guarded_request(req),
        Message::Notification(n) => server.guarded_notification(n),
        // Answers to our requests: an edit the editor did not take is said;
        // registrations and refreshes need nothing.
        Message::Response(resp) => {
            server.answered(resp);
            Flow::Go
        }
    }
}

impl Server {
    pub(super) fn send(&self, msg: Message) {
        // A client gone is noticed by the reader (the end of stdin).
        let _ = self.out.send(Out::Message(msg));
    }

    pub(super) fn reply<R: serde::Serialize>(&self, id: RequestId, result: R) {
        let value = serde_json::to_value(result).unwrap_or(Value::Null);
        self.send(Message::Response(Response::new_ok(id, value)));
    }

    pub(super) fn reply_err(&self, id: RequestId, code: ErrorCode, message: &str) {
        self.send(Message::Response(Response::new_err(
            id,
            code as i32,
            message.to_string(),
        )));
    }

    pub(super) fn notify<N: lsp::notification::Notification>(&self, params: N::Params) {
        self.send(Message::Notification(Notification::new(
            N::METHOD.to_string(),
            params,
        )));
    }

    /// Sends a request whose answer nobody waits for (the loop reads it as any
    /// message: [`Server::answered`]); its id is ours, `astedit-N`, never a client's.
    pub(super) fn request<R: lsp::request::Request>(&mut self, params: R::Params) -> RequestId {
        self.next_request += 1;
        let id = RequestId::from(format!("astedit-{}", self.next_request));
        self.send(Message::Request(Request::new(
            id.clone(),
            R::METHOD.to_string(),
            params,
        )));
        id
    }

    /// The client's answer to one of our requests: a `workspace/applyEdit` it
    /// refused or failed leaves its buffers behind the disk, which the user is told.
    fn answered(&mut self, resp: Response) {
        let Some(paths) = self.edits_sent.remove(&resp.id) else {
            return;
        };
        let why = match resp.response_result {
            Err(e) => e.message,
            Ok(r) => match serde_json::from_value::<lsp::ApplyWorkspaceEditResponse>(r) {
                Ok(r) if r.applied => return,
                Ok(r) => r.failure_reason.unwrap_or_else(|| "refused".into()),
                Err(_) => "an answer that does not parse".into(),
            },
        };
        self.show(
            lsp::MessageType::WARNING,
            format!(
                "git-astedit: the editor did not take the change to {} ({why}); the files on disk hold it: reload them (`:edit!` in Vim).",
                paths.join(", ")
            ),
        );
    }

    /// What stops the request `id`: its `$/cancelRequest`, the cancel of its
    /// work-done progress `token`, or the client going away.
    pub(super) fn cancel_for(
        &self,
        id: &RequestId,
        token: Option<&lsp::NumberOrString>,
    ) -> git_astedit::cancel::Cancel {
        let cancelled = self.cancelled.clone();
        let id = id.clone();
        let token = token.map(super::transport::token_key);
        git_astedit::cancel::Cancel::when(move || cancelled.asked(&id, token.as_deref()))
    }

    /// Forgets the cancellation marks of an answered request.
    pub(super) fn forget(&self, id: &RequestId, token: Option<&lsp::NumberOrString>) {
        let token = token.map(super::transport::token_key);
        self.cancelled.forget(id, token.as_deref());
    }

    /// Reports work-done progress to the client's `token` (nothing without one).
    pub(super) fn progress(
        &self,
        token: Option<&lsp::NumberOrString>,
        step: lsp::WorkDoneProgress,
    ) {
        if let Some(token) = token {
            self.notify::<lsp::notification::Progress>(lsp::ProgressParams {
                token: token.clone(),
                value: lsp::ProgressParamsValue::WorkDone(step),
            });
        }
    }

    pub(super) fn show(&self, kind: lsp::MessageType, message: String) {
        self.notify::<lsp::notification::ShowMessage>(lsp::ShowMessageParams {
            typ: kind,
            message,
        });
    }

    /// Answers `initialize`; false when its params do not parse (the client may try
    /// again).
    fn initialize(&mut self, req: Request) -> bool {
        let params: lsp::InitializeParams = match serde_json::from_value(req.params) {
            Ok(p) => p,
            Err(e) => {
                self.reply_err(req.id, ErrorCode::InvalidParams, &e.to_string());
                return false;
            }
        };
        self.agent = params.client_info.as_ref().map(|c| match &c.version {
            Some(v) => format!("{}/{v}", c.name),
            None => c.name.clone(),
        });
        let caps = &params.capabilities;
        self.pulls = caps
            .text_document
            .as_ref()
            .is_some_and(|t| t.diagnostic.is_some());
        self.refreshes = caps
            .workspace
            .as_ref()
            .and_then(|w| w.diagnostic.as_ref())
            .and_then(|d| d.refresh_support)
            .unwrap_or(false);
        self.watches = caps
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        let workspace = caps.workspace.as_ref();
        self.applies_edits = workspace.and_then(|w| w.apply_edit).unwrap_or(false);
        self.versioned_edits = workspace
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.document_changes)
            .unwrap_or(false);
        let result = lsp::InitializeResult {
            capabilities: super::capabilities(),
            server_info: Some(lsp::ServerInfo {
                name: "git-astedit".into(),
                version: Some(git_astedit::VERSION.into()),
            }),
        };
        self.reply(req.id, result);
        self.after_initialize();
        true
    }

    /// Watches rule files and says what did not load.
    fn after_initialize(&mut self) {
        if self.watches {
            let watchers = ["**/sgconfig.yml", "**/astedit.toml", "**/*.{yml,yaml}"]
                .into_iter()
                .map(|g| lsp::FileSystemWatcher {
                    glob_pattern: lsp::GlobPattern::String(g.into()),
                    kind: None,
                })
                .collect();
            let options = lsp::DidChangeWatchedFilesRegistrationOptions { watchers };
            self.request::<lsp::request::RegisterCapability>(lsp::RegistrationParams {
                registrations: vec![lsp::Registration {
                    id: "astedit-rule-files".into(),
                    method: "workspace/didChangeWatchedFiles".into(),
                    register_options: serde_json::to_value(options).ok(),
                }],
            });
        }
        self.show_rules_state();
    }

    fn guarded_request(&mut self, req: Request) -> Flow {
        let id = req.id.clone();
        let method = req.method.clone();
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.request_of(req)));
        match ran {
            Ok(flow) => flow,
            Err(_) => {
                self.reply_err(
                    id,
                    ErrorCode::InternalError,
                    &format!("{method} failed inside git-astedit (a bug; please report it)"),
                );
                Flow::Go
            }
        }
    }

    fn guarded_notification(&mut self, n: Notification) -> Flow {
        self.guarded(|s| s.notification(n))
    }

    /// Runs a notification's handler; one that panics is dropped (a notification has
    /// no answer).
    fn guarded(&mut self, handle: impl FnOnce(&mut Server) -> Flow) -> Flow {
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(self)));
        ran.unwrap_or(Flow::Go)
    }

    fn did_open(&mut self, p: lsp::DidOpenTextDocumentParams) {
        let uri = p.text_document.uri.as_str().to_string();
        self.docs.insert(
            uri.clone(),
            Doc {
                text: p.text_document.text,
                version: p.text_document.version,
            },
        );
        self.findings.remove(&uri);
        self.dirty.insert(uri);
    }

    fn did_change(&mut self, p: lsp::DidChangeTextDocumentParams) {
        let uri = p.text_document.uri.as_str().to_string();
        if let Some(doc) = self.docs.get_mut(&uri) {
            doc.change(p.text_document.version, p.content_changes);
            self.findings.remove(&uri);
            self.dirty.insert(uri);
        }
    }

    fn request_of(&mut self, req: Request) -> Flow {
        if self.shut_down {
            self.reply_err(req.id, ErrorCode::InvalidRequest, "the server is shut down");
            return Flow::Go;
        }
        let id = req.id.clone();
        let params = req.params;
        macro_rules! parse {
            () => {
                match serde_json::from_value(params) {
                    Ok(p) => p,
                    Err(e) => {
                        self.reply_err(id, ErrorCode::InvalidParams, &e.to_string());
                        return Flow::Go;
                    }
                }
            };
        }
        match req.method.as_str() {
            "shutdown" => {
                self.shut_down = true;
                self.reply(id, Value::Null);
            }
            "textDocument/diagnostic" => {
                let p: lsp::DocumentDiagnosticParams = parse!();
                let report = self.document_report(&p);
                self.reply(id, report);
            }
            "workspace/diagnostic" => {
                let p: lsp::WorkspaceDiagnosticParams = parse!();
                let token = p.work_done_progress_params.work_done_token.as_ref();
                let cancel = self.cancel_for(&id, token);
                match self.workspace_diagnostics(&p, &cancel) {
                    Some(report) => self.reply(id.clone(), report),
                    None => self.reply_err(id.clone(), ErrorCode::RequestCanceled, "cancelled"),
                }
                self.forget(&id, token);
            }
            "textDocument/codeAction" => {
                let p: lsp::CodeActionParams = parse!();
                let actions = self.code_actions(&p);
                self.reply(id, actions);
            }
            "textDocument/hover" => {
                let p: lsp::HoverParams = parse!();
                let hover = self.hover(&p);
                self.reply(id, hover);
            }
            "workspace/executeCommand" => {
                let p: lsp::ExecuteCommandParams = parse!();
                self.command(id, &p);
            }
            other => {
                self.reply_err(
                    id,
                    ErrorCode::MethodNotFound,
                    &format!("git-astedit lsp does not serve {other}"),
                );
            }
        }
        Flow::Go
    }

    fn notification(&mut self, n: Notification) -> Flow {
        macro_rules! parse {
            () => {
                match serde_json::from_value(n.params) {
                    Ok(p) => p,
                    // A notification has no answer: one that does not parse is dropped.
                    Err(_) => return Flow::Go,
                }
            };
        }
        match n.method.as_str() {
            "textDocument/didOpen" => self.did_open(parse!()),
            "textDocument/didChange" => self.did_change(parse!()),
            "textDocument/didSave" => {
                let p: lsp::DidSaveTextDocumentParams = parse!();
                if let Some(path) = super::uri_path(p.text_document.uri.as_str()) {
                    if self.workspace.may_define_rules(&path) {
                        self.reload();
                    }
                }
            }
            "textDocument/didClose" => {
                let p: lsp::DidCloseTextDocumentParams = parse!();
                let uri = p.text_document.uri;
                self.docs.remove(uri.as_str());
                self.findings.remove(uri.as_str());
                self.dirty.remove(uri.as_str());
                if !self.pulls && self.broken_shown.as_ref() != Some(&uri) {
                    self.publish(uri, Vec::new(), None);
                }
            }
            "workspace/didChangeWatchedFiles" => {
                let p: lsp::DidChangeWatchedFilesParams = parse!();
                let rules_changed = p.changes.iter().any(|c| {
                    super::uri_path(c.uri.as_str())
                        .is_some_and(|path| self.workspace.may_define_rules(&path))
                });
                if rules_changed {
                    self.reload();
                }
            }
            _ => {}
        }
        Flow::Go
    }

    /// Asks a client that pulls diagnostics to pull them again (files changed on disk).
    pub(super) fn refresh_pulled(&mut self) {
        if self.pulls && self.refreshes {
            self.request::<lsp::request::WorkspaceDiagnosticRefresh>(());
        }
    }

    /// Compiles the rules not compiled yet (only the first document's language's
    /// were, the cache holding no plan); when they do not load, says so and checks
    /// every open document again.
    fn settle(&mut self) {
        if !self.workspace.settle(&self.repo) {
            return;
        }
        self.findings.clear();
        self.dirty.extend(self.docs.keys().cloned());
        self.show_rules_state();
        self.refresh_pulled();
        self.push_diagnostics();
    }

    /// Reads the rules again and checks every open document with them.
    fn reload(&mut self) {
        self.workspace.reload(&self.repo);
        self.findings.clear();
        self.dirty.extend(self.docs.keys().cloned());
        self.show_rules_state();
        self.refresh_pulled();
    }

    /// A rule file that does not load gets a diagnostic (and the user a message); one
    /// that loads again loses it.
    fn show_rules_state(&mut self) {
        let broken = self.workspace.broken().cloned();
        let shown = broken
            .as_ref()
            .and_then(|b| b.file.as_deref())
            .and_then(super::path_uri);
        if let Some(old) = self.broken_shown.take() {
            if Some(&old) != shown.as_ref() {
                self.publish(old, Vec::new(), None);
            }
        }
        let Some(broken) = broken else {
            return;
        };
        let line = broken.line.unwrap_or(1).saturating_sub(1) as u32;
        let diagnostic = lsp::Diagnostic {
            range: lsp::Range::new(lsp::Position::new(line, 0), lsp::Position::new(line, 0)),
            severity: Some(lsp::DiagnosticSeverity::ERROR),
            code: Some(lsp::NumberOrString::String(broken.code.into())),
            source: Some(SOURCE.into()),
            message: broken.message.clone(),
            ..Default::default()
        };
        if let Some(uri) = shown {
            self.publish(uri.clone(), vec![diagnostic], None);
            self.broken_shown = Some(uri);
        }
        let kept = if self.workspace.rule_count() > 0 {
            " (the rules that loaded before are still used)"
        } else {
            ""
        };
        self.show(
            lsp::MessageType::ERROR,
            format!(
                "git-astedit: the rules do not load{kept}: {}",
                broken.message
            ),
        );
    }

    fn publish(&self, uri: lsp::Uri, diagnostics: Vec<lsp::Diagnostic>, version: Option<i32>) {
        self.notify::<lsp::notification::PublishDiagnostics>(lsp::PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        });
    }

    /// Pushes the diagnostics of the documents changed since the last push.
    fn push_diagnostics(&mut self) {
        if self.pulls {
            self.dirty.clear();
            return;
        }
        for uri in std::mem::take(&mut self.dirty) {
            let Some(version) = self.docs.get(&uri).map(|d| d.version) else {
                continue;
            };
            let items = self.diagnostics(&uri);
            if let Ok(parsed) = uri.parse::<lsp::Uri>() {
                self.publish(parsed, items, Some(version));
            }
        }
    }

    /// The findings of an open document (computed once per version); empty for a
    /// document not open, outside the repository or of no language.
    pub(super) fn findings_of(&mut self, uri: &str) -> Option<&[Checked]> {
        let doc = self.docs.get(uri)?;
        let fresh = self
            .findings
            .get(uri)
            .is_some_and(|(v, _)| *v == doc.version);
        if !fresh {
            let rows = match self.repo_path(uri) {
                Some(path) => self
                    .workspace
                    .check(&self.repo, &path, &doc.text)
                    .unwrap_or_else(|e| {
                        self.show(lsp::MessageType::WARNING, format!("git-astedit: {e}"));
                        Vec::new()
                    }),
                None => Vec::new(),
            };
            self.findings.insert(uri.to_string(), (doc.version, rows));
        }
        self.findings.get(uri).map(|(_, rows)| rows.as_slice())
    }

    /// The repository path of a document's URI.
    pub(super) fn repo_path(&self, uri: &str) -> Option<String> {
        let path = super::uri_path(uri)?;
        self.repo
            .repo_path_from_arg(path.to_str()?)
            .ok()
            .filter(|p| !p.is_empty())
    }

    /// The diagnostics of an open document.
    fn diagnostics(&mut self, uri: &str) -> Vec<lsp::Diagnostic> {
        let Some(rows) = self.findings_of(uri).map(<[Checked]>::to_vec) else {
            return Vec::new();
        };
        let Some(doc) = self.docs.get(uri) else {
            return Vec::new();
        };
        let Ok(parsed) = uri.parse::<lsp::Uri>() else {
            return Vec::new();
        };
        let lines = Lines::new(&doc.text);
        rows.iter()
            .map(|row| diagnostic(row, &doc.text, &lines, &parsed))
            .collect()
    }

    /// `textDocument/diagnostic`: an open document's diagnostics, `unchanged` when
    /// the client holds them already (its `previousResultId`).
    fn document_report(
        &mut self,
        p: &lsp::DocumentDiagnosticParams,
    ) -> lsp::DocumentDiagnosticReport {
        let items = self.diagnostics(p.text_document.uri.as_str());
        let result_id = result_id(&items);
        if p.previous_result_id.as_deref() == Some(result_id.as_str()) {
            return lsp::DocumentDiagnosticReport::Unchanged(
                lsp::RelatedUnchangedDocumentDiagnosticReport {
                    related_documents: None,
                    unchanged_document_diagnostic_report: lsp::UnchangedDocumentDiagnosticReport {
                        result_id,
                    },
                },
            );
        }
        lsp::DocumentDiagnosticReport::Full(lsp::RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport {
                result_id: Some(result_id),
                items,
            },
        })
    }

    /// `workspace/diagnostic`: the findings in the files `scan` looks at under the
    /// folder the server started in (the same selection, rules and result cache),
    /// the open documents' from their text instead, and an empty list for a file the
    /// client holds diagnostics of that has none now. Each report has a result id
    /// (a digest of its diagnostics): a file whose id the client sent back is
    /// reported `unchanged`. `None` when cancelled.
    fn workspace_diagnostics(
        &mut self,
        p: &lsp::WorkspaceDiagnosticParams,
        cancel: &git_astedit::cancel::Cancel,
    ) -> Option<lsp::WorkspaceDiagnosticReport> {
        let previous: HashMap<&str, &str> = p
            .previous_result_ids
            .iter()
            .map(|r| (r.uri.as_str(), r.value.as_str()))
            .collect();
        let token = p.work_done_progress_params.work_done_token.as_ref();
        self.progress(token, begin("Checking the workspace"));
        let found = ops::lsp::workspace_findings(&self.repo, &self.configs, cancel);
        self.progress(token, end(None));
        let on_disk = match found {
            Ok(files) => files,
            Err(_) if cancel.is_cancelled() => return None,
            Err(e) => {
                self.show(lsp::MessageType::WARNING, format!("git-astedit: {e}"));
                Vec::new()
            }
        };
        // (uri, version, diagnostics), the open documents first.
        let mut reports: Vec<(String, Option<i64>, Vec<lsp::Diagnostic>)> = Vec::new();
        let open: Vec<String> = self.docs.keys().cloned().collect();
        let mut open_paths = BTreeSet::new();
        for uri in open {
            open_paths.extend(self.repo_path(&uri));
            let items = self.diagnostics(&uri);
            let version = self.docs.get(&uri).map(|d| i64::from(d.version));
            reports.push((uri, version, items));
        }
        for (path, rows) in on_disk {
            if open_paths.contains(&path) {
                continue;
            }
            if let Some((uri, items)) = self.file_diagnostics(&path, &rows) {
                reports.push((uri, None, items));
            }
        }
        for uri in previous.keys() {
            if !reports.iter().any(|(u, _, _)| u == uri) {
                reports.push((uri.to_string(), None, Vec::new()));
            }
        }
        let items = reports
            .into_iter()
            .filter_map(|(uri, version, items)| {
                let uri: lsp::Uri = uri.parse().ok()?;
                let result_id = result_id(&items);
                if previous.get(uri.as_str()) == Some(&result_id.as_str()) {
                    return Some(lsp::WorkspaceDocumentDiagnosticReport::Unchanged(
                        lsp::WorkspaceUnchangedDocumentDiagnosticReport {
                            uri,
                            version,
                            unchanged_document_diagnostic_report:
                                lsp::UnchangedDocumentDiagnosticReport { result_id },
                        },
                    ));
                }
                Some(lsp::WorkspaceDocumentDiagnosticReport::Full(
                    lsp::WorkspaceFullDocumentDiagnosticReport {
                        uri,
                        version,
                        full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport {
                            result_id: Some(result_id),
                            items,
                        },
                    },
                ))
            })
            .collect();
        Some(lsp::WorkspaceDiagnosticReport { items })
    }

    /// The diagnostics of a file on disk (the repository path `path`) from the rows
    /// `scan` reported for it, and its URI.
    fn file_diagnostics(
        &self,
        path: &str,
        rows: &[git_astedit::report::FindingRow],
    ) -> Option<(String, Vec<lsp::Diagnostic>)> {
        let abs = self.repo.workdir.join(path);
        let uri = super::path_uri(&abs)?;
        // Columns are characters of the text scan read.
        let text = std::fs::read_to_string(&abs).ok()?;
        let lines = Lines::new(&text);
        let items = rows
            .iter()
            .map(|row| {
                let checked = Checked {
                    row: row.clone(),
                    labels: Vec::new(),
                };
                diagnostic(&checked, &text, &lines, &uri)
            })
            .collect();
        Some((uri.as_str().to_string(), items))
    }
}

/// A report's result id: a digest of its diagnostics, so that the same diagnostics
/// get the same id (and the client is told they are unchanged).
fn result_id(items: &[lsp::Diagnostic]) -> String {
    use std::hash::Hash;
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(items)
        .unwrap_or_default()
        .hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Work-done progress that begins (cancellable).
pub(super) fn begin(title: &str) -> lsp::WorkDoneProgress {
    lsp::WorkDoneProgress::Begin(lsp::WorkDoneProgressBegin {
        title: title.into(),
        cancellable: Some(true),
        message: None,
        percentage: None,
    })
}

/// Work-done progress that ends.
pub(super) fn end(message: Option<String>) -> lsp::WorkDoneProgress {
    lsp::WorkDoneProgress::End(lsp::WorkDoneProgressEnd { message })
}

/// A finding as the protocol's diagnostic.
pub(super) fn diagnostic(
    checked: &Checked,
    text: &str,
    lines: &Lines,
    uri: &lsp::Uri,
) -> lsp::Diagnostic {
    let row = &checked.row;
    let range = lines.range(text, (row.line, row.column), (row.end_line, row.end_column));
    let severity = match row.severity.as_str() {
        "error" => lsp::DiagnosticSeverity::ERROR,
        "warning" => lsp::DiagnosticSeverity::WARNING,
        "info" => lsp::DiagnosticSeverity::INFORMATION,
        _ => lsp::DiagnosticSeverity::HINT,
    };
    // The note, at the finding; each label with a message, where it points.
    let mut related: Vec<lsp::DiagnosticRelatedInformation> = row
        .note
        .iter()
        .map(|note| lsp::DiagnosticRelatedInformation {
            location: lsp::Location::new(uri.clone(), range),
            message: note.clone(),
        })
        .collect();
    related.extend(
        checked
            .labels
            .iter()
            .map(|l| lsp::DiagnosticRelatedInformation {
                location: lsp::Location::new(
                    uri.clone(),
                    lines.range(text, (l.line, l.column), (l.end_line, l.end_column)),
                ),
                message: l.message.clone(),
            }),
    );
    lsp::Diagnostic {
        range,
        severity: Some(severity),
        code: Some(lsp::NumberOrString::String(row.rule.clone())),
        code_description: row
            .url
            .as_ref()
            .and_then(|u| u.parse::<lsp::Uri>().ok())
            .map(|href| lsp::CodeDescription { href }),
        source: Some(SOURCE.into()),
        message: row.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        tags: (row.rule == "unused-suppression").then(|| vec![lsp::DiagnosticTag::UNNECESSARY]),
        data: None,
    }
}
