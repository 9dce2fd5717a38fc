//! Where rules are read from: the repository's config files or those given (`-c`,
//! `-r`), YAML or TOML text, a step's documents; and the languages the project's
//! `sgconfig.yml` declares, for `grep`, `edit` and `allow`.

use std::path::Path;
use std::path::PathBuf;

use serde_value::Value;

use super::check_max_passes;
use super::config::custom_specs;
use super::config::display;
use super::config::looks_like_sgconfig;
use super::config::yaml_error;
use super::config::AsteditToml;
use super::config::SgConfig;
use super::loader::Doc;
use super::loader::Loader;
use super::Error;
use super::RuleSet;
use super::ASTEDIT_TOML;
use super::SGCONFIG_NAMES;
use crate::repo::Repo;

/// Loads the rules: from `configs` when given (each a `.toml`, an `sgconfig.yml` or a
/// rule YAML file), else `astedit.toml` and `sgconfig.yml` at the repository root.
pub fn load(repo: &Repo, configs: &[PathBuf]) -> Result<RuleSet, Error> {
    read(repo, configs)?.finish(None)
}

/// Reads the config files (see [`load`]), compiling nothing yet.
pub(super) fn read<'r>(repo: &'r Repo, configs: &[PathBuf]) -> Result<Loader<'r>, Error> {
    let mut loader = Loader::new(Some(repo));
    if configs.is_empty() {
        let toml = repo.workdir.join(ASTEDIT_TOML);
        if toml.is_file() {
            loader.toml_file(&toml)?;
        }
        if let Some(sg) = SGCONFIG_NAMES
            .iter()
            .map(|n| repo.workdir.join(n))
            .find(|p| p.is_file())
        {
            loader.sgconfig_file(&sg)?;
        }
        if loader.sources.is_empty() {
            return Err(Error::NoConfig);
        }
    } else {
        for path in configs {
            let path = repo.cwd.join(path);
            if !path.is_file() {
                return Err(Error::ConfigMissing(display(Some(repo), &path)));
            }
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.ends_with(".toml") {
                loader.toml_file(&path)?;
            } else if SGCONFIG_NAMES.contains(&name) || looks_like_sgconfig(&path) {
                loader.sgconfig_file(&path)?;
            } else {
                // A lone rule file's globs are relative to the repository root.
                loader.yaml_rule_file(&path, "")?;
                loader.sources.push(display(Some(repo), &path));
            }
        }
        // Only rule files (`-r`): the project's utility rules serve them, as in
        // ast-grep 0.51.
        if rule_files_only(repo, configs) {
            loader.project_utils()?;
        }
    }
    Ok(loader)
}

/// Whether `configs` are rule files only (`-r FILE`, or a rule YAML file as `-c`): no
/// `astedit.toml` or `sgconfig.yml` project among them.
pub fn rule_files_only(repo: &Repo, configs: &[PathBuf]) -> bool {
    !configs.is_empty()
        && !configs.iter().any(|c| {
            let name = c.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".toml")
                || SGCONFIG_NAMES.contains(&name)
                || looks_like_sgconfig(&repo.cwd.join(c))
        })
}

/// Rules given as YAML text on the command line (`--inline-rules`), with the utility
/// rules of the project's `sgconfig.yml` (its `utilDirs`), as in ast-grep 0.51.
pub fn from_inline(repo: &Repo, text: &str) -> Result<RuleSet, Error> {
    let mut loader = text_loader(Some(repo), text, TextFormat::Yaml, "--inline-rules")?;
    loader.project_utils()?;
    loader.finish(None)
}

/// Rules given as documents already read (a step of `git astedit steps`: its inline
/// rules and the documents of its rule files, with its variables filled in), with the
/// utility rules of the project's `sgconfig.yml`. `name` stands for the file in
/// errors; globs are relative to the repository root.
pub fn from_values(repo: &Repo, docs: Vec<Value>, name: &str) -> Result<RuleSet, Error> {
    let mut loader = Loader::new(Some(repo));
    loader.texts.push(String::new());
    loader.paths.push(PathBuf::new());
    loader.sources.push(name.to_string());
    for (ordinal, value) in docs.into_iter().enumerate() {
        loader.docs.push(Doc {
            value: Some(value),
            file: name.to_string(),
            text_index: 0,
            ordinal,
            base: String::new(),
        });
    }
    loader.project_utils()?;
    loader.finish(None)
}

/// The documents of an ast-grep rule YAML text, unread (`name` stands for the file in
/// errors).
pub fn yaml_documents(text: &str, name: &str) -> Result<Vec<Value>, Error> {
    ast_grep_config::from_multiple(text).map_err(|e| Error::BadConfigFile {
        file: name.to_string(),
        detail: yaml_error(&e),
    })
}

/// The `customLanguages` of the `sgconfig.yml` at the root of `repo` (none without
/// one), read but not loaded, with the file as shown: what `git astedit allow` lists.
pub fn project_custom_languages(
    repo: &Repo,
) -> Result<Vec<(String, crate::lang::CustomSpec)>, Error> {
    let Some(path) = SGCONFIG_NAMES
        .iter()
        .map(|n| repo.workdir.join(n))
        .find(|p| p.is_file())
    else {
        return Ok(Vec::new());
    };
    let file = display(Some(repo), &path);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::BadConfigFile {
        file: file.clone(),
        detail: format!("cannot read it: {e}"),
    })?;
    let parsed: SgConfig = ast_grep_config::from_str(&text).map_err(|e| Error::BadConfigFile {
        file: file.clone(),
        detail: yaml_error(&e),
    })?;
    let Some(custom) = &parsed.custom_languages else {
        return Ok(Vec::new());
    };
    Ok(custom_specs(custom, &path, &file)?
        .into_iter()
        .map(|spec| (file.clone(), spec))
        .collect())
}

/// The `languageGlobs`, `customLanguages` (loaded) and `languageInjections` of an
/// ast-grep project, for `grep` and `edit`: from `config` (an `sgconfig.yml`, relative
/// to the current folder) when given, else from the `sgconfig.yml` at the root; none
/// without one.
pub fn project_language_globs(
    repo: &Repo,
    config: Option<&Path>,
) -> Result<crate::files::LanguageGlobs, Error> {
    let path = match config {
        Some(path) => {
            let path = repo.cwd.join(path);
            if !path.is_file() {
                return Err(Error::ConfigMissing(display(Some(repo), &path)));
            }
            path
        }
        None => match SGCONFIG_NAMES
            .iter()
            .map(|n| repo.workdir.join(n))
            .find(|p| p.is_file())
        {
            Some(path) => path,
            None => return Ok(crate::files::LanguageGlobs::default()),
        },
    };
    let mut loader = Loader::new(Some(repo));
    let index = loader.read(&path)?;
    let file = display(Some(repo), &path);
    let parsed: SgConfig =
        ast_grep_config::from_str(&loader.texts[index]).map_err(|e| Error::BadConfigFile {
            file: file.clone(),
            detail: yaml_error(&e),
        })?;
    if let Some(custom) = &parsed.custom_languages {
        loader.custom_languages(custom, &path, &file)?;
    }
    if let Some(globs) = &parsed.language_globs {
        loader.language_globs(globs, &file)?;
    }
    if let Some(injections) = &parsed.language_injections {
        loader.language_injections(injections, &file)?;
    }
    let mut globs = crate::files::LanguageGlobs::new(
        loader
            .language_globs
            .iter()
            .chain(&loader.custom_languages)
            .map(|(lang, globs)| (lang.as_str(), globs.clone())),
    )
    .map_err(|detail| Error::BadConfigFile {
        file,
        detail: format!("languageGlobs: {detail}"),
    })?;
    globs.injections = std::sync::Arc::new(loader.injections);
    Ok(globs)
}

/// The syntax of rules given as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// An `astedit.toml` (inline `[[rules]]` only).
    Toml,
    /// One or more ast-grep rule documents.
    Yaml,
}

/// Compiles rules given as text rather than files (tests, agents). Globs are relative to
/// the repository root; `rule-files` and `util-dirs` need files on disk and are refused.
pub fn from_text(text: &str, format: TextFormat, name: &str) -> Result<RuleSet, Error> {
    text_loader(None, text, format, name)?.finish(None)
}

/// Rules given as text, read and not compiled.
pub(super) fn text_loader<'r>(
    repo: Option<&'r Repo>,
    text: &str,
    format: TextFormat,
    name: &str,
) -> Result<Loader<'r>, Error> {
    let mut loader = Loader::new(repo);
    loader.texts.push(text.to_string());
    loader.paths.push(PathBuf::new());
    loader.sources.push(name.to_string());
    let bad = |detail: String| Error::BadConfigFile {
        file: name.to_string(),
        detail,
    };
    let values: Vec<Value> = match format {
        TextFormat::Toml => {
            let parsed: AsteditToml =
                toml::from_str(text).map_err(|e| bad(e.to_string().trim_end().to_string()))?;
            if !parsed.rule_files.is_empty() || !parsed.util_dirs.is_empty() {
                return Err(bad(
                    "rule-files and util-dirs need a config file on disk".into()
                ));
            }
            loader.max_passes = parsed
                .max_passes
                .map(|n| check_max_passes(n, name))
                .transpose()?;
            parsed.rules
        }
        TextFormat::Yaml => {
            ast_grep_config::from_multiple(text).map_err(|e| bad(yaml_error(&e)))?
        }
    };
    for (ordinal, value) in values.into_iter().enumerate() {
        loader.docs.push(Doc {
            value: Some(value),
            file: name.to_string(),
            text_index: 0,
            ordinal,
            base: String::new(),
        });
    }
    Ok(loader)
}
