/*!
Consent for the commands a repository's files name (issue 48 item 5): the formatters of
`astedit.toml`'s `[fmt]` and the tree-sitter libraries of `sgconfig.yml`'s
`customLanguages` (loading one runs its code). A clone's files are someone else's
words: such a command runs only once the person allowed it here, as direnv's `allow`.

A consent is keyed by a SHA-256 digest ([`fmt_digest`], [`crate::lang::custom_digest`])
of the command line and of the repository files it names (a committed `./tools/fmt.sh`),
or of a library's path and bytes, so that a changed command, script or library asks
again. Consents live in `<common git dir>/astedit/allowed` (outside `refs/`, so no fetch
carries them; linked worktrees share them), one `sha256:HEX<TAB>kind<TAB>what` line
each, written atomically; a missing file allows nothing. A run may add digests of its
own (`--allow-fmt=sha256:…`, `--custom-languages=sha256:…`): CI opts in to exactly the
command it pinned. An unallowed formatter refuses the run ([`Error::NotAllowed`]: its
command, its digest and how to allow it), never a silent skip.

The decision lives here so that the CLI, the MCP server and the language server share
it: `ops::edit` and `ops::scan` call [`require_fmt`], `refresh` too for the formatters
a preview recorded, and the front end installs [`custom_policy`] once.
*/

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;

use crate::error::Classify;
use crate::error::Exit;
use crate::lang::CustomPolicy;
use crate::ops::fmt::Formatters;
use crate::repo::Repo;
use crate::report::consent::AllowReport;
use crate::report::consent::NamedCommand;
use crate::report::consent::NamedKind;
use crate::Error as AnyError;

/// The consent store, under the common git dir.
const STORE: &str = "astedit/allowed";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A command the repository's files name, not allowed here.
    #[error("{}", not_allowed_message(.0))]
    NotAllowed(Vec<NamedCommand>),
    /// A digest given on the command line that is not `sha256:` and 64 hex digits.
    #[error("'{0}' is not a consent digest: expected sha256: and 64 hex digits, as `git astedit allow --list` prints them")]
    BadDigest(String),
    #[error("cannot {action} the consent store {}", path.display())]
    Store {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn not_allowed_message(named: &[NamedCommand]) -> String {
    let list: Vec<String> = named
        .iter()
        .map(|n| format!("{}: `{}` ({})", n.source, n.command, n.digest))
        .collect();
    format!(
        "the repository names {} not allowed to run here: {}",
        if named.len() == 1 {
            "a command"
        } else {
            "commands"
        },
        list.join("; ")
    )
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::NotAllowed(_) => "command-not-allowed",
            Error::BadDigest(_) => "usage",
            Error::Store { .. } => "io",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::NotAllowed(_) => Exit::Refused,
            Error::BadDigest(_) => Exit::BadInput,
            Error::Store { .. } => Exit::Internal,
        }
    }
    fn hint(&self) -> Option<String> {
        let Error::NotAllowed(named) = self else {
            return None;
        };
        let files: Vec<&str> = named
            .iter()
            .flat_map(|n| n.files.iter().map(String::as_str))
            .collect();
        let read = if files.is_empty() {
            "read the command".to_string()
        } else {
            format!("read the command and {}", files.join(", "))
        };
        let flags: Vec<String> = named
            .iter()
            .map(|n| match n.kind {
                NamedKind::CustomLanguage => format!("--custom-languages={}", n.digest),
                NamedKind::Fmt | NamedKind::Digest => format!("--allow-fmt={}", n.digest),
            })
            .collect();
        Some(format!(
            "{read}; then `git astedit allow` records your consent in this repository (a \
             changed command asks again), or pass {} for this run only (never a blanket \
             allow in a CI job that runs on pull requests)",
            flags.join(" ")
        ))
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            Error::NotAllowed(named) => Some(serde_json::json!({ "commands": named })),
            _ => None,
        }
    }
}

/// The digest of a formatter command: SHA-256 over the command line and, for each of
/// its words (or whitespace-separated piece of one, as in `sh -c "./fmt.sh -q"`) that
/// names a file in the work tree (a committed `./tools/fmt.sh`, a `python
/// tools/fmt.py`), that path and its bytes. Returns the digest and those paths. What
/// such a script runs in turn is not covered.
pub fn fmt_digest(workdir: &Path, command: &str) -> (String, Vec<String>) {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    let mut part = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    part(b"fmt");
    part(command.as_bytes());
    let mut files = Vec::new();
    // Each word, and each piece of a word a shell would split (`sh -c "./x.sh -q"`).
    let words = crate::ops::fmt::words(command);
    let pieces = words
        .iter()
        .flat_map(|w| std::iter::once(w.as_str()).chain(w.split_whitespace()))
        .map(str::to_string);
    let mut seen = std::collections::BTreeSet::new();
    for word in pieces {
        if word.contains("{path}")
            || word.starts_with('-')
            || Path::new(&word).is_absolute()
            || !seen.insert(word.clone())
        {
            continue;
        }
        let abs = workdir.join(&word);
        if !abs.is_file() {
            continue;
        }
        let Ok(bytes) = std::fs::read(&abs) else {
            continue;
        };
        part(word.as_bytes());
        part(&sha2::Sha256::digest(&bytes));
        files.push(word);
    }
    (format!("sha256:{:x}", h.finalize()), files)
}

/// Checks a digest given on the command line (`sha256:` and 64 hex digits,
/// lowercased).
pub fn parse_digest(text: &str) -> Result<String, Error> {
    let hex = text
        .strip_prefix("sha256:")
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    match hex {
        Some(hex) => Ok(format!("sha256:{}", hex.to_ascii_lowercase())),
        None => Err(Error::BadDigest(text.to_string())),
    }
}

/// The consents recorded in a repository.
#[derive(Debug, Default)]
pub struct Store {
    path: PathBuf,
    /// Digest → the line's `kind<TAB>what`.
    entries: BTreeMap<String, String>,
}

impl Store {
    /// The store of `repo` (`common_dir`), empty when there is none yet. A line that
    /// does not begin with a digest is ignored.
    pub fn open(common_dir: &Path) -> Result<Store, Error> {
        let path = common_dir.join(STORE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(Error::Store {
                    action: "read",
                    path,
                    source,
                })
            }
        };
        let entries = text
            .lines()
            .filter_map(|line| {
                let (digest, rest) = line.split_once('\t').unwrap_or((line, ""));
                let digest = parse_digest(digest.trim()).ok()?;
                Some((digest, rest.to_string()))
            })
            .collect();
        Ok(Store { path, entries })
    }

    pub fn allows(&self, digest: &str) -> bool {
        self.entries.contains_key(digest)
    }

    /// Records a consent; `false` when it was recorded already.
    fn add(&mut self, digest: &str, kind: NamedKind, what: &str) -> bool {
        let line = format!("{}\t{}", kind.as_str(), what.replace(['\n', '\t'], " "));
        self.entries.insert(digest.to_string(), line).is_none()
    }

    /// Writes the store: a temporary file beside it, renamed over it.
    fn save(&self) -> Result<(), Error> {
        let fail = |action: &'static str| {
            let path = self.path.clone();
            move |source| Error::Store {
                action,
                path,
                source,
            }
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(fail("create the folder of"))?;
        let mut text = String::from(
            "# Commands this repository's files name that the user allowed (git astedit allow).\n",
        );
        for (digest, rest) in &self.entries {
            text.push_str(&format!("{digest}\t{rest}\n"));
        }
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail("write"))?;
        tmp.write_all(text.as_bytes()).map_err(fail("write"))?;
        tmp.as_file().sync_all().map_err(fail("write"))?;
        tmp.persist(&self.path)
            .map_err(|e| fail("replace")(e.error))?;
        Ok(())
    }
}

/// The formatters of `[fmt]`, as named commands.
fn named_formatters(repo: &Repo, fmts: &Formatters, store: &Store) -> Vec<NamedCommand> {
    fmts.by_language()
        .map(|(lang, command)| {
            let (digest, files) = fmt_digest(&repo.workdir, command);
            NamedCommand {
                kind: NamedKind::Fmt,
                source: format!("astedit.toml [fmt] {lang}"),
                command: command.to_string(),
                allowed: store.allows(&digest),
                digest,
                files,
            }
        })
        .collect()
}

/// Refuses to run `fmts` unless each of its commands is allowed: recorded by `git
/// astedit allow`, or one of `given` (`--allow-fmt`, already checked by
/// [`parse_digest`]).
pub fn require_fmt(repo: &Repo, fmts: &Formatters, given: &[String]) -> Result<(), Error> {
    let store = Store::open(&repo.common_dir)?;
    let missing: Vec<NamedCommand> = named_formatters(repo, fmts, &store)
        .into_iter()
        .filter(|n| !n.allowed && !given.contains(&n.digest))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::NotAllowed(missing))
    }
}

/// `[fmt]` of the `astedit.toml` at the root of `repo`, refused unless each of its
/// commands is allowed ([`require_fmt`]; `given`: the run's `--allow-fmt` digests).
pub fn allowed_formatters(repo: &Repo, given: &[String]) -> Result<Formatters, AnyError> {
    let fmts = Formatters::load(&repo.workdir)?;
    require_fmt(repo, &fmts, given)?;
    Ok(fmts)
}

/// Every command the repository's files name now: `[fmt]` of the root's
/// `astedit.toml`, then the libraries of the root's `sgconfig.yml`.
pub fn named(repo: &Repo) -> Result<Vec<NamedCommand>, AnyError> {
    let store = Store::open(&repo.common_dir)?;
    let fmts = Formatters::load(&repo.workdir)?;
    let mut out = named_formatters(repo, &fmts, &store);
    for (file, spec) in crate::scan::rules::project_custom_languages(repo)? {
        let (digest, files) = match crate::lang::custom_digest(&spec, Some(&repo.workdir)) {
            Ok(d) => (d, vec![spec.library_shown.clone()]),
            // A library that cannot be read cannot be loaded either: nothing to allow.
            Err(_) => continue,
        };
        out.push(NamedCommand {
            kind: NamedKind::CustomLanguage,
            source: format!("{file} customLanguages {}", spec.name),
            command: spec.library_shown.clone(),
            allowed: store.allows(&digest),
            digest,
            files,
        });
    }
    Ok(out)
}

/// What `git astedit allow` does.
#[derive(Debug, Clone, Default)]
pub struct AllowRequest {
    /// Only these digests (none: every command the repository names now).
    pub digests: Vec<String>,
    /// Show, record nothing.
    pub list: bool,
    /// Remove consents instead (none named: every consent of the repository).
    pub revoke: bool,
}

/// `git astedit allow`: lists the commands the repository's files name with their
/// digests, and records (or revokes) consent for them.
pub fn allow(repo: &Repo, req: &AllowRequest) -> Result<AllowReport, AnyError> {
    let digests = req
        .digests
        .iter()
        .map(|d| parse_digest(d))
        .collect::<Result<Vec<_>, _>>()?;
    let mut commands = named(repo)?;
    let mut store = Store::open(&repo.common_dir)?;
    let wanted = |d: &str| digests.is_empty() || digests.iter().any(|x| x == d);
    let mut changed = Vec::new();
    if req.revoke {
        let gone: Vec<String> = store
            .entries
            .keys()
            .filter(|d| wanted(d))
            .cloned()
            .collect();
        for d in gone {
            store.entries.remove(&d);
            changed.push(d);
        }
    } else if !req.list {
        for c in commands.iter().filter(|c| wanted(&c.digest)) {
            if store.add(&c.digest, c.kind, &format!("{}: {}", c.source, c.command)) {
                changed.push(c.digest.clone());
            }
        }
        // A digest the repository does not name now (a `-c` config's library, say).
        for d in &digests {
            if !commands.iter().any(|c| &c.digest == d)
                && store.add(d, NamedKind::Digest, "allowed by digest")
            {
                changed.push(d.clone());
            }
        }
    }
    if !changed.is_empty() {
        store.save()?;
    }
    for c in &mut commands {
        c.allowed = store.allows(&c.digest);
    }
    Ok(AllowReport {
        schema_version: crate::report::Version,
        commands,
        changed,
        revoked: req.revoke,
        store: store.path.display().to_string(),
    })
}

/// The policy for loading `customLanguages` libraries in a run: `flag` is
/// `--custom-languages` as given (`allow`, `ignore`, or digests `sha256:…`, comma
/// separated), `config` the repository's own `astedit.customLanguages`. Without a
/// flag, a library loads when `git astedit allow` recorded its digest (read at each
/// load, so a server sees a consent given after it started). The old config value
/// `allow` no longer loads anything by itself: it was one switch for every library
/// any later checkout names (see the Trust chapter); `ignore` still loads none.
pub fn custom_policy(
    repo: Option<&Repo>,
    flag: Option<&str>,
    config: Option<&str>,
) -> Result<CustomPolicy, AnyError> {
    let mut given = Vec::new();
    match flag {
        Some("allow") => return Ok(CustomPolicy::All),
        Some("ignore") => return Ok(CustomPolicy::Ignore),
        Some(list) if list.starts_with("sha256:") => {
            for d in list.split(',') {
                given.push(parse_digest(d.trim())?);
            }
        }
        Some("trust" | "revoke") => {
            return Err(crate::error::UsageError(
                "git-astedit remembers which libraries you allowed: run `git astedit allow` \
                 (or `git astedit allow --revoke`), or pass --custom-languages=sha256:DIGEST \
                 for one run"
                    .into(),
            )
            .into())
        }
        Some(other) => {
            return Err(crate::error::UsageError(format!(
                "--custom-languages: '{other}' is not a policy: use allow, ignore or \
                 sha256:DIGEST (comma separated)"
            ))
            .into())
        }
        None if config == Some("ignore") => return Ok(CustomPolicy::Ignore),
        None => {}
    }
    let common = repo.map(|r| r.common_dir.clone());
    Ok(CustomPolicy::Consent(Box::new(move |digest: &str| {
        given.iter().any(|g| g == digest)
            || common
                .as_deref()
                .and_then(|c| Store::open(c).ok())
                .is_some_and(|s| s.allows(digest))
    })))
}

#[cfg(test)]
mod tests {
    use super::fmt_digest;
    use super::parse_digest;

    #[test]
    fn a_formatters_digest_covers_the_scripts_it_names() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir(root.join("tools")).expect("mkdir");
        std::fs::write(root.join("tools/fmt.sh"), "cat\n").expect("write");
        let direct = fmt_digest(root, "./tools/fmt.sh {path}");
        let in_shell = fmt_digest(root, "sh -c './tools/fmt.sh -q' {path}");
        assert_eq!(direct.1, ["./tools/fmt.sh"]);
        assert_eq!(in_shell.1, ["./tools/fmt.sh"]);
        // Another command line, or other bytes in the script: another digest.
        assert_ne!(direct.0, fmt_digest(root, "./tools/fmt.sh  {path}").0);
        std::fs::write(root.join("tools/fmt.sh"), "cat # more\n").expect("write");
        assert_ne!(fmt_digest(root, "./tools/fmt.sh {path}").0, direct.0);
        assert_ne!(
            fmt_digest(root, "sh -c './tools/fmt.sh -q' {path}").0,
            in_shell.0
        );
        // A program from PATH names no file here.
        assert!(fmt_digest(root, "ruff format -").1.is_empty());
    }

    #[test]
    fn digests_read_only_as_sha256_hex() {
        let hex = "ab".repeat(32);
        assert_eq!(
            parse_digest(&format!("sha256:{}", hex.to_uppercase())).ok(),
            Some(format!("sha256:{hex}"))
        );
        assert!(parse_digest(&hex).is_err());
        assert!(parse_digest("sha256:abc").is_err());
        assert!(parse_digest(&format!("sha256:{}", "zz".repeat(32))).is_err());
    }
}
