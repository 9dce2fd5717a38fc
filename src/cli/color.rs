//! Whether stdout gets colour, by git's rules.
//!
//! The command line wins (`--color[=WHEN]`, `--no-color`), then the command's own
//! config slot (`color.diff` for diffs, `color.grep` for `grep`), then `color.ui`, then
//! `auto`. `auto` means colour when stdout is a terminal, or when it is a pager's input
//! (ours, or git's: `git -p astedit show` sets `GIT_PAGER_IN_USE`) unless
//! `color.pager` is false; never with `TERM=dumb` or a non-empty `NO_COLOR`;
//! `CLICOLOR_FORCE` turns `auto` on wherever stdout goes.

/// A colour setting: `--color=WHEN` or a `color.*` config value. `ansi` is
/// ast-grep's: escape codes even where a console would be coloured otherwise, which
/// here is `always` (only the command line says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    Auto,
    Always,
    Never,
    Ansi,
}

impl When {
    /// A `color.*` config value as git reads it: `always`, `never`, `auto`, or a
    /// boolean, where true means `auto` (a key without a value is true). `None` for a
    /// value git would reject (git then stops; we ignore it).
    pub fn from_config(value: Option<&str>) -> Option<When> {
        let Some(value) = value else {
            return Some(When::Auto);
        };
        match value.to_ascii_lowercase().as_str() {
            "always" => Some(When::Always),
            "never" => Some(When::Never),
            "auto" => Some(When::Auto),
            v => parse_bool(v).map(|on| if on { When::Auto } else { When::Never }),
        }
    }
}

/// A git boolean: `true`/`yes`/`on`/`1` and `false`/`no`/`off`/`0`/empty.
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" | "" => Some(false),
        v => v.parse::<i64>().ok().map(|n| n != 0),
    }
}

/// Whether the terminal on stdout would be coloured: what `auto` decides.
pub struct Terminal {
    /// stdout is a terminal.
    pub stdout_tty: bool,
    /// stdout is a pager's input: ours, or git's (`GIT_PAGER_IN_USE`).
    pub pager_in_use: bool,
}

/// Decides colour for a command whose own config slot is `slot` (`color.diff`, see
/// its [traits](super::traits::Traits)). `flag` is the command line's choice; `config`
/// reads a git config value (see
/// [`Repo::config_value`](git_astedit::repo::Repo::config_value)).
pub fn decide(
    flag: Option<When>,
    slot: Option<&str>,
    config: &mut dyn FnMut(&str) -> Option<Option<String>>,
    terminal: &Terminal,
) -> bool {
    let mut setting = |key: &str| config(key).and_then(|v| When::from_config(v.as_deref()));
    let when = flag
        .or_else(|| slot.and_then(&mut setting))
        .or_else(|| setting("color.ui"))
        .unwrap_or(When::Auto);
    match when {
        When::Always | When::Ansi => true,
        When::Never => false,
        When::Auto => {
            let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
            if env("NO_COLOR").is_some() {
                return false;
            }
            if env("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
                return true;
            }
            // color.pager: a boolean, true when unset or unreadable.
            let pager_colour = config("color.pager")
                .is_none_or(|v| v.as_deref().is_none_or(|v| parse_bool(v) != Some(false)));
            let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
            (terminal.stdout_tty || (terminal.pager_in_use && pager_colour)) && !dumb
        }
    }
}

/// Whether git (or we, for a child) started a pager that reads our stdout.
pub fn git_pager_in_use() -> bool {
    std::env::var("GIT_PAGER_IN_USE")
        .ok()
        .and_then(|v| parse_bool(&v))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_values_read_as_git_reads_them() {
        assert_eq!(When::from_config(Some("true")), Some(When::Auto));
        assert_eq!(When::from_config(None), Some(When::Auto));
        assert_eq!(When::from_config(Some("Always")), Some(When::Always));
        assert_eq!(When::from_config(Some("off")), Some(When::Never));
        assert_eq!(When::from_config(Some("sometimes")), None);
    }

    #[test]
    fn the_command_line_wins_then_the_slot_then_color_ui() {
        let tty = Terminal {
            stdout_tty: false,
            pager_in_use: false,
        };
        let mut config = |key: &str| match key {
            "color.ui" => Some(Some("never".to_string())),
            "color.grep" => Some(Some("always".to_string())),
            _ => None,
        };
        assert!(decide(Some(When::Always), None, &mut config, &tty));
        assert!(!decide(None, None, &mut config, &tty));
        assert!(decide(None, Some("color.grep"), &mut config, &tty));
        assert!(!decide(
            Some(When::Never),
            Some("color.grep"),
            &mut config,
            &tty
        ));
    }
}
