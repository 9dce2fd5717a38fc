/*!
The errors of listing files, and the bound on `--max-filesize`.
*/

use super::closest_language;
use super::language_names;
use super::literal_pathspecs;

use super::MAX_FILE_SIZE_CEILING;
use crate::error::Classify;
use crate::error::Exit;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot list the files of the work tree")]
    Walk(#[source] Box<gix::Error>),
    #[error("cannot read the index")]
    Index(#[source] Box<gix::Error>),
    #[error("unknown language '{0}'")]
    UnknownLanguage(String),
    #[error("bad pathspec")]
    Pathspec(#[source] crate::repo::Error),
    /// Like `git add`: a pathspec naming nothing is a mistake (a typo, the wrong
    /// folder), and a run that checks nothing must not look like a clean one.
    #[error("{}", no_match_message(.0))]
    PathspecNoMatch(Vec<String>),
    #[error(
        "--max-filesize {0} is above the ceiling of {ceiling} bytes (64 MiB): parsing takes about 70 times a file's size in memory",
        ceiling = MAX_FILE_SIZE_CEILING
    )]
    MaxFileSizeTooLarge(u64),
    #[error("--globs '{0}' is not a glob: {1}")]
    BadGlob(String, String),
    #[error("cannot read the blob of {path}")]
    Blob {
        path: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Refuses a size limit above [`MAX_FILE_SIZE_CEILING`], before any file is read.
pub fn check_max_file_size(limit: u64) -> Result<(), Error> {
    if limit > MAX_FILE_SIZE_CEILING {
        return Err(Error::MaxFileSizeTooLarge(limit));
    }
    Ok(())
}

fn no_match_message(specs: &[String]) -> String {
    let quoted: Vec<String> = specs.iter().map(|s| format!("'{s}'")).collect();
    match quoted.as_slice() {
        [one] => format!("pathspec {one} did not match any files"),
        many => format!("pathspecs {} did not match any files", many.join(", ")),
    }
}

impl Classify for Error {
    fn code(&self) -> &'static str {
        match self {
            Error::Walk(_) => "file-walk",
            Error::Index(_) | Error::Blob { .. } => "index",
            Error::UnknownLanguage(_) => "unknown-language",
            Error::Pathspec(e) => e.code(),
            Error::PathspecNoMatch(_) => "pathspec-no-match",
            Error::MaxFileSizeTooLarge(_) => "max-filesize-too-large",
            Error::BadGlob(..) => "bad-glob",
        }
    }
    fn exit(&self) -> Exit {
        match self {
            Error::UnknownLanguage(_) => Exit::BadInput,
            // gix reports bad pathspecs through the walk.
            Error::Walk(_) => Exit::BadInput,
            Error::Index(_) | Error::Blob { .. } => Exit::Internal,
            Error::Pathspec(e) => e.exit(),
            Error::PathspecNoMatch(_) | Error::MaxFileSizeTooLarge(_) | Error::BadGlob(..) => {
                Exit::BadInput
            }
        }
    }
    fn details(&self) -> Option<serde_json::Value> {
        match self {
            Error::UnknownLanguage(name) => Some(serde_json::json!({
                "name": name,
                "suggestion": closest_language(name),
            })),
            _ => None,
        }
    }
    fn hint(&self) -> Option<String> {
        match self {
            Error::UnknownLanguage(name) => Some(match closest_language(name) {
                Some(near) => format!("did you mean {near}?"),
                None => format!("known languages: {}", language_names()),
            }),
            Error::MaxFileSizeTooLarge(_) => Some(format!(
                "use --max-filesize {MAX_FILE_SIZE_CEILING} or less; larger files are skipped and counted"
            )),
            Error::PathspecNoMatch(_) if literal_pathspecs() => Some(
                "GIT_LITERAL_PATHSPECS is set: pathspecs are exact paths, without globs or magic"
                    .to_string(),
            ),
            Error::PathspecNoMatch(_) => Some(
                "pathspecs are relative to the current folder; `git ls-files` lists the files git sees"
                    .to_string(),
            ),
            _ => None,
        }
    }
}
