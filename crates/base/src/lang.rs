/*!
The languages files are parsed as: ast-grep's built-in ones, and the custom languages
an ast-grep project declares in `sgconfig.yml`'s `customLanguages` (a tree-sitter
grammar compiled to a dynamic library, loaded here as ast-grep loads it).

[`Lang`] is `Copy` and cheap to compare: a custom language is an index into a
process-wide table that only grows, so a language value stays valid for the life of
the process (an MCP server that reads a config twice gets the same entry back).
*/

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::RwLock;

use ast_grep_core::matcher::{Pattern, PatternBuilder, PatternError};
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc, TSLanguage, TSRange};
use ast_grep_core::{Language, Node};
pub use ast_grep_language::SupportLang;

use crate::error::{Classify, Exit};

/// A language: built in, or loaded from a project's `customLanguages`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    Builtin(SupportLang),
    Custom(Custom),
}

/// A loaded custom language: its place in the table.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Custom(u32);

macro_rules! builtin_consts {
    ($($name:ident),*) => {
        #[allow(non_upper_case_globals)]
        impl Lang {
            $(pub const $name: Lang = Lang::Builtin(SupportLang::$name);)*
        }
    };
}
builtin_consts!(
    Bash, C, Cpp, CSharp, Css, Dart, Elixir, Go, Haskell, Hcl, Html, Java, JavaScript, Json,
    Kotlin, Lua, Markdown, Nix, Php, Python, Ruby, Rust, Scala, Solidity, Swift, Tsx, TypeScript,
    Yaml, Zig
);

/// One loaded grammar. Leaked on purpose: the library must stay mapped while any
/// tree of its language lives, which is the rest of the process.
struct Entry {
    name: String,
    ts: TSLanguage,
    meta_var: char,
    expando: char,
    extensions: Vec<String>,
    /// The canonical library path and symbol it came from (a reload reuses it).
    source: (PathBuf, String),
    /// Its name, symbol and a digest of the library's bytes: what names it in cache
    /// keys, so that a grammar rebuilt under the same name misses the cache.
    identity: String,
    _lib: libloading::Library,
}

static TABLE: RwLock<Vec<&'static Entry>> = RwLock::new(Vec::new());

/// Which `customLanguages` libraries may be loaded. Loading one runs its code, and the
/// library and its path come from the repository's files, so by default none is
/// (ast-grep's `--custom-languages ignore`); the front end installs the person's choice.
pub enum CustomPolicy {
    /// None is loaded.
    Ignore,
    /// Every one is (`--custom-languages=allow`: a blanket choice for one run).
    All,
    /// Those whose consent digest ([`custom_digest`]) the function accepts (the
    /// consents of `git astedit allow`, and digests given for the run).
    Consent(Box<dyn Fn(&str) -> bool + Send + Sync>),
}

static POLICY: RwLock<Option<std::sync::Arc<CustomPolicy>>> = RwLock::new(None);

/// Installs the policy for loading `customLanguages` libraries from now on.
pub fn set_custom_policy(policy: CustomPolicy) {
    *POLICY.write().unwrap_or_else(|e| e.into_inner()) = Some(std::sync::Arc::new(policy));
}

/// Whether a library whose consent digest is `digest` may be loaded (`None`: its
/// digest could not be computed, so only a blanket `allow` loads it).
pub fn custom_allowed(digest: Option<&str>) -> bool {
    let policy = POLICY.read().unwrap_or_else(|e| e.into_inner()).clone();
    match policy.as_deref() {
        None | Some(CustomPolicy::Ignore) => false,
        Some(CustomPolicy::All) => true,
        Some(CustomPolicy::Consent(accepts)) => digest.is_some_and(accepts),
    }
}

/// The consent digest of a custom language: SHA-256 over its name, its symbol, its
/// library's path (relative to `root` when inside it, so that every clone computes the
/// same) and the library's bytes. A changed library, or another one named, asks
/// again. `Err` says why the library cannot be read.
pub fn custom_digest(spec: &CustomSpec, root: Option<&Path>) -> Result<String, String> {
    use sha2::Digest as _;
    let path = std::fs::canonicalize(&spec.library).map_err(|e| e.to_string())?;
    let shown = root
        .and_then(|r| path.strip_prefix(r).ok())
        .unwrap_or(&path)
        .to_string_lossy()
        .replace('\\', "/");
    let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    let symbol = spec
        .symbol
        .clone()
        .unwrap_or_else(|| format!("tree_sitter_{}", spec.name));
    let mut h = sha2::Sha256::new();
    for part in [
        "customLanguages".as_bytes(),
        spec.name.as_bytes(),
        symbol.as_bytes(),
        shown.as_bytes(),
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    h.update(sha2::Sha256::digest(&bytes));
    Ok(format!("sha256:{:x}", h.finalize()))
}

/// What a project's `customLanguages` that were not loaded leave: the advice.
pub const NOT_LOADED: &str = "a custom language is loaded only once allowed (a tree-sitter \
     library runs code when loaded): read what sgconfig.yml names, then run `git astedit \
     allow` in this repository, or pass --custom-languages=sha256:DIGEST for one run";

fn table() -> std::sync::RwLockReadGuard<'static, Vec<&'static Entry>> {
    TABLE.read().unwrap_or_else(|e| e.into_inner())
}

impl Custom {
    fn entry(self) -> &'static Entry {
        // An index is only ever made from a pushed entry.
        table()[self.0 as usize]
    }
}

/// One `languageInjections` entry, compiled: in files of `host`, where `matcher`
/// matches, its `$CONTENT` is code of the language `$LANG` names, else `default`.
pub struct Injection {
    pub host: Lang,
    pub matcher: ast_grep_config::RuleCore,
    pub default: Option<Lang>,
    /// Every language the entry may inject.
    pub candidates: Vec<Lang>,
}

impl fmt::Debug for Injection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Injection")
            .field("host", &self.host)
            .field("default", &self.default)
            .field("candidates", &self.candidates)
            .finish_non_exhaustive()
    }
}

impl Injection {
    /// The languages whose files may hold code of `guest`: HTML for what its
    /// `<script>` and `<style>` hold, and the hosts of `injections` that name it.
    pub fn hosts_of(guest: Lang, injections: &[Injection]) -> Vec<Lang> {
        let mut out = Vec::new();
        for host in SupportLang::all_langs() {
            let names = host.injectable_languages().unwrap_or(&[]);
            if names.iter().any(|n| n.parse::<Lang>().ok() == Some(guest)) {
                out.push(Lang::Builtin(*host));
            }
        }
        for i in injections {
            if i.candidates.contains(&guest) && !out.contains(&i.host) {
                out.push(i.host);
            }
        }
        out.retain(|h| *h != guest);
        out
    }
}

/// A custom language that could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("custom language '{name}': cannot load its grammar from '{library}': {reason}")]
pub struct LoadError {
    pub name: String,
    pub library: String,
    pub reason: String,
}

impl Classify for LoadError {
    fn code(&self) -> &'static str {
        "custom-language"
    }
    fn exit(&self) -> Exit {
        Exit::BadInput
    }
    fn hint(&self) -> Option<String> {
        Some(
            "customLanguages in sgconfig.yml: libraryPath (relative to sgconfig.yml) must \
             name a tree-sitter grammar built as a shared library exporting \
             tree_sitter_<name> (or languageSymbol)"
                .into(),
        )
    }
}

/// What `customLanguages` says about one language (ast-grep's fields).
#[derive(Debug, Clone)]
pub struct CustomSpec {
    pub name: String,
    /// Resolved against the config's folder.
    pub library: PathBuf,
    /// As written, for messages.
    pub library_shown: String,
    pub symbol: Option<String>,
    pub meta_var: Option<char>,
    pub expando: Option<char>,
    pub extensions: Vec<String>,
}

/// Loads a custom language (or finds it loaded already) and returns it.
pub fn load_custom(spec: &CustomSpec) -> Result<Lang, LoadError> {
    let fail = |reason: String| LoadError {
        name: spec.name.clone(),
        library: spec.library_shown.clone(),
        reason,
    };
    if spec.name.parse::<SupportLang>().is_ok() {
        return Err(fail(format!(
            "'{}' is the name of a built-in language",
            spec.name
        )));
    }
    let path = std::fs::canonicalize(&spec.library).map_err(|e| fail(e.to_string()))?;
    if !path.is_file() {
        return Err(fail("not a file".into()));
    }
    let symbol = spec
        .symbol
        .clone()
        .unwrap_or_else(|| format!("tree_sitter_{}", spec.name));
    let source = (path.clone(), symbol.clone());
    let mut guard = TABLE.write().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = guard
        .iter()
        .rposition(|e| e.name == spec.name && e.source == source)
    {
        return Ok(Lang::Custom(Custom(i as u32)));
    }
    // SAFETY: loading a library runs its initialisers; a tree-sitter grammar has none
    // beyond the C runtime's. The library is never unloaded (the entry is leaked), so
    // the language the symbol returns stays valid.
    let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| fail(e.to_string()))?;
    let ts = {
        // SAFETY: the symbol is declared as tree-sitter's `const TSLanguage *(void)`
        // constructor.
        let func: libloading::Symbol<
            unsafe extern "C" fn() -> *const tree_sitter::ffi::TSLanguage,
        > = unsafe { lib.get(symbol.as_bytes()) }
            .map_err(|e| fail(format!("no symbol '{symbol}' ({e})")))?;
        // SAFETY: as above; a grammar's constructor takes no argument.
        let raw = unsafe { func() };
        // A symbol of that name that is not a grammar's constructor may return
        // nothing: reading the language through it would crash.
        if raw.is_null() {
            return Err(fail(format!(
                "'{symbol}' returned no language (a null pointer)"
            )));
        }
        // SAFETY: a non-null pointer from the grammar's constructor, which stays
        // valid while the library is loaded (for ever: the entry is leaked).
        unsafe { tree_sitter::Language::from_raw(raw) }
    };
    let version = ts.abi_version();
    if !(tree_sitter::MIN_COMPATIBLE_LANGUAGE_VERSION..=tree_sitter::LANGUAGE_VERSION)
        .contains(&version)
    {
        return Err(fail(format!(
            "its ABI version is {version}; this build reads versions {} to {} \
             (regenerate the grammar with a matching tree-sitter CLI)",
            tree_sitter::MIN_COMPATIBLE_LANGUAGE_VERSION,
            tree_sitter::LANGUAGE_VERSION
        )));
    }
    let identity = {
        use sha2::Digest as _;
        let bytes = std::fs::read(&path).map_err(|e| fail(e.to_string()))?;
        let digest = sha2::Sha256::digest(&bytes);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("{}\0{symbol}\0{hex}", spec.name)
    };
    let meta_var = spec.meta_var.unwrap_or('$');
    let entry: &'static Entry = Box::leak(Box::new(Entry {
        name: spec.name.clone(),
        ts,
        meta_var,
        expando: spec.expando.unwrap_or(meta_var),
        extensions: spec.extensions.clone(),
        source,
        identity,
        _lib: lib,
    }));
    guard.push(entry);
    Ok(Lang::Custom(Custom(guard.len() as u32 - 1)))
}

impl Lang {
    /// What names the language in cache keys: a built-in one's name; a custom one's
    /// name, symbol and the digest of its library's bytes.
    pub fn cache_identity(&self) -> String {
        match self {
            Lang::Builtin(b) => b.to_string(),
            Lang::Custom(c) => c.entry().identity.clone(),
        }
    }

    /// For each byte range of `spans`, the ranges of the syntax nodes of `src` that
    /// hold it, innermost first, the root's last (`src` parsed once). A node holds an
    /// empty range at `at` when `at` lies strictly inside it; the root holds every one.
    pub fn enclosing(
        &self,
        src: &str,
        spans: &[std::ops::Range<usize>],
    ) -> Vec<Vec<std::ops::Range<usize>>> {
        let tree = self.ast_grep(src);
        let holds = |r: &std::ops::Range<usize>, s: &std::ops::Range<usize>| {
            if s.is_empty() {
                r.start < s.start && s.start < r.end
            } else {
                r.start <= s.start && s.end <= r.end
            }
        };
        spans
            .iter()
            .map(|s| {
                let mut node = tree.root();
                let mut out = vec![node.range()];
                loop {
                    let inner = node.children().find(|c| holds(&c.range(), s));
                    let Some(child) = inner else { break };
                    out.push(child.range());
                    node = child;
                }
                out.reverse();
                out
            })
            .collect()
    }

    /// Every built-in language, then every custom one loaded so far.
    pub fn all_langs() -> Vec<Lang> {
        let builtin = SupportLang::all_langs().iter().copied().map(Lang::Builtin);
        let custom = (0..table().len() as u32).map(|i| Lang::Custom(Custom(i)));
        builtin.chain(custom).collect()
    }

    /// The built-in language, if it is one.
    pub fn builtin(self) -> Option<SupportLang> {
        match self {
            Lang::Builtin(b) => Some(b),
            Lang::Custom(_) => None,
        }
    }

    /// The file extensions a custom language declared (none for a built-in one: those
    /// go by ast-grep's table).
    pub fn custom_extensions(self) -> Vec<String> {
        match self {
            Lang::Builtin(_) => Vec::new(),
            Lang::Custom(c) => c.entry().extensions.clone(),
        }
    }

    /// The language of a path by its extension, built-in languages only.
    pub fn from_path(path: impl AsRef<Path>) -> Option<Lang> {
        SupportLang::from_path(path).map(Lang::Builtin)
    }
}

impl From<SupportLang> for Lang {
    fn from(b: SupportLang) -> Lang {
        Lang::Builtin(b)
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lang::Builtin(b) => write!(f, "{b}"),
            Lang::Custom(c) => f.write_str(&c.entry().name),
        }
    }
}

impl fmt::Debug for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lang::Builtin(b) => write!(f, "{b:?}"),
            Lang::Custom(c) => f.write_str(&c.entry().name),
        }
    }
}

/// A name that is no language.
#[derive(Debug, thiserror::Error)]
#[error("unknown language '{0}'")]
pub struct UnknownLang(pub String);

impl FromStr for Lang {
    type Err = UnknownLang;
    fn from_str(s: &str) -> Result<Lang, UnknownLang> {
        if let Ok(b) = s.parse::<SupportLang>() {
            return Ok(Lang::Builtin(b));
        }
        let t = table();
        // The newest entry of that name (a reloaded config replaces an older one).
        t.iter()
            .rposition(|e| e.name == s)
            .map(|i| Lang::Custom(Custom(i as u32)))
            .ok_or_else(|| UnknownLang(s.to_string()))
    }
}

impl serde::Serialize for Lang {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Lang::Builtin(b) => b.serialize(s),
            Lang::Custom(c) => s.serialize_str(&c.entry().name),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Lang {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Lang, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl Language for Lang {
    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        match self {
            Lang::Builtin(b) => b.pre_process_pattern(query),
            Lang::Custom(_) => {
                let (meta, expando) = (self.meta_var_char(), self.expando_char());
                if meta == expando {
                    Cow::Borrowed(query)
                } else {
                    Cow::Owned(query.replace(meta, &expando.to_string()))
                }
            }
        }
    }
    fn meta_var_char(&self) -> char {
        match self {
            Lang::Builtin(b) => b.meta_var_char(),
            Lang::Custom(c) => c.entry().meta_var,
        }
    }
    fn expando_char(&self) -> char {
        match self {
            Lang::Builtin(b) => b.expando_char(),
            Lang::Custom(c) => c.entry().expando,
        }
    }
    fn extract_meta_var(&self, source: &str) -> Option<MetaVariable> {
        match self {
            Lang::Builtin(b) => b.extract_meta_var(source),
            Lang::Custom(_) => Expando(self.expando_char()).extract_meta_var(source),
        }
    }
    fn from_path<P: AsRef<Path>>(path: P) -> Option<Self> {
        Lang::from_path(path)
    }
    fn kind_to_id(&self, kind: &str) -> u16 {
        match self {
            Lang::Builtin(b) => b.kind_to_id(kind),
            Lang::Custom(c) => c.entry().ts.id_for_node_kind(kind, true),
        }
    }
    fn field_to_id(&self, field: &str) -> Option<u16> {
        match self {
            Lang::Builtin(b) => b.field_to_id(field),
            Lang::Custom(c) => c.entry().ts.field_id_for_name(field).map(|f| f.get()),
        }
    }
    fn build_pattern(&self, builder: &PatternBuilder) -> Result<Pattern, PatternError> {
        builder.build(|src| StrDoc::try_new(src, *self))
    }
}

/// Reaches ast-grep's default meta-variable reading (not public on its own) for a
/// custom language's expando character.
#[derive(Clone)]
struct Expando(char);

impl Language for Expando {
    fn expando_char(&self) -> char {
        self.0
    }
    fn kind_to_id(&self, _: &str) -> u16 {
        0
    }
    fn field_to_id(&self, _: &str) -> Option<u16> {
        None
    }
    fn build_pattern(&self, _: &PatternBuilder) -> Result<Pattern, PatternError> {
        Err(PatternError::NoContent(String::new()))
    }
}

impl LanguageExt for Lang {
    fn get_ts_language(&self) -> TSLanguage {
        match self {
            Lang::Builtin(b) => b.get_ts_language(),
            Lang::Custom(c) => c.entry().ts.clone(),
        }
    }
    fn injectable_languages(&self) -> Option<&'static [&'static str]> {
        match self {
            Lang::Builtin(b) => b.injectable_languages(),
            Lang::Custom(_) => None,
        }
    }
    fn extract_injections<L: LanguageExt>(
        &self,
        root: Node<StrDoc<L>>,
    ) -> Vec<(String, Vec<TSRange>)> {
        match self {
            Lang::Builtin(b) => b.extract_injections(root),
            Lang::Custom(_) => Vec::new(),
        }
    }
}
