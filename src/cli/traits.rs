/*!
What the front end must know of a command before it runs it, in one table: whether it
writes (and so what an unfinished apply or undo means for it), whether its output is
paged, which `color.*` slot colours it, whether it draws a progress bar, and which
customLanguages policy its flags give. One `match` over [`Command`], so a new command
is a compile error here until each of its traits is decided, instead of a name string
missed in one of several lists.
*/

use super::Command;
use super::ResolveCommand;

/// What a command does while an interrupted apply or undo is unfinished (see the user
/// guide's Reliability chapter and [`super::recover`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// It writes (the work tree, previews, the journal): refused.
    Refuse,
    /// It only reads: a warning.
    Warn,
    /// `recover` (the command that does it) and the commands that need no repository
    /// state: no automatic recovery first.
    Skip,
}

/// Whether a command's output goes through a pager (see [`super::pager`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// Paged on a terminal unless told otherwise, as `git show`, `git log` and `git
    /// grep` are.
    ByDefault,
    /// Paged with `-p` or `pager.<command>` only.
    OnRequest,
    /// stdout is a protocol (the servers): never paged.
    Never,
}

/// A command's traits.
#[derive(Debug, Clone, Copy)]
pub struct Traits<'a> {
    /// What it does while an interrupted run is unfinished: refuse (it writes the
    /// work tree, previews or the journal), warn (it only reads), or skip recovery.
    pub recovery: Policy,
    pub paging: Paging,
    /// The config slot that colours its output besides `color.ui`.
    pub color_slot: Option<&'static str>,
    /// Whether a progress bar may be drawn on stderr (not for the servers, whose
    /// requests overlap, nor a campaign, which works on repositories at once).
    pub progress: bool,
    /// Whether `--json=stream` (one ast-grep match a line) is its output.
    pub json_stream: bool,
    /// `--custom-languages` as given, for the commands that read code.
    pub custom_languages: Option<&'a str>,
}

impl Traits<'_> {
    /// A command that only reads: recovery warns, no pager unless asked, no colour
    /// slot, progress allowed.
    const READS: Traits<'static> = Traits {
        recovery: Policy::Warn,
        paging: Paging::OnRequest,
        color_slot: None,
        progress: true,
        json_stream: false,
        custom_languages: None,
    };
    /// A command that writes: refused while a run stays unfinished.
    const WRITES: Traits<'static> = Traits {
        recovery: Policy::Refuse,
        ..Traits::READS
    };
    /// A command that needs no repository state (help pages, schemas) or is recovery
    /// itself.
    const NO_RECOVERY: Traits<'static> = Traits {
        recovery: Policy::Skip,
        ..Traits::READS
    };
    /// A server: stdout is a protocol.
    const SERVER: Traits<'static> = Traits {
        paging: Paging::Never,
        progress: false,
        ..Traits::READS
    };
}

const DIFF: Option<&str> = Some("color.diff");

impl Command {
    /// This command's traits.
    pub fn traits(&self) -> Traits<'_> {
        match self {
            Command::Grep(a) => Traits {
                paging: Paging::ByDefault,
                color_slot: Some("color.grep"),
                json_stream: true,
                custom_languages: a.input.custom_languages.as_deref(),
                ..Traits::READS
            },
            Command::Edit(a) => Traits {
                color_slot: DIFF,
                custom_languages: a.input.custom_languages.as_deref(),
                ..Traits::WRITES
            },
            Command::Scan(a) => Traits {
                // `scan -i` stages what the person accepts.
                recovery: if a.stage || a.apply || a.interactive || a.ast_grep.update_all {
                    Policy::Refuse
                } else {
                    Policy::Warn
                },
                color_slot: DIFF,
                custom_languages: a.custom_languages.as_deref(),
                // ast-grep's finding objects (VS Code's YAML rule search).
                json_stream: true,
                ..Traits::READS
            },
            Command::Test(a) => Traits {
                custom_languages: a.custom_languages.as_deref(),
                ..Traits::READS
            },
            Command::Show(_) => Traits {
                paging: Paging::ByDefault,
                color_slot: DIFF,
                ..Traits::READS
            },
            Command::Log(_) => Traits {
                paging: Paging::ByDefault,
                ..Traits::READS
            },
            Command::Patch(_)
            | Command::Steps(_)
            | Command::Merge(_)
            | Command::Apply(_)
            | Command::Undo(_)
            | Command::Resolve(ResolveCommand::Apply(_) | ResolveCommand::Discard(_)) => Traits {
                color_slot: DIFF,
                ..Traits::WRITES
            },
            Command::Run(a) if a.is_ast_grep() => Traits {
                json_stream: true,
                custom_languages: a.ast_grep.custom_languages.as_deref(),
                ..Traits::WRITES
            },
            Command::Run(_)
            | Command::Discard(_)
            | Command::Refresh(_)
            | Command::Gc(_)
            | Command::Lane(_)
            | Command::Allow(_)
            | Command::Pr(_) => Traits::WRITES,
            Command::List(_)
            | Command::Hook(_)
            | Command::Verify(_)
            | Command::AgentHook(_)
            | Command::Trust(_) => Traits::READS,
            // Decisions and split write refs (and split stages previews).
            // The page decides and applies; its stdout is the URL, then the report.
            Command::Review(a) if a.serves(false) => Traits {
                paging: Paging::Never,
                progress: false,
                ..Traits::WRITES
            },
            Command::Review(a) => {
                if a.split || !a.accept.is_empty() || !a.reject.is_empty() || !a.undecide.is_empty()
                {
                    Traits::WRITES
                } else {
                    Traits::READS
                }
            }
            Command::Lsp(a) => Traits {
                custom_languages: a.custom_languages.as_deref(),
                ..Traits::SERVER
            },
            Command::Mcp(_) => Traits::SERVER,
            Command::New(_) => Traits::READS,
            Command::Campaign(_) => Traits {
                progress: false,
                ..Traits::READS
            },
            Command::Recover(_)
            | Command::Schema(_)
            | Command::Man(_)
            | Command::Completions(_) => Traits::NO_RECOVERY,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::cli::Cli;

    fn traits_of(args: &[&str]) -> (Policy, Paging, Option<&'static str>, bool) {
        let cli = Cli::try_parse_from(std::iter::once("git-astedit").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let t = cli.command.traits();
        (t.recovery, t.paging, t.color_slot, t.progress)
    }

    #[test]
    fn a_scan_that_stages_writes_and_one_that_reports_reads() {
        assert_eq!(traits_of(&["scan"]).0, Policy::Warn);
        assert_eq!(traits_of(&["scan", "--check"]).0, Policy::Warn);
        assert_eq!(traits_of(&["scan", "-i"]).0, Policy::Refuse);
        assert_eq!(traits_of(&["scan", "--stage"]).0, Policy::Refuse);
        assert_eq!(traits_of(&["scan", "--apply"]).0, Policy::Refuse);
        assert_eq!(traits_of(&["scan", "-U"]).0, Policy::Refuse);
    }

    #[test]
    fn paging_colour_and_progress_follow_git_and_the_protocols() {
        assert_eq!(
            traits_of(&["grep", "-p", "x"]),
            (Policy::Warn, Paging::ByDefault, Some("color.grep"), true)
        );
        assert_eq!(
            traits_of(&["resolve", "discard"]),
            (Policy::Refuse, Paging::OnRequest, Some("color.diff"), true)
        );
        assert_eq!(
            traits_of(&["discard"]),
            (Policy::Refuse, Paging::OnRequest, None, true)
        );
        assert_eq!(traits_of(&["mcp"]).1, Paging::Never);
        assert!(!traits_of(&["mcp"]).3);
        assert_eq!(traits_of(&["recover"]).0, Policy::Skip);
    }
}
