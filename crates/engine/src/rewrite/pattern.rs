//! Compiling a pattern for one language: telling a bad pattern from one that is no code
//! in the language (to skip), `--selector`'s contextual patterns, and the languages'
//! quirks (a C# expression without its `;`, a Go call read as a conversion).

use crate::lang::Lang;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::Language;
use ast_grep_core::Matcher;
use ast_grep_core::Pattern;
use ast_grep_core::PatternError;

use super::tree::has_parse_error;
use super::tree::parse;
use super::Error;
use super::NotCode;

/// [`contextual`], where without a language asked for (`forced`) each file's language
/// is tried, as in ast-grep: one whose parse of the pattern has no node of that kind
/// is one the pattern is no code in (skipped), not an error.
pub(super) fn selected(
    pattern: &str,
    selector: &str,
    lang: Lang,
    forced: Option<Lang>,
) -> Result<Pattern, Error> {
    match contextual(pattern, selector, lang) {
        Err(_) if forced.is_none() => Err(Error::PatternDoesNotParse {
            pattern: pattern.to_string(),
            lang: lang.to_string(),
            why: NotCode::NoSelectedNode,
        }),
        compiled => compiled,
    }
}

/// `pattern` parsed as written, the node of kind `selector` in it being the pattern
/// (ast-grep's pattern object with `context` and `selector`).
fn contextual(pattern: &str, selector: &str, lang: Lang) -> Result<Pattern, Error> {
    Pattern::contextual(pattern, selector, lang).map_err(|e| Error::InvalidPattern {
        pattern: pattern.to_string(),
        detail: format!("selector '{selector}': {}", pattern_error_detail(&e, lang)),
    })
}

/// Compiles `text` for `lang`, telling a pattern bad everywhere from one that is
/// not code in this language (to skip). `forced`: the user chose this language, so a
/// pattern that is only text there is taken as such.
pub(super) fn compile(text: &str, lang: Lang, forced: bool) -> Result<Pattern, Error> {
    let not_code = |why| Error::PatternDoesNotParse {
        pattern: text.to_string(),
        lang: lang.to_string(),
        why,
    };
    // C#'s `await $A` is no statement alone: it is read inside one.
    let statement = (lang == Lang::CSharp && parses_with_errors(text, lang))
        .then(|| csharp_statement_expression(text, lang))
        .flatten();
    let pattern = match statement.map_or_else(|| Pattern::try_new(text, lang), Ok) {
        Ok(pattern) => pattern,
        // Several roots may only mean that this language's grammar reads the text
        // differently (`fn $F() {}` in Python): that is a language to skip.
        Err(PatternError::MultipleNode(_)) if parses_with_errors(text, lang) => {
            return Err(not_code(NotCode::ParseErrors))
        }
        Err(PatternError::MultipleNode(_)) if lost_all_metavariables(text, &[]) => {
            return Err(not_code(NotCode::MetavariablesLost))
        }
        Err(e) => {
            return Err(Error::InvalidPattern {
                pattern: text.to_string(),
                detail: pattern_error_detail(&e, lang),
            })
        }
    };
    let pattern = go_call_not_conversion(text, pattern, lang);
    // A root that parses as an ERROR matches any node by its content, as in ast-grep
    // (C#'s `$A == $B` is no statement, so it parses as one): taken when the user
    // chose the language and there is code inside the error. Languages chosen by
    // extension skip such a pattern, since it would match in a language it is not.
    if pattern.has_error() && !(forced && code_inside_error(text, lang)) {
        return Err(not_code(NotCode::ParseErrors));
    }
    let defined = pattern.defined_vars();
    if lost_all_metavariables(text, &defined.into_iter().collect::<Vec<_>>()) {
        return Err(not_code(NotCode::MetavariablesLost));
    }
    if !forced && is_prose(&pattern, lang) {
        return Err(not_code(NotCode::Text));
    }
    Ok(pattern)
}

/// A C# expression that does not parse alone (`await $A`: without its `;`, the
/// grammar reads `await` as a stray word and loses the rest) as the expression of the
/// statement `TEXT;`, as ast-grep's contextual patterns take a node out of a larger
/// piece of code. `None`: not C#, or `TEXT;` is no single expression statement either.
fn csharp_statement_expression(text: &str, lang: Lang) -> Option<Pattern> {
    if lang != Lang::CSharp || text.trim_end().ends_with(';') {
        return None;
    }
    let context = format!("{text};");
    let processed = lang.pre_process_pattern(&context);
    let root = parse(&processed, lang).ok()?;
    if has_parse_error(&root) {
        return None;
    }
    let top = root.root();
    let statements: Vec<_> = top.children().filter(|n| n.is_named()).collect();
    let [statement] = statements.as_slice() else {
        return None;
    };
    let statement = match statement.kind().as_ref() {
        "global_statement" => statement.children().find(|n| n.is_named())?,
        _ => statement.clone(),
    };
    if statement.kind() != "expression_statement" {
        return None;
    }
    let expression = statement.children().find(|n| n.is_named())?;
    let kind = expression.kind().to_string();
    Pattern::contextual(&context, &kind, lang).ok()
}

/// Whether the pattern text names metavariables and none of them is in `defined`
/// (the metavariables of its parse): the language read `$A` as text.
fn lost_all_metavariables(text: &str, defined: &[&str]) -> bool {
    let named = metavariable_names(text);
    !named.is_empty() && !named.iter().any(|n| defined.contains(n))
}

/// The capturing metavariable names (`$A`, `$$A`, `$$$ARGS`; not `$_`, `$$$`) in a
/// pattern as typed, as ast-grep spells them: `$` signs, then an upper-case letter or
/// `_`, then upper-case letters, digits and `_`, the whole word.
pub fn metavariable_names(text: &str) -> Vec<&str> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut names = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' || (i > 0 && text[..i].chars().next_back().is_some_and(is_word)) {
            i += 1;
            continue;
        }
        let mut start = i;
        while start < bytes.len() && bytes[start] == b'$' && start - i < 3 {
            start += 1;
        }
        let mut end = start;
        while end < bytes.len() && matches!(bytes[end], b'A'..=b'Z' | b'0'..=b'9' | b'_') {
            end += 1;
        }
        let whole_word = !text[end..].chars().next().is_some_and(is_word);
        let name = &text[start..end];
        if whole_word
            && name
                .as_bytes()
                .first()
                .is_some_and(|c| c.is_ascii_uppercase())
        {
            names.push(name);
        }
        i = end.max(i + 1);
    }
    names
}

/// Whether the pattern is a run of prose in a markup or data language (Markdown's
/// inline text, HTML's text, a YAML plain scalar): it would match only that literal
/// text, so it is no code pattern in that language.
fn is_prose(pattern: &Pattern, lang: Lang) -> bool {
    let prose_kind = match lang {
        Lang::Markdown => "inline",
        Lang::Html => "text",
        Lang::Yaml => "string_scalar",
        _ => return false,
    };
    let kind_id = match &pattern.node {
        PatternNode::Terminal { kind_id, .. } | PatternNode::Internal { kind_id, .. } => *kind_id,
        PatternNode::MetaVar { .. } => return false,
    };
    kind_id == lang.kind_to_id(prose_kind)
}

/// Go reads a lone `fmt.Println(x)` as a type conversion, but inside a function body,
/// as in real files, as a call, so such a pattern would never match (ast-grep#646).
/// Parse it in a function body and take the call from there; keep the original when
/// the text is no call there either (`[]byte($A)` is a conversion everywhere).
fn go_call_not_conversion(text: &str, pattern: Pattern, lang: Lang) -> Pattern {
    if lang != Lang::Go || !root_kind_is(&pattern, lang, "type_conversion_expression") {
        return pattern;
    }
    match Pattern::contextual(&format!("func _() {{ {text} }}"), "call_expression", lang) {
        Ok(call) if !call.has_error() && call.defined_vars() == pattern.defined_vars() => call,
        _ => pattern,
    }
}

/// Whether the pattern's root can only be a node of `kind`.
fn root_kind_is(pattern: &Pattern, lang: Lang, kind: &str) -> bool {
    let id = usize::from(lang.kind_to_id(kind));
    pattern
        .potential_kinds()
        .is_some_and(|kinds| kinds.iter().eq([id]))
}

/// Whether the pattern text, as ast-grep preprocesses it, parses with errors in `lang`.
/// Whether the first ERROR node of the pattern's parse holds code: a named node that is
/// neither an error nor missing, in a text whose brackets balance. A pattern that is
/// only error (`}}}`), or a typo (`foo($A`), holds none.
fn code_inside_error(text: &str, lang: Lang) -> bool {
    let processed = lang.pre_process_pattern(text);
    let Ok(root) = parse(&processed, lang) else {
        return false;
    };
    let root = root.root();
    let Some(error) = root.dfs().find(|n| n.is_error()) else {
        return false;
    };
    let found = error
        .dfs()
        .skip(1)
        .any(|n| n.is_named() && !n.is_error() && !n.is_missing());
    // A typo (`foo($A`) leaves an error too: its brackets do not balance.
    found && brackets_balance(text)
}

/// Whether every `(`, `[` and `{` of `text` is closed in order (outside quotes).
fn brackets_balance(text: &str) -> bool {
    let mut open = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => quote = Some(c),
            '(' | '[' | '{' => open.push(c),
            ')' | ']' | '}' => {
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if open.pop() != Some(want) {
                    return false;
                }
            }
            _ => {}
        }
    }
    open.is_empty() && quote.is_none()
}

fn parses_with_errors(text: &str, lang: Lang) -> bool {
    let processed = lang.pre_process_pattern(text);
    parse(&processed, lang).map_or(true, |root| has_parse_error(&root))
}

/// The reason a pattern failed, in our words: ast-grep's messages repeat the pattern
/// in its internal form (`µµµX` for `$$$X`), which the user never typed.
fn pattern_error_detail(err: &PatternError, lang: Lang) -> String {
    match err {
        PatternError::Parse(_) => "it cannot be parsed".to_string(),
        PatternError::NoContent(_) => "it is empty".to_string(),
        PatternError::MultipleNode(_) => {
            "it has several top-level nodes; a pattern must be one node".to_string()
        }
        PatternError::RootMultiMetaVar(_) => {
            "a $$$ metavariable cannot be the whole pattern; use $VAR or put $$$VAR inside a larger pattern".to_string()
        }
        other => other.to_string().replace(lang.expando_char(), "$"),
    }
}
