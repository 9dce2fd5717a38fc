//! Flag groups shared by the commands that read files (`grep`, `edit`) and stage
//! previews (`edit`, `patch`).

use git_astedit::error::UsageError;
use git_astedit::files;
use git_astedit::ops::input::Caller;
use git_astedit::ops::input::Input;
use git_astedit::ops::stage::Apply;
use git_astedit::ops::stage::Audience;
use git_astedit::ops::stage::DiffOptions;
use git_astedit::ops::stage::Staging;

/// Which files to read.
#[derive(Debug, clap::Args)]
pub struct InputArgs {
    /// Git pathspecs (relative to the current folder); default: the current folder
    #[arg(value_name = "PATHSPEC")]
    pub pathspecs: Vec<String>,

    /// Only files of LANG (by extension); files named exactly are parsed as LANG
    #[arg(short = 'l', long = "lang", value_name = "LANG")]
    pub lang: Option<String>,

    /// Skip files larger than BYTES
    #[arg(long, value_name = "BYTES", default_value_t = files::DEFAULT_MAX_FILE_SIZE)]
    pub max_filesize: u64,

    /// Number of worker threads (default: the number of cores)
    #[arg(short = 'j', long = "threads", value_name = "N")]
    pub threads: Option<usize>,

    /// Only paths a glob includes, none a `!glob` excludes (gitignore-style, as in
    /// ast-grep; the last glob matching a path decides; can be repeated)
    #[arg(long = "globs", value_name = "GLOB")]
    pub globs: Vec<String>,

    /// Read files git ignores too (vcs, exclude, global, parent); hidden and dot are
    /// accepted and change nothing (hidden files are read, .ignore files are not)
    #[arg(long = "no-ignore", value_name = "FILE_TYPE", value_enum)]
    pub no_ignore: Vec<NoIgnore>,

    /// Not supported: git stores a symlink as a link, and git-astedit skips it (the
    /// error says what to type instead)
    #[arg(long, hide_short_help = true)]
    pub follow: bool,

    /// The ast-grep project config whose languageGlobs say which files are which
    /// language (default: sgconfig.yml at the root, when there is one)
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,

    /// Load sgconfig.yml's customLanguages libraries (a library runs code when loaded):
    /// allow (every one, this run), ignore (none), or sha256:DIGEST,… (those, this run);
    /// default: those `git astedit allow` recorded
    #[arg(long, value_name = "POLICY")]
    pub custom_languages: Option<String>,

    /// Warn about every language the pattern is not code in (Markdown, YAML, HTML
    /// read it as text), not only those whose files hold its text
    #[arg(short = 'v', long)]
    pub verbose: bool,

    /// Read only the files that differ from REV (default: HEAD): modified, staged and
    /// untracked ones (with --cached, the staged ones); write it --changed=REV
    #[arg(long, value_name = "REV", num_args = 0..=1, require_equals = true, default_missing_value = "HEAD")]
    pub changed: Option<String>,

    /// Keep only the matches on lines that differ from the --changed revision (default
    /// HEAD): added or rewritten lines, every line of an untracked file (with --cached,
    /// the lines being committed)
    #[arg(long)]
    pub changed_lines: bool,

    /// Read the staged content (the index) instead of the work tree, as `git grep
    /// --cached`; edit stages it only where the work-tree file holds the same bytes
    #[arg(long)]
    pub cached: bool,
}

/// ast-grep's `--no-ignore` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NoIgnore {
    // hidden: hidden files (read already); dot: `.ignore` files (never read); exclude,
    // global, parent, vcs: git's ignore files, one source here.
    Hidden,
    Dot,
    Exclude,
    Global,
    Parent,
    Vcs,
}

impl InputArgs {
    /// The files asked for, as the operation takes them; sets up the thread pool
    /// first (`-j`).
    pub fn input(&self) -> Result<Input, UsageError> {
        threads(self.threads);
        if self.follow {
            return Err(UsageError(
                "--follow is not supported: git-astedit reads the files git sees and skips \
                 symlinks (git stores the link, not its target); name the target itself as a \
                 pathspec instead"
                    .into(),
            ));
        }
        Ok(Input {
            pathspecs: self.pathspecs.clone(),
            lang: self.lang.clone(),
            globs: self.globs.clone(),
            // Git's ignore files are one source here; ast-grep's other kinds are no-ops.
            no_ignore: self
                .no_ignore
                .iter()
                .any(|n| !matches!(n, NoIgnore::Hidden | NoIgnore::Dot)),
            max_file_size: self.max_filesize,
            config: self.config.clone(),
            changed: self.changed.clone(),
            changed_lines: self.changed_lines,
            cached: self.cached,
            caller: Caller::Person,
        })
    }
}

/// Makes the thread pool `-j N` asks for (the number of cores when `None`).
pub fn threads(n: Option<usize>) {
    if let Some(n) = n {
        // Fails only when a pool already exists, which cannot happen this early.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global();
    }
}

/// What happens to a preview right after staging (`edit`, `patch`).
#[derive(Debug, clap::Args)]
pub struct StageArgs {
    /// Why this change is made (recorded in the preview and the journal)
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// Apply the preview right after staging it
    #[arg(long)]
    pub apply: bool,

    /// Render at most N diff lines (0: no limit); the rest is summarized
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub max_render: usize,

    /// Sign the preview with git (`git commit-tree -S`, the key of `user.signingKey`),
    /// as `git config astedit.signPreviews true` does for every preview
    #[arg(long)]
    pub sign: bool,
}

impl StageArgs {
    /// What the operation does after staging: apply at once with `--apply`, and make
    /// the diff a person reads (`diff`: unless every change was shown already).
    pub fn staging(&self, diff: bool, color: bool) -> Staging {
        sign(self.sign);
        Staging {
            reason: self.reason.clone(),
            agent: git_astedit::ops::agent_hook::shell_session(),
            apply: self.apply.then(|| Apply {
                reason: self.reason.clone(),
                index: false,
            }),
            diff: diff.then_some(DiffOptions {
                color,
                max_lines: self.max_render,
            }),
            audience: Audience::Person,
            // The user's own command line.
            allow_run: true,
        }
    }
}

/// `--sign`: every preview this run stages is signed by git (a failure to sign fails
/// the stage); without it, `astedit.signPreviews` decides.
pub fn sign(asked: bool) {
    if asked {
        git_astedit::ops::session::sign_previews();
    }
}

/// A `--filter REGEX` of rule ids (`scan`, `test`), as ast-grep takes it.
pub fn filter(text: Option<&str>) -> Result<Option<regex::Regex>, UsageError> {
    text.map(regex::Regex::new)
        .transpose()
        .map_err(|e| UsageError(format!("--filter is not a regular expression: {e}")))
}
