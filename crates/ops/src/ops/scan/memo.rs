/*!
A scan's whole answer, remembered (`crate::cache::memo`): a report-mode scan through
the result cache asks git's `status` what changed and keeps beside the cache what it
found; a later identical scan that finds the tree as git saw it then answers from that
record without listing the files or looking one up. git is asked also where it keeps
neither an untracked cache nor fsmonitor (where a listing alone would not ask it): its
`status` then walks the tree, and the listing takes its answer instead of walking it
again, so a scan that misses the memo pays for one walk, not two.

The query (the memo's key) is everything that decides the answer but the tree: the
tool's build, the rules as planned (their texts and every config file read, by
content, tracked or not, with the severities and filters of the command line), each
custom language's library (by its bytes, as the result cache keys it), the
command's listing and scan options, the folder it runs in, the git config and the
`GIT_*` environment git reads.

`ASTEDIT_DEBUG_CACHE=1` makes the scan say on stderr whether it answered from a memo.
*/

use serde::Deserialize;
use serde::Serialize;

use crate::cache::memo::Seen;
use crate::files::SkipReason;
use crate::lang::Lang;
use crate::repo::Repo;
use crate::scan;
use crate::scan::Finding;

/// A scan that may answer from a memo or write one: git's answer (asked once, for the
/// listing too) and what the run saw.
pub(super) struct Memo {
    settings: crate::cache::Settings,
    pub(super) asked: super::super::input::Asked,
    /// `None`: no memo can stand for this tree (an untracked folder, no checksum).
    seen: Option<Seen>,
    index_path: std::path::PathBuf,
    started: std::time::SystemTime,
}

/// What a scan is asked, as far as a memo may stand for its answer.
pub(super) struct Query<'a> {
    pub req: &'a super::ScanRequest,
    pub rules: &'a scan::rules::Rules,
    pub opts: &'a scan::Options,
    pub shard: Option<scan::Shard>,
}

impl Memo {
    /// Asks git what changed (with or without an untracked cache or fsmonitor; without,
    /// not on the first scan of a rule set) and looks at what a memo would be checked
    /// against, for a scan `q` that may use one:
    /// report mode, the work tree as the command line names it (no pathspecs,
    /// `--cached`, `--changed` or `--baseline`; ignored files left out), through the
    /// result cache. `None`: no memo (the listing asks git itself where git keeps
    /// either).
    pub(super) fn prepare(repo: &Repo, q: &Query<'_>) -> Option<Memo> {
        let req = q.req;
        let input = &req.input;
        let eligible = req.mode == crate::report::ScanMode::Report
            && req.baseline.is_none()
            && input.changed_rev().is_none()
            && !input.cached
            && input.caller == super::super::input::Caller::Person
            && input.pathspecs.is_empty()
            && !(input.no_ignore || q.rules.plan.no_ignore);
        let settings = q.opts.cache.clone().filter(|_| eligible)?;
        let started = std::time::SystemTime::now();
        // Asked also where git keeps neither an untracked cache nor fsmonitor: its
        // `status` then walks the tree as the listing would, and the listing takes its
        // answer instead of walking again. Not on the first scan of a rule set (its
        // plan not in the cache, every rule compiled): every file is read then, and
        // waiting for git's walk before the first read cost more than our own walk.
        let asking = match q.rules.is_compiled() && q.req.inline_rules.is_none() {
            true => crate::cache::status::Asking::WhereKept,
            false => crate::cache::status::Asking::Always,
        };
        let asked = std::sync::Arc::new(crate::files::status_changes(repo, asking)?);
        let index_path = repo.git.index_path();
        let hash_len = repo.git.object_hash().len_in_bytes();
        let key = key(repo, q);
        let seen = Seen::look(key, &index_path, hash_len, &asked, &repo.workdir);
        Some(Memo {
            settings,
            asked,
            seen,
            index_path,
            started,
        })
    }

    /// The answer of the memo that saw what this run sees, if any.
    pub(super) fn recall(&self, repo: &Repo) -> Option<Answer> {
        let payload = self.seen.as_ref().and_then(|seen| {
            crate::cache::memo::recall(&self.settings, seen, &repo.git, &repo.workdir)
        });
        let answer = payload.and_then(|p| serde_json::from_slice::<Answer>(&p).ok());
        debug(match answer {
            Some(_) => "answered from its memo",
            None => "no memo of this tree: listed and looked up",
        });
        answer
    }

    /// Whether a run that did not answer from the memo may write one.
    pub(super) fn may_record(&self) -> bool {
        self.seen.is_some()
    }

    /// Writes the memo of this run's answer: `outcome`, whose findings are `findings`
    /// (a streamed scan's outcome holds none), over `inputs`. Only when the listing
    /// went by git's answer, read the index seen (still there) and found no
    /// attribute source.
    pub(super) fn record(
        &self,
        inputs: &scan::source::Inputs,
        outcome: &scan::ScanOutcome,
        findings: &[Finding],
    ) {
        let Some(seen) = &self.seen else { return };
        let Some(crate::files::ByGit {
            index: Some(index),
            folders: Some(folders),
        }) = &inputs.by_git
        else {
            return;
        };
        let fix_parts = !outcome.remaining.is_empty()
            || !outcome.changes.changes.is_empty()
            || !outcome.unconverged.is_empty()
            || !outcome.conflicts.is_empty()
            || !outcome.same.is_empty();
        if fix_parts || !seen.is_index(index) || !seen.same_index(&self.index_path) {
            return;
        }
        let answer = Answer::of(inputs, outcome, findings);
        if let Ok(payload) = serde_json::to_vec(&answer) {
            crate::cache::memo::record(&self.settings, seen, folders, &payload, self.started);
        }
    }
}

/// A scan's memo as the scan goes: the memo it may answer from or write, the answer
/// it found there, and the findings it keeps for a memo while streaming them.
pub(super) struct Run {
    memo: Option<Memo>,
    recalled: Option<Answer>,
    record: Option<Vec<Finding>>,
}

impl Run {
    /// Prepares the memo of `q` (with `ask_git`: the listing would ask git) and reads
    /// its answer when it stands for this tree.
    pub(super) fn start(repo: &Repo, q: &Query<'_>, ask_git: bool) -> Run {
        let memo = ask_git.then(|| Memo::prepare(repo, q)).flatten();
        let recalled = memo.as_ref().and_then(|m| m.recall(repo));
        let record = memo
            .as_ref()
            .filter(|m| recalled.is_none() && m.may_record())
            .map(|_| Vec::new());
        Run {
            memo,
            recalled,
            record,
        }
    }

    /// git's answer, for the listing.
    pub(super) fn asked(&self) -> Option<super::super::input::Asked> {
        self.memo.as_ref().map(|m| m.asked.clone())
    }

    /// The memo's answer, when the scan answers from it.
    pub(super) fn answer(&self) -> Option<&Answer> {
        self.recalled.as_ref()
    }

    /// With an answer: the inputs its frames are made from (nothing is listed).
    pub(super) fn inputs(&self) -> Option<scan::source::Inputs> {
        self.recalled.as_ref().map(Answer::inputs)
    }

    /// Where a streamed report's findings come from.
    pub(super) fn source(&mut self) -> super::Source<'_> {
        match &self.recalled {
            Some(answer) => super::Source::Replay(answer),
            None => super::Source::Scan(self.record.as_mut()),
        }
    }

    /// Writes the memo of a scan that did not answer from one (`streamed`: its
    /// findings were kept here, not in `outcome`).
    pub(super) fn record(
        &self,
        inputs: &scan::source::Inputs,
        outcome: &scan::ScanOutcome,
        streamed: bool,
    ) {
        let (Some(memo), None, Some(kept)) = (&self.memo, &self.recalled, &self.record) else {
            return;
        };
        let findings = match streamed {
            true => kept,
            false => &outcome.findings,
        };
        memo.record(inputs, outcome, findings);
    }
}

/// Says on stderr how the scan answered, when `ASTEDIT_DEBUG_CACHE` is set.
fn debug(what: &str) {
    if std::env::var_os("ASTEDIT_DEBUG_CACHE").is_some_and(|v| !v.is_empty() && v != "0") {
        eprintln!("git-astedit: scan {what}");
    }
}

/// The memo's key: everything that decides the answer but the tree.
fn key(repo: &Repo, q: &Query<'_>) -> crate::cache::Key {
    let mut k = crate::cache::KeyBuilder::new("scan-memo");
    k.add(build().as_bytes());
    for path in [&repo.workdir, &repo.git_dir] {
        k.add(path.as_os_str().as_encoded_bytes());
    }
    k.add(repo.prefix.as_deref().unwrap_or("").as_bytes());
    k.add(&serde_json::to_vec(&q.rules.plan).unwrap_or_default());
    // Each custom language loaded, by its library's bytes (the plan names it, not its
    // grammar: a library rebuilt under the same name and path may parse otherwise).
    for lang in Lang::all_langs() {
        if lang.builtin().is_none() {
            k.add(lang.cache_identity().as_bytes());
        }
    }
    let opts = q.opts;
    k.add(
        format!(
            "{:?}\0{:?}\0{:?}\0{:?}\0{}\0{:?}",
            q.req.input,
            q.shard,
            opts.mode,
            opts.only_rules,
            opts.max_file_size,
            (opts.unused_suppressions, opts.max_passes),
        )
        .as_bytes(),
    );
    k.add(repo.git.config_snapshot().to_string().as_bytes());
    let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
        .filter(|(name, _)| {
            let name = name.as_encoded_bytes();
            name.starts_with(b"GIT_") || name == b"HOME" || name == b"XDG_CONFIG_HOME"
        })
        .collect();
    env.sort();
    for (name, value) in env {
        k.add(name.as_encoded_bytes()).add(value.as_encoded_bytes());
    }
    k.finish()
}

/// The running binary: its version, and its file's size and times (a build of the same
/// version may answer otherwise).
fn build() -> String {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::env::current_exe().and_then(std::fs::metadata);
    match meta {
        Ok(m) => format!(
            "{} {} {} {}.{}",
            crate::VERSION,
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec()
        ),
        Err(_) => format!("{} unknown", crate::VERSION),
    }
}

/// A report-mode scan's answer: its findings (with the language of each file that
/// has some, for the frames) and counts.
#[derive(Serialize, Deserialize)]
pub(super) struct Answer {
    findings: Vec<Row>,
    langs: Vec<(String, Lang)>,
    files_searched: usize,
    /// (reason, count, the first paths).
    skipped: Vec<(SkipReason, usize, Vec<String>)>,
    parse_errors: Vec<String>,
    other_shards: usize,
}

impl Answer {
    fn of(
        inputs: &scan::source::Inputs,
        outcome: &scan::ScanOutcome,
        findings: &[Finding],
    ) -> Answer {
        let mut langs: Vec<(String, Lang)> = Vec::new();
        for f in findings {
            if langs.last().is_some_and(|(p, _)| *p == f.path) {
                continue;
            }
            let at = inputs
                .files
                .binary_search_by(|c| c.path.as_str().cmp(&f.path));
            if let Ok(at) = at {
                langs.push((f.path.clone(), inputs.files[at].lang));
            }
        }
        let skipped = &outcome.skipped;
        Answer {
            findings: findings.iter().map(Row::of).collect(),
            langs,
            files_searched: outcome.files_searched,
            skipped: skipped
                .counts
                .iter()
                .map(|(r, n)| {
                    let examples = skipped.examples.get(r).cloned().unwrap_or_default();
                    (*r, *n, examples)
                })
                .collect(),
            parse_errors: outcome.parse_errors.clone(),
            other_shards: outcome.other_shards,
        }
    }

    /// The findings, in path order (then position).
    pub(super) fn findings(&self) -> Vec<Finding> {
        self.findings.iter().map(Row::finding).collect()
    }

    /// The outcome the scan had, with its findings.
    pub(super) fn outcome_with_findings(&self) -> scan::ScanOutcome {
        scan::ScanOutcome {
            findings: self.findings(),
            ..self.outcome()
        }
    }

    /// The outcome the scan had, its findings not in it (a streamed scan's).
    pub(super) fn outcome(&self) -> scan::ScanOutcome {
        let mut skipped = crate::files::Skipped::default();
        for (r, n, examples) in &self.skipped {
            skipped.counts.insert(*r, *n);
            skipped.examples.insert(*r, examples.clone());
        }
        scan::ScanOutcome {
            files_searched: self.files_searched,
            skipped,
            parse_errors: self.parse_errors.clone(),
            other_shards: self.other_shards,
            ..Default::default()
        }
    }

    /// The inputs the frames of the findings are made from: the files with findings,
    /// each in its language.
    pub(super) fn inputs(&self) -> scan::source::Inputs {
        scan::source::Inputs {
            files: self
                .langs
                .iter()
                .map(|(path, lang)| scan::source::Candidate {
                    path: path.clone(),
                    lang: *lang,
                    size_hint: 0,
                    tracked: None,
                    blob: None,
                })
                .collect(),
            ..Default::default()
        }
    }
}

/// A finding as the memo keeps it: its path and the result cache's row.
#[derive(Serialize, Deserialize)]
struct Row {
    path: String,
    row: scan::cached::Row,
}

impl Row {
    fn of(f: &Finding) -> Row {
        Row {
            path: f.path.clone(),
            row: scan::cached::Row::of(f),
        }
    }

    fn finding(&self) -> Finding {
        self.row.clone().finding(&self.path)
    }
}
