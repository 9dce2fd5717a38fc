//! Apply and undo (in progress).
use super::ApplyOptions;
use super::ApplyReport;
use super::Error;
use crate::repo::Repo;

#[derive(Debug, Clone, Default)]
pub struct UndoOptions {
    pub reason: Option<String>,
    pub agent: Option<String>,
}

pub fn apply(_repo: &Repo, _id: Option<&str>, _opts: &ApplyOptions) -> Result<ApplyReport, Error> {
    Err(Error::Corrupt("apply is not implemented yet".into()))
}

pub fn undo(_repo: &Repo, _id: Option<&str>, _opts: &UndoOptions) -> Result<ApplyReport, Error> {
    Err(Error::Corrupt("undo is not implemented yet".into()))
}
