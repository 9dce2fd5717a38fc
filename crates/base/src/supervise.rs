/*!
The supervisor a user's command runs under (`verify`'s check, a command preview's
command): git-astedit re-executed ([`main_if_asked`], before anything else the binary
does), which starts the command and sees to it that nothing the command started
outlives the git-astedit that asked for it.

On Linux the supervisor is a child subreaper (`PR_SET_CHILD_SUBREAPER`): every process
the command starts, one that left its process group or its session (`setsid`)
included, stays its descendant, and is adopted by it when its own parent ends. It
learns that git-astedit ended — however it ended, SIGKILL included — from the end of
file on the socket that is its standard input (git-astedit holds the other end), and
from `PR_SET_PDEATHSIG` (set in the thread that starts it, which waits for it). Then,
and as soon as the command itself ends, it kills the command's process group and
every process left under it, reports how the command ended, and (when git-astedit is
gone) removes the worktree it ran in.

Elsewhere (other unixes) the supervisor kills the command's process group only: a
process that left the group (a `setsid` daemon) escapes. On other systems, and when
the running program is not git-astedit (a program embedding the library), the command
is started directly, in a process group of its own, as it was before supervision.
*/

use std::path::Path;
use std::process::Command;

/// The first argument that makes git-astedit a supervisor. Never a subcommand's name.
pub const MARKER: &str = "__astedit-supervise";

/// The name prefix of the temporary folders commands run in (followed by the pid of
/// the git-astedit that made it): a supervisor removes no other folder.
pub const WORKTREE_PREFIX: &str = "astedit-verify-";

/// How a supervised command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
}

impl From<std::process::ExitStatus> for Ended {
    fn from(status: std::process::ExitStatus) -> Ended {
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal = None;
        Ended {
            code: status.code(),
            signal,
        }
    }
}

/// A command started by [`spawn`].
pub struct Supervised {
    inner: Inner,
}

enum Inner {
    #[cfg(unix)]
    Supervisor {
        child: std::process::Child,
        socket: std::os::unix::net::UnixStream,
    },
    Direct(std::process::Child),
}

/// Starts `argv` under a supervisor (see the module docs). `configure` sets what the
/// command gets (folder, environment, stdout and stderr: the supervisor passes them
/// on); `cleanup` is the folder the supervisor removes if git-astedit dies first. A
/// command that cannot be started is an error here, as from `Command::spawn`.
pub fn spawn(
    argv: &[String],
    cleanup: Option<&Path>,
    configure: impl Fn(&mut Command) -> std::io::Result<()>,
) -> std::io::Result<Supervised> {
    if argv.is_empty() {
        return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
    }
    #[cfg(unix)]
    if let Some(exe) = unix::supervisor_exe() {
        if let Some(started) = unix::spawn(&exe, argv, cleanup, &configure) {
            return started;
        }
    }
    let _ = cleanup;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    configure(&mut cmd)?;
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    crate::cancel::end_with_parent(&mut cmd, crate::cancel::ParentDeath::Kill);
    Ok(Supervised {
        inner: Inner::Direct(cmd.spawn()?),
    })
}

impl Supervised {
    /// How the command ended, once it has and what it started is gone.
    pub fn try_wait(&mut self) -> std::io::Result<Option<Ended>> {
        match &mut self.inner {
            #[cfg(unix)]
            Inner::Supervisor { child, socket } => match child.try_wait()? {
                None => Ok(None),
                Some(status) => Ok(Some(unix::report(socket, status))),
            },
            Inner::Direct(child) => {
                let ended = child.try_wait()?.map(Ended::from);
                if ended.is_some() {
                    kill_group(child);
                }
                Ok(ended)
            }
        }
    }

    /// Kills the command and everything it started (a timeout, a cancel) and waits.
    pub fn stop(&mut self) -> std::io::Result<Ended> {
        match &mut self.inner {
            #[cfg(unix)]
            Inner::Supervisor { child, socket } => {
                use std::io::Write as _;
                // Either tells it; a supervisor that already ended reads neither.
                let _ = socket.write_all(b"stop\n");
                let _ = socket.shutdown(std::net::Shutdown::Write);
                let status = child.wait()?;
                Ok(unix::report(socket, status))
            }
            Inner::Direct(child) => {
                kill_group(child);
                Ok(child.wait()?.into())
            }
        }
    }
}

/// Kills the process group the child leads, then the child.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the group the child leads; it
        // touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

/// Runs the supervisor when the process was started as one (its first argument is
/// [`MARKER`]), returning the exit code for `main`; `None` otherwise.
pub fn main_if_asked() -> Option<std::process::ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != MARKER {
        return None;
    }
    #[cfg(unix)]
    return Some(unix::supervise(args.collect()));
    #[cfg(not(unix))]
    return Some(std::process::ExitCode::FAILURE);
}

#[cfg(unix)]
mod unix {
    use std::ffi::OsString;
    use std::io::Read as _;
    use std::io::Write as _;
    use std::os::fd::FromRawFd as _;
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;
    use std::os::unix::process::CommandExt as _;
    use std::path::Path;
    use std::path::PathBuf;
    use std::process::Command;
    use std::process::ExitCode;
    use std::process::Stdio;
    use std::sync::atomic::AtomicBool;
    use std::sync::atomic::Ordering;

    use super::Ended;
    use super::Inner;
    use super::Supervised;

    /// The program to re-execute as the supervisor: this one, when it is git-astedit
    /// (on Linux through `/proc/self/exe`, the very binary even if replaced since).
    pub(super) fn supervisor_exe() -> Option<PathBuf> {
        let exe = std::env::current_exe().ok()?;
        let name = exe.file_name()?.to_str()?;
        if !name.starts_with("git-astedit") {
            return None;
        }
        #[cfg(target_os = "linux")]
        return Some(PathBuf::from("/proc/self/exe"));
        #[cfg(not(target_os = "linux"))]
        return Some(exe);
    }

    /// Starts the supervisor; `None` when it could not be started at all (the caller
    /// starts the command directly), else how starting the command went.
    pub(super) fn spawn(
        exe: &Path,
        argv: &[String],
        cleanup: Option<&Path>,
        configure: &dyn Fn(&mut Command) -> std::io::Result<()>,
    ) -> Option<std::io::Result<Supervised>> {
        let (ours, theirs) = match UnixStream::pair() {
            Ok(pair) => pair,
            Err(e) => return Some(Err(e)),
        };
        let mut cmd = Command::new(exe);
        cmd.arg(super::MARKER)
            .arg(
                cleanup
                    .map(|p| p.as_os_str().to_owned())
                    .unwrap_or_default(),
            )
            .arg("--")
            .args(argv);
        if let Err(e) = configure(&mut cmd) {
            return Some(Err(e));
        }
        cmd.stdin(Stdio::from(OwnedFd::from(theirs)))
            .process_group(0);
        // SIGTERM, which it catches to clean up, when the thread starting it ends.
        crate::cancel::end_with_parent(&mut cmd, crate::cancel::ParentDeath::Term);
        let spawned = cmd.spawn();
        // Our copy of its end goes now: its end of file must mean we are gone.
        drop(cmd);
        let mut child = spawned.ok()?;
        let mut socket = ours;
        match read_line(&mut socket).as_deref() {
            Some("started") => Some(Ok(Supervised {
                inner: Inner::Supervisor { child, socket },
            })),
            Some(line) if line.starts_with("failed ") => {
                let _ = child.wait();
                let errno = line["failed ".len()..].parse().unwrap_or(libc::EIO);
                Some(Err(std::io::Error::from_raw_os_error(errno)))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                None
            }
        }
    }

    /// One line the supervisor wrote (without its newline); `None` at end of file.
    fn read_line(socket: &mut UnixStream) -> Option<String> {
        let mut line = Vec::new();
        let mut byte = [0u8];
        loop {
            match socket.read(&mut byte) {
                Ok(1) if byte[0] == b'\n' => break,
                Ok(1) => line.push(byte[0]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                _ if line.is_empty() => return None,
                _ => break,
            }
        }
        Some(String::from_utf8_lossy(&line).into_owned())
    }

    /// How the command ended, as the supervisor (which ended with `status`) reported.
    pub(super) fn report(socket: &mut UnixStream, status: std::process::ExitStatus) -> Ended {
        while let Some(line) = read_line(socket) {
            let number = |prefix: &str| line.strip_prefix(prefix)?.parse::<i32>().ok();
            if let Some(code) = number("exited ") {
                return Ended {
                    code: Some(code),
                    signal: None,
                };
            }
            if let Some(signal) = number("signaled ") {
                return Ended {
                    code: None,
                    signal: Some(signal),
                };
            }
        }
        // A supervisor that died before reporting (killed itself): its own status.
        status.into()
    }

    /// A stop signal came (SIGTERM: git-astedit is gone, through `PR_SET_PDEATHSIG`).
    static STOPPED: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_stop(_: libc::c_int) {
        STOPPED.store(true, Ordering::SeqCst);
    }

    /// The supervisor's life (see the module docs). `args`: the folder to remove if
    /// git-astedit dies first (empty: none), `--`, the command.
    pub(super) fn supervise(args: Vec<OsString>) -> ExitCode {
        if args.len() < 3 || args[1] != "--" {
            return ExitCode::FAILURE;
        }
        // SAFETY: getppid(2) has no preconditions.
        let parent = unsafe { libc::getppid() };
        become_reaper();
        catch_stop_signals();
        // SAFETY: fd 0 is the socket git-astedit passed as our stdin; we own it now.
        let mut socket = UnixStream::from(unsafe { OwnedFd::from_raw_fd(0) });
        let mut cmd = Command::new(&args[2]);
        cmd.args(&args[3..]).stdin(Stdio::null()).process_group(0);
        // Killed with us should we be killed outright (its descendants then escape).
        crate::cancel::end_with_parent(&mut cmd, crate::cancel::ParentDeath::Kill);
        let child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                let _ = writeln!(socket, "failed {errno}");
                return ExitCode::FAILURE;
            }
        };
        let _ = writeln!(socket, "started");
        let Ok(pid) = libc::pid_t::try_from(child.id()) else {
            return ExitCode::FAILURE;
        };
        let (status, told) = watch(&mut socket, pid);
        let status = kill_all(pid, status);
        let line = if libc::WIFSIGNALED(status) {
            format!("signaled {}", libc::WTERMSIG(status))
        } else {
            format!("exited {}", libc::WEXITSTATUS(status))
        };
        let _ = writeln!(socket, "{line}");
        // SAFETY: getppid(2) has no preconditions.
        let orphaned = !told || unsafe { libc::getppid() } != parent;
        let cleanup = PathBuf::from(&args[0]);
        if orphaned && is_worktree(&cleanup) {
            let _ = std::fs::remove_dir_all(&cleanup);
        }
        ExitCode::SUCCESS
    }

    /// Waits until the command ends (its wait status), git-astedit says stop, or it is
    /// gone (end of file, a stop signal). Returns the status if the command ended, and
    /// whether git-astedit said stop itself.
    fn watch(socket: &mut UnixStream, pid: libc::pid_t) -> (Option<libc::c_int>, bool) {
        let fd = std::os::fd::AsRawFd::as_raw_fd(socket);
        loop {
            if let Some(status) = reap(pid) {
                return (Some(status), true);
            }
            if STOPPED.load(Ordering::SeqCst) {
                return (None, false);
            }
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for the duration of the call.
            let ready = unsafe { libc::poll(&mut poll, 1, 50) };
            if ready > 0 {
                let mut buf = [0u8; 64];
                match socket.read(&mut buf) {
                    Ok(0) => return (None, false),
                    Ok(n) if buf[..n].contains(&b'\n') => return (None, true),
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return (None, false),
                }
            }
        }
    }

    /// Reaps every child that has ended (adopted ones included); the wait status of
    /// `pid` if it was among them.
    fn reap(pid: libc::pid_t) -> Option<libc::c_int> {
        let mut found = None;
        loop {
            let mut status = 0;
            // SAFETY: waitpid(2) writes the status to our local.
            let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if r <= 0 {
                return found;
            }
            if r == pid {
                found = Some(status);
            }
        }
    }

    /// Kills the command's group and every process left under us, until none is left;
    /// returns the command's wait status (`status` if it was reaped already).
    fn kill_all(pid: libc::pid_t, mut status: Option<libc::c_int>) -> libc::c_int {
        loop {
            // SAFETY: kill(2) signals the command's group and our children by id; it
            // touches no memory of ours.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
            if status.is_none() {
                // SAFETY: as above.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            for child in adopted() {
                // SAFETY: as above.
                unsafe {
                    libc::kill(child, libc::SIGKILL);
                }
            }
            loop {
                let mut st = 0;
                // SAFETY: waitpid(2) writes the status to our local.
                let r = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
                if r == pid {
                    status = Some(st);
                } else if r == 0 {
                    break;
                } else if r < 0 {
                    // No child left at all.
                    return status.unwrap_or(libc::SIGKILL);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Our children now (adopted orphans included): read from `/proc` on Linux;
    /// elsewhere nothing (the command's group is all we kill there).
    fn adopted() -> Vec<libc::pid_t> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: getpid(2) has no preconditions.
            let me = unsafe { libc::getpid() };
            let Ok(entries) = std::fs::read_dir("/proc") else {
                return Vec::new();
            };
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
                .filter(|pid| parent_of(*pid) == Some(me))
                .collect()
        }
        #[cfg(not(target_os = "linux"))]
        Vec::new()
    }

    /// The parent of `pid` from `/proc/PID/stat` (after the command name, which may
    /// hold anything, in parentheses: the state, then the parent).
    #[cfg(target_os = "linux")]
    fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
        let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        let after = stat.iter().rposition(|b| *b == b')')?;
        let rest = std::str::from_utf8(&stat[after + 1..]).ok()?;
        rest.split_whitespace().nth(1)?.parse().ok()
    }

    fn become_reaper() {
        #[cfg(target_os = "linux")]
        // SAFETY: prctl(2) with PR_SET_CHILD_SUBREAPER sets a flag of this process.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
        }
    }

    fn catch_stop_signals() {
        let handler: extern "C" fn(libc::c_int) = on_stop;
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            // SAFETY: sigaction with a zeroed struct filled in here; the handler only
            // stores to an atomic, which is async-signal-safe. No SA_RESTART: the
            // signal interrupts the wait.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = handler as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }

    /// Whether `path` is a folder commands run in (by its name, in the temporary
    /// folder), the only kind a supervisor removes.
    fn is_worktree(path: &Path) -> bool {
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        path.parent().map(canonical) == Some(canonical(&std::env::temp_dir()))
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(super::WORKTREE_PREFIX))
    }
}
