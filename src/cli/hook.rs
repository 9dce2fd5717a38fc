//! `git astedit hook install`: the git pre-commit hook running `scan --check --cached`.

use git_astedit::error::Exit;
use git_astedit::report::HookReport;
use git_astedit::report::Version;
use git_astedit::scan::hook;
use git_astedit::Error;

use super::Ctx;

#[derive(Debug, clap::Subcommand)]
pub enum HookCommand {
    /// Write the pre-commit hook, which runs `git astedit scan --check --cached`
    ///
    /// The hook goes where git looks (core.hooksPath or .git/hooks). An existing hook
    /// that astedit did not write is refused unless --force, which keeps it as
    /// pre-commit.astedit-backup.
    Install(InstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Replace an existing pre-commit hook (it is kept as pre-commit.astedit-backup)
    #[arg(long)]
    pub force: bool,
}

pub fn run(ctx: &mut Ctx, cmd: HookCommand) -> Result<Exit, Error> {
    let HookCommand::Install(args) = cmd;
    let json = ctx.json;
    let (repo, out) = ctx.parts()?;
    // The binary running now is the hook's fallback when git-astedit is not on PATH.
    let exe = std::env::current_exe().ok();
    let installed = hook::install(repo, args.force, exe.as_deref())?;
    if json {
        out.json(&HookReport {
            schema_version: Version,
            path: installed.path.display().to_string(),
            backup: installed.backup.as_ref().map(|b| b.display().to_string()),
            unchanged: installed.unchanged,
        })?;
        return Ok(Exit::Ok);
    }
    let mut text = if installed.unchanged {
        format!(
            "The pre-commit hook at {} is already installed.\n",
            installed.path.display()
        )
    } else {
        format!(
            "Installed the pre-commit hook at {}: commits run `git astedit scan --check --cached`.\n",
            installed.path.display()
        )
    };
    if let Some(b) = &installed.backup {
        text.push_str(&format!("The previous hook is kept at {}.\n", b.display()));
    }
    out.print(&text)?;
    Ok(Exit::Ok)
}
