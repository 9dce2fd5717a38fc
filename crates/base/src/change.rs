/*!
The one data shape every engine produces and the transaction store consumes.

Engines (AST rewrite, patch, rules) turn files into a [`ChangeSet`]; `txn` stores it as
a preview and later writes it. `txn` knows nothing of ASTs or patches, and the engines
know nothing of git objects.
*/

use serde::Deserialize;
use serde::Serialize;

/// How a file is stored in git (and written to the work tree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileMode {
    Regular,
    Executable,
    Symlink,
}

impl FileMode {
    /// The mode as git writes it in a tree.
    pub fn git_mode(self) -> &'static str {
        match self {
            FileMode::Regular => "100644",
            FileMode::Executable => "100755",
            FileMode::Symlink => "120000",
        }
    }

    /// Reads the mode of a file from its metadata (`symlink_metadata`).
    pub fn from_metadata(meta: &std::fs::Metadata) -> FileMode {
        if meta.file_type().is_symlink() {
            return FileMode::Symlink;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if meta.permissions().mode() & 0o111 != 0 {
                return FileMode::Executable;
            }
        }
        FileMode::Regular
    }
}

/// A file's bytes (raw, exactly as on disk) and mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    pub bytes: Vec<u8>,
    pub mode: FileMode,
}

/// One path's change. `before: None` adds the file; `after: None` deletes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Repository path: relative to the work-tree root, `/`-separated.
    pub path: String,
    pub before: Option<FileContent>,
    pub after: Option<FileContent>,
}

/// Every change of one transaction, at most one per path, sorted by path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    pub changes: Vec<FileChange>,
}

impl ChangeSet {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
    /// Sorts by path so that stored trees and printed diffs are deterministic.
    pub fn sort(&mut self) {
        self.changes.sort_by(|a, b| a.path.cmp(&b.path));
    }
}

/// What made a preview.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum PreviewKind {
    /// `edit` (`ast_edit`): structural rewrite ops.
    #[default]
    Edit,
    /// `patch` (`apply_patch`): a `*** Begin Patch` text.
    Patch,
    /// `scan --stage`/`--apply`: rule fixes.
    Scan,
    /// `merge`: previews combined.
    Merge,
    /// `edit_lines`: line ranges of a file replaced, addressed by the blob they were
    /// read from.
    Lines,
    /// `run`: what a command changed in a worktree of the tree.
    Run,
    /// `replace`: `old_string` → `new_string` edits of one file (Claude Code's
    /// Edit/MultiEdit shape).
    Replace,
    /// `write`: one file created or replaced whole.
    Write,
    /// An edit an agent made with its own tool, journalled by `agent-hook` after the
    /// fact (applied when recorded).
    Hook,
    /// `steps`: ordered steps (rule sets or ops), each run on the previous result.
    Steps,
}

impl PreviewKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PreviewKind::Edit => "edit",
            PreviewKind::Patch => "patch",
            PreviewKind::Scan => "scan",
            PreviewKind::Merge => "merge",
            PreviewKind::Lines => "lines",
            PreviewKind::Run => "run",
            PreviewKind::Replace => "replace",
            PreviewKind::Write => "write",
            PreviewKind::Hook => "hook",
            PreviewKind::Steps => "steps",
        }
    }
}

impl std::fmt::Display for PreviewKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, so that `{:<5}` aligns in lists.
        f.pad(self.as_str())
    }
}

/// What a preview records about itself, stored as JSON in the preview commit's message.
/// Every field but `kind` and `summary` is optional so that old previews stay readable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PreviewMeta {
    pub kind: PreviewKind,
    /// One line, e.g. `3 replacements in 2 files`.
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The AST ops of an `edit`, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<OpMeta>,
    /// The imports an `edit` fixes up in each file it changes.
    #[serde(default, skip_serializing_if = "ImportFix::is_empty")]
    pub imports: ImportFix,
    /// SHA-256 of the patch text of a `patch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_digest: Option<String>,
    /// Per-rule counts of a `scan`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleCount>,
    /// Per-file counts and flags.
    #[serde(default)]
    pub files: Vec<FileMeta>,
    /// Total replacements (or patch chunks).
    #[serde(default)]
    pub replacements: usize,
    /// HEAD when the preview was staged (`None` on an unborn branch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_head: Option<String>,
    #[serde(default)]
    pub tool_version: String,
    /// The agent (MCP client name/version) that staged it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Who staged it: the git identity (`Name <email>`) of the user where it was
    /// staged. A claim anyone can write into a commit: whether it is trusted is the
    /// local trust record's or a signature's to say (see the Trust chapter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_by: Option<String>,
    /// Engine-specific detail (patch resolution levels, warnings).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub details: serde_json::Value,
}

/// The imports a rewrite adds and removes in each file it changes (`--add-import`,
/// a rule's `imports:`), as written: statements and names, metavariables allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImportFix {
    /// Import statements in the file's language.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add: Vec<String>,
    /// Names whose imports go once nothing refers to them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<String>,
}

impl ImportFix {
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.remove.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OpMeta {
    pub pattern: String,
    pub rewrite: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// `edit --selector KIND`: the node kind in the pattern that matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuleCount {
    pub rule: String,
    pub count: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileMeta {
    pub path: String,
    pub count: usize,
    /// E.g. `introduces-parse-errors`, `added`, `deleted`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<FileFlag>,
}

/// What a reviewer should know about one file of a preview. Written as a string
/// (`introduces-parse-errors`, `repeats-kept-text`, `leaves-empty-block`, `added`,
/// `deleted`, `rescued`, `moved-from:PATH`), in
/// preview metadata as in reports; a string this version does not know is kept as it
/// is ([`FileFlag::Other`]), so an older or newer preview still reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FileFlag {
    /// The rewritten file parses with errors where the original did not.
    IntroducesParseErrors,
    /// A replacement repeats text of its matched node that the pattern does not cover
    /// and that is kept after it (`…, response.text, response.text`).
    RepeatsKeptText,
    /// A deletion left a block with no statement in it (`if x:` with nothing under it).
    LeavesEmptyBlock,
    /// The change creates the file.
    Added,
    /// The change deletes the file.
    Deleted,
    /// A patch chunk was placed by a looser match than its context asked for.
    Rescued,
    /// A patch moved the file here from this path.
    MovedFrom(String),
    /// A flag this version does not know.
    Other(String),
}

impl FileFlag {
    /// The flag as written.
    pub fn as_str(&self) -> std::borrow::Cow<'_, str> {
        use std::borrow::Cow;
        match self {
            FileFlag::IntroducesParseErrors => Cow::Borrowed("introduces-parse-errors"),
            FileFlag::RepeatsKeptText => Cow::Borrowed("repeats-kept-text"),
            FileFlag::LeavesEmptyBlock => Cow::Borrowed("leaves-empty-block"),
            FileFlag::Added => Cow::Borrowed("added"),
            FileFlag::Deleted => Cow::Borrowed("deleted"),
            FileFlag::Rescued => Cow::Borrowed("rescued"),
            FileFlag::MovedFrom(path) => Cow::Owned(format!("moved-from:{path}")),
            FileFlag::Other(s) => Cow::Borrowed(s),
        }
    }

    /// Reads a written flag.
    pub fn parse(s: &str) -> FileFlag {
        match s {
            "introduces-parse-errors" => FileFlag::IntroducesParseErrors,
            "repeats-kept-text" => FileFlag::RepeatsKeptText,
            "leaves-empty-block" => FileFlag::LeavesEmptyBlock,
            "added" => FileFlag::Added,
            "deleted" => FileFlag::Deleted,
            "rescued" => FileFlag::Rescued,
            _ => match s.strip_prefix("moved-from:") {
                Some(path) => FileFlag::MovedFrom(path.to_string()),
                None => FileFlag::Other(s.to_string()),
            },
        }
    }
}

impl std::fmt::Display for FileFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_str())
    }
}

impl Serialize for FileFlag {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.as_str())
    }
}

impl<'de> Deserialize<'de> for FileFlag {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(FileFlag::parse(&s))
    }
}

impl schemars::JsonSchema for FileFlag {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FileFlag".into()
    }
    // Inline and a plain string, as the schema has always said of flags.
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string" })
    }
}
