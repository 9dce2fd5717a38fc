//! The page's answers from the review model (`ops::review`): one [`Model`] held for
//! the session (sites derived once), its decisions written through it, and the apply
//! made as `git astedit apply ID` makes it (`ops::review::apply::run`: the accepted
//! sites applied, the rejected dropped, the undecided left pending).

use git_astedit::ops::apply::ApplyOptions;
use git_astedit::ops::apply::ApplyRequest;
use git_astedit::ops::review::Decision;
use git_astedit::ops::review::Model;
use git_astedit::ops::review::Target;
use git_astedit::repo::Repo;
use git_astedit::report::ResolveReport;
use git_astedit::Error;

/// Who the page's decisions are recorded as (the batch's author).
pub const BY: &str = "review page";

pub struct Review<'r> {
    repo: &'r Repo,
    model: Model,
    /// The apply's report, once made.
    pub applied: Option<ResolveReport>,
}

impl<'r> Review<'r> {
    pub fn new(repo: &'r Repo, model: Model) -> Review<'r> {
        Review {
            repo,
            model,
            applied: None,
        }
    }
}

fn value(v: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(v).expect("a report serializes to JSON")
}

impl super::Backend for Review<'_> {
    fn review(&mut self) -> Result<serde_json::Value, Error> {
        Ok(value(&self.model.review()))
    }

    fn sites(
        &mut self,
        group: &str,
        offset: usize,
        limit: usize,
    ) -> Result<serde_json::Value, Error> {
        Ok(value(&self.model.sites(group, offset, limit)?))
    }

    fn decide(
        &mut self,
        decisions: &[(Target, Option<Decision>)],
    ) -> Result<serde_json::Value, Error> {
        Ok(value(&self.model.decide(self.repo, decisions, BY)?))
    }

    fn apply(&mut self) -> Result<serde_json::Value, Error> {
        let request = ApplyRequest::whole(
            Some(self.model.preview_id().to_string()),
            ApplyOptions::default(),
        );
        let report = git_astedit::ops::review::apply::run(
            self.repo,
            &request,
            &git_astedit::cancel::Cancel::never(),
        )?;
        let v = value(&report);
        self.applied = Some(report);
        Ok(v)
    }
}
