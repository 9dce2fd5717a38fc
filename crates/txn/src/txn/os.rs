/*!
What the transaction store needs from the operating system beyond `std`, in one place:
permission bits, opening a file without following a link (or waiting on a FIFO), one
raw read into a buffer's spare room, advisory `flock`s, file identity, and symbolic
links as git stores them (the link's target as the blob).

Unix (Linux, macOS) has all of it. Elsewhere (Windows) each function has the fallback
the user guide's Reliability chapter (docs/src/reliability.md) states: permission bits are the read-only attribute,
links are not followed when opened, there is no `flock` (so a dead holder's lock is
reported with the command that clears it instead of being broken, as on a file system
without `flock`), file identity cannot be told (so nothing is broken on it), and a
symbolic link is written as a plain file holding its target, as git for Windows does
with `core.symlinks = false`.
*/

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::path::Path;

/// `flock` operations (the values of Linux and the BSDs).
pub const LOCK_SH: i32 = 1;
pub const LOCK_EX: i32 = 2;
pub const LOCK_NB: i32 = 4;

/// The permission bits (`0o777` at most) of a file.
pub fn perm_bits(meta: &Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o777
    }
    #[cfg(not(unix))]
    {
        if meta.permissions().readonly() {
            0o444
        } else {
            0o644
        }
    }
}

/// Sets exactly these permission bits on an open file.
pub fn set_perm_bits(file: &File, bits: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(bits))
    }
    #[cfg(not(unix))]
    {
        let mut perm = file.metadata()?.permissions();
        perm.set_readonly(bits & 0o222 == 0);
        file.set_permissions(perm)
    }
}

/// Options that create a file with these permission bits (filtered by the umask).
pub fn with_mode(options: &mut OpenOptions, bits: u32) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(bits)
    }
    #[cfg(not(unix))]
    {
        let _ = bits;
        options
    }
}

/// Opens `path` for reading unless it is a symbolic link; a FIFO does not block the
/// open. Windows opens a reparse point itself rather than its target, which the
/// caller's `is_file` check then turns away.
pub fn open_no_follow(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    }
    options.open(path)
}

/// One read into the spare capacity of `bytes` (which must have some), growing its
/// length by what was read; 0 at the end. Unix reads without zeroing the room first.
pub fn read_into_spare(file: &File, bytes: &mut Vec<u8>) -> io::Result<usize> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let spare = bytes.spare_capacity_mut();
        // SAFETY: `spare` is writable memory of `spare.len()` bytes owned by `bytes`;
        // the descriptor is open for the duration of the call.
        let n = unsafe {
            libc::read(
                file.as_raw_fd(),
                spare.as_mut_ptr().cast::<libc::c_void>(),
                spare.len(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        // SAFETY: the kernel wrote `n` bytes into the spare capacity.
        unsafe { bytes.set_len(bytes.len() + n) };
        Ok(n)
    }
    #[cfg(not(unix))]
    {
        use std::io::Read;
        let start = bytes.len();
        bytes.resize(bytes.capacity(), 0);
        let read = (&*file).read(&mut bytes[start..]);
        let n = *read.as_ref().unwrap_or(&0);
        bytes.truncate(start + n);
        read
    }
}

/// `flock(op)`: Ok(false) when it would block (with [`LOCK_NB`]); an error where there
/// is no `flock` (a file system without it, or Windows), which callers treat as "no
/// lock to be had and nothing to break".
pub fn flock(file: &File, op: i32) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        extern "C" {
            fn flock(
                fd: std::os::raw::c_int,
                operation: std::os::raw::c_int,
            ) -> std::os::raw::c_int;
        }
        loop {
            // SAFETY: `file` is an open descriptor for the duration of the call.
            if unsafe { flock(file.as_raw_fd(), op) } == 0 {
                return Ok(true);
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return Ok(false),
                _ => return Err(err),
            }
        }
    }
    #[cfg(not(unix))]
    {
        // Windows' LockFileEx would also bar every other process from reading the lock
        // file's contents, which is how a holder is judged: no flock at all is weaker
        // but keeps that protocol.
        let _ = (file, op);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// Whether two metadata describe the same file (device and inode); `None` where that
/// cannot be told.
pub fn same_file(a: &Metadata, b: &Metadata) -> Option<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(a.dev() == b.dev() && a.ino() == b.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        None
    }
}

/// A symbolic link's target as git stores it: the blob's bytes.
pub fn read_link_bytes(path: &Path) -> io::Result<Vec<u8>> {
    let target = std::fs::read_link(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(target.as_os_str().as_bytes().to_vec())
    }
    #[cfg(not(unix))]
    {
        // Git for Windows stores link targets with forward slashes.
        Ok(target.to_string_lossy().replace('\\', "/").into_bytes())
    }
}

/// Creates a symbolic link at `path` to the target a blob holds. Windows (where links
/// need a privilege) writes a plain file holding the target, as git for Windows does
/// with `core.symlinks = false`.
pub fn create_link(target: &[u8], path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), path)
    }
    #[cfg(not(unix))]
    {
        std::fs::write(path, target)
    }
}

/// Seconds since the epoch of the last change of a file's contents (0 when unknown).
pub fn mtime_secs(meta: &Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
