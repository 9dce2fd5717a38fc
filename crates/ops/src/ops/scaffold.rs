/*!
`git astedit new`: an ast-grep project and its rules, tests and utility rules, written
as ast-grep 0.51.1's `new` writes them (issue 51, item 4), so a team's habit and its
files stay the same. The files are templates to edit, not a change to review: they are
written at once (never over an existing file), not staged.

One difference: the project's `sgconfig.yml` names its folders relative to itself
(`rules`, as ast-grep's documentation writes them), where ast-grep 0.51.1 writes the
absolute paths of the machine that ran it.
*/

use std::path::Path;
use std::path::PathBuf;

use crate::error::IoError;
use crate::error::UsageError;
use crate::lang::Lang;
use crate::repo::Repo;
use crate::scan::rules::SGCONFIG_NAMES;
use crate::scan::Error as ConfigError;
use crate::Error;

/// What to create.
#[derive(Debug, Clone)]
pub enum Item {
    /// `sgconfig.yml` with `rules/`, `rule-tests/` and `utils/` in the current folder.
    Project,
    /// `RULE_DIR/NAME.yml`, and `TEST_DIR/NAME-test.yml` when the project has tests.
    Rule { name: String, lang: Lang },
    /// `TEST_DIR/NAME-test.yml`.
    Test { name: String },
    /// `UTIL_DIR/NAME.yml`.
    Util { name: String, lang: Lang },
}

pub struct NewRequest {
    pub item: Item,
    /// The project's `sgconfig.yml` (`-c`); default: the nearest one from the current
    /// folder up to the work tree's root.
    pub config: Option<PathBuf>,
}

/// The files written, in order: what each is (`rules`, `test`, `util`, `project`) and
/// its path as given to the user (relative to the current folder).
pub struct NewReport {
    pub created: Vec<(&'static str, String)>,
}

/// The folders a new project has, as `sgconfig.yml` names them.
const RULE_DIR: &str = "rules";
const TEST_DIR: &str = "rule-tests";
const UTIL_DIR: &str = "utils";

pub fn run(repo: &Repo, req: &NewRequest) -> Result<NewReport, Error> {
    if let Item::Project = req.item {
        return project(repo);
    }
    let config = match &req.config {
        Some(c) => repo.cwd.join(c),
        None => find_config(repo).ok_or_else(|| {
            UsageError(
                "no ast-grep project (sgconfig.yml) in this folder or above it: create one \
                 with `git astedit new project`"
                    .into(),
            )
        })?,
    };
    let dirs = ProjectDirs::read(&config)?;
    let mut created = Vec::new();
    match &req.item {
        Item::Project => unreachable!("handled above"),
        Item::Rule { name, lang } => {
            let dir = dirs.first("ruleDirs", &dirs.rules)?;
            let rule = dir.join(format!("{name}.yml"));
            let test = dirs
                .tests
                .first()
                .map(|t| t.join(format!("{name}-test.yml")));
            // Neither is written when one is there already.
            refuse_existing(repo, &rule)?;
            if let Some(test) = &test {
                refuse_existing(repo, test)?;
            }
            write(&rule, &rule_text(name, *lang))?;
            created.push(("rules", shown(repo, &rule)));
            if let Some(test) = test {
                write(&test, &test_text(name))?;
                created.push(("test", shown(repo, &test)));
            }
        }
        Item::Test { name } => {
            let dir = dirs.first("testConfigs", &dirs.tests)?;
            let test = dir.join(format!("{name}-test.yml"));
            refuse_existing(repo, &test)?;
            write(&test, &test_text(name))?;
            created.push(("test", shown(repo, &test)));
        }
        Item::Util { name, lang } => {
            let dir = dirs.first("utilDirs", &dirs.utils)?;
            let util = dir.join(format!("{name}.yml"));
            refuse_existing(repo, &util)?;
            write(&util, &util_text(name, *lang))?;
            created.push(("util", shown(repo, &util)));
        }
    }
    Ok(NewReport { created })
}

/// A new project in the current folder, unless one is there or above it.
fn project(repo: &Repo) -> Result<NewReport, Error> {
    if let Some(found) = find_config(repo) {
        return Err(UsageError(format!(
            "an ast-grep project exists already: {} (add rules with `git astedit new rule \
             NAME -l LANG`)",
            shown(repo, &found)
        ))
        .into());
    }
    let config = repo.cwd.join(SGCONFIG_NAMES[0]);
    let text = format!(
        "ruleDirs:\n- {RULE_DIR}\ntestConfigs:\n- testDir: {TEST_DIR}\nutilDirs:\n- {UTIL_DIR}\n"
    );
    for dir in [RULE_DIR, TEST_DIR, UTIL_DIR] {
        write(&repo.cwd.join(dir).join(".gitkeep"), "")?;
    }
    write(&config, &text)?;
    Ok(NewReport {
        created: vec![("project", shown(repo, &config))],
    })
}

/// The nearest `sgconfig.yml` from the current folder up to the work tree's root.
fn find_config(repo: &Repo) -> Option<PathBuf> {
    let mut dir = repo.cwd.as_path();
    loop {
        if let Some(found) = SGCONFIG_NAMES
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.is_file())
        {
            return Some(found);
        }
        if dir == repo.workdir {
            return None;
        }
        dir = dir.parent()?;
    }
}

/// The folders an `sgconfig.yml` names, resolved from its own folder.
struct ProjectDirs {
    file: String,
    rules: Vec<PathBuf>,
    tests: Vec<PathBuf>,
    utils: Vec<PathBuf>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Dirs {
    #[serde(default)]
    rule_dirs: Vec<PathBuf>,
    #[serde(default)]
    test_configs: Vec<TestDir>,
    #[serde(default)]
    util_dirs: Vec<PathBuf>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TestDir {
    test_dir: PathBuf,
}

impl ProjectDirs {
    fn read(config: &Path) -> Result<ProjectDirs, Error> {
        let file = config.display().to_string();
        let text = std::fs::read_to_string(config).map_err(|source| ConfigError::ReadConfig {
            file: file.clone(),
            source,
        })?;
        let dirs: Dirs =
            ast_grep_config::from_str(&text).map_err(|e| ConfigError::BadConfigFile {
                file: file.clone(),
                detail: crate::scan::rules::yaml_error(&e),
            })?;
        let base = config.parent().unwrap_or(Path::new("."));
        Ok(ProjectDirs {
            file,
            rules: dirs.rule_dirs.iter().map(|d| base.join(d)).collect(),
            tests: dirs
                .test_configs
                .iter()
                .map(|t| base.join(&t.test_dir))
                .collect(),
            utils: dirs.util_dirs.iter().map(|d| base.join(d)).collect(),
        })
    }

    /// The first folder of `key`, or the error that the project has none.
    fn first<'a>(&self, key: &str, dirs: &'a [PathBuf]) -> Result<&'a PathBuf, Error> {
        dirs.first().ok_or_else(|| {
            UsageError(format!(
                "{} names no folder under `{key}`: add one there first",
                self.file
            ))
            .into()
        })
    }
}

fn refuse_existing(repo: &Repo, path: &Path) -> Result<(), Error> {
    if path.exists() {
        return Err(UsageError(format!(
            "{} exists already: edit it, or give another name",
            shown(repo, path)
        ))
        .into());
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    let io = |source| IoError {
        action: "write",
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    Ok(std::fs::write(path, text).map_err(io)?)
}

/// A path as the user sees it: relative to the current folder when under it.
fn shown(repo: &Repo, path: &Path) -> String {
    path.strip_prefix(&repo.cwd)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// ast-grep 0.51.1's rule template (no newline at the end, as it writes it).
fn rule_text(id: &str, lang: Lang) -> String {
    format!(
        "# yaml-language-server: $schema=https://raw.githubusercontent.com/ast-grep/ast-grep/main/schemas/rule.json\n\
         \n\
         id: {id}\n\
         message: Add your rule message here....\n\
         severity: error # error, warning, info, hint\n\
         language: {lang}\n\
         rule:\n  pattern: Your Rule Pattern here...\n\
         # utils: Extract repeated rule as local utility here.\n\
         # note: Add detailed explanation for the rule."
    )
}

/// ast-grep 0.51.1's rule test template (with a newline at the end, as it writes it).
fn test_text(id: &str) -> String {
    format!("id: {id}\nvalid:\n- \"valid code\"\ninvalid:\n- \"invalid code\"\n")
}

/// ast-grep 0.51.1's utility rule template.
fn util_text(id: &str, lang: Lang) -> String {
    format!(
        "id: {id}\nlanguage: {lang}\nrule:\n  pattern: Your Rule Pattern here...\n\
         # utils: Extract repeated rule as local utility here."
    )
}
