/*!
The levels both the engines and the front ends speak of: how loud a finding is
([`Severity`]) and how strictly a pattern compares ([`Strictness`]). They live in the
base layer so that a front end names them without reaching an engine, and no layer
re-declares them.
*/

/// How loud a finding is (ast-grep's levels, minus `off`, which disables a rule).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Hint,
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Hint => "hint",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// ast-grep's pattern strictness (`--strictness`): which nodes a pattern compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strictness {
    /// Every node, trivia included.
    Cst,
    /// Every node but trivial ones of the source (ast-grep's default).
    #[default]
    Smart,
    /// Named nodes only.
    Ast,
    /// Named nodes, comments left out.
    Relaxed,
    /// Named nodes without comments, kinds only (no text).
    Signature,
    /// Text only, node kinds ignored.
    Template,
}
