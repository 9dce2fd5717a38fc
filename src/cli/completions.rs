//! `git astedit completions SHELL`: a shell completion script generated from the clap
//! definitions (clap_complete), for the command `git-astedit` and, where the shell's
//! git completion delegates to it, for `git astedit`.

use clap::CommandFactory;
use clap_complete::Shell;
use git_astedit::error::Exit;
use git_astedit::Error;

use super::Ctx;

/// Print a shell completion script
///
/// The script completes `git-astedit`, and `git astedit` where the shell's own git
/// completion looks for a subcommand's completion: in bash (git's completion calls the
/// `_git_astedit` function the script defines), zsh (`_git-astedit`) and fish
/// (`git-astedit` completions). elvish and powershell complete `git-astedit` only.
/// Install the script where the shell loads completions from:
///
/// bash: `git astedit completions bash >
/// ~/.local/share/bash-completion/completions/git-astedit`
///
/// zsh: `git astedit completions zsh > ~/.zfunc/_git-astedit`, with
/// `fpath=(~/.zfunc $fpath)` before `compinit` in ~/.zshrc
///
/// fish: `git astedit completions fish > ~/.config/fish/completions/git-astedit.fish`
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete in
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

pub fn run(ctx: &mut Ctx, args: CompletionsArgs) -> Result<Exit, Error> {
    let mut script = Vec::new();
    if args.shell == Shell::Bash {
        script = bash().into_bytes();
    } else {
        // For the binary's own name: `git astedit` (the usage name) has a space.
        let mut cmd = super::Cli::command();
        clap_complete::generate(args.shell, &mut cmd, BINARY, &mut script);
    }
    super::man::print(ctx, &script)?;
    Ok(Exit::Ok)
}

const BINARY: &str = "git-astedit";

/// clap_complete's bash script names its case labels from the binary name with `-`
/// made into a separator, which breaks subcommands of a hyphenated name
/// (`git__astedit__subcmd__grep` is matched against `git__subcmd__astedit__...`). So
/// it is generated for a name without `-`; the function matches the command word it
/// is called with (`$1`), and only the `complete` lines name the command.
fn bash() -> String {
    let mut cmd = super::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(Shell::Bash, &mut cmd, BASH_NAME, &mut script);
    let generated = String::from_utf8_lossy(&script);
    let mut text = String::with_capacity(generated.len() + BASH_GIT_SUBCOMMAND.len());
    for line in generated.lines() {
        match line.trim_start().starts_with("complete -F") {
            true => text.push_str(&line.replace(&format!(" {BASH_NAME}"), &format!(" {BINARY}"))),
            false => text.push_str(line),
        }
        text.push('\n');
    }
    text.push_str(BASH_GIT_SUBCOMMAND);
    text
}

/// The name the bash script is generated for: its function is `_git_astedit_words`.
const BASH_NAME: &str = "git_astedit_words";

/// git's bash completion (git-completion.bash) completes `git astedit ...` by calling
/// `_git_astedit` (loading this file first as the completion of `git-astedit`). It
/// passes no words, so this hands the generated function the command line from
/// `astedit` on, as if it were `git-astedit ...`.
const BASH_GIT_SUBCOMMAND: &str = r#"
# `git astedit <TAB>`: git's completion calls _git_astedit.
_git_astedit() {
    local i at=1
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == astedit ]]; then
            at=$i
            break
        fi
    done
    local COMP_WORDS=(git-astedit "${COMP_WORDS[@]:at+1}")
    local COMP_CWORD=$((COMP_CWORD - at))
    _git_astedit_words git-astedit "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    # git completes with -o nospace and adds the space itself; a finished word here
    # wants one too.
    compopt +o nospace 2>/dev/null
    return 0
}
"#;
