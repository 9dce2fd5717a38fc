//! The library's one error: git-astedit's classified error, carried as plain data.

use std::fmt;

/// Why a call failed: the same stable `code`, exit class, message and hint the CLI
/// prints (its `--json` error has the same `code`), and nothing changed on disk.
#[derive(Debug, Clone)]
pub struct Error {
    code: &'static str,
    exit: u8,
    message: String,
    causes: Vec<String>,
    hint: Option<String>,
}

impl Error {
    /// A stable, kebab-case identifier: `stale` (a touched file changed since the
    /// preview was staged), `locked`, `unknown-id`, `bad-pattern`, `run-not-allowed`,
    /// … (the codes of the CLI's `--json` errors).
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The exit code the CLI would end with: 2 bad input, 3 stale, 4 refused for
    /// safety, 5 a patch chunk not placed, 6 locked, 70 an internal or environment
    /// failure.
    pub fn exit_code(&self) -> u8 {
        self.exit
    }

    /// Whether a touched file changed since the preview was staged (nothing was
    /// written; stage the edit again, or refresh the preview with the CLI).
    pub fn is_stale(&self) -> bool {
        self.code == "stale"
    }

    /// The message, one line or a few, without the causes.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The causes below the message, outermost first.
    pub fn causes(&self) -> &[String] {
        &self.causes
    }

    /// What to do next, when there is a useful line to say.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// An error of the library's own checks (before any repository call).
    pub(crate) fn usage(message: impl Into<String>) -> Error {
        Error {
            code: "usage",
            exit: 2,
            message: message.into(),
            causes: Vec::new(),
            hint: None,
        }
    }
}

impl From<astedit_ops::Error> for Error {
    fn from(e: astedit_ops::Error) -> Error {
        Error {
            code: e.code(),
            exit: e.exit().code(),
            message: e.to_string(),
            causes: e.causes(),
            hint: e.hint(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        for cause in &self.causes {
            write!(f, ": {cause}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}
