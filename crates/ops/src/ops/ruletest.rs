//! `test`: runs an ast-grep project's rule tests (see [`crate::scan::ruletest`]) with
//! the rules `scan` would load, and writes accepted snapshots back.

use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;

use crate::lang::Lang;
use ast_grep_config::RuleConfig;
use rayon::prelude::*;

use crate::error::UsageError;
use crate::repo::Repo;
use crate::report::ruletest as report;
use crate::report::ruletest::TestReport;
use crate::report::Version;
use crate::scan::rules;
use crate::scan::ruletest;
use crate::scan::ruletest::CaseStatus;
use crate::scan::ruletest::RuleResult;
use crate::scan::ruletest::TestConfig;
use crate::Error;

/// Which tests to run, and how.
#[derive(Debug, Clone, Default)]
pub struct TestRequest {
    /// Config files (`-c`), as `scan` takes them; none: the repository root's.
    pub configs: Vec<PathBuf>,
    /// A test folder instead of the config's `testConfigs` (relative to the current
    /// folder).
    pub test_dir: Option<PathBuf>,
    /// The snapshot folder's name under each test folder (default `__snapshots__`).
    pub snapshot_dir: Option<PathBuf>,
    /// Only rules whose id this matches.
    pub filter: Option<regex::Regex>,
    /// Only check that invalid cases are reported, not what is reported.
    pub skip_snapshot_tests: bool,
    /// Accept every changed or missing snapshot and write it.
    pub update_all: bool,
    /// Also test rules with `severity: off`.
    pub include_off: bool,
}

/// Decides, case by case, whether a changed snapshot is accepted (`test -i`).
pub trait Review {
    /// `Some(true)`: accept; `Some(false)`: keep the old one; `None`: stop asking
    /// (the rest is kept).
    fn accept(&mut self, rule: &str, case: &report::CaseVerdict) -> Option<bool>;
}

pub fn run(
    repo: &Repo,
    req: &TestRequest,
    review: Option<&mut dyn Review>,
) -> Result<TestReport, Error> {
    let rule_set = rules::load(repo, &req.configs)?;
    let display = |p: &Path| -> String {
        match p.strip_prefix(&repo.cwd) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => p.display().to_string(),
        }
    };
    let (base, configs) = match &req.test_dir {
        Some(dir) => (
            repo.cwd.clone(),
            vec![TestConfig {
                test_dir: dir.clone(),
                snapshot_dir: req.snapshot_dir.clone(),
            }],
        ),
        None => {
            let sgconfig = sgconfig_of(repo, &req.configs).ok_or_else(|| {
                UsageError(
                    "no sgconfig.yml to read testConfigs from: give --test-dir DIR, or -c \
                     sgconfig.yml"
                        .into(),
                )
            })?;
            let mut configs = ruletest::test_configs(&sgconfig, &display(&sgconfig))?;
            check_test_configs(repo, &sgconfig, &configs, &display(&sgconfig))?;
            if let Some(dir) = &req.snapshot_dir {
                for c in &mut configs {
                    c.snapshot_dir = Some(dir.clone());
                }
            }
            let base = sgconfig.parent().unwrap_or(Path::new(".")).to_path_buf();
            (base, configs)
        }
    };
    let keep = |id: &str| req.filter.as_ref().is_none_or(|f| f.is_match(id));
    let harness = ruletest::load_harness(&base, &configs, &keep, &display)?;

    let mut by_id: HashMap<&str, &RuleConfig<Lang>> = rule_set
        .rules
        .iter()
        .map(|r| (r.id.as_str(), &r.config))
        .collect();
    if req.include_off {
        for rule in &rule_set.off_rules {
            by_id.insert(rule.id.as_str(), &rule.config);
        }
    }
    let snapshots = !req.skip_snapshot_tests;
    // Cases in parallel, results in the order the tests were found.
    let outcomes: Vec<Option<RuleResult>> = harness
        .cases
        .par_iter()
        .map(|case| {
            let rule = by_id.get(case.id.as_str())?;
            let snaps = snapshots.then(|| harness.snapshots.get(&case.id));
            Some(ruletest::verify(case, rule, snaps))
        })
        .collect();
    let mut not_found = Vec::new();
    let mut results = Vec::new();
    for (case, outcome) in harness.cases.iter().zip(outcomes) {
        match outcome {
            Some(r) => results.push(r),
            None => not_found.push(case.id.clone()),
        }
    }

    if snapshots {
        if req.update_all {
            for result in &mut results {
                for case in &mut result.cases {
                    case.accept();
                }
            }
        } else if let Some(review) = review {
            'rules: for result in &mut results {
                for case in &mut result.cases {
                    if !matches!(case, CaseStatus::Wrong { .. }) {
                        continue;
                    }
                    let shown = verdict_of(case, true, "");
                    match review.accept(&result.id, &shown) {
                        Some(true) => {
                            case.accept();
                        }
                        Some(false) => {}
                        None => break 'rules,
                    }
                }
            }
        }
    }
    let written = if snapshots {
        ruletest::write_accepted(&results, &harness, &display)?
    } else {
        Vec::new()
    };

    let rules: Vec<report::RuleVerdict> = results.iter().map(rule_verdict).collect();
    let failed = results.iter().filter(|r| !r.passed()).count();
    Ok(TestReport {
        schema_version: Version,
        tests: harness.cases.len(),
        passed: results.len() - failed,
        failed,
        snapshots_only: failed > 0
            && results
                .iter()
                .filter(|r| !r.passed())
                .all(RuleResult::fails_on_snapshots_only),
        rules,
        not_found,
        written: written.iter().map(|p| display(p)).collect(),
        warnings: harness
            .warnings
            .into_iter()
            .chain(super::rule_form::notices(
                repo,
                &rule_set.top_level_form,
                &rule_set.sources,
            ))
            .chain(rule_set.warnings)
            .collect(),
    })
}

/// Refuses `testConfigs` of an `sgconfig.yml` inside the repository that lead out of
/// it: a `testDir` outside it (symbolic links resolved), a `snapshotDir` that is not
/// a plain relative path below its `testDir`. A clone's config (CI running a pull
/// request's) must not make `test -U` write, or `test` read, the runner's files.
fn check_test_configs(
    repo: &Repo,
    sgconfig: &Path,
    configs: &[TestConfig],
    shown: &str,
) -> Result<(), Error> {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let root = canonical(&repo.workdir);
    let base = canonical(sgconfig.parent().unwrap_or(Path::new(".")));
    if !base.starts_with(&root) {
        return Ok(());
    }
    let bad = |detail: String| ruletest::TestError::BadConfig {
        path: shown.to_string(),
        detail,
    };
    for config in configs {
        let test_dir = base.join(&config.test_dir);
        let resolved = std::fs::canonicalize(&test_dir).unwrap_or(test_dir);
        if !resolved.starts_with(&root) {
            return Err(bad(format!(
                "testDir: '{}' is outside the repository",
                config.test_dir.display()
            ))
            .into());
        }
        if let Some(dir) = &config.snapshot_dir {
            let plain = dir.components().all(|c| {
                matches!(
                    c,
                    std::path::Component::Normal(_) | std::path::Component::CurDir
                )
            });
            if !plain {
                return Err(bad(format!(
                    "snapshotDir: '{}' must be a relative path below testDir (no '..', not \
                     absolute)",
                    dir.display()
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// The `sgconfig.yml` whose `testConfigs` apply: the one among `-c` files, else the
/// repository root's.
fn sgconfig_of(repo: &Repo, configs: &[PathBuf]) -> Option<PathBuf> {
    if configs.is_empty() {
        return rules::SGCONFIG_NAMES
            .iter()
            .map(|n| repo.workdir.join(n))
            .find(|p| p.is_file());
    }
    configs.iter().map(|c| repo.cwd.join(c)).find(|p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        rules::SGCONFIG_NAMES.contains(&name) || name.ends_with(".yml") && is_sgconfig(p)
    })
}

/// A YAML file with `ruleDirs` or `testConfigs` and no `rule` (an sgconfig under another
/// name).
fn is_sgconfig(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    text.lines()
        .any(|l| l.starts_with("ruleDirs:") || l.starts_with("testConfigs:"))
        && !text.lines().any(|l| l.starts_with("rule:"))
}

fn rule_verdict(result: &RuleResult) -> report::RuleVerdict {
    let verdict = if result.cases.is_empty() {
        report::Verdict::Skip
    } else if result.passed() {
        report::Verdict::Pass
    } else {
        report::Verdict::Fail
    };
    report::RuleVerdict {
        id: result.id.clone(),
        verdict,
        cases: result
            .cases
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let code = result.codes.get(i).map_or("", String::as_str);
                verdict_of(c, i >= result.valid, code)
            })
            .collect(),
    }
}

fn verdict_of(case: &CaseStatus, invalid: bool, code: &str) -> report::CaseVerdict {
    use report::CaseStatus as S;
    let kind = if invalid {
        report::CaseKind::Invalid
    } else {
        report::CaseKind::Valid
    };
    let mut v = report::CaseVerdict {
        kind,
        status: S::Validated,
        pass: case.is_pass(),
        code: code.to_string(),
        expected: None,
        actual: None,
        message: None,
    };
    match case {
        CaseStatus::Validated => {}
        CaseStatus::Reported => v.status = S::Reported,
        CaseStatus::Updated { source, snapshot } => {
            v.status = S::Updated;
            v.code = source.clone();
            v.actual = Some(snapshot.clone());
        }
        CaseStatus::Wrong {
            source,
            actual,
            expected,
        } => {
            v.status = S::Wrong;
            v.code = source.clone();
            v.actual = Some(actual.clone());
            v.expected = expected.clone();
        }
        CaseStatus::Missing(code) => {
            v.status = S::Missing;
            v.code = code.clone();
        }
        CaseStatus::Noisy(code) => {
            v.status = S::Noisy;
            v.code = code.clone();
        }
        CaseStatus::Error { source, message } => {
            v.status = S::Error;
            v.code = source.clone();
            v.message = Some(message.clone());
        }
    }
    v
}
