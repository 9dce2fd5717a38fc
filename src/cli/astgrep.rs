//! ast-grep 0.51.1's flags on the commands that share its names (issue 51, item 4):
//! those of its `run` taken by `run -p` as `grep` and `edit` take them, and those of
//! its `scan` and `test` that mean something else here (or nothing), each refused with
//! what to type instead. Kept apart from the commands' own flags, hidden from their
//! help: the "Coming from ast-grep" chapter lists them.

use git_astedit::error::UsageError;

/// ast-grep's `-A`, `-B`, `-C` (`--after`, `--before`, `--context`): lines around a match.
#[derive(Debug, Default, clap::Args)]
pub struct Around {
    #[arg(short = 'A', long = "after", value_name = "NUM", hide = true)]
    pub after: Option<String>,
    #[arg(short = 'B', long = "before", value_name = "NUM", hide = true)]
    pub before: Option<String>,
    #[arg(short = 'C', long = "context", value_name = "NUM", hide = true)]
    pub context: Option<String>,
}

impl Around {
    /// The first one given, as its flag and value.
    fn given(&self) -> Option<(&'static str, &str)> {
        [
            ("-A/--after", &self.after),
            ("-B/--before", &self.before),
            ("-C/--context", &self.context),
        ]
        .into_iter()
        .find_map(|(flag, v)| v.as_deref().map(|v| (flag, v)))
    }
}

/// The flags of ast-grep's `run` beside `-p`, `-r`, `-U` and `-l`.
#[derive(Debug, Default, clap::Args)]
pub struct RunFlags {
    #[arg(long, value_name = "KIND", hide = true)]
    pub selector: Option<String>,
    #[arg(long, value_name = "STRICTNESS", hide = true)]
    pub strictness: Option<String>,
    #[arg(short = 'k', long, value_name = "KIND", hide = true)]
    pub kind: Option<String>,
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true, hide = true)]
    pub debug_query: Option<Option<String>>,
    #[arg(long, hide = true)]
    pub follow: bool,
    #[arg(long, value_name = "POLICY", hide = true)]
    pub custom_languages: Option<String>,
    #[arg(long, value_name = "FILE_TYPE", hide = true)]
    pub no_ignore: Vec<String>,
    #[arg(long, hide = true)]
    pub stdin: bool,
    #[arg(long, value_name = "GLOB", hide = true)]
    pub globs: Vec<String>,
    #[arg(short = 'j', long, value_name = "N", hide = true)]
    pub threads: Option<String>,
    #[arg(short = 'i', long, hide = true)]
    pub interactive: bool,
    #[arg(long, hide = true)]
    pub files_with_matches: bool,
    #[arg(long, value_name = "GRANULARITY", hide = true)]
    pub inspect: Option<String>,
    #[command(flatten)]
    pub around: Around,
    #[arg(short = 'c', long, value_name = "CONFIG_FILE", hide = true)]
    pub config: Option<String>,
}

impl RunFlags {
    /// Whether any was given (then `run` is ast-grep's search).
    pub fn any(&self) -> bool {
        self.selector.is_some()
            || self.strictness.is_some()
            || self.kind.is_some()
            || self.debug_query.is_some()
            || self.follow
            || self.custom_languages.is_some()
            || !self.no_ignore.is_empty()
            || self.stdin
            || !self.globs.is_empty()
            || self.threads.is_some()
            || self.interactive
            || self.files_with_matches
            || self.inspect.is_some()
            || self.around.given().is_some()
            || self.config.is_some()
    }

    /// The flags as `grep` (`search`) or `edit` takes them, each value joined to its
    /// flag (`--globs=VALUE`), so no value is read as a flag; refused with what to type
    /// when the command they go to has no such flag.
    pub fn argv(&self, search: bool, lang: Option<&str>) -> Result<Vec<String>, UsageError> {
        if let Some(kind) = &self.kind {
            return Err(UsageError(format!(
                "-k/--kind is not supported: a rule matches by kind: git astedit scan \
                 --inline-rules '{{id: kind, language: {}, rule: {{kind: {kind}}}}}'",
                lang.unwrap_or("LANG")
            )));
        }
        let mut argv = Vec::new();
        let push = |argv: &mut Vec<String>, flag: &str, value: &Option<String>| {
            if let Some(v) = value {
                argv.push(format!("--{flag}={v}"));
            }
        };
        push(&mut argv, "config", &self.config);
        push(&mut argv, "custom-languages", &self.custom_languages);
        push(&mut argv, "threads", &self.threads);
        for v in &self.no_ignore {
            argv.push(format!("--no-ignore={v}"));
        }
        for v in &self.globs {
            argv.push(format!("--globs={v}"));
        }
        if self.follow {
            argv.push("--follow".into());
        }
        let around = self.around.given().map(|(flag, _)| (flag, true));
        // `edit` takes --selector too: a rewrite reaches what the search reached.
        push(&mut argv, "selector", &self.selector);
        let searching = [
            ("--strictness", self.strictness.is_some()),
            ("--debug-query", self.debug_query.is_some()),
            ("--stdin", self.stdin),
            ("--files-with-matches", self.files_with_matches),
            ("--inspect", self.inspect.is_some()),
            around.unwrap_or(("", false)),
        ];
        if !search {
            if let Some((flag, _)) = searching.iter().find(|(_, given)| *given) {
                return Err(UsageError(format!(
                    "{flag} is for the search: a rewrite here is staged as a preview (or \
                     applied with -U), which takes no {flag}; search with `run -p PATTERN \
                     {flag} …` (with -r FIX and --json=stream to see each replacement), or \
                     write the rewrite as a rule (`scan --inline-rules '{{id: …, language: \
                     …, rule: {{pattern: …}}, fix: …}}' --apply`)"
                )));
            }
            if self.interactive {
                argv.push("--interactive".into());
            }
            return Ok(argv);
        }
        if self.interactive {
            return Err(UsageError(
                "-i/--interactive asks about each rewrite: add -r FIX".into(),
            ));
        }
        push(&mut argv, "strictness", &self.strictness);
        match &self.debug_query {
            None => {}
            Some(None) => argv.push("--debug-query".into()),
            Some(Some(format)) => argv.push(format!("--debug-query={format}")),
        }
        if self.stdin {
            argv.push("--stdin".into());
        }
        if self.files_with_matches {
            argv.push("--files-with-matches".into());
        }
        push(&mut argv, "inspect", &self.inspect);
        push(&mut argv, "after-context", &self.around.after);
        push(&mut argv, "before-context", &self.around.before);
        push(&mut argv, "context", &self.around.context);
        Ok(argv)
    }
}

/// The flags of ast-grep's `scan` that are not `scan`'s own here.
#[derive(Debug, Default, clap::Args)]
pub struct ScanFlags {
    /// Same as --apply (ast-grep's spelling)
    #[arg(short = 'U', long = "update-all", conflicts_with_all = ["check", "stage"])]
    pub update_all: bool,
    /// Only paths a glob includes, none a `!glob` excludes (gitignore-style, as in
    /// ast-grep; the last glob matching a path decides; can be repeated)
    #[arg(long = "globs", value_name = "GLOB")]
    pub globs: Vec<String>,
    /// Read files git ignores too (vcs, exclude, global, parent); hidden and dot are
    /// accepted and change nothing
    #[arg(long = "no-ignore", value_name = "FILE_TYPE", value_enum)]
    pub no_ignore: Vec<super::common::NoIgnore>,
    #[arg(long, hide = true)]
    pub follow: bool,
    #[arg(long, hide = true)]
    pub stdin: bool,
    #[arg(long, hide = true)]
    pub files_with_matches: bool,
    // ast-grep's --inspect: the files and rules the scan reads and skips, on stderr.
    #[arg(long, value_name = "GRANULARITY", hide = true)]
    pub inspect: Option<String>,
    #[command(flatten)]
    pub around: Around,
}

impl ScanFlags {
    /// Refuses the flags `scan` does not take, saying what to type instead.
    pub fn check(&self) -> Result<(), UsageError> {
        if self.follow {
            return Err(follow());
        }
        if self.stdin {
            return Err(UsageError(
                "--stdin is not supported by scan: it reads files (git's, or the index with \
                 --cached); write the text to a file and name it as a pathspec, or give it \
                 to a rule test (`git astedit test`)"
                    .into(),
            ));
        }
        if self.files_with_matches {
            return Err(UsageError(
                "--files-with-matches is not supported by scan: the findings name their \
                 files (`git astedit scan --json` has each finding's `path`); for a \
                 pattern's files: git astedit grep -p PATTERN --files-with-matches"
                    .into(),
            ));
        }
        if let Some((flag, _)) = self.around.given() {
            return Err(UsageError(format!(
                "{flag} is not supported by scan: each finding prints its line and column; \
                 for lines around a pattern's matches: git astedit grep -p PATTERN {} N",
                &flag[..2]
            )));
        }
        Ok(())
    }

    /// Whether `--no-ignore` asks for the files git ignores.
    pub fn reads_ignored(&self) -> bool {
        self.no_ignore.iter().any(|n| {
            !matches!(
                n,
                super::common::NoIgnore::Hidden | super::common::NoIgnore::Dot
            )
        })
    }
}

/// The flags of ast-grep's `test` that are not `test`'s own here.
#[derive(Debug, Default, clap::Args)]
pub struct TestFlags {
    #[arg(long, hide = true)]
    pub follow: bool,
}

impl TestFlags {
    pub fn check(&self) -> Result<(), UsageError> {
        if self.follow {
            return Err(UsageError(
                "--follow is not supported by test: rule and test folders are read as they \
                 are, symlinks skipped; name the folder the link points to (-t DIR, or in \
                 sgconfig.yml's testConfigs)"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// `--follow`, refused.
fn follow() -> UsageError {
    UsageError(
        "--follow is not supported: git-astedit reads the files git sees and skips symlinks \
         (git stores the link, not its target); name the target itself as a pathspec instead"
            .into(),
    )
}
