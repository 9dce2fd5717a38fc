//! gc (in progress).
use super::Error;
use crate::repo::Repo;

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct GcReport {
    pub previews: Vec<String>,
    pub events: usize,
}

pub fn parse_age(s: &str) -> Result<i64, Error> {
    Err(Error::BadAge(s.to_string()))
}

pub fn gc(_repo: &Repo, _expire: i64) -> Result<GcReport, Error> {
    Err(Error::Corrupt("gc is not implemented yet".into()))
}
