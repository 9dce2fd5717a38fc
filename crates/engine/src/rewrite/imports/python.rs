//! Python: a new import goes into its group, as isort and ruff's `I` rules group them
//! (`__future__`, the standard library, third party, first party, relative), sorted
//! among its group's statements, so that a sorted file stays sorted (ruff's I001).

use std::ops::Range;

use super::write::line_ending;
use super::write::line_start;
use super::write::splice;
use super::Import;

/// Top-level modules of the standard library (Python 3.11's `sys.stdlib_module_names`,
/// private ones aside).
const STDLIB: &[&str] = &[
    "abc",
    "aifc",
    "antigravity",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "idlelib",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pydoc_data",
    "pyexpat",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "this",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "turtledemo",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

/// A section of isort's order.
fn section(module: &str) -> u8 {
    let top = module.split('.').next().unwrap_or("");
    match module {
        "__future__" => 0,
        _ if module.starts_with('.') => 4,
        _ if STDLIB.binary_search(&top).is_ok() => 1,
        _ => 2,
    }
}

/// One group of the file's leading imports: statements with no blank line between them.
struct Group {
    section: u8,
    /// Each statement's range, whether it is a `from` import, and its module.
    stmts: Vec<(Range<usize>, bool, String)>,
}

/// The leading imports of the file, grouped: a run of imports with only comments
/// between them, split at blank lines.
fn groups(src: &str, have: &[Import]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    let mut last_end: Option<usize> = None;
    for import in have {
        if last_end.is_some_and(|end| import.stmt.start < end) {
            continue; // another name of the same statement
        }
        let stmt = (
            import.stmt.clone(),
            src[import.stmt.clone()].starts_with("from"),
            import.module.clone(),
        );
        match last_end {
            None => out.push(Group {
                section: 0,
                stmts: vec![stmt],
            }),
            Some(end) => {
                let gap = &src[end..import.stmt.start];
                let only_comments = gap
                    .lines()
                    .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
                if !only_comments {
                    break;
                }
                let blank = gap.lines().skip(1).any(|l| l.trim().is_empty());
                match (blank, out.last_mut()) {
                    (false, Some(group)) => group.stmts.push(stmt),
                    _ => out.push(Group {
                        section: 0,
                        stmts: vec![stmt],
                    }),
                }
            }
        }
        last_end = Some(import.stmt.end);
    }
    // A group's section is its first statement's; of two groups of modules that are
    // not the standard library's, the second is the project's own.
    let mut third_party_seen = false;
    for group in &mut out {
        group.section = section(&group.stmts[0].2);
        if group.section == 2 {
            if third_party_seen {
                group.section = 3;
            }
            third_party_seen = true;
        }
    }
    out
}

/// How isort orders a statement within its section: `import m` before `from m import`,
/// then by module, case aside.
fn key(from: bool, module: &str) -> (bool, String) {
    (from, module.to_lowercase())
}

/// `text`, the new import of `want`, put into its group of the file's leading imports
/// (or a new group of its own between the others); `None` when the file has none.
pub(super) fn insert_grouped(
    src: &str,
    have: &[Import],
    want: &Import,
    text: &str,
) -> Option<String> {
    let groups = groups(src, have);
    let eol = line_ending(src);
    let top = |m: &str| m.split('.').next().unwrap_or("").to_string();
    let want_top = top(&want.module);
    let mine = groups
        .iter()
        .find(|g| !want.module.starts_with('.') && g.stmts.iter().any(|s| top(&s.2) == want_top))
        .map(|g| g.section)
        .unwrap_or_else(|| section(&want.module));
    let after_line = |at: usize| src[at..].find('\n').map_or(src.len(), |i| at + i + 1);
    if let Some(group) = groups.iter().find(|g| g.section == mine) {
        let from = text.trim_start().starts_with("from");
        let new_key = key(from, &want.module);
        let later = group
            .stmts
            .iter()
            .find(|s| mine != 4 && key(s.1, &s.2) > new_key);
        return Some(match later {
            Some(next) => {
                let at = line_start(src, next.0.start);
                splice(src, at..at, &format!("{text}{eol}"))
            }
            None => {
                let last = group.stmts.last()?;
                let at = after_line(last.0.end);
                let lead = if at == src.len() && !src.ends_with('\n') {
                    eol
                } else {
                    ""
                };
                splice(src, at..at, &format!("{lead}{text}{eol}"))
            }
        });
    }
    if let Some(next) = groups.iter().find(|g| g.section > mine) {
        let at = line_start(src, next.stmts[0].0.start);
        return Some(splice(src, at..at, &format!("{text}{eol}{eol}")));
    }
    let last = groups.last()?.stmts.last()?;
    let at = after_line(last.0.end);
    let lead = if at == src.len() && !src.ends_with('\n') {
        eol
    } else {
        ""
    };
    Some(splice(src, at..at, &format!("{lead}{eol}{text}{eol}")))
}
