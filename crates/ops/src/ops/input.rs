/*!
Which files a command reads, as a front end was told them: pathspecs, a language, globs,
the ignore rules, a size limit, the project config whose `languageGlobs` say which file
is which language, `--cached` (the index's content, not the work tree's), and
`--changed` (with `--changed-lines`, the lines too). The CLI's flags and the server's
tool arguments both become one [`Input`]; the operation turns it into files, so `grep`,
`edit` and `scan` list their files the same way whoever asked: [`Input::files`] for
`grep` and `edit`, [`Listing::files`] for `scan`, whose rules' config gives the
language globs and which may read a commit's tree instead ([`stored`]).
*/

pub mod stored;

use std::path::PathBuf;

use crate::files;
use crate::files::FileSet;
use crate::lang::Lang;
use crate::repo::Repo;
use crate::scan;
use crate::Error;

/// Who named the files, which decides how strictly they are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Caller {
    /// A person at the command line: a pathspec that names no file is an error, as in
    /// `git add`.
    #[default]
    Person,
    /// An agent through the server: a pathspec naming nothing beside others that name
    /// files is a warning (a model's one stale path should not cost it the call), and
    /// the listing of an earlier call is reused while nothing it was made from changed
    /// (the server lives long).
    Agent,
}

/// The files to read, as asked.
#[derive(Debug, Clone)]
pub struct Input {
    /// Git pathspecs (relative to the current folder); none: the current folder.
    pub pathspecs: Vec<String>,
    /// Only files of this language (by extension), and files named exactly are parsed
    /// as it (`-l`); a name the project config may define.
    pub lang: Option<String>,
    /// ast-grep's include and `!`exclude globs, gitignore-style (`--globs`).
    pub globs: Vec<String>,
    /// Files git ignores are read too (`--no-ignore`).
    pub no_ignore: bool,
    /// Files larger than this are skipped (and counted).
    pub max_file_size: u64,
    /// The ast-grep project config whose `languageGlobs`, `languageInjections` and
    /// `customLanguages` apply (`-c`); none: `sgconfig.yml` at the root, if any.
    pub config: Option<PathBuf>,
    /// Only the files that differ from this revision (`--changed[=REV]`).
    pub changed: Option<String>,
    /// Only the matches on lines that differ from `changed`'s revision (HEAD when
    /// `changed` is unset): added or rewritten lines, every line of an untracked file
    /// (`--changed-lines`).
    pub changed_lines: bool,
    /// Read the staged content (the index's stage-0 entries) instead of the work tree
    /// (`--cached`); `changed` then compares the revision with the index: what a commit
    /// would hold, and the lines it would change.
    pub cached: bool,
    pub caller: Caller,
}

impl Default for Input {
    fn default() -> Input {
        Input {
            pathspecs: Vec::new(),
            lang: None,
            globs: Vec::new(),
            no_ignore: false,
            max_file_size: files::DEFAULT_MAX_FILE_SIZE,
            config: None,
            changed: None,
            changed_lines: false,
            cached: false,
            caller: Caller::Person,
        }
    }
}

/// An [`Input`] made files.
#[derive(Debug, Default)]
pub struct Files {
    pub set: FileSet,
    /// The language asked for, resolved.
    pub lang: Option<Lang>,
    /// What the caller is told besides the result (an agent's pathspec that named
    /// nothing).
    pub warnings: Vec<String>,
    /// With `changed_lines`: the lines a match must touch to count.
    pub lines: Option<crate::text::LineRanges>,
}

impl Input {
    /// Lists the files: the project's language globs first (`lang` may name one of its
    /// custom languages), then the walk, narrowed to `changed` when asked.
    pub fn files(&self, repo: &Repo) -> Result<Files, Error> {
        self.files_asking(repo, false)
    }

    /// [`Input::files`] for a run that reads its files' results from the result cache:
    /// with `ask_git`, git's `status` may tell what changed ([`files::Options::ask_git`]).
    pub fn files_asking(&self, repo: &Repo, ask_git: bool) -> Result<Files, Error> {
        let (language_globs, lang) = self.languages(repo)?;
        let asking = ask_git.then_some(None);
        let (mut set, warnings) = self.walk(repo, language_globs, lang, self.no_ignore, asking)?;
        let mut lines = None;
        if let Some(rev) = self.changed_rev() {
            let changed = super::baseline::changed(repo, rev, self.cached)?;
            set.files.retain(|f| changed.files.contains(&f.path));
            lines = self.changed_lines.then_some(changed.lines);
        }
        Ok(Files {
            set,
            lang,
            warnings,
            lines,
        })
    }

    /// The revision `changed` compares with: `changed`'s, or HEAD for `changed_lines`
    /// alone; `None`: every file.
    pub fn changed_rev(&self) -> Option<&str> {
        match (&self.changed, self.changed_lines) {
            (None, true) => Some("HEAD"),
            (rev, _) => rev.as_deref(),
        }
    }

    /// The work tree's files the pathspecs and globs select, with these language globs,
    /// in `lang` (when asked), reading ignored files too with `no_ignore`; for an agent,
    /// a pathspec naming nothing beside others is a warning. `ask_git`: the files'
    /// results come from the result cache ([`files::Options::ask_git`]), with git's
    /// answer when the caller has it already.
    fn walk(
        &self,
        repo: &Repo,
        language_globs: files::LanguageGlobs,
        lang: Option<Lang>,
        no_ignore: bool,
        ask_git: Option<Option<Asked>>,
    ) -> Result<(FileSet, Vec<String>), Error> {
        let mut opts = files::Options {
            pathspecs: self.pathspecs.clone(),
            lang,
            max_file_size: self.max_file_size,
            language_globs,
            globs: files::PathGlobs::new(&self.globs, &folder_prefix(repo))?,
            no_ignore,
            ask_git: ask_git.is_some(),
            asked: ask_git.flatten(),
        };
        let collect = match (self.cached, self.caller) {
            (true, _) => files::collect_index,
            (false, Caller::Person) => files::collect,
            (false, Caller::Agent) => files::collect_remembered,
        };
        Ok(match self.caller {
            Caller::Person => (collect(repo, &opts)?, Vec::new()),
            Caller::Agent => match collect(repo, &opts) {
                Ok(set) => (set, Vec::new()),
                Err(files::Error::PathspecNoMatch(unmatched))
                    if unmatched.len() < opts.pathspecs.len() =>
                {
                    opts.pathspecs.retain(|p| !unmatched.contains(p));
                    let set = collect(repo, &opts)?;
                    let warnings = unmatched
                        .iter()
                        .map(|p| format!("path '{p}' matches no file; searched the other paths"))
                        .collect();
                    (set, warnings)
                }
                Err(e) => return Err(e.into()),
            },
        })
    }

    /// The language asked for (`lang`), a custom one of the project config too.
    pub fn language(&self, repo: &Repo) -> Result<Option<Lang>, Error> {
        Ok(self.languages(repo)?.1)
    }

    /// The project config's language globs (read first: they register its custom
    /// languages), and the language asked for.
    fn languages(&self, repo: &Repo) -> Result<(files::LanguageGlobs, Option<Lang>), Error> {
        let globs = crate::scan::rules::project_language_globs(repo, self.config.as_deref())?;
        let lang = self
            .lang
            .as_deref()
            .map(files::parse_language)
            .transpose()?;
        Ok((globs, lang))
    }
}

/// The current folder as a repository path with its `/` (`src/`), empty at the top.
fn folder_prefix(repo: &Repo) -> String {
    match repo.prefix.as_deref() {
        None | Some("") => String::new(),
        Some(p) => format!("{p}/"),
    }
}

/// An [`Input`] as a scan lists it: the language globs and `noIgnore` are those of
/// the rules' config (a scan's `-c` names rule files, not [`Input::config`]), and
/// the files are narrowed to `only` (the files `--changed` found, computed once for
/// both sides of `--baseline`) and to one `shard`. A scan takes no language and no
/// globs ([`Input::lang`], [`Input::globs`] stay unset).
pub struct Listing<'a> {
    pub input: &'a Input,
    pub rules: &'a crate::scan::rules::Plan,
    pub only: Option<&'a std::collections::BTreeSet<String>>,
    pub shard: Option<crate::scan::Shard>,
    /// The scan reads its files' results from the result cache: git's `status` may
    /// tell what changed ([`files::Options::ask_git`]).
    pub ask_git: bool,
    /// With `ask_git`: git's answer, when the caller asked already.
    pub asked: Option<Asked>,
}

/// git's `status` answer, asked by the caller of a listing.
pub type Asked = std::sync::Arc<crate::cache::status::Changes>;

impl Listing<'_> {
    /// The files to scan, in path order: the work tree's, or with `cached` the
    /// index's.
    pub fn files(&self, repo: &Repo) -> Result<scan::source::Inputs, Error> {
        let input = self.input;
        let no_ignore = input.no_ignore || self.rules.no_ignore;
        let globs = self.rules.language_globs.clone();
        let asking = self.ask_git.then(|| self.asked.clone());
        let (set, _) = input.walk(repo, globs, None, no_ignore, asking)?;
        let mut inputs = scan::source::Inputs::from(set);
        inputs.narrow(self.only, self.shard);
        Ok(inputs)
    }

    /// The files of a commit's tree to scan, in path order (`--baseline`'s other side).
    pub fn tree(&self, repo: &Repo, tree: &stored::Tree) -> Result<scan::source::Inputs, Error> {
        files::check_max_file_size(self.input.max_file_size).map_err(scan::Error::from)?;
        let globs = &self.rules.language_globs;
        let mut inputs = stored::tree(repo, tree, &self.input.pathspecs, globs)?;
        inputs.narrow(self.only, self.shard);
        Ok(inputs)
    }
}
