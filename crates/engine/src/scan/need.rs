/*!
What text a rule needs in a file before it can match there, decided from the rule alone.

A node matching a rule object matches each of its own atomic rules and of its `all`
members, and has an `inside`, `has`, `precedes` or `follows` node in the same file that
matches that sub-rule; `matches` stands for the utility rule it names. So the file must
hold, at once:

* for a `pattern`: the identifiers and keywords of the pattern (the same [`Prefilter`]
  as `grep`);
* for a `regex`: one of the literals that every match of the regex starts with, and one
  of those it ends with (regex-syntax's literal extraction; ast-grep matches the regex
  against the node's text, a substring of the file);
* for `any`: the need of one of its members (nothing when one member needs nothing).

`not`, `kind`, `nthChild`, `range`, constraints and parameterized utilities add nothing,
and a utility that refers back to itself adds nothing where it recurs. The answer is only
ever "cannot match" when that is sure.

This is what makes the pathological rules of a collection cheap: ast-grep-essentials'
`express-jwt-hardcoded-secret-javascript` tries, for every object `pair`, every enclosing
statement, and for each of those walks its whole subtree (`has` with `stopBy: end`,
nested four deep) before the cheap check that the file imports `express-jwt`. In a
bundled library wrapped in one function expression that is quadratic and worse; its
need, `secret` and `express-jwt`, rules the file out before a parse.
*/

use std::collections::HashMap;

use crate::lang::Lang;
use memchr::memmem;
use regex_syntax::hir::literal::ExtractKind;
use regex_syntax::hir::literal::Extractor;
use serde_json::Map;
use serde_json::Value;

use crate::rewrite::Prefilter;

/// The text condition a file must meet before a rule can match in it.
#[derive(Debug, Clone)]
pub enum Need {
    /// The literals of a pattern.
    Pattern(Box<Prefilter>),
    /// One of these byte strings.
    OneOf(Vec<memmem::Finder<'static>>),
    All(Vec<Need>),
    Any(Vec<Need>),
}

impl Need {
    /// False only when `text` cannot contain a match.
    pub fn holds(&self, text: &str) -> bool {
        match self {
            Need::Pattern(prefilter) => prefilter.may_match(text),
            Need::OneOf(finders) => finders.iter().any(|f| f.find(text.as_bytes()).is_some()),
            Need::All(needs) => needs.iter().all(|n| n.holds(text)),
            Need::Any(needs) => needs.iter().any(|n| n.holds(text)),
        }
    }

    fn all(mut needs: Vec<Need>) -> Option<Need> {
        match needs.len() {
            0 => None,
            1 => needs.pop(),
            _ => Some(Need::All(needs)),
        }
    }
}

/// A global utility rule (from `utilDirs`) in serialized form.
#[derive(Debug, Clone)]
pub struct GlobalUtil {
    lang: Lang,
    rule: Value,
    /// Its own `utils`, which its `matches` look in first.
    utils: Map<String, Value>,
    /// Parameterized (`arguments`): its `matches` may name an argument.
    parameterized: bool,
}

/// Global utility rules by id.
#[derive(Debug, Clone, Default)]
pub struct GlobalUtils(HashMap<String, GlobalUtil>);

impl GlobalUtils {
    pub fn new(utils: &[ast_grep_config::SerializableGlobalRule<Lang>]) -> Self {
        let mut by_id = HashMap::new();
        for util in utils {
            let Ok(rule) = serde_json::to_value(&util.core.rule) else {
                continue;
            };
            let local = util
                .core
                .utils
                .as_ref()
                .and_then(|u| serde_json::to_value(u).ok())
                .and_then(|v| match v {
                    Value::Object(map) => Some(map),
                    _ => None,
                })
                .unwrap_or_default();
            by_id.insert(
                util.id.clone(),
                GlobalUtil {
                    lang: util.language,
                    rule,
                    utils: local,
                    parameterized: util.arguments.is_some(),
                },
            );
        }
        GlobalUtils(by_id)
    }
}

/// Where a rule object sits: its language and the utils its `matches` can name.
#[derive(Clone, Copy)]
struct Scope<'a> {
    lang: Lang,
    locals: &'a Map<String, Value>,
    /// Inside a parameterized global util, where a `matches` may name an argument.
    parameterized: bool,
}

/// Computes needs, following `matches` into utils (each at most once on a path).
struct Resolver<'a> {
    globals: &'a GlobalUtils,
    /// Utils being expanded: (global?, id).
    visiting: Vec<(bool, String)>,
    /// Rule objects visited so far, `matches` followed: the rule's size with its utils
    /// expanded, counted up to [`MAX_EXPANDED`].
    visited: usize,
    too_deep: bool,
}

/// The most rule objects a rule may stand for once its `matches` are expanded. A util
/// naming the next one twice at each of 40 levels stands for 2^40 objects: expanding it
/// (here, and in ast-grep's matcher at every node tried) never ends.
pub const MAX_EXPANDED: usize = 100_000;

/// The longest chain of utils a rule may go through (`matches` naming a util whose rule
/// names another…). Rule files nest 64 deep at most (the YAML reader's budget); a chain
/// of utils thousands long would overflow the stack here and in ast-grep's matcher.
pub const MAX_UTIL_DEPTH: usize = 64;

/// A rule too large to expand.
#[derive(Debug)]
pub enum TooLarge {
    /// More than [`MAX_EXPANDED`] rule objects once its utils are expanded.
    Size,
    /// A chain of utils deeper than [`MAX_UTIL_DEPTH`].
    Depth,
}

/// The need of a rule (its serialized `rule` object and `utils` map), or `None` when
/// any file may hold a match.
pub fn of_rule(
    rule: &Value,
    utils: Option<&Value>,
    lang: Lang,
    globals: &GlobalUtils,
) -> Result<Option<Need>, TooLarge> {
    let empty = Map::new();
    let locals = match utils {
        Some(Value::Object(map)) => map,
        _ => &empty,
    };
    let mut resolver = Resolver {
        globals,
        visiting: Vec::new(),
        visited: 0,
        too_deep: false,
    };
    let need = resolver.of(
        rule,
        Scope {
            lang,
            locals,
            parameterized: false,
        },
    );
    if resolver.too_deep {
        return Err(TooLarge::Depth);
    }
    if resolver.visited > MAX_EXPANDED {
        return Err(TooLarge::Size);
    }
    Ok(need)
}

impl Resolver<'_> {
    fn of(&mut self, rule: &Value, scope: Scope<'_>) -> Option<Need> {
        self.visited += 1;
        if self.visited > MAX_EXPANDED || self.too_deep {
            return None;
        }
        let rule = rule.as_object()?;
        let mut all = Vec::new();
        if let Some(Value::String(source)) = rule.get("pattern") {
            if let Ok(pattern) = ast_grep_core::Pattern::try_new(source, scope.lang) {
                all.push(Need::Pattern(Box::new(Prefilter::new(
                    source, &pattern, scope.lang,
                ))));
            }
        }
        if let Some(Value::String(regex)) = rule.get("regex") {
            all.extend(of_regex(regex));
        }
        for relation in ["inside", "has", "precedes", "follows"] {
            if let Some(sub) = rule.get(relation) {
                all.extend(self.of(sub, scope));
            }
        }
        if let Some(Value::Array(members)) = rule.get("all") {
            for member in members {
                all.extend(self.of(member, scope));
            }
        }
        if let Some(Value::Array(members)) = rule.get("any") {
            let mut each = Vec::with_capacity(members.len());
            for member in members {
                match self.of(member, scope) {
                    Some(need) => each.push(need),
                    None => {
                        each.clear();
                        break;
                    }
                }
            }
            if !each.is_empty() {
                all.push(if each.len() == 1 {
                    each.remove(0)
                } else {
                    Need::Any(each)
                });
            }
        }
        if let Some(Value::String(id)) = rule.get("matches") {
            all.extend(self.of_util(id, scope));
        }
        Need::all(all)
    }

    /// The need of the util `id` as seen from `scope`: a local util first, then a global
    /// one (ast-grep's lookup order).
    fn of_util(&mut self, id: &str, scope: Scope<'_>) -> Option<Need> {
        if scope.parameterized {
            return None;
        }
        let (global, rule, inner) = if let Some(rule) = scope.locals.get(id) {
            (false, rule, scope)
        } else {
            let globals = self.globals;
            let util = globals.0.get(id)?;
            let inner = Scope {
                lang: util.lang,
                locals: &util.utils,
                parameterized: util.parameterized,
            };
            (true, &util.rule, inner)
        };
        let key = (global, id.to_string());
        if self.visiting.contains(&key) {
            return None;
        }
        if self.visiting.len() >= MAX_UTIL_DEPTH {
            self.too_deep = true;
            return None;
        }
        self.visiting.push(key);
        let need = self.of(rule, inner);
        self.visiting.pop();
        need
    }
}

/// Literals every match of `regex` starts with, and literals it ends with: the file must
/// hold one of each. Nothing when the regex does not parse (ast-grep refuses it anyway),
/// when a match can be empty, or when the literals are not a small finite set.
fn of_regex(regex: &str) -> Vec<Need> {
    let Ok(hir) = regex_syntax::Parser::new().parse(regex) else {
        return Vec::new();
    };
    [ExtractKind::Prefix, ExtractKind::Suffix]
        .into_iter()
        .filter_map(|kind| {
            let mut extractor = Extractor::new();
            extractor.kind(kind);
            let seq = extractor.extract(&hir);
            let literals = seq.literals()?;
            if literals.is_empty() || literals.iter().any(|l| l.as_bytes().is_empty()) {
                return None;
            }
            let finders = literals
                .iter()
                .map(|l| memmem::Finder::new(l.as_bytes()).into_owned())
                .collect();
            Some(Need::OneOf(finders))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(yaml_rule: &str, utils: &str) -> Option<Need> {
        let rule: Value = serde_yaml_value(yaml_rule);
        let utils: Value = serde_yaml_value(utils);
        of_rule(
            &rule,
            Some(&utils),
            Lang::JavaScript,
            &GlobalUtils::default(),
        )
        .expect("small rule")
    }

    fn serde_yaml_value(text: &str) -> Value {
        if text.trim().is_empty() {
            return Value::Object(Map::new());
        }
        let value: serde_value::Value = ast_grep_config::from_str(text).expect("test yaml");
        serde_json::to_value(value).expect("json")
    }

    fn holds(need: &Option<Need>, text: &str) -> bool {
        need.as_ref().is_none_or(|n| n.holds(text))
    }

    #[test]
    fn a_util_chain_that_doubles_at_every_level_is_too_large() {
        let mut utils = String::new();
        for i in 0..40 {
            let next = i + 1;
            utils.push_str(&format!(
                "u{i}: {{ any: [{{ matches: u{next} }}, {{ matches: u{next} }}] }}\n"
            ));
        }
        utils.push_str("u40: { pattern: foo }\n");
        let rule = serde_yaml_value("matches: u0");
        let utils = serde_yaml_value(&utils);
        let out = of_rule(
            &rule,
            Some(&utils),
            Lang::JavaScript,
            &GlobalUtils::default(),
        );
        assert!(out.is_err());
    }

    #[test]
    fn regex_needs_its_literals_anchored_or_not() {
        let n = need("kind: identifier\nregex: ^express-jwt$", "");
        assert!(holds(&n, "require('express-jwt')"));
        assert!(!holds(&n, "require('express')"));
        let n = need("kind: identifier\nregex: (foo|bar)baz", "");
        assert!(holds(&n, "x barbaz"));
        assert!(!holds(&n, "x bar baz"));
    }

    #[test]
    fn regex_without_literals_needs_nothing() {
        for regex in ["^.*$", "(?i)secret", "\\w+", "a*", "[a-z]{3}"] {
            let n = need(&format!("kind: identifier\nregex: '{regex}'"), "");
            // (?i) may give case variants: either way no text may be wrongly ruled out.
            assert!(holds(&n, "SeCrEt abc"), "{regex}");
        }
    }

    #[test]
    fn matches_follows_local_utils_and_survives_recursion() {
        let utils = "A:\n  kind: pair\n  has:\n    kind: x\n    regex: ^secret$\nB:\n  any:\n    - matches: B\n    - regex: zzz\n";
        let n = need("matches: A", utils);
        assert!(!holds(&n, "nothing here"));
        assert!(holds(&n, "a secret"));
        // B recurs into itself: that branch needs nothing, so B needs nothing.
        let n = need("matches: B", utils);
        assert!(holds(&n, "nothing here"));
    }

    #[test]
    fn matches_follows_global_utils_after_local_ones() {
        let globals: Vec<ast_grep_config::SerializableGlobalRule<Lang>> =
            ast_grep_config::from_multiple(
                "id: jwt\nlanguage: javascript\nrule: { regex: ^express-jwt$ }\n---\n\
                 id: shadowed\nlanguage: javascript\nrule: { regex: ^global$ }\n---\n\
                 id: param\nlanguage: javascript\narguments: [A]\nrule: { matches: A }\n",
            )
            .expect("global utils");
        let globals = GlobalUtils::new(&globals);
        let rule = serde_yaml_value("all:\n  - matches: jwt\n  - matches: shadowed");
        let utils = serde_yaml_value("shadowed: { regex: ^local$ }");
        let n = of_rule(&rule, Some(&utils), Lang::JavaScript, &globals).expect("small");
        assert!(holds(&n, "express-jwt local"));
        assert!(!holds(&n, "express-jwt global"));
        // A parameterized util's `matches` may name an argument: no need from it.
        let rule = serde_yaml_value("matches: param");
        let n = of_rule(&rule, None, Lang::JavaScript, &globals).expect("small");
        assert!(holds(&n, "anything"));
    }

    #[test]
    fn any_needs_one_member_and_not_adds_nothing() {
        let n = need(
            "any:\n  - regex: ^alpha$\n  - regex: ^beta$\nnot:\n  regex: gamma",
            "",
        );
        assert!(holds(&n, "beta"));
        assert!(!holds(&n, "gamma"));
        let n = need("any:\n  - regex: ^alpha$\n  - kind: identifier", "");
        assert!(holds(&n, "anything"));
    }
}
