//! `git astedit man`: manual pages generated from the clap definitions (clap_mangen),
//! so that `man git-astedit`, `git help astedit` and `git astedit --help` (which git
//! turns into `man git-astedit`) open the manual. `cargo install` cannot install man
//! pages, hence `man --install`.

use std::path::Path;
use std::path::PathBuf;

use clap::CommandFactory;
use git_astedit::error::Exit;
use git_astedit::error::InputError;
use git_astedit::error::IoError;
use git_astedit::error::UsageError;
use git_astedit::Error;

use super::Ctx;

/// Print or install the manual pages
///
/// Without --install, prints the manual page of git-astedit, or of SUBCOMMAND (e.g.
/// `grep`, `hook install`), as roff on stdout: `git astedit man grep | man -l -`.
///
/// With --install, writes git-astedit.1 and one page per subcommand
/// (git-astedit-grep.1, git-astedit-hook-install.1, ...) into DIR/man1, after which
/// `git astedit --help`, `git help astedit` and `man git-astedit-grep` open them.
/// Without DIR: the share/man folder beside the folder on PATH that holds git-astedit
/// (~/.cargo/share/man for ~/.cargo/bin, ~/.local/share/man for ~/.local/bin), which
/// man-db searches for every folder on PATH. Run it again after an upgrade.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (its words, e.g. `hook install`)
    #[arg(value_name = "SUBCOMMAND", conflicts_with = "install")]
    pub subcommand: Vec<String>,

    /// Write every page into DIR/man1 instead of printing one
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    pub install: Option<Option<PathBuf>>,
}

pub fn run(ctx: &mut Ctx, args: ManArgs) -> Result<Exit, Error> {
    let root = command();
    match args.install {
        Some(dir) => {
            let dir = match dir {
                Some(dir) => dir,
                None => default_dir()?,
            };
            let written = install(&root, &dir)?;
            let folder = dir.join("man1");
            let text = format!(
                "Wrote {} manual pages into {}.\n",
                written.len(),
                folder.display()
            );
            print(ctx, text.as_bytes())?;
            Ok(Exit::Ok)
        }
        None => {
            let mut cmd = &root;
            for word in &args.subcommand {
                cmd = cmd.find_subcommand(word).ok_or_else(|| {
                    let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
                    UsageError(format!(
                        "no manual page for '{}': {} has the subcommands {}",
                        args.subcommand.join(" "),
                        display_name(cmd),
                        names.join(", ")
                    ))
                })?;
            }
            let mut page = Vec::new();
            render(cmd, args.subcommand.is_empty(), &mut page).map_err(|source| IoError {
                action: "render the manual page of",
                path: display_name(cmd).to_string(),
                source,
            })?;
            print(ctx, &page)?;
            Ok(Exit::Ok)
        }
    }
}

/// The command tree as the manual describes it: built (so every subcommand has its
/// page name, `git-astedit-grep`, as display name) and without clap's `help`
/// subcommand, which has no page.
fn command() -> clap::Command {
    let mut cmd = super::Cli::command()
        .disable_help_subcommand(true)
        .long_about(ROOT_DESCRIPTION);
    cmd.build();
    cmd
}

/// The DESCRIPTION of git-astedit(1): `--help` lists the commands, the page says what
/// they are for.
const ROOT_DESCRIPTION: &str = "Structural search and rewrites staged as git objects: \
preview, apply, undo.

git astedit searches code with ast-grep patterns ($A, $$$ARGS) and stages rewrites \
(pattern rewrites with edit, agent patches with patch, codemod rules with scan) as \
previews made of git objects under refs/astedit/<id>, touching no work-tree file and no \
index entry. apply writes a preview atomically, only if every touched file still has \
the content it had when the preview was staged; discard drops it; undo reverts an apply \
from the journal (log).

Every command takes -C DIR and --json (one JSON object on stdout, errors included). \
Each subcommand has its own page: git-astedit-grep(1), git-astedit-edit(1), and so on.";

/// Sections of git-astedit(1) that clap has no field for, in roff.
const ROOT_EXTRA: &str = r#".SH "EXIT STATUS"
.TP
0
Done; something matched (grep).
.TP
1
Nothing found, nothing would change, a fix would change a file (scan \-\-check), no pending preview, nothing to undo.
.TP
2
Bad input: usage, pattern, template, patch syntax, rule file, pathspec, unknown id, not a repository.
.TP
3
Stale: a touched file changed since the preview was staged (nothing written), already applied, or unfinished.
.TP
4
Refused for safety: a path outside the work tree, under .git/, through a symlink, or an overwrite.
.TP
5
A patch chunk could not be placed.
.TP
6
Locked by another astedit process or git's index.lock, or a recovery is pending (git astedit recover).
.TP
70
Internal error (I/O, object database).
.SH "SEE ALSO"
git(1), git\-grep(1), git\-apply(1), ast\-grep(1); the README of git\-astedit.
"#;

fn display_name(cmd: &clap::Command) -> &str {
    cmd.get_display_name().unwrap_or_else(|| cmd.get_name())
}

/// One page: NAME, SYNOPSIS, DESCRIPTION (the long help), OPTIONS, SUBCOMMANDS; the
/// root page also EXIT STATUS and SEE ALSO.
fn render(cmd: &clap::Command, root: bool, out: &mut Vec<u8>) -> std::io::Result<()> {
    let title = display_name(cmd).to_uppercase();
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .title(title)
        .source(concat!("git-astedit ", env!("CARGO_PKG_VERSION")))
        .manual("Git Manual")
        .render(&mut page)?;
    if root {
        // Before VERSION, where man pages keep them.
        let text = String::from_utf8_lossy(&page);
        let at = text.find("\n.SH VERSION").map_or(text.len(), |i| i + 1);
        let mut joined = String::with_capacity(text.len() + ROOT_EXTRA.len());
        joined.push_str(&text[..at]);
        joined.push_str(ROOT_EXTRA);
        joined.push_str(&text[at..]);
        page = joined.into_bytes();
    }
    out.extend_from_slice(&page);
    Ok(())
}

/// Writes the page of `cmd` and of every subcommand below it into `dir/man1`; returns
/// the files written.
fn install(cmd: &clap::Command, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let folder = dir.join("man1");
    // The user named DIR: a file or an unusable path there is bad input (exit 2).
    std::fs::create_dir_all(&folder).map_err(|source| InputError {
        action: "create the manual folder",
        path: folder.display().to_string(),
        source,
    })?;
    let mut written = Vec::new();
    let mut pending = vec![(cmd, true)];
    while let Some((cmd, root)) = pending.pop() {
        pending.extend(
            cmd.get_subcommands()
                .filter(|c| !c.is_hide_set())
                .map(|c| (c, false)),
        );
        let path = folder.join(format!("{}.1", display_name(cmd)));
        let mut page = Vec::new();
        render(cmd, root, &mut page)
            .and_then(|()| std::fs::write(&path, &page))
            .map_err(|source| IoError {
                action: "write the manual page",
                path: path.display().to_string(),
                source,
            })?;
        written.push(path);
    }
    Ok(written)
}

/// Where `man --install` writes without DIR: `share/man` beside the folder on PATH
/// that holds git-astedit (the one git runs), since man-db adds `BIN/../share/man` to
/// its search path for each folder BIN on PATH. A binary not on PATH (run by its
/// path) uses its own folder.
fn default_dir() -> Result<PathBuf, Error> {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path).find(|dir| dir.is_absolute() && dir.join(BINARY).is_file())
    });
    let bin = match on_path {
        Some(dir) => dir,
        None => {
            let exe = std::env::current_exe().map_err(|source| IoError {
                action: "find the folder of",
                path: BINARY.into(),
                source,
            })?;
            exe.parent().map(Path::to_path_buf).unwrap_or_default()
        }
    };
    let prefix = bin.parent().unwrap_or(&bin);
    Ok(prefix.join("share").join("man"))
}

const BINARY: &str = "git-astedit";

/// Writes generated text (roff, a shell script: UTF-8) to stdout; a closed pipe
/// (`git astedit man | head`) ends the run quietly, as for every command.
pub fn print(ctx: &mut Ctx, bytes: &[u8]) -> Result<(), Error> {
    ctx.out.print(&String::from_utf8_lossy(bytes))?;
    Ok(())
}
