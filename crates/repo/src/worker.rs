/*!
The per-file loop grep, edit and scan share, shaped like ast-grep's `Worker` and
`PathWorker`: a [`Worker`] turns one loaded file into one item (matches, a rewrite,
findings and fixes), and [`run`] does everything around it once: the result cache
(look-up, key, the text a hit still needs, storing), reading, scheduling by size,
progress, cancellation, skipped files, the first error, and the order in which a
consumer sees the items. How the items are consumed (collected, streamed to a printer,
offered to a person) is the caller's choice, made once: [`Drive`].

Before this module each engine held its own copy of that loop (issue 36); a new engine
now writes its body and nothing else.
*/

use std::io::Write;

use crate::cache::Bucket;
use crate::cache::IndexStat;
use crate::cache::Key;
use crate::cache::KeyBuilder;
use crate::cancel::Cancel;
use crate::change::FileMode;
use crate::files;
use crate::files::Loaded;
use crate::files::SkipReason;
use crate::files::Skipped;
use crate::lang::Lang;
use crate::pipeline::Delivery;
use crate::repo::Repo;
use crate::select::Proposal;
use crate::select::Select;

/// A file a run works on.
pub trait Task: Sync {
    /// Its repository path.
    fn path(&self) -> &str;
    /// The language its cache entry is keyed by.
    fn lang(&self) -> Lang;
    /// Its size as the index recorded it: a scheduling hint only.
    fn size_hint(&self) -> u64;
    /// Its index entry, when the entry's id may name the file's bytes (see
    /// [`files::Candidate::tracked`]).
    fn tracked(&self) -> Option<&IndexStat> {
        None
    }
    /// A part of its cache key besides the run's query, its content and its language
    /// (a scan's list of rules that apply to it).
    fn key_part(&self) -> Option<&Key> {
        None
    }
    /// The id of its content when that is a blob of the object database (a staged or
    /// committed file), which [`Worker::read`] reads: its cache entry is looked up by
    /// this id, and the blob is read only when the entry is missing or needs the text.
    fn read_id(&self) -> Option<gix::ObjectId> {
        None
    }
    /// Where the key of its entry under the id git vouched for is kept once made
    /// ([`Cache::key`]): a run that first asks which entries are there (a scan
    /// choosing the rules to compile) does not hash it again. `None`: not kept.
    fn vouched_key(&self) -> Option<&std::sync::OnceLock<Key>> {
        None
    }
}

impl Task for files::Candidate {
    fn path(&self) -> &str {
        &self.path
    }
    fn lang(&self) -> Lang {
        self.lang
    }
    fn size_hint(&self) -> u64 {
        self.size_hint
    }
    fn tracked(&self) -> Option<&IndexStat> {
        self.tracked.as_ref()
    }
    fn read_id(&self) -> Option<gix::ObjectId> {
        self.blob.map(|(id, _)| id)
    }
}

/// How a worker wants a task run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Not at all: the run has nothing for the file's language (not counted as
    /// searched, not skipped).
    Pass,
    /// Read and computed, never through the cache.
    Compute,
    /// Through the cache when the run has one.
    Cached,
}

/// Asks whether to make one change (a person's `y`/`n`); a parallel run says yes.
pub type Offer<'a> = dyn FnMut(&Proposal<'_>) -> bool + 'a;

/// One engine's work on one file.
pub trait Worker: Sync {
    type Task: Task;
    /// A file's result, as the cache keeps it.
    type Output;
    /// What the consumer gets of an output, made on the worker's thread (a printer's
    /// rows wait their turn as text, not as matches with their captures).
    type Item: Send;
    type Error: Send;

    fn plan(&self, task: &Self::Task) -> Plan;
    /// The content of a task whose content is a blob ([`Task::read_id`]); `None`:
    /// the task's file is read from the work tree.
    fn read(&self, _task: &Self::Task) -> Option<Result<Loaded, Self::Error>> {
        None
    }
    /// The result of `text`, the task's content.
    fn compute(
        &self,
        task: &Self::Task,
        text: String,
        mode: FileMode,
        offer: &mut Offer<'_>,
    ) -> Result<Self::Output, Self::Error>;
    /// A result from a cache entry; `text` gives the content the entry is of, when
    /// the result needs it (`None`: it cannot, and the result is computed again).
    /// `None` when the entry does not decode or the text is not to be had.
    fn decode(
        &self,
        task: &Self::Task,
        payload: &[u8],
        text: &mut dyn FnMut() -> Option<(String, FileMode)>,
    ) -> Option<Self::Output>;
    /// Whether `output` is worth an entry.
    fn stores(&self, _output: &Self::Output) -> bool {
        true
    }
    /// Writes `output`'s entry.
    fn encode(&self, output: &Self::Output, out: &mut dyn Write) -> std::io::Result<()>;
    fn item(&self, task: &Self::Task, output: Self::Output) -> Self::Item;
    /// What the progress line counts as found in `item`.
    fn found(&self, item: &Self::Item) -> usize;
}

/// A run's result cache: one bucket, keyed by the run's query.
pub struct Cache {
    bucket: Bucket,
    /// Every entry's key starts with the run's query: hashed once.
    prefix: KeyBuilder,
}

impl Cache {
    /// Opens the bucket of `query` (everything a result depends on besides the file).
    pub fn open(settings: &crate::cache::Settings, query: Key) -> Cache {
        let mut prefix = KeyBuilder::new("file");
        prefix.add(&query);
        Cache {
            bucket: Bucket::open(settings, &query),
            prefix,
        }
    }

    /// The key of `task`'s entry when its content is `id`.
    pub fn key(&self, task: &impl Task, id: &gix::oid) -> Key {
        let make = || {
            let mut k = self.prefix.clone();
            if let Some(part) = task.key_part() {
                k.add(part);
            }
            k.add(id.as_bytes())
                .add(task.lang().cache_identity().as_bytes());
            k.finish()
        };
        let vouched = task.tracked().and_then(|t| t.vouched_id());
        match task.vouched_key() {
            Some(memo) if vouched.is_some_and(|v| v == id) => *memo.get_or_init(make),
            _ => make(),
        }
    }

    /// Whether `task` has an entry, as far as can be told without reading the file
    /// (its content named by the index's stat data or read before the run).
    pub fn holds(&self, workdir: &std::path::Path, task: &impl Task) -> bool {
        let id = match (task.read_id(), task.tracked().and_then(|t| t.vouched_id())) {
            (Some(id), _) | (None, Some(id)) => Some(id),
            (None, None) => std::fs::symlink_metadata(workdir.join(task.path()))
                .ok()
                .filter(|m| m.is_file())
                .and_then(|m| task.tracked()?.id_if_unchanged(&m)),
        };
        id.is_some_and(|id| self.bucket.contains(&self.key(task, &id)))
    }
}

/// How a run goes over its tasks, and so who consumes the items.
pub enum Drive<'a> {
    /// On every worker thread, the items handed on in input order or as each is
    /// ready; `cancel` is checked as each is handed on.
    Parallel { order: Delivery, cancel: &'a Cancel },
    /// One task at a time in input order, each change offered to a person first;
    /// the cache is not used (a person's answers are not cached), and once the person
    /// is [finished](Select::finished) the rest are not read.
    Selecting(&'a mut dyn Select),
}

/// What a run counted besides its items.
#[derive(Debug, Default)]
pub struct Totals {
    /// Tasks read (or found in the cache) and run.
    pub files_searched: usize,
    /// The skipped files given to [`run`], and those skipped on reading.
    pub skipped: Skipped,
    /// With [`Run::ids`]: each task done or skipped on reading (its index in the
    /// tasks), with the id of its content where the cache named it (the id its entry
    /// is keyed by); in the order they were handed on.
    pub ids: Vec<(usize, Option<gix::ObjectId>)>,
}

/// What became of one task.
enum Step<I> {
    /// Its item, and its content's id when the cache named it.
    Done(I, Option<gix::ObjectId>),
    Skipped(SkipReason),
    Pass,
}

/// The settings of a run besides its worker and tasks.
pub struct Run<'a> {
    pub repo: &'a Repo,
    pub max_file_size: u64,
    /// `None`: no cache. Not used while selecting (the caller need not open one).
    pub cache: Option<Cache>,
    /// Files left out before the run (they start [`Totals::skipped`]).
    pub skipped: Skipped,
    /// Keep the content ids the cache named ([`Totals::ids`]).
    pub ids: bool,
}

/// Runs `worker` on every task, handing each item to `consume` (on the calling
/// thread). `consume` returning `false` stops the run; so does cancellation and the
/// first error, which is returned once the cache has stored what was computed.
pub fn run<W: Worker>(
    worker: &W,
    tasks: &[W::Task],
    settings: Run<'_>,
    drive: Drive<'_>,
    mut consume: impl FnMut(&W::Task, W::Item) -> bool,
) -> Result<Totals, W::Error> {
    let Run {
        repo,
        max_file_size,
        cache,
        skipped,
        ids,
    } = settings;
    let cache = match drive {
        Drive::Parallel { .. } => cache,
        Drive::Selecting(_) => None,
    };
    let one = One {
        worker,
        workdir: &repo.workdir,
        hash_kind: repo.git.object_hash(),
        max_file_size,
        cache: cache.as_ref(),
    };
    let mut totals = Totals {
        files_searched: 0,
        skipped,
        ids: Vec::new(),
    };
    let mut first_error = None;
    let never = Cancel::never();
    let cancel = match &drive {
        Drive::Parallel { cancel, .. } => *cancel,
        Drive::Selecting(_) => &never,
    };
    let mut deliver = |i: usize, step: Result<Step<W::Item>, W::Error>| -> bool {
        if cancel.is_cancelled() {
            return false;
        }
        let task = &tasks[i];
        let found = match &step {
            Ok(Step::Done(item, _)) => worker.found(item),
            _ => 0,
        };
        crate::progress::advance(1, found);
        match step {
            Err(e) => {
                first_error = Some(e);
                false
            }
            Ok(Step::Skipped(reason)) => {
                totals.skipped.add(reason, task.path());
                if ids {
                    totals.ids.push((i, None));
                }
                true
            }
            Ok(Step::Pass) => true,
            Ok(Step::Done(item, id)) => {
                totals.files_searched += 1;
                if ids {
                    totals.ids.push((i, id));
                }
                consume(task, item)
            }
        }
    };
    match drive {
        Drive::Parallel { order, .. } => {
            // No bar while a person answers questions (below).
            let _phase = crate::progress::phase(crate::progress::Phase::Search, tasks.len());
            parallel(&one, tasks, order, &mut deliver);
        }
        Drive::Selecting(select) => {
            for (i, task) in tasks.iter().enumerate() {
                if select.finished() {
                    break;
                }
                let step = one.step(task, &mut |p| select.select(p));
                if !deliver(i, step) {
                    break;
                }
            }
        }
    }
    // A run stopped early stores what it computed; the index is written whole.
    if let Some(cache) = cache {
        cache.bucket.finish();
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(totals),
    }
}

/// How many tasks [`parallel`] answers from the cache before it runs the rest of them.
const WINDOW: usize = 4096;

/// Where [`run`] hands each task's step (its index in the tasks); `false`: stop.
type Deliver<'d, W> =
    dyn FnMut(usize, Result<Step<<W as Worker>::Item>, <W as Worker>::Error>) -> bool + 'd;

/// Runs `tasks` on every worker, handing each step to `deliver` in `order`: window by
/// window, the tasks whose entries git vouched for are answered from the cache on
/// every core at once (a warm scan of an unchanged tree is only that), the others go
/// through the pipeline, their results merged with those in input order.
fn parallel<W: Worker>(
    one: &One<'_, W>,
    tasks: &[W::Task],
    order: Delivery,
    deliver: &mut Deliver<'_, W>,
) {
    for (w, window) in tasks.chunks(WINDOW).enumerate() {
        let base = w * WINDOW;
        let mut hits: Vec<Option<Step<W::Item>>> = match one.cache {
            Some(_) => {
                use rayon::prelude::*;
                window.par_iter().map(|t| one.vouched_hit(t)).collect()
            }
            None => Vec::new(),
        };
        hits.resize_with(window.len(), || None);
        let misses: Vec<usize> = (0..window.len()).filter(|&j| hits[j].is_none()).collect();
        // The hits before `upto` (window positions), in order; `false`: stop.
        let mut next = 0;
        let mut flush = |upto: usize,
                         hits: &mut Vec<Option<Step<W::Item>>>,
                         deliver: &mut Deliver<'_, W>|
         -> bool {
            while next < upto {
                if let Some(hit) = hits[next].take() {
                    if !deliver(base + next, Ok(hit)) {
                        return false;
                    }
                }
                next += 1;
            }
            true
        };
        if order == Delivery::AsReady && !flush(window.len(), &mut hits, deliver) {
            return;
        }
        let mut go_on = true;
        crate::pipeline::map_sized(
            &misses,
            |&j| window[j].size_hint(),
            |&j| one.step(&window[j], &mut |_| true),
            order,
            |k, step| {
                let j = misses[k];
                go_on = flush(j, &mut hits, deliver) && deliver(base + j, step);
                go_on
            },
        );
        if !go_on || !flush(window.len(), &mut hits, deliver) {
            return;
        }
    }
}

/// An output, and the id of the content it is of.
type Named<O> = (O, gix::ObjectId);

/// Running one task: what every worker thread shares.
struct One<'a, W> {
    worker: &'a W,
    workdir: &'a std::path::Path,
    hash_kind: gix::hash::Kind,
    max_file_size: u64,
    cache: Option<&'a Cache>,
}

impl<W: Worker> One<'_, W> {
    /// A task's step straight from its cache entry, when git vouched for its content
    /// id (see `cache::status`) and the result needs no text: no look at the file.
    /// `None`: run the task as usual.
    fn vouched_hit(&self, task: &W::Task) -> Option<Step<W::Item>> {
        let cache = self.cache?;
        if task.read_id().is_some() || self.worker.plan(task) != Plan::Cached {
            return None;
        }
        let tracked = task.tracked()?;
        let id = tracked.vouched_id()?;
        let size = u64::from(tracked.stat.size);
        if size == 0 || size > self.max_file_size.min(files::MAX_FILE_SIZE_CEILING) {
            return None;
        }
        let key = cache.key(task, &id);
        let payload = cache.bucket.get(&key)?;
        let output = self.worker.decode(task, payload, &mut || None)?;
        Some(Step::Done(self.worker.item(task, output), Some(id)))
    }

    fn step(&self, task: &W::Task, offer: &mut Offer<'_>) -> Result<Step<W::Item>, W::Error> {
        let output = match (self.worker.plan(task), self.cache) {
            (Plan::Pass, _) => return Ok(Step::Pass),
            (Plan::Cached, Some(cache)) => self
                .cached(cache, task, offer)?
                .map(|(output, id)| (output, Some(id))),
            (Plan::Cached | Plan::Compute, _) => {
                let loaded = match self.worker.read(task) {
                    Some(read) => read?,
                    None => files::load(self.workdir, task.path(), self.max_file_size),
                };
                match loaded {
                    Loaded::Text(text, mode) => {
                        Ok((self.worker.compute(task, text, mode, offer)?, None))
                    }
                    Loaded::Skipped(r) => Err(r),
                }
            }
        };
        Ok(match output {
            Ok((output, id)) => Step::Done(self.worker.item(task, output), id),
            Err(reason) => Step::Skipped(reason),
        })
    }

    /// A task's output through the cache (its entry, or computed and stored), with
    /// the id of the content it is the output of.
    fn cached(
        &self,
        cache: &Cache,
        task: &W::Task,
        offer: &mut Offer<'_>,
    ) -> Result<Result<Named<W::Output>, SkipReason>, W::Error> {
        let key_of = |id: &gix::oid| cache.key(task, id);
        let read_named = || {
            files::read_named(
                self.workdir,
                task.path(),
                task.tracked(),
                self.max_file_size,
                self.hash_kind,
            )
        };
        // (key, id, entry, text): a blob looked up by its id (read only on a miss), or
        // a file by the index's stat data, or read now and named.
        let (key, id, payload, mut text) = match task.read_id() {
            Some(id) => {
                let key = key_of(&id);
                match cache.bucket.get(&key) {
                    Some(payload) => (key, id, Some(payload.to_vec()), None),
                    None => match self.read_blob(task)? {
                        Ok(text) => (key, id, None, Some(text)),
                        Err(r) => return Ok(Err(r)),
                    },
                }
            }
            None => match files::load_cached(
                self.workdir,
                task.path(),
                task.tracked(),
                self.max_file_size,
                self.hash_kind,
                &cache.bucket,
                key_of,
            ) {
                files::CachedLoad::Skipped(r) => return Ok(Err(r)),
                files::CachedLoad::Miss { key, id, text } => (key, id, None, Some(text)),
                files::CachedLoad::Hit {
                    key,
                    id,
                    payload,
                    text,
                } => (key, id, Some(payload), text),
            },
        };
        let (text, key, id) = match payload {
            None => (text.expect("a missed entry's text was read"), key, id),
            Some(payload) => {
                // The text, when the result needs it: the one read, or one read now
                // and named again (it may have changed since the look-up).
                let mut fresh = None;
                let decoded = self.worker.decode(task, &payload, &mut || {
                    if let Some(t) = text.take() {
                        return Some(t);
                    }
                    if task.read_id().is_some() {
                        // A blob is what its id names: no second look-up.
                        return self.read_blob(task).ok()?.ok();
                    }
                    match read_named() {
                        Ok((t, now)) if now == id => Some(t),
                        Ok((t, now)) => {
                            fresh = Some((t, key_of(&now), now));
                            None
                        }
                        Err(_) => None,
                    }
                });
                if let Some(output) = decoded {
                    return Ok(Ok((output, id)));
                }
                match (fresh, text) {
                    (Some(fresh), _) => fresh,
                    (None, Some(t)) => (t, key, id),
                    (None, None) if task.read_id().is_some() => match self.read_blob(task)? {
                        Ok(t) => (t, key, id),
                        Err(r) => return Ok(Err(r)),
                    },
                    (None, None) => match read_named() {
                        Ok((t, now)) => (t, key_of(&now), now),
                        Err(r) => return Ok(Err(r)),
                    },
                }
            }
        };
        let output = self.worker.compute(task, text.0, text.1, offer)?;
        if self.worker.stores(&output) {
            // Straight into the bucket: a large file's matches with their captures
            // are not encoded into one more buffer first.
            cache
                .bucket
                .put_with(&key, |out| self.worker.encode(&output, out));
        }
        Ok(Ok((output, id)))
    }

    /// The text of a task whose content is a blob, as the worker reads it.
    fn read_blob(
        &self,
        task: &W::Task,
    ) -> Result<Result<(String, FileMode), SkipReason>, W::Error> {
        match self.worker.read(task) {
            Some(read) => Ok(match read? {
                Loaded::Text(t, m) => Ok((t, m)),
                Loaded::Skipped(r) => Err(r),
            }),
            // A worker that names blobs reads them.
            None => Ok(Err(SkipReason::Unreadable)),
        }
    }
}
