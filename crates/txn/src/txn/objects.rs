/*!
The new objects of a preview, written loose when they are few and as one pack when
they are many.

A large edit stages thousands of objects (every after-blob, the trees of both sides).
As loose objects each is a temporary file, a rename and often a new fan-out folder:
inode allocation and directory updates that cost more than compressing the data (a
quarter of `edit`'s time on a 5,000-file corpus, by `perf`). One pack is two files.
The cut-off is git's own: `transfer.unpackLimit` keeps received packs of fewer than
100 objects as loose objects, so small previews leave the repository as git would.

The pack is version 2 without deltas, compressed at level 1 (git's level for loose
objects: these objects are short-lived until `git gc` repacks or prunes them), with a
version 2 index; both use the repository's hash (SHA-1 or SHA-256). The `.pack` is
renamed into place before the `.idx`, and readers only look at packs that have an
index, so no reader ever sees half a pack.
*/

use std::borrow::Cow;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use gix::objs::Kind;
use gix::ObjectId;

use super::Error;

/// Fewer new objects than this are written loose (git's `transfer.unpackLimit`).
pub const PACK_THRESHOLD: usize = 100;

/// New objects gathered for one preview; nothing reaches the disk before [`write`].
///
/// Once there are enough of them for a pack, each is compressed into its pack entry as
/// it is added and its bytes are dropped: a large edit then holds about a quarter of
/// its new contents in memory, not all of them.
///
/// [`write`]: ObjectBatch::write
pub struct ObjectBatch<'a> {
    git: &'a gix::Repository,
    pending: Vec<NewObject<'a>>,
    ids: HashSet<ObjectId>,
    packing: bool,
}

/// One object the repository does not have yet.
struct NewObject<'a> {
    id: ObjectId,
    kind: Kind,
    body: Body<'a>,
}

enum Body<'a> {
    /// The object's bytes, while it may still be written loose.
    Raw(Cow<'a, [u8]>),
    /// Its pack entry (header and zlib stream).
    Entry(Vec<u8>),
}

/// How a batch reached the disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// Nothing was new.
    Nothing,
    /// This many loose objects.
    Loose(usize),
    /// One pack (its `.pack` path) holding this many objects.
    Pack(PathBuf, usize),
}

impl<'a> ObjectBatch<'a> {
    pub fn new(git: &'a gix::Repository) -> ObjectBatch<'a> {
        ObjectBatch {
            git,
            pending: Vec::new(),
            ids: HashSet::new(),
            packing: false,
        }
    }

    /// Adds an object; returns its id. Objects the repository already has, and
    /// repeats, are not written again.
    pub fn add(&mut self, kind: Kind, data: Cow<'a, [u8]>) -> Result<ObjectId, Error> {
        let id = gix::objs::compute_hash(self.git.object_hash(), kind, &data)
            .map_err(Error::git("hash an object"))?;
        // Not `has_object`: on a miss that re-reads the pack folder, once per object.
        if self.ids.contains(&id) || self.git.objects.exists_without_refresh(&id) {
            return Ok(id);
        }
        self.ids.insert(id);
        let body = if self.packing {
            Body::Entry(self.entry(kind, &data)?)
        } else {
            Body::Raw(data)
        };
        self.pending.push(NewObject { id, kind, body });
        if !self.packing && self.pending.len() >= PACK_THRESHOLD {
            self.packing = true;
            let mut pending = std::mem::take(&mut self.pending);
            for object in &mut pending {
                if let Body::Raw(data) = &object.body {
                    object.body = Body::Entry(self.entry(object.kind, data)?);
                }
            }
            self.pending = pending;
        }
        Ok(id)
    }

    fn entry(&self, kind: Kind, data: &[u8]) -> Result<Vec<u8>, Error> {
        pack_entry(kind, data).map_err(Error::io("compress an object for", self.objects_dir()))
    }

    fn objects_dir(&self) -> &Path {
        self.git.objects.store_ref().path()
    }

    /// Adds an encoded object (a tree or a commit).
    pub fn add_object(&mut self, object: &impl gix::objs::WriteTo) -> Result<ObjectId, Error> {
        let mut buf = Vec::with_capacity(object.size() as usize);
        object
            .write_to(&mut buf)
            .map_err(|e| Error::Corrupt(format!("cannot encode a {}: {e}", object.kind())))?;
        self.add(object.kind(), Cow::Owned(buf))
    }

    /// Writes the gathered objects: loose below [`PACK_THRESHOLD`], else one pack.
    pub fn write(self) -> Result<Written, Error> {
        let count = self.pending.len();
        if count == 0 {
            return Ok(Written::Nothing);
        }
        if !self.packing {
            use gix::objs::Write as _;
            for object in &self.pending {
                let Body::Raw(data) = &object.body else {
                    continue;
                };
                self.git
                    .objects
                    .write_buf_with_known_id(object.kind, data, object.id)
                    .map_err(Error::git(format!("write {} {}", object.kind, object.id)))?;
            }
            return Ok(Written::Loose(count));
        }
        let ObjectBatch { git, pending, .. } = self;
        let objects_dir = git.objects.store_ref().path();
        let mut entries: Vec<(ObjectId, Vec<u8>)> = Vec::with_capacity(count);
        for object in pending {
            let entry = match object.body {
                Body::Entry(entry) => entry,
                Body::Raw(data) => pack_entry(object.kind, &data)
                    .map_err(Error::io("compress an object for", objects_dir))?,
            };
            entries.push((object.id, entry));
        }
        let pack = write_pack(objects_dir, git.object_hash(), &entries)?;
        Ok(Written::Pack(pack, count))
    }
}

/// Writes pack `entries` (distinct objects) as `objects/pack/pack-<checksum>.{pack,idx}`;
/// returns the `.pack` path.
fn write_pack(
    objects_dir: &Path,
    hash: gix::hash::Kind,
    entries: &[(ObjectId, Vec<u8>)],
) -> Result<PathBuf, Error> {
    let pack_dir = objects_dir.join("pack");
    std::fs::create_dir_all(&pack_dir).map_err(Error::io("create", &pack_dir))?;

    let count = u32::try_from(entries.len())
        .map_err(|_| Error::InvalidChange("too many objects for one pack".into()))?;
    let mut pack = HashingFile::create(&pack_dir, hash)?;
    pack.write(b"PACK")?;
    pack.write(&2u32.to_be_bytes())?;
    pack.write(&count.to_be_bytes())?;
    // (id, crc32 of the entry's bytes, offset of the entry)
    let mut index: Vec<(ObjectId, u32, u64)> = Vec::with_capacity(entries.len());
    for (id, entry) in entries {
        index.push((*id, crc32fast::hash(entry), pack.written));
        pack.write(entry)?;
    }
    let pack_checksum = pack.checksum()?;
    pack.write(pack_checksum.as_bytes())?;

    index.sort_unstable_by_key(|e| e.0);
    let mut idx = Vec::with_capacity(8 + 256 * 4 + index.len() * (hash.len_in_bytes() + 12) + 64);
    idx.extend_from_slice(&[0xff, b't', b'O', b'c']);
    idx.extend_from_slice(&2u32.to_be_bytes());
    let mut fanout = [0u32; 256];
    for (id, _, _) in &index {
        fanout[id.as_bytes()[0] as usize] += 1;
    }
    let mut total = 0u32;
    for n in fanout {
        total += n;
        idx.extend_from_slice(&total.to_be_bytes());
    }
    for (id, _, _) in &index {
        idx.extend_from_slice(id.as_bytes());
    }
    for (_, crc, _) in &index {
        idx.extend_from_slice(&crc.to_be_bytes());
    }
    // Offsets of 2 GiB and more go to a table of 64-bit offsets, the small one names
    // their slot with the top bit set.
    let mut large: Vec<u64> = Vec::new();
    for &(_, _, offset) in &index {
        let small = match u32::try_from(offset) {
            Ok(o) if o < 0x8000_0000 => o,
            _ => {
                large.push(offset);
                0x8000_0000 | (large.len() as u32 - 1)
            }
        };
        idx.extend_from_slice(&small.to_be_bytes());
    }
    for offset in large {
        idx.extend_from_slice(&offset.to_be_bytes());
    }
    idx.extend_from_slice(pack_checksum.as_bytes());

    let stem = pack_dir.join(format!("pack-{}", pack_checksum.to_hex()));
    let pack_path = stem.with_extension("pack");
    let idx_path = stem.with_extension("idx");
    pack.persist(&pack_path)?;
    let mut idx_file = HashingFile::create(&pack_dir, hash)?;
    idx_file.write(&idx)?;
    let idx_checksum = idx_file.checksum()?;
    idx_file.write(idx_checksum.as_bytes())?;
    idx_file.persist(&idx_path)?;
    Ok(pack_path)
}

/// One pack entry: the type-and-size header, then the zlib stream of `data`.
fn pack_entry(kind: Kind, data: &[u8]) -> std::io::Result<Vec<u8>> {
    let type_bits: u8 = match kind {
        Kind::Commit => 1,
        Kind::Tree => 2,
        Kind::Blob => 3,
        Kind::Tag => 4,
    };
    let mut out = Vec::with_capacity(16 + data.len() / 2);
    let mut size = data.len() as u64;
    let mut byte = (type_bits << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size != 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
    deflate(data, &mut out)?;
    Ok(out)
}

/// Appends the zlib stream of `data` to `out`, with a compressor kept by the thread: a
/// new one per object cleared its tables first (half of the compressing, a staged
/// preview of 870 small files being mostly small objects).
fn deflate(data: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    use gix::zlib::stream::deflate::Compress;
    use gix::zlib::stream::deflate::FlushCompress;
    use gix::zlib::Status;
    thread_local! {
        static COMPRESS: std::cell::RefCell<Option<Compress>> = const { std::cell::RefCell::new(None) };
    }
    COMPRESS.with(|cell| {
        let mut slot = cell.borrow_mut();
        let z = slot.get_or_insert_with(|| Compress::new(gix::zlib::Compression::BEST_SPEED));
        z.reset();
        let mut input = data;
        let mut buf = [0u8; 8192];
        loop {
            let (read, written) = (z.total_in(), z.total_out());
            let status = z
                .compress(input, &mut buf, FlushCompress::Finish)
                .map_err(std::io::Error::other)?;
            out.extend_from_slice(&buf[..(z.total_out() - written) as usize]);
            input = &input[(z.total_in() - read) as usize..];
            match status {
                Status::StreamEnd => return Ok(()),
                Status::Ok | Status::BufError if z.total_in() > read || z.total_out() > written => {
                }
                Status::Ok | Status::BufError => {
                    return Err(std::io::Error::other("the compressor made no progress"))
                }
            }
        }
    })
}

/// A temporary file in the pack folder, read-only as git keeps packs, that hashes
/// what is written to it.
struct HashingFile {
    file: std::io::BufWriter<tempfile::NamedTempFile>,
    hasher: gix::hash::Hasher,
    written: u64,
}

impl HashingFile {
    fn create(dir: &Path, hash: gix::hash::Kind) -> Result<HashingFile, Error> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("tmp_pack_");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o444));
        }
        let file = builder
            .tempfile_in(dir)
            .map_err(Error::io("create a file in", dir))?;
        Ok(HashingFile {
            file: std::io::BufWriter::with_capacity(1 << 16, file),
            hasher: gix::hash::hasher(hash),
            written: 0,
        })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        let written = self.file.write_all(bytes);
        written.map_err(|e| Error::io("write", self.file.get_ref().path())(e))
    }

    /// The hash of everything written so far.
    fn checksum(&self) -> Result<ObjectId, Error> {
        self.hasher
            .clone()
            .try_finalize()
            .map_err(|e| Error::Corrupt(format!("cannot hash a pack: {e}")))
    }

    /// Renames the file to `to`. An existing `to` has the same content: its name is
    /// a checksum.
    fn persist(self, to: &Path) -> Result<(), Error> {
        let file = self
            .file
            .into_inner()
            .map_err(|e| Error::io("write", to)(e.into_error()))?;
        match file.persist_noclobber(to) {
            Ok(_) => Ok(()),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(Error::io("write", to)(e.error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn pack_round_trip(format: &str) {
        let dir = tempfile::tempdir().expect("tempdir");
        git(
            dir.path(),
            &["init", "-q", &format!("--object-format={format}")],
        );
        let repo = gix::open(dir.path()).expect("open");
        let mut batch = ObjectBatch::new(&repo);
        let mut blobs = Vec::new();
        // Sizes around the header's 4- and 7-bit size steps, plus an incompressible one.
        let noise: Vec<u8> = (0..70_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut contents: Vec<Vec<u8>> = (0..PACK_THRESHOLD + 20)
            .map(|i| format!("file {i}\n").repeat(i % 40).into_bytes())
            .collect();
        contents.push(noise);
        contents.push(Vec::new());
        for c in &contents {
            blobs.push(batch.add(Kind::Blob, Cow::Borrowed(c)).expect("add"));
        }
        // A repeat is not stored twice.
        batch
            .add(Kind::Blob, Cow::Borrowed(&contents[5]))
            .expect("add");
        let written = batch.write().expect("write");
        let Written::Pack(pack, n) = written else {
            panic!("expected a pack, got {written:?}");
        };
        let distinct: HashSet<&Vec<u8>> = contents.iter().collect();
        assert_eq!(n, distinct.len(), "repeats are stored once");
        let idx = pack.with_extension("idx");
        let listing = git(
            dir.path(),
            &["verify-pack", "-v", idx.to_str().expect("utf8")],
        );
        assert!(listing.contains(&format!("{}", blobs[7])), "{listing}");
        for (id, c) in blobs.iter().zip(&contents) {
            let out = std::process::Command::new("git")
                .args(["cat-file", "blob", &id.to_string()])
                .current_dir(dir.path())
                .output()
                .expect("git runs");
            assert_eq!(&out.stdout, c);
        }
        git(dir.path(), &["fsck", "--strict", "--unreachable"]);
        // gix in a fresh handle reads them too.
        let again = gix::open(dir.path()).expect("open");
        let blob = again.find_blob(blobs[9]).expect("find");
        assert_eq!(blob.data, contents[9]);
    }

    #[test]
    fn many_objects_become_one_valid_pack_sha1() {
        pack_round_trip("sha1");
    }

    #[test]
    fn many_objects_become_one_valid_pack_sha256() {
        pack_round_trip("sha256");
    }

    #[test]
    fn few_objects_stay_loose_and_known_objects_are_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        git(dir.path(), &["init", "-q"]);
        let known = git(dir.path(), &["hash-object", "-w", "--stdin"]);
        let repo = gix::open(dir.path()).expect("open");
        let mut batch = ObjectBatch::new(&repo);
        let id = batch.add(Kind::Blob, Cow::Borrowed(b"")).expect("add");
        assert_eq!(id.to_string(), known.trim());
        batch.add(Kind::Blob, Cow::Borrowed(b"new\n")).expect("add");
        assert_eq!(batch.write().expect("write"), Written::Loose(1));
        let loose = git(dir.path(), &["count-objects"]);
        assert!(loose.starts_with("2 objects"), "{loose}");
    }
}
