//! `e` in `-i`: a change's replacement edited in the person's editor, chosen and run
//! as git runs its own.

use crate::repo::Repo;

/// The editor as git chooses it: `GIT_EDITOR`, `core.editor`, `VISUAL` (unless the
/// terminal is dumb), `EDITOR`, else `vi` (none on a dumb terminal: the reason).
pub fn command(repo: &Repo) -> Result<String, String> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let dumb = std::env::var("TERM").map_or(true, |t| t == "dumb");
    env("GIT_EDITOR")
        .or_else(|| {
            repo.config_value("core.editor")
                .flatten()
                .filter(|v| !v.is_empty())
        })
        .or_else(|| if dumb { None } else { env("VISUAL") })
        .or_else(|| env("EDITOR"))
        .or_else(|| (!dumb).then(|| "vi".to_string()))
        .ok_or_else(|| "the terminal is dumb, but EDITOR is unset".to_string())
}

/// Opens `proposed` in `editor`, in a temporary file named `name` (the source file's
/// name, for the editor's highlighting), and returns what was saved: `None` when it
/// was saved empty. The one newline an editor adds at the end is dropped when
/// `proposed` had none. The editor runs through the shell with the file as `"$@"`, as
/// git runs it, so the command may hold arguments and the path is never re-parsed.
pub fn edit(editor: &str, name: &str, proposed: &str) -> Result<Option<String>, String> {
    let dir = tempfile::Builder::new()
        .prefix("astedit-edit-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    let file = dir
        .path()
        .join(if name.is_empty() { "change" } else { name });
    std::fs::write(&file, proposed).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(editor)
        .arg(&file)
        .status()
        .map_err(|e| format!("cannot run the editor '{editor}': {e}"))?;
    if !status.success() {
        return Err(format!("the editor '{editor}' failed ({status})"));
    }
    let saved = std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let saved = String::from_utf8(saved).map_err(|_| "the saved text is not UTF-8".to_string())?;
    let saved = saved_replacement(proposed, saved);
    Ok((!saved.is_empty()).then_some(saved))
}

/// What the person saved, without the one newline an editor adds at the end when the
/// proposed text had none.
pub fn saved_replacement(proposed: &str, saved: String) -> String {
    if proposed.ends_with('\n') {
        return saved;
    }
    for end in ["\r\n", "\n"] {
        if let Some(cut) = saved.strip_suffix(end) {
            return cut.to_string();
        }
    }
    saved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newline_an_editor_adds_is_not_part_of_the_replacement() {
        assert_eq!(saved_replacement("bar(1)", "baz(1)\n".into()), "baz(1)");
        assert_eq!(saved_replacement("bar(1)", "baz(1)\r\n".into()), "baz(1)");
        assert_eq!(saved_replacement("bar(1)", "baz(1)\n\n".into()), "baz(1)\n");
        // A replacement that ends in a newline keeps what was saved.
        assert_eq!(saved_replacement("x;\n", "y;\n".into()), "y;\n");
        assert_eq!(saved_replacement("bar(1)", "\n".into()), "");
    }
}
