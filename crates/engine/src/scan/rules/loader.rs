//! The [`Loader`]: reads config, rule and utility rule files into rule documents,
//! parsing them but compiling nothing.

use std::path::Path;
use std::path::PathBuf;

use crate::lang::Lang;
use ast_grep_config::DeserializeEnv;
use ast_grep_config::SerializableGlobalRule;
use serde::Deserialize;
use serde_value::Value;

use super::check_max_passes;
use super::config::chain;
use super::config::check_inside;
use super::config::custom_specs;
use super::config::display;
use super::config::no_ignore;
use super::config::yaml_error;
use super::config::yaml_files;
use super::config::AsteditToml;
use super::config::Injected;
use super::config::SerializableInjection;
use super::config::SgConfig;
use super::Error;
use super::Injection;
use super::SGCONFIG_NAMES;
use crate::repo::Repo;

/// A rule document before compilation: its value and where it came from.
#[derive(Clone)]
pub(super) struct Doc {
    /// `None`: every document of the text, not parsed yet.
    pub(super) value: Option<Value>,
    /// The file, as displayed.
    pub(super) file: String,
    pub(super) text_index: usize,
    /// 0-based position among the file's documents (names a rule without an id).
    pub(super) ordinal: usize,
    /// Repository folder its globs are relative to.
    pub(super) base: String,
}

/// Accumulates documents and global utils while config files are read.
pub(super) struct Loader<'r> {
    /// `None` for rules given as text (no files, no folders).
    pub(super) repo: Option<&'r Repo>,
    pub(super) docs: Vec<Doc>,
    /// Source texts, indexed by `Doc::text_index`, to find a rule's line.
    pub(super) texts: Vec<String>,
    /// The file of each text (empty for a text not read from a file).
    pub(super) paths: Vec<PathBuf>,
    pub(super) utils: Vec<SerializableGlobalRule<Lang>>,
    /// Utility rule files read, not parsed yet: (text index, file as displayed).
    pub(super) util_texts: Vec<(usize, String)>,
    pub(super) sources: Vec<String>,
    pub(super) max_passes: Option<usize>,
    pub(super) warnings: Vec<String>,
    /// `languageGlobs`, as (language, globs) in the order read.
    pub(super) language_globs: Vec<(String, Vec<String>)>,
    /// `customLanguages`, loaded: (name, `*.ext` globs), taken after `languageGlobs`
    /// and before the built-in extensions, as ast-grep does.
    pub(super) custom_languages: Vec<(String, Vec<String>)>,
    /// `customLanguages` left unloaded (not allowed): a rule in one is refused saying so.
    pub(super) ignored_custom: Vec<String>,
    pub(super) injections: Vec<Injection>,
    /// Each `languageInjections` as written, and its file (to compile them again
    /// for [`Loader::fork`]).
    pub(super) injection_specs: Vec<(Value, String)>,
    /// `noIgnore` asks for the files git ignores.
    pub(super) no_ignore: bool,
}

impl<'r> Loader<'r> {
    /// Nothing read yet; `repo` is `None` for rules given as text.
    pub(super) fn new(repo: Option<&'r Repo>) -> Loader<'r> {
        Loader {
            repo,
            docs: Vec::new(),
            warnings: Vec::new(),
            texts: Vec::new(),
            paths: Vec::new(),
            utils: Vec::new(),
            util_texts: Vec::new(),
            sources: Vec::new(),
            max_passes: None,
            language_globs: Vec::new(),
            custom_languages: Vec::new(),
            ignored_custom: Vec::new(),
            injections: Vec::new(),
            injection_specs: Vec::new(),
            no_ignore: false,
        }
    }

    pub(super) fn read(&mut self, path: &Path) -> Result<usize, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadConfig {
            file: display(self.repo, path),
            source,
        })?;
        self.texts.push(text);
        self.paths.push(path.to_path_buf());
        Ok(self.texts.len() - 1)
    }

    /// The same, with no repository to show paths from: compiling needs none.
    pub(super) fn detach(self) -> Loader<'static> {
        Loader {
            repo: None,
            docs: self.docs,
            texts: self.texts,
            paths: self.paths,
            utils: self.utils,
            util_texts: self.util_texts,
            sources: self.sources,
            max_passes: self.max_passes,
            warnings: self.warnings,
            language_globs: self.language_globs,
            custom_languages: self.custom_languages,
            ignored_custom: self.ignored_custom,
            injections: self.injections,
            injection_specs: self.injection_specs,
            no_ignore: self.no_ignore,
        }
    }

    /// A copy of what was read, with no repository (compiling needs none), to compile
    /// some rules now and every one later from the same texts.
    pub(super) fn fork(&self) -> Result<Loader<'static>, Error> {
        let mut fork = Loader {
            repo: None,
            docs: self.docs.clone(),
            texts: self.texts.clone(),
            paths: self.paths.clone(),
            utils: self.utils.clone(),
            util_texts: self.util_texts.clone(),
            sources: self.sources.clone(),
            max_passes: self.max_passes,
            warnings: self.warnings.clone(),
            language_globs: self.language_globs.clone(),
            custom_languages: self.custom_languages.clone(),
            ignored_custom: self.ignored_custom.clone(),
            injections: Vec::new(),
            injection_specs: Vec::new(),
            no_ignore: self.no_ignore,
        };
        for (value, file) in &self.injection_specs {
            fork.language_injections(value, file)?;
        }
        Ok(fork)
    }

    /// The repository folder of a config file: where its globs are rooted.
    fn base_of(&self, path: &Path) -> String {
        let Some(repo) = self.repo else {
            return String::new();
        };
        path.parent()
            .and_then(|p| p.strip_prefix(&repo.workdir).ok())
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default()
    }

    pub(super) fn toml_file(&mut self, path: &Path) -> Result<(), Error> {
        let index = self.read(path)?;
        let file = display(self.repo, path);
        let parsed: AsteditToml =
            toml::from_str(&self.texts[index]).map_err(|e| Error::BadConfigFile {
                file: file.clone(),
                detail: e.to_string().trim_end().to_string(),
            })?;
        let base = self.base_of(path);
        for (ordinal, value) in parsed.rules.into_iter().enumerate() {
            self.docs.push(Doc {
                value: Some(value),
                file: file.clone(),
                text_index: index,
                ordinal,
                base: base.clone(),
            });
        }
        if let Some(n) = parsed.max_passes {
            self.max_passes = Some(check_max_passes(n, &file)?);
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        for entry in &parsed.rule_files {
            check_inside(self.repo, path, &file, "rule-files", entry)?;
            let target = dir.join(entry);
            if target.is_dir() {
                self.yaml_dir(&target, &base)?;
            } else if target.is_file() {
                self.yaml_rule_file(&target, &base)?;
            } else {
                return Err(Error::BadConfigFile {
                    file,
                    detail: format!("rule-files: '{entry}' does not exist"),
                });
            }
        }
        for entry in &parsed.util_dirs {
            check_inside(self.repo, path, &file, "util-dirs", entry)?;
            self.util_dir(&dir.join(entry))?;
        }
        self.sources.push(file);
        Ok(())
    }

    /// Reads `languageGlobs`: a mapping from a language name to a list of globs (or
    /// one glob).
    pub(super) fn language_globs(&mut self, value: &Value, file: &str) -> Result<(), Error> {
        let bad = |detail: String| Error::BadConfigFile {
            file: file.to_string(),
            detail: format!("languageGlobs: {detail}"),
        };
        let Value::Map(map) = value else {
            return Err(bad("expected a mapping from a language to its globs".into()));
        };
        for (lang, globs) in map {
            let Value::String(lang) = lang else {
                return Err(bad("a language name must be a string".into()));
            };
            let globs: Vec<String> = match globs {
                Value::String(g) => vec![g.clone()],
                Value::Seq(items) => items
                    .iter()
                    .map(|g| match g {
                        Value::String(g) => Ok(g.clone()),
                        _ => Err(bad(format!("{lang}: a glob must be a string"))),
                    })
                    .collect::<Result<_, _>>()?,
                _ => return Err(bad(format!("{lang}: expected a list of globs"))),
            };
            crate::files::parse_language(lang).map_err(|e| bad(e.to_string()))?;
            self.language_globs.push((lang.clone(), globs));
        }
        Ok(())
    }

    /// Loads `customLanguages` (ast-grep's schema: `{name: {libraryPath, extensions,
    /// languageSymbol, metaVarChar, expandoChar}}`, `libraryPath` relative to the
    /// config's folder, or a map from target triple to path): each one the person
    /// allowed ([`crate::lang::custom_allowed`]); the others are left unloaded, with a
    /// warning naming the library and its consent digest.
    pub(super) fn custom_languages(
        &mut self,
        value: &Value,
        config: &Path,
        file: &str,
    ) -> Result<(), Error> {
        let root = self.repo.map(|r| r.workdir.as_path());
        for spec in custom_specs(value, config, file)? {
            let digest = crate::lang::custom_digest(&spec, root);
            if !crate::lang::custom_allowed(digest.as_deref().ok()) {
                let digest = digest.unwrap_or_else(|e| format!("unreadable: {e}"));
                self.warnings.push(format!(
                    "{file}: customLanguages: {} ({}, {digest}) is not loaded: {}",
                    spec.name,
                    spec.library_shown,
                    crate::lang::NOT_LOADED
                ));
                self.ignored_custom.push(spec.name);
                continue;
            }
            crate::lang::load_custom(&spec).map_err(|e| Error::CustomLanguage {
                file: file.to_string(),
                error: e,
            })?;
            let globs = spec.extensions.iter().map(|e| format!("*.{e}")).collect();
            self.custom_languages.push((spec.name, globs));
        }
        Ok(())
    }

    /// Compiles `languageInjections`: a list of ast-grep rules with a `hostLanguage`
    /// and the language (or `$LANG` candidates) `injected` at their `$CONTENT`.
    pub(super) fn language_injections(&mut self, value: &Value, file: &str) -> Result<(), Error> {
        let bad = |detail: String| Error::BadConfigFile {
            file: file.to_string(),
            detail: format!("languageInjections: {detail}"),
        };
        let Value::Seq(entries) = value else {
            return Err(bad("expected a list of injections".into()));
        };
        for (n, entry) in entries.iter().enumerate() {
            let parsed = SerializableInjection::deserialize(entry.clone())
                .map_err(|e| bad(format!("#{}: {e}", n + 1)))?;
            let host = crate::files::parse_language(&parsed.host_language)
                .map_err(|e| bad(format!("#{}: hostLanguage: {e}", n + 1)))?;
            let matcher = parsed
                .core
                .get_matcher(DeserializeEnv::new(host))
                .map_err(|e| bad(format!("#{}: {}", n + 1, chain(&e))))?;
            let names = match &parsed.injected {
                Injected::Static(one) => vec![one.clone()],
                Injected::Dynamic(many) => many.clone(),
            };
            let candidates = names
                .iter()
                .map(|name| crate::files::parse_language(name))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad(format!("#{}: injected: {e}", n + 1)))?;
            let default = match parsed.injected {
                Injected::Static(_) => candidates.first().copied(),
                Injected::Dynamic(_) => None,
            };
            self.injections.push(Injection {
                host,
                matcher,
                default,
                candidates,
            });
        }
        self.injection_specs.push((value.clone(), file.to_string()));
        Ok(())
    }

    pub(super) fn sgconfig_file(&mut self, path: &Path) -> Result<(), Error> {
        let index = self.read(path)?;
        let file = display(self.repo, path);
        let parsed: SgConfig =
            ast_grep_config::from_str(&self.texts[index]).map_err(|e| Error::BadConfigFile {
                file: file.clone(),
                detail: yaml_error(&e),
            })?;
        // Custom languages first: globs, injections and rules may name them.
        if let Some(custom) = &parsed.custom_languages {
            self.custom_languages(custom, path, &file)?;
        }
        if let Some(globs) = &parsed.language_globs {
            self.language_globs(globs, &file)?;
        }
        if let Some(injections) = &parsed.language_injections {
            self.language_injections(injections, &file)?;
        }
        if let Some(value) = &parsed.no_ignore {
            self.no_ignore |= no_ignore(value, &file)?;
        }
        let base = self.base_of(path);
        let dir = path.parent().unwrap_or(Path::new("."));
        for entry in &parsed.util_dirs {
            check_inside(self.repo, path, &file, "utilDirs", entry)?;
            self.util_dir(&dir.join(entry))?;
        }
        for entry in &parsed.rule_dirs {
            check_inside(self.repo, path, &file, "ruleDirs", entry)?;
            let target = dir.join(entry);
            if !target.is_dir() {
                return Err(Error::BadConfigFile {
                    file,
                    detail: format!("ruleDirs: '{entry}' is not a folder"),
                });
            }
            self.yaml_dir(&target, &base)?;
        }
        self.sources.push(file);
        Ok(())
    }

    fn list_yaml(&self, dir: &Path) -> Result<Vec<PathBuf>, Error> {
        let mut files = Vec::new();
        yaml_files(dir, &mut files).map_err(|source| Error::ReadConfig {
            file: display(self.repo, dir),
            source,
        })?;
        Ok(files)
    }

    fn yaml_dir(&mut self, dir: &Path, base: &str) -> Result<(), Error> {
        for file in self.list_yaml(dir)? {
            self.yaml_rule_file(&file, base)?;
        }
        Ok(())
    }

    /// Notes a rule file's documents, parsed when the rules are compiled (a scan whose
    /// plan is cached reads the file for its digest only).
    pub(super) fn yaml_rule_file(&mut self, path: &Path, base: &str) -> Result<(), Error> {
        let index = self.read(path)?;
        self.docs.push(Doc {
            value: None,
            file: display(self.repo, path),
            text_index: index,
            ordinal: 0,
            base: base.to_string(),
        });
        Ok(())
    }

    /// Notes the utility rule files of the `utilDirs` of the `sgconfig.yml` at the
    /// repository root (none without one): for rules given without a project config.
    pub(super) fn project_utils(&mut self) -> Result<(), Error> {
        let Some(repo) = self.repo else {
            return Ok(());
        };
        let Some(path) = SGCONFIG_NAMES
            .iter()
            .map(|n| repo.workdir.join(n))
            .find(|p| p.is_file())
        else {
            return Ok(());
        };
        let index = self.read(&path)?;
        let file = display(self.repo, &path);
        let parsed: SgConfig =
            ast_grep_config::from_str(&self.texts[index]).map_err(|e| Error::BadConfigFile {
                file: file.clone(),
                detail: yaml_error(&e),
            })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        for entry in &parsed.util_dirs {
            check_inside(self.repo, &path, &file, "utilDirs", entry)?;
            self.util_dir(&dir.join(entry))?;
        }
        Ok(())
    }

    /// Notes a folder's utility rule files, parsed when the rules are compiled.
    fn util_dir(&mut self, dir: &Path) -> Result<(), Error> {
        for file in self.list_yaml(dir)? {
            let index = self.read(&file)?;
            self.util_texts.push((index, display(self.repo, &file)));
        }
        Ok(())
    }

    /// Parses the rule and utility files read: every document in the order read
    /// (only the rule files named in `files`, when given).
    pub(super) fn parse(
        &mut self,
        files: Option<&std::collections::HashSet<&str>>,
    ) -> Result<(), Error> {
        for (index, file) in std::mem::take(&mut self.util_texts) {
            let utils: Vec<SerializableGlobalRule<Lang>> =
                ast_grep_config::from_multiple(&self.texts[index]).map_err(|e| {
                    Error::BadConfigFile {
                        file,
                        detail: yaml_error(&e),
                    }
                })?;
            self.utils.extend(utils);
        }
        let mut docs = Vec::with_capacity(self.docs.len());
        for doc in std::mem::take(&mut self.docs) {
            if doc.value.is_some() {
                docs.push(doc);
                continue;
            }
            if files.is_some_and(|f| !f.contains(doc.file.as_str())) {
                continue;
            }
            let values: Vec<Value> = ast_grep_config::from_multiple(&self.texts[doc.text_index])
                .map_err(|e| Error::BadConfigFile {
                    file: doc.file.clone(),
                    detail: yaml_error(&e),
                })?;
            for (ordinal, value) in values.into_iter().enumerate() {
                docs.push(Doc {
                    value: Some(value),
                    file: doc.file.clone(),
                    text_index: doc.text_index,
                    ordinal,
                    base: doc.base.clone(),
                });
            }
        }
        self.docs = docs;
        Ok(())
    }

    /// `languageGlobs` and the custom languages' extensions, built.
    pub(super) fn built_language_globs(&self) -> Result<crate::files::LanguageGlobs, Error> {
        crate::files::LanguageGlobs::new(
            self.language_globs
                .iter()
                .chain(&self.custom_languages)
                .map(|(lang, globs)| (lang.as_str(), globs.clone())),
        )
        .map_err(|detail| Error::BadConfigFile {
            file: "languageGlobs".into(),
            detail,
        })
    }
}
