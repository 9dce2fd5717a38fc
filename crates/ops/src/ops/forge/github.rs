//! GitHub through the GitHub CLI `gh`.

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

const GH: &str = "gh";

/// GitHub, through `gh`.
pub struct GitHub;

impl super::Forge for GitHub {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Github
    }

    fn check(&self, workdir: &Path) -> Result<(), Error> {
        call(GH, workdir, &strings(&["--version"]))?;
        call(GH, workdir, &strings(&["auth", "status"]))?;
        Ok(())
    }

    fn find(&self, workdir: &Path, branch: &str) -> Result<Option<FoundPr>, Error> {
        plain("branch", branch)?;
        let listed = call(
            GH,
            workdir,
            &strings(&[
                "pr",
                "list",
                "--head",
                branch,
                "--state",
                "all",
                "--json",
                "number,url,state,isDraft,statusCheckRollup,reviewDecision,latestReviews,\
                 author,headRefOid,isCrossRepository,headRepositoryOwner",
            ]),
        )?;
        let v = json(GH, "pr list", &listed)?;
        // `--head` matches the branch's name only: a fork's pull request from a branch of
        // the same name is listed too, and is never ours.
        let ours: Vec<&serde_json::Value> = v
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| same_repository(e))
            .collect();
        // Several pull requests can have had this head branch: an open one is the one.
        let open = |e: &&&serde_json::Value| {
            e["state"]
                .as_str()
                .is_some_and(|s| s.eq_ignore_ascii_case("open"))
        };
        let pick = ours.iter().find(open).or_else(|| ours.first());
        Ok(pick.and_then(|e| {
            let head = e["headRefOid"]
                .as_str()
                .filter(|h| !h.is_empty())
                .map(str::to_string);
            Some(FoundPr {
                url: e["url"].as_str()?.to_string(),
                number: e["number"].as_u64(),
                state: e["state"].as_str().unwrap_or("OPEN").to_ascii_uppercase(),
                draft: e["isDraft"].as_bool().unwrap_or(false),
                checks: checks_of(&e["statusCheckRollup"]),
                review: review_of(e, head.as_deref()),
                review_unknown: None,
                head,
            })
        }))
    }

    fn create(&self, workdir: &Path, new: &NewPr) -> Result<String, Error> {
        plain("branch", new.branch)?;
        let mut args = strings(&["pr", "create", "--head", new.branch]);
        args.push(format!("--title={}", new.title));
        args.push(format!("--body={}", new.body));
        args.extend(new.labels.iter().map(|l| format!("--label={l}")));
        args.extend(new.reviewers.iter().map(|r| format!("--reviewer={r}")));
        if let Some(base) = new.base {
            args.push(format!("--base={base}"));
        }
        if new.draft {
            args.push("--draft".into());
        }
        Ok(last_line(&call(GH, workdir, &args)?))
    }

    fn edit(&self, workdir: &Path, pr: &FoundPr, title: &str, body: &str) -> Result<(), Error> {
        plain("pull request", &pr.url)?;
        let args = vec![
            "pr".into(),
            "edit".into(),
            pr.url.clone(),
            format!("--title={title}"),
            format!("--body={body}"),
        ];
        call(GH, workdir, &args).map(|_| ())
    }

    fn ready(&self, workdir: &Path, pr: &FoundPr) -> Result<(), Error> {
        plain("pull request", &pr.url)?;
        call(GH, workdir, &strings(&["pr", "ready", &pr.url])).map(|_| ())
    }

    fn merge(&self, workdir: &Path, pr: &FoundPr, how: &MergeHow) -> Result<(), Error> {
        plain("pull request", &pr.url)?;
        let mut args = strings(&["pr", "merge", &pr.url]);
        args.push(
            match how.method {
                MergeMethod::Squash => "--squash",
                MergeMethod::Merge => "--merge",
                MergeMethod::Rebase => "--rebase",
            }
            .into(),
        );
        if how.delete_branch {
            args.push("--delete-branch".into());
        }
        if let Some(head) = &how.head {
            args.push(format!("--match-head-commit={head}"));
        }
        call(GH, workdir, &args).map(|_| ())
    }

    fn list_repos(&self, owner: &str, limit: usize) -> Result<Vec<FoundRepo>, Error> {
        plain("owner", owner)?;
        let args = vec![
            "repo".into(),
            "list".into(),
            format!("--limit={limit}"),
            "--json=nameWithOwner,url,isArchived,isFork,repositoryTopics,primaryLanguage,\
             defaultBranchRef"
                .into(),
            "--".into(),
            owner.to_string(),
        ];
        let listed = call(GH, Path::new("."), &args)?;
        repos(&json(GH, "repo list", &listed)?)
    }

    fn search_repos(&self, query: &str, limit: usize) -> Result<Vec<FoundRepo>, Error> {
        let args = vec![
            "search".into(),
            "repos".into(),
            format!("--limit={limit}"),
            "--json=fullName,url,isArchived,isFork,language,defaultBranch".into(),
            "--".into(),
            query.to_string(),
        ];
        let listed = call(GH, Path::new("."), &args)?;
        repos(&json(GH, "search repos", &listed)?)
    }
}

/// The repositories of a `gh repo list` or `gh search repos` answer (their field
/// names differ).
fn repos(v: &serde_json::Value) -> Result<Vec<FoundRepo>, Error> {
    let name_of = |x: &serde_json::Value| -> Option<String> {
        match x {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Object(o) => o.get("name")?.as_str().map(str::to_string),
            _ => None,
        }
    };
    Ok(v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let name = r["nameWithOwner"].as_str().or(r["fullName"].as_str())?;
            Some(FoundRepo {
                name: name.to_string(),
                url: r["url"].as_str()?.to_string(),
                archived: r["isArchived"].as_bool().unwrap_or(false),
                fork: r["isFork"].as_bool().unwrap_or(false),
                topics: r["repositoryTopics"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(name_of)
                    .collect(),
                language: name_of(&r["primaryLanguage"]).or_else(|| name_of(&r["language"])),
                default_branch: name_of(&r["defaultBranchRef"])
                    .or_else(|| name_of(&r["defaultBranch"]))
                    .filter(|b| !b.is_empty()),
            })
        })
        .collect())
}

/// Whether a listed pull request's head branch is in the repository itself: gh says
/// `isCrossRepository: false`, and the head's owner is the owner in the pull request's
/// URL (`https://github.com/OWNER/NAME/pull/N`). Anything else (a fork, or an answer
/// without these fields) is not ours.
fn same_repository(e: &serde_json::Value) -> bool {
    let owner_in_url = e["url"]
        .as_str()
        .and_then(|u| u.split("/pull/").next())
        .and_then(|repo| repo.trim_end_matches('/').rsplit('/').nth(1));
    let head_owner = e["headRepositoryOwner"]["login"].as_str();
    e["isCrossRepository"].as_bool() == Some(false)
        && matches!((owner_in_url, head_owner), (Some(a), Some(b)) if a.eq_ignore_ascii_case(b))
}

/// The review as GitHub's approval answer gives it: `reviewDecision` when branch
/// protection makes GitHub decide (`APPROVED`, `CHANGES_REQUESTED`,
/// `REVIEW_REQUIRED`). Where no review is required, GitHub decides nothing (an empty
/// `reviewDecision`): then `latestReviews` (each reviewer's latest) decides — any
/// `CHANGES_REQUESTED` is that, an `APPROVED` review of the head commit `head` by
/// someone other than the pull request's author is `APPROVED`, anything else no
/// decision (`None`). Drafts and merge states play no part.
fn review_of(e: &serde_json::Value, head: Option<&str>) -> Option<String> {
    if let Some(decision) = e["reviewDecision"].as_str().filter(|d| !d.is_empty()) {
        return Some(decision.to_ascii_uppercase());
    }
    let reviews = e["latestReviews"].as_array()?;
    let state = |r: &serde_json::Value| r["state"].as_str().map(str::to_ascii_uppercase);
    if reviews
        .iter()
        .any(|r| state(r).as_deref() == Some("CHANGES_REQUESTED"))
    {
        return Some("CHANGES_REQUESTED".into());
    }
    let author = e["author"]["login"].as_str();
    let approved = reviews.iter().any(|r| {
        let by = r["author"]["login"].as_str();
        state(r).as_deref() == Some("APPROVED")
            && by.is_some_and(|by| Some(by) != author)
            && head.is_some_and(|h| r["commit"]["oid"].as_str() == Some(h))
    });
    approved.then(|| "APPROVED".to_string())
}

/// gh's `statusCheckRollup` in one word: `failing` if any check failed, else
/// `pending` if any has not finished, else `passing`; `None` without checks. Check runs
/// say `status` and `conclusion`, commit statuses a `state`.
fn checks_of(rollup: &serde_json::Value) -> Option<String> {
    let checks = rollup.as_array().filter(|a| !a.is_empty())?;
    let word = |c: &serde_json::Value, key: &str| {
        c[key]
            .as_str()
            .map(str::to_ascii_uppercase)
            .unwrap_or_default()
    };
    let failed = checks.iter().any(|c| {
        matches!(
            word(c, "conclusion").as_str(),
            "FAILURE" | "CANCELLED" | "TIMED_OUT" | "ACTION_REQUIRED" | "STARTUP_FAILURE"
        ) || matches!(word(c, "state").as_str(), "FAILURE" | "ERROR")
    });
    let pending = checks.iter().any(|c| {
        let status = word(c, "status");
        (!status.is_empty() && status != "COMPLETED")
            || matches!(word(c, "state").as_str(), "PENDING" | "EXPECTED")
    });
    Some(
        if failed {
            "failing"
        } else if pending {
            "pending"
        } else {
            "passing"
        }
        .to_string(),
    )
}
