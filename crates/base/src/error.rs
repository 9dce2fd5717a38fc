/*!
Error classification shared by every engine.

Each engine has its own typed error enum; all of them implement [`Classify`], which
gives a stable machine-readable code (for `--json`) and the process exit class. The
binary renders an error once, at the edge, from these two facts plus `Display`.
*/

use std::fmt;

/// Process exit classes, as documented in the user guide's exit-code table (docs/src/exit-codes.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[repr(u8)]
pub enum Exit {
    /// Done.
    Ok = 0,
    /// Nothing found, or something would change (`grep`, `scan --check`).
    NothingFound = 1,
    /// Bad input: usage, pattern, template, patch syntax, rule file, unknown id.
    BadInput = 2,
    /// A touched file changed since the preview was staged.
    Stale = 3,
    /// Refused for safety: a path outside the tree, under `.git/`, an overwrite.
    Refused = 4,
    /// A patch chunk could not be placed (no match, or ambiguous).
    Unplaceable = 5,
    /// The repository is locked by another astedit process.
    Locked = 6,
    /// A bug or an environment failure (I/O, git object database).
    Internal = 70,
}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// Implemented by every engine error: a stable code string and an exit class.
pub trait Classify: std::error::Error {
    /// A stable, kebab-case identifier, e.g. `stale`, `bad-pattern`.
    fn code(&self) -> &'static str;
    /// The exit class this error maps to.
    fn exit(&self) -> Exit;
    /// An optional line telling the user what to do next.
    fn hint(&self) -> Option<String> {
        None
    }
    /// Machine-readable detail for `--json` (e.g. the stale paths), beside the message.
    fn details(&self) -> Option<serde_json::Value> {
        None
    }
}

/// The one error type the binary deals with: any engine error, classified.
pub struct Error {
    inner: Box<dyn ClassifiedError>,
}

/// Object-safe union of `Classify` and `Send + Sync`, with a way back to the concrete type.
pub trait ClassifiedError: Classify + Send + Sync + 'static {
    fn as_any(&self) -> &dyn std::any::Any;
}
impl<T: Classify + Send + Sync + 'static> ClassifiedError for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Error {
    pub fn new<E: Classify + Send + Sync + 'static>(err: E) -> Self {
        Error {
            inner: Box::new(err),
        }
    }
    pub fn code(&self) -> &'static str {
        self.inner.code()
    }
    pub fn exit(&self) -> Exit {
        self.inner.exit()
    }
    pub fn hint(&self) -> Option<String> {
        self.inner.hint()
    }
    pub fn details(&self) -> Option<serde_json::Value> {
        self.inner.details()
    }
    /// The causes below the top-level message, outermost first. A cause whose text
    /// begins the message above it (an error that shows its inner error first, as
    /// `txn::Error::AfterSplit` does) is not repeated.
    pub fn causes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut above = self.inner.to_string();
        let mut cur = std::error::Error::source(&*self.inner);
        while let Some(e) = cur {
            let text = e.to_string();
            let shown = above
                .strip_prefix(&text)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('\n'));
            if !shown {
                out.push(text.clone());
            }
            above = text;
            cur = e.source();
        }
        out
    }
    /// Downcasts to a concrete engine error, e.g. to read a stale report.
    pub fn downcast_ref<E: Classify + 'static>(&self) -> Option<&E> {
        self.inner.as_any().downcast_ref::<E>()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.inner, f)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({}: {})", self.code(), self)
    }
}

impl<E: Classify + Send + Sync + 'static> From<E> for Error {
    fn from(err: E) -> Self {
        Error::new(err)
    }
}

/// A generic error for command-line misuse found after clap has parsed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl Classify for UsageError {
    fn code(&self) -> &'static str {
        "usage"
    }
    fn exit(&self) -> Exit {
        Exit::BadInput
    }
}

/// An I/O failure on a named path.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {path}")]
pub struct IoError {
    pub action: &'static str,
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

impl Classify for IoError {
    fn code(&self) -> &'static str {
        "io"
    }
    fn exit(&self) -> Exit {
        Exit::Internal
    }
}

/// A file or folder the user named on the command line that cannot be used (missing,
/// a folder where a file is wanted, unreadable, not UTF-8): bad input, exit 2. Other
/// failures reading it (a disk error) stay environment failures, exit 70.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {path}")]
pub struct InputError {
    pub action: &'static str,
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

/// The stable code of a user-named file that cannot be used, `None` for an
/// environment failure (see [`InputError`]).
pub fn input_error_code(source: &std::io::Error) -> Option<&'static str> {
    use std::io::ErrorKind;
    match source.kind() {
        ErrorKind::NotFound => Some("input-not-found"),
        ErrorKind::IsADirectory => Some("input-is-a-folder"),
        ErrorKind::NotADirectory => Some("input-not-a-folder"),
        ErrorKind::PermissionDenied => Some("input-unreadable"),
        ErrorKind::InvalidData => Some("input-not-utf8"),
        _ => None,
    }
}

impl Classify for InputError {
    fn code(&self) -> &'static str {
        input_error_code(&self.source).unwrap_or("io")
    }
    fn exit(&self) -> Exit {
        match input_error_code(&self.source) {
            Some(_) => Exit::BadInput,
            None => Exit::Internal,
        }
    }
}
