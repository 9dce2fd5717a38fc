//! GitLab through the GitLab CLI `glab`: merge requests stand for pull requests.
//!
//! A merge request's checks are its head pipeline's status (`success` passing,
//! `failed`/`canceled` failing, anything else pending); its review is read from
//! GitLab's approvals endpoint (`glab api projects/:id/merge_requests/IID/approvals`),
//! never from a merge status (a draft shows `draft_status`, open threads
//! `discussions_not_resolved`, either hiding a missing approval): `APPROVED` when GitLab
//! says `approved`, no approval is left and someone other than the author approved,
//! else `REVIEW_REQUIRED`. A merge request from another project (a fork) is never
//! one of ours.

use std::path::Path;

use super::call;
use super::json;
use super::last_line;
use super::plain;
use super::strings;
use super::FoundPr;
use super::FoundRepo;
use super::MergeHow;
use super::NewPr;
use crate::report::campaign::ForgeKind;
use crate::report::campaign::MergeMethod;
use crate::Error;

const GLAB: &str = "glab";

/// GitLab, through `glab`.
pub struct GitLab;

impl super::Forge for GitLab {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Gitlab
    }

    fn check(&self, workdir: &Path) -> Result<(), Error> {
        call(GLAB, workdir, &strings(&["--version"]))?;
        call(GLAB, workdir, &strings(&["auth", "status"]))?;
        Ok(())
    }

    fn find(&self, workdir: &Path, branch: &str) -> Result<Option<FoundPr>, Error> {
        plain("branch", branch)?;
        let args = vec![
            "mr".into(),
            "list".into(),
            format!("--source-branch={branch}"),
            "--all".into(),
            "--output=json".into(),
        ];
        let listed = json(GLAB, "mr list", &call(GLAB, workdir, &args)?)?;
        // `--source-branch` matches the name only: a fork's merge request from a branch
        // of the same name is listed too, and is never ours.
        let ours: Vec<&serde_json::Value> = listed
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| same_project(e))
            .collect();
        // Several merge requests can have had this source branch: an open one is the one.
        let open = |e: &&&serde_json::Value| e["state"].as_str() == Some("opened");
        let Some(first) = ours.iter().find(open).or_else(|| ours.first()) else {
            return Ok(None);
        };
        let Some(iid) = first["iid"].as_u64() else {
            return Ok(None);
        };
        // The list leaves out the pipeline: the view has it.
        let viewed = call(
            GLAB,
            workdir,
            &[
                "mr".into(),
                "view".into(),
                iid.to_string(),
                "--output=json".into(),
            ],
        )?;
        let e = json(GLAB, "mr view", &viewed)?;
        let e = if e.is_object() { &e } else { *first };
        if !same_project(e) {
            return Ok(None);
        }
        let Some(mut found) = found(e) else {
            return Ok(None);
        };
        // An open one's review, from the approvals endpoint. Finding it must not fail
        // with that call (`publish` and `pr` only look for the request): a review that
        // cannot be read is unknown, and unknown is not approved.
        if found.state == "OPEN" {
            match approval(workdir, iid, e) {
                Ok(review) => found.review = Some(review.into()),
                Err(why) => found.review_unknown = Some(why.to_string()),
            }
        }
        Ok(Some(found))
    }

    fn create(&self, workdir: &Path, new: &NewPr) -> Result<String, Error> {
        plain("branch", new.branch)?;
        let mut args = vec![
            "mr".into(),
            "create".into(),
            format!("--source-branch={}", new.branch),
            format!("--title={}", new.title),
            format!("--description={}", new.body),
        ];
        args.extend(new.labels.iter().map(|l| format!("--label={l}")));
        args.extend(new.reviewers.iter().map(|r| format!("--reviewer={r}")));
        if let Some(base) = new.base {
            args.push(format!("--target-branch={base}"));
        }
        if new.draft {
            args.push("--draft".into());
        }
        args.push("--yes".into());
        Ok(last_line(&call(GLAB, workdir, &args)?))
    }

    fn edit(&self, workdir: &Path, pr: &FoundPr, title: &str, body: &str) -> Result<(), Error> {
        let args = vec![
            "mr".into(),
            "update".into(),
            iid(pr)?,
            format!("--title={title}"),
            format!("--description={body}"),
        ];
        call(GLAB, workdir, &args).map(|_| ())
    }

    fn ready(&self, workdir: &Path, pr: &FoundPr) -> Result<(), Error> {
        let args = vec!["mr".into(), "update".into(), iid(pr)?, "--ready".into()];
        call(GLAB, workdir, &args).map(|_| ())
    }

    fn merge(&self, workdir: &Path, pr: &FoundPr, how: &MergeHow) -> Result<(), Error> {
        let mut args = vec!["mr".into(), "merge".into(), iid(pr)?, "--yes".into()];
        match how.method {
            MergeMethod::Squash => args.push("--squash".into()),
            MergeMethod::Rebase => args.push("--rebase".into()),
            MergeMethod::Merge => {}
        }
        if how.delete_branch {
            args.push("--remove-source-branch".into());
        }
        if let Some(head) = &how.head {
            args.push(format!("--sha={head}"));
        }
        call(GLAB, workdir, &args).map(|_| ())
    }

    fn list_repos(&self, owner: &str, limit: usize) -> Result<Vec<FoundRepo>, Error> {
        plain("owner", owner)?;
        let args = vec![
            "repo".into(),
            "list".into(),
            format!("--group={owner}"),
            format!("--per-page={limit}"),
            "--output=json".into(),
        ];
        let listed = call(GLAB, Path::new("."), &args)?;
        Ok(repos(&json(GLAB, "repo list", &listed)?))
    }

    fn search_repos(&self, query: &str, limit: usize) -> Result<Vec<FoundRepo>, Error> {
        let args = vec![
            "repo".into(),
            "search".into(),
            format!("--search={query}"),
            format!("--per-page={limit}"),
            "--output=json".into(),
        ];
        let listed = call(GLAB, Path::new("."), &args)?;
        Ok(repos(&json(GLAB, "repo search", &listed)?))
    }
}

/// The merge request's `iid`, as its argument.
fn iid(pr: &FoundPr) -> Result<String, Error> {
    pr.number.map(|n| n.to_string()).ok_or_else(|| {
        super::ForgeError::Failed {
            tool: GLAB,
            command: "mr".into(),
            stderr: format!("the merge request {} has no iid", pr.url),
        }
        .into()
    })
}

/// Whether a merge request's source branch is in the project it targets
/// (`source_project_id == target_project_id`, both given); a fork's is not.
fn same_project(e: &serde_json::Value) -> bool {
    match (
        e["source_project_id"].as_u64(),
        e["target_project_id"].as_u64(),
    ) {
        (Some(source), Some(target)) => source == target,
        _ => false,
    }
}

/// The review of open merge request `iid` from GitLab's approvals endpoint:
/// `APPROVED` when it says `approved: true`, `approvals_left` is 0 (or not said: no
/// approval rules) and `approved_by` names someone other than the merge request's
/// author (`mr`, as `mr view` described it); else `REVIEW_REQUIRED`.
fn approval(workdir: &Path, iid: u64, mr: &serde_json::Value) -> Result<&'static str, Error> {
    let args = vec![
        "api".into(),
        format!("projects/:id/merge_requests/{iid}/approvals"),
    ];
    let a = json(GLAB, "api approvals", &call(GLAB, workdir, &args)?)?;
    let author = mr["author"]["username"].as_str();
    let by_another = a["approved_by"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["user"]["username"].as_str())
        .any(|who| Some(who) != author);
    let approved = a["approved"].as_bool() == Some(true)
        && a["approvals_left"].as_i64().is_none_or(|n| n <= 0)
        && by_another;
    Ok(if approved {
        "APPROVED"
    } else {
        "REVIEW_REQUIRED"
    })
}

/// A merge request as `glab mr view`/`mr list` describe it (its review is asked
/// apart: [`approval`]).
fn found(e: &serde_json::Value) -> Option<FoundPr> {
    let state = match e["state"].as_str()? {
        "merged" => "MERGED",
        "closed" | "locked" => "CLOSED",
        _ => "OPEN",
    };
    let pipeline = e["head_pipeline"]["status"]
        .as_str()
        .or(e["pipeline"]["status"].as_str());
    let checks = pipeline.map(|p| {
        match p {
            "success" => "passing",
            "failed" | "canceled" => "failing",
            _ => "pending",
        }
        .to_string()
    });
    Some(FoundPr {
        url: e["web_url"].as_str()?.to_string(),
        number: e["iid"].as_u64(),
        state: state.into(),
        draft: e["draft"].as_bool().unwrap_or(false),
        checks,
        review: None,
        review_unknown: None,
        head: e["sha"].as_str().map(str::to_string),
    })
}

/// The projects of a `glab repo list`/`repo search` answer.
fn repos(v: &serde_json::Value) -> Vec<FoundRepo> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some(FoundRepo {
                name: r["path_with_namespace"].as_str()?.to_string(),
                url: r["http_url_to_repo"]
                    .as_str()
                    .or(r["web_url"].as_str())?
                    .to_string(),
                archived: r["archived"].as_bool().unwrap_or(false),
                fork: !r["forked_from_project"].is_null(),
                topics: r["topics"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect(),
                language: None,
                default_branch: r["default_branch"].as_str().map(str::to_string),
            })
        })
        .collect()
}
