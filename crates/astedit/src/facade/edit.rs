//! What [`Repository::stage`](crate::Repository::stage) stages: one edit, built with
//! the constructor of its kind and refined with the builder methods.

/// An edit to stage as one preview: structural rewrite ops, an agent's patch, rules
/// with fixes, a file's new text, or text replacements in a file.
///
/// Paths are repository paths (relative to the work tree's top, `/`-separated), or
/// pathspecs relative to the folder the [`Repository`](crate::Repository) was opened
/// at. A builder method that does not fit the edit's kind (`lang` on a patch) makes
/// [`stage`](crate::Repository::stage) fail with code `usage`, before anything is read.
#[derive(Debug, Clone)]
pub struct Edit {
    pub(crate) kind: Kind,
    pub(crate) reason: Option<String>,
    pub(crate) misuse: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Rewrite(Rewrite),
    Patch {
        text: String,
        base: String,
    },
    Rules {
        yaml: String,
        paths: Vec<String>,
    },
    Write {
        path: String,
        content: String,
        blob: Option<String>,
    },
    Replace(Replace),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Rewrite {
    pub ops: Vec<(String, String)>,
    pub lang: Option<String>,
    pub paths: Vec<String>,
    pub add_imports: Vec<String>,
    pub remove_imports: Vec<String>,
    pub fmt: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Replace {
    pub path: String,
    /// `(old, new, every occurrence)`, applied in order.
    pub edits: Vec<(String, String, bool)>,
    pub blob: Option<String>,
}

impl Edit {
    fn of(kind: Kind) -> Edit {
        Edit {
            kind,
            reason: None,
            misuse: None,
        }
    }

    /// Rewrites every match of the ast-grep `pattern` (`$A`, `$$$ARGS`) with
    /// `template`, in every file of a language the pattern parses in (narrow it with
    /// [`lang`](Edit::lang) and [`paths`](Edit::paths)).
    pub fn rewrite(pattern: impl Into<String>, template: impl Into<String>) -> Edit {
        Edit::of(Kind::Rewrite(Rewrite {
            ops: vec![(pattern.into(), template.into())],
            ..Rewrite::default()
        }))
    }

    /// A further rewrite op, run on the previous ops' result (rewrites only).
    pub fn then_rewrite(self, pattern: impl Into<String>, template: impl Into<String>) -> Edit {
        let op = (pattern.into(), template.into());
        self.rewrite_part("then_rewrite", |r| r.ops.push(op))
    }

    /// Only files of this language, and a file named exactly is parsed as it
    /// (rewrites only).
    pub fn lang(self, lang: impl Into<String>) -> Edit {
        let lang = lang.into();
        self.rewrite_part("lang", |r| r.lang = Some(lang))
    }

    /// Only the files these pathspecs select (rewrites and rules).
    pub fn paths<I, S>(mut self, paths: I) -> Edit
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let paths: Vec<String> = paths.into_iter().map(Into::into).collect();
        match &mut self.kind {
            Kind::Rewrite(r) => r.paths = paths,
            Kind::Rules { paths: p, .. } => *p = paths,
            _ => self.misuse("paths"),
        }
        self
    }

    /// An import statement added to each file the rewrite changes unless it has it,
    /// merged into an import of the same module where it can be (rewrites only).
    pub fn add_import(self, statement: impl Into<String>) -> Edit {
        let statement = statement.into();
        self.rewrite_part("add_import", |r| r.add_imports.push(statement))
    }

    /// A name whose import goes from each file the rewrite changes once nothing
    /// there refers to it (rewrites only).
    pub fn remove_import(self, name: impl Into<String>) -> Edit {
        let name = name.into();
        self.rewrite_part("remove_import", |r| r.remove_imports.push(name))
    }

    /// Runs each rewritten file through the formatter the project's `astedit.toml`
    /// declares for its language, keeping its hunks over the rewrite (rewrites only).
    /// A formatter is a program: it runs only under [`Programs::Allow`](crate::Programs)
    /// and with the user's recorded consent to that command (`git astedit allow`).
    pub fn fmt(self) -> Edit {
        self.rewrite_part("fmt", |r| r.fmt = true)
    }

    /// A patch in the `*** Begin Patch` format coding agents write (add, update with
    /// context chunks, delete and move files), placed against the work tree.
    pub fn patch(text: impl Into<String>) -> Edit {
        Edit::of(Kind::Patch {
            text: text.into(),
            base: String::new(),
        })
    }

    /// Rules with fixes, as ast-grep rule YAML (several documents separated by
    /// `---`): every fix they make is staged (code `usage` for YAML that is not rules).
    pub fn rules(yaml: impl Into<String>) -> Edit {
        Edit::of(Kind::Rules {
            yaml: yaml.into(),
            paths: Vec::new(),
        })
    }

    /// A file's whole new text (a new file when there is none at `path`).
    pub fn write(path: impl Into<String>, content: impl Into<String>) -> Edit {
        Edit::of(Kind::Write {
            path: path.into(),
            content: content.into(),
            blob: None,
        })
    }

    /// Replaces the one occurrence of `old` in the file at `path` with `new` (code
    /// `text-not-found` or `text-not-unique` when `old` occurs not once; see
    /// [`replace_all`](Edit::replace_all)).
    pub fn replace(
        path: impl Into<String>,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> Edit {
        Edit::of(Kind::Replace(Replace {
            path: path.into(),
            edits: vec![(old.into(), new.into(), false)],
            blob: None,
        }))
    }

    /// A further replacement in the same file, made on the previous ones' result
    /// (replacements only).
    pub fn and_replace(mut self, old: impl Into<String>, new: impl Into<String>) -> Edit {
        let edit = (old.into(), new.into(), false);
        match &mut self.kind {
            Kind::Replace(r) => r.edits.push(edit),
            _ => self.misuse("and_replace"),
        }
        self
    }

    /// The last replacement replaces every occurrence, not only a unique one
    /// (replacements only).
    pub fn replace_all(mut self) -> Edit {
        match &mut self.kind {
            Kind::Replace(r) => {
                if let Some(last) = r.edits.last_mut() {
                    last.2 = true;
                }
            }
            _ => self.misuse("replace_all"),
        }
        self
    }

    /// The blob id of the file's content this edit was made against (as an earlier
    /// read gave it): when the file changed since, the edit is merged three-way onto
    /// it and staged for review (writes and replacements only).
    pub fn based_on(mut self, blob: impl Into<String>) -> Edit {
        let blob = Some(blob.into());
        match &mut self.kind {
            Kind::Write { blob: b, .. } => *b = blob,
            Kind::Replace(r) => r.blob = blob,
            _ => self.misuse("based_on"),
        }
        self
    }

    /// Why the change is made: recorded in the preview and the journal.
    pub fn reason(mut self, reason: impl Into<String>) -> Edit {
        self.reason = Some(reason.into());
        self
    }

    fn rewrite_part(mut self, method: &str, set: impl FnOnce(&mut Rewrite)) -> Edit {
        match &mut self.kind {
            Kind::Rewrite(r) => set(r),
            _ => self.misuse(method),
        }
        self
    }

    fn misuse(&mut self, method: &str) {
        if self.misuse.is_none() {
            self.misuse = Some(format!(
                "Edit::{method} does not apply to {} edit",
                self.kind.article_name()
            ));
        }
    }
}

impl Kind {
    fn article_name(&self) -> &'static str {
        match self {
            Kind::Rewrite(_) => "a rewrite",
            Kind::Patch { .. } => "a patch",
            Kind::Rules { .. } => "a rules",
            Kind::Write { .. } => "a write",
            Kind::Replace(_) => "a replace",
        }
    }
}
