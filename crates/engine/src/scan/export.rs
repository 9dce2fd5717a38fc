//! What a rule's matches bind, for a step of `git astedit steps` that exports values
//! to the steps after it (`export = { NEW = "$NEW" }`): each match of the rule renders
//! every export template with the match's metavariables, those the rule's `transform`
//! makes included. A later step reads the values as text.

use ast_grep_core::replacer::Replacer;
use ast_grep_core::replacer::TemplateFix;

use super::Rule;
use crate::lang::Lang;
use crate::rewrite;

/// One match's values: (name, value) in the order the templates were given.
pub type Binding = Vec<(String, String)>;

/// Each match of `rule` in `text` (parsed as `lang`), in document order, rendered
/// through `templates` ((name, template) pairs). None when a template uses a
/// metavariable the rule neither captures nor transforms (the rule exports nothing
/// then), or when the rule is of another language.
pub fn bindings(
    rule: &Rule,
    text: &str,
    lang: Lang,
    templates: &[(String, String)],
) -> Result<Vec<Binding>, rewrite::Error> {
    if rule.lang != lang || templates.is_empty() || !rule.may_match(text) {
        return Ok(Vec::new());
    }
    let keys: Vec<String> = rule
        .config
        .transform
        .as_ref()
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    let defined = rule.config.matcher.defined_vars();
    let mut compiled = Vec::with_capacity(templates.len());
    for (name, template) in templates {
        let fix = TemplateFix::with_transform(template, &lang, &keys);
        let known = fix
            .used_vars()
            .into_iter()
            .all(|v| defined.contains(v) || keys.iter().any(|k| k == v));
        if !known {
            return Ok(Vec::new());
        }
        compiled.push((name, fix));
    }
    let root = rewrite::parse(text, lang)?;
    let mut out: Vec<Binding> = Vec::new();
    for m in root.root().find_all(&rule.config.matcher) {
        let binding: Binding = compiled
            .iter()
            .map(|(name, fix)| {
                let value = fix.generate_replacement(&m);
                (
                    (*name).clone(),
                    String::from_utf8_lossy(&value).into_owned(),
                )
            })
            .collect();
        if !out.contains(&binding) {
            out.push(binding);
        }
    }
    Ok(out)
}
