/*!
The AST engine: patterns compiled once per language, a literal prefilter, matches, and
rewrites that also rewrite nested matches (DESIGN §4).

STUB: the signatures below are the contract the CLI codes against; bodies to come.
*/

use ast_grep_language::SupportLang;

use crate::error::Classify;
use crate::error::Exit;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid pattern '{pattern}': {detail}")]
    InvalidPattern { pattern: String, detail: String },
    #[error("pattern '{pattern}' does not parse as {lang}")]
    PatternDoesNotParse { pattern: String, lang: String },
    #[error("rewrite '{template}' uses ${var}, which pattern '{pattern}' does not define")]
    UndefinedMetavariable {
        pattern: String,
        template: String,
        var: String,
    },
    #[error("not implemented yet")]
    NotImplemented,
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::InvalidPattern { .. } => "bad-pattern",
            Error::PatternDoesNotParse { .. } => "pattern-does-not-parse",
            Error::UndefinedMetavariable { .. } => "undefined-metavariable",
            Error::NotImplemented => "internal",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::NotImplemented => Exit::Internal,
            _ => Exit::BadInput,
        }
    }
}

/// One match, positions 1-based (column in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// Byte range in the source.
    pub start_byte: usize,
    pub end_byte: usize,
    /// The matched text.
    pub text: String,
}

/// The result of searching one file.
#[derive(Debug, Clone, Default)]
pub struct FileMatches {
    pub matches: Vec<Match>,
    /// The file parsed with errors (it was still searched).
    pub has_parse_error: bool,
}

/// A search pattern compiled for one language.
pub struct Query {
    _lang: SupportLang,
}

impl Query {
    /// Compiles `pattern` for `lang`. `PatternDoesNotParse` means: skip this language.
    pub fn new(_pattern: &str, _lang: SupportLang) -> Result<Query, Error> {
        Err(Error::NotImplemented)
    }
    /// Text every match contains; a file without it cannot match.
    pub fn literal(&self) -> Option<&str> {
        None
    }
    /// Every match in `src`, in document order (nested ones included).
    pub fn find(&self, _src: &str) -> FileMatches {
        FileMatches::default()
    }
}

/// One rewrite op as the user typed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub pattern: String,
    pub rewrite: String,
}

/// One replacement, positions 1-based in the text the op ran on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub op: usize,
    pub line: usize,
    pub column: usize,
    pub before: String,
    pub after: String,
}

/// The result of rewriting one file with every op.
#[derive(Debug, Clone)]
pub struct FileRewrite {
    pub text: String,
    pub replacements: Vec<Replacement>,
    /// The file parsed cleanly before and with errors after.
    pub introduces_parse_error: bool,
    /// The file parsed with errors before the rewrite.
    pub had_parse_error: bool,
}

/// All ops compiled for one language.
pub struct Rewriter {
    _lang: SupportLang,
}

impl Rewriter {
    /// Compiles every op for `lang`; validates templates against patterns.
    pub fn new(_ops: &[Op], _lang: SupportLang) -> Result<Rewriter, Error> {
        Err(Error::NotImplemented)
    }
    /// Runs the ops in order on `src`; `None` when nothing changes.
    pub fn rewrite(&self, _src: &str) -> Result<Option<FileRewrite>, Error> {
        Err(Error::NotImplemented)
    }
}
