/*!
`git astedit lsp`: a Language Server Protocol (3.17) server on stdio for editors, a
drop-in for `ast-grep lsp` (the same command line: `lsp [-c CONFIG]`).

A front end like the CLI and the MCP server: the project's rules are held by
`ops::lsp::Workspace`, each open document is checked from its in-memory text by the
scan's per-file step, fixes are the text `scan --apply` writes, and "stage all fixes"
is `scan --stage` through `ops`, journalled with the editor's name. [`transport`]
frames messages (and survives malformed ones), [`text`] holds documents and converts
positions (UTF-16 columns), [`server`] is the loop and [`actions`] the code actions,
commands and hover.
*/

use std::path::Path;
use std::path::PathBuf;

use git_astedit::error::Exit;
use git_astedit::Error;

use super::Ctx;

#[cfg(feature = "lsp")]
mod actions;
#[cfg(feature = "lsp")]
mod server;
#[cfg(feature = "lsp")]
mod text;
#[cfg(feature = "lsp")]
mod transport;

/// Serve the Language Server Protocol on stdio (for VS Code, neovim, Helix, Zed, …)
///
/// Diagnostics of the project's rules (astedit.toml, sgconfig.yml) on open documents,
/// a quick fix per finding, fix-all, and "stage all fixes as a preview" with apply,
/// discard and undo as commands. A drop-in for `ast-grep lsp`: see docs for the
/// editors' settings.
#[derive(Debug, clap::Args)]
pub struct LspArgs {
    /// Read rules from FILE: an astedit.toml, an sgconfig.yml or an ast-grep rule YAML
    /// file (can be repeated); default: astedit.toml and sgconfig.yml at the root
    #[arg(short = 'c', long, value_name = "FILE")]
    pub config: Vec<PathBuf>,

    /// Do not parse an open document larger than BYTES (one diagnostic says so), as
    /// scan skips such a file
    #[arg(long, value_name = "BYTES", default_value_t = git_astedit::files::DEFAULT_MAX_FILE_SIZE)]
    pub max_filesize: u64,

    /// Accepted and ignored: stdio is the only transport (some clients add it)
    #[arg(long, hide = true)]
    pub stdio: bool,

    /// Load sgconfig.yml's customLanguages libraries (a library runs code when loaded):
    /// allow (every one, this run), ignore (none), or sha256:DIGEST,… (those, this run);
    /// default: those `git astedit allow` recorded
    #[arg(long, value_name = "POLICY")]
    pub custom_languages: Option<String>,
}

#[cfg(feature = "lsp")]
pub fn run(ctx: &mut Ctx, args: LspArgs) -> Result<Exit, Error> {
    // Open (and recover) once up front so that a server started outside a repository
    // fails at once with the usual message.
    git_astedit::files::check_max_file_size(args.max_filesize)?;
    let cwd = ctx.repo()?.cwd.clone();
    let (repo, _notes) = git_astedit::ops::session::open(&cwd, false)?;
    let transport = transport::Transport::start(std::io::stdin(), std::io::stdout());
    server::serve(transport, repo, args.config, args.max_filesize);
    Ok(Exit::Ok)
}

#[cfg(not(feature = "lsp"))]
pub fn run(_ctx: &mut Ctx, _args: LspArgs) -> Result<Exit, Error> {
    Err(git_astedit::error::UsageError(
        "this git-astedit was built without the `lsp` feature; rebuild with default features"
            .into(),
    )
    .into())
}

/// The local path of a `file:` URI (percent-decoded); `None` for other schemes.
#[cfg_attr(not(feature = "lsp"), allow(dead_code))]
fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///p` (no host) or `file://localhost/p`.
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(i) if &rest[..i] == "localhost" => &rest[i..],
        _ => return None,
    };
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied(),
            bytes.get(i + 2).copied(),
        ) {
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h)? * 16 + hex(l)?) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    Some(PathBuf::from(String::from_utf8(out).ok()?))
}

/// The `file:` URI of an absolute path, percent-encoding what a URI path cannot hold.
#[cfg(feature = "lsp")]
fn path_uri(path: &Path) -> Option<lsp_types::Uri> {
    let mut uri = String::from("file://");
    for b in path.to_str()?.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.parse().ok()
}

/// What the server offers.
#[cfg(feature = "lsp")]
fn capabilities() -> lsp_types::ServerCapabilities {
    lsp_types::ServerCapabilities {
        text_document_sync: Some(lsp_types::TextDocumentSyncCapability::Options(
            lsp_types::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp_types::TextDocumentSyncKind::INCREMENTAL),
                save: Some(lsp_types::TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            },
        )),
        diagnostic_provider: Some(lsp_types::DiagnosticServerCapabilities::Options(
            lsp_types::DiagnosticOptions {
                identifier: Some(server::SOURCE.into()),
                inter_file_dependencies: false,
                workspace_diagnostics: true,
                work_done_progress_options: Default::default(),
            },
        )),
        code_action_provider: Some(lsp_types::CodeActionProviderCapability::Options(
            lsp_types::CodeActionOptions {
                code_action_kinds: Some(actions::kinds()),
                resolve_provider: Some(false),
                work_done_progress_options: Default::default(),
            },
        )),
        execute_command_provider: Some(lsp_types::ExecuteCommandOptions {
            commands: actions::COMMANDS.iter().map(|c| c.to_string()).collect(),
            work_done_progress_options: Default::default(),
        }),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_decode_to_paths() {
        assert_eq!(
            uri_path("file:///tmp/a%20b/%E6%BC%A2.py"),
            Some(PathBuf::from("/tmp/a b/漢.py"))
        );
        assert_eq!(
            uri_path("file://localhost/x.rs"),
            Some(PathBuf::from("/x.rs"))
        );
        assert_eq!(uri_path("untitled:Untitled-1"), None);
        assert_eq!(uri_path("file://server/share/x.rs"), None);
    }

    #[cfg(feature = "lsp")]
    #[test]
    fn paths_encode_to_uris_and_back() {
        let path = Path::new("/tmp/a b/漢 😀.py");
        let uri = path_uri(path).unwrap();
        assert_eq!(uri_path(uri.as_str()).as_deref(), Some(path));
    }
}
