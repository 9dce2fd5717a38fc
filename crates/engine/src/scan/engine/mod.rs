/*!
Running rules on one file's text: findings, and fixes until the text stops changing.

Fixes go through [`rewrite_nested_with`], the routine `edit` uses, so nested matches
of a rule are all fixed in one pass. Matches that overlap without nesting cannot all be
fixed at once: the first is, the others wait for the next pass (`edit` refuses them
instead; a scan must get the tree clean). One rule's fix can also create another's
match. So the rules run pass after pass, each on the text the ones before it left, until
a pass changes nothing. A later pass is not a blind re-run: a rule takes only the sites
it skipped for overlapping, matches on text another rule wrote since, and matches that
take in its own output with more around it; a match within its own output is never
fixed again (see [`super::ledger`]), so a fix whose output still matches the rule
(deleting the third argument of a call that has a fourth) is made once. The passes are
bounded by `max_passes`; when the bound is hit and another pass would still change the
text, that is reported, never silent. For rules whose fixes do not match their own
output (most), this gives the property CI relies on: after one `scan --apply`, `scan
--check` passes. A rule whose output still matches it reports those matches as findings
of the fixed text, and a second `scan --apply` would fix them again: that is what the
rule says.
*/

mod findings;
mod fixes;
mod inject;

use crate::lang::Lang;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;

use super::ledger::Ledger;
use super::suppress::Suppressions;
use super::EditConflict;
use super::Error;
use super::Mode;
use super::Rule;
use super::Severity;
use super::Unconverged;
use crate::rewrite;
use crate::rewrite::imports;
use crate::rewrite::NestedOptions;
use crate::rewrite::Overlap;
use crate::select::Proposal;
use findings::findings;
use findings::unused;
use fixes::Fixes;

type Tree = AstGrep<StrDoc<Lang>>;

/// One match of a rule. Positions are 1-based, columns in characters.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    pub path: String,
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// The matched text.
    pub text: String,
    /// Byte ranges in `text` of the comments inside the match: `--baseline` leaves
    /// them out of the key it matches findings by, so a comment added, edited or
    /// removed inside a match keeps the finding (not part of `--json`).
    #[serde(skip)]
    pub comments: Vec<(usize, usize)>,
    /// The rule has a fix (`scan --apply` would change this).
    pub fixable: bool,
    /// What the rule's fix does to the input at this finding (SARIF `fixes`); not
    /// part of `--json`, whose fix modes show the diff.
    #[serde(skip)]
    pub fix: Option<FindingFix>,
}

/// One finding's fix as a replacement of a region of the input text. Positions are
/// 1-based, columns in characters, the end exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingFix {
    pub start_line: usize,
    pub start_column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub inserted: String,
}

/// What running the rules on one file gave.
#[derive(Debug, Default)]
pub struct FileResult {
    /// Findings in the input text.
    pub findings: Vec<Finding>,
    /// In fix mode: findings in the fixed text (what fixing leaves to a person).
    pub remaining: Vec<Finding>,
    /// The fixed text, when fixes changed it.
    pub after: Option<String>,
    /// Fixes per rule id, in rule order (rules that fixed nothing left out).
    pub counts: Vec<(String, usize)>,
    pub unconverged: Vec<Unconverged>,
    pub had_parse_error: bool,
    pub introduces_parse_error: bool,
    /// Fixes that repeat text their matched node keeps past the rule's pattern (see
    /// [`crate::select::repeats_kept`]).
    pub repeated_kept_text: usize,
    /// A fix that deletes (writes nothing) left a block with no statement in it.
    pub leaves_empty_block: bool,
    /// `ast-grep-ignore` comments in the input that silenced no finding, as findings of
    /// rule `unused-suppression` (the caller reports them when every rule ran).
    pub unused_suppressions: Vec<Finding>,
    /// Edits of captured nodes that clash (rule `edits:`): the file is then left
    /// unfixed (`after` is `None`).
    pub conflicts: Vec<EditConflict>,
}

impl FileResult {
    /// What a reviewer should know about the fixed file (as [`rewrite::FileRewrite::flags`]).
    pub fn flags(&self) -> Vec<crate::change::FileFlag> {
        use crate::change::FileFlag;
        let mut flags = Vec::new();
        if self.introduces_parse_error {
            flags.push(FileFlag::IntroducesParseErrors);
        }
        if self.repeated_kept_text > 0 {
            flags.push(FileFlag::RepeatsKeptText);
        }
        if self.leaves_empty_block {
            flags.push(FileFlag::LeavesEmptyBlock);
        }
        flags
    }
}

/// Runs `rules` (all applicable to this file, in declaration order) on `text`. A rule
/// whose text need fails on a text is not run on it (it cannot match there).
pub fn run_file(
    path: &str,
    text: &str,
    lang: Lang,
    rules: &[&Rule],
    mode: Mode,
    max_passes: usize,
) -> Result<FileResult, Error> {
    run_file_selecting(path, text, lang, rules, mode, max_passes, &mut |_| true)
}

/// [`run_file`] making only the fixes `select` accepts (`scan -i`). A declined fix is
/// remembered by its place, followed through the changes made around it, and not
/// offered again when its rule re-runs on the fixed text.
pub fn run_file_selecting(
    path: &str,
    text: &str,
    lang: Lang,
    rules: &[&Rule],
    mode: Mode,
    max_passes: usize,
    select: &mut dyn FnMut(&Proposal<'_>) -> bool,
) -> Result<FileResult, Error> {
    let fail = |rule: &Rule| {
        let rule = rule.id.clone();
        move |source| Error::Rewrite {
            rule,
            path: path.to_string(),
            source,
        }
    };
    let Some(first_rule) = rules.first() else {
        return Ok(FileResult::default());
    };
    // Whoever asked, the bound holds (the front ends refuse more, with a message).
    let max_passes = max_passes.clamp(1, super::rules::MAX_PASSES_CEILING);
    let mut doc = rewrite::parse_doc(text, lang).map_err(fail(first_rule))?;
    let input_tree = AstGrep::doc(doc.clone());
    let silenced = Suppressions::of(&input_tree);
    let mut result = FileResult {
        had_parse_error: rewrite::has_parse_error(&input_tree),
        findings: findings(
            path,
            &input_tree,
            &live_rules(rules, text),
            silenced.as_ref(),
        ),
        ..Default::default()
    };
    if let Some(silenced) = &silenced {
        result.unused_suppressions = silenced.unused().map(|d| unused(path, d)).collect();
    }
    if mode == Mode::Report {
        return Ok(result);
    }

    let mut fixes = Fixes {
        path,
        crlf: rewrite::uses_crlf(text),
        nested_opts: NestedOptions {
            overlap: Overlap::SkipLater,
            max_len: fixed_len_limit(text.len()),
            ..NestedOptions::default()
        },
        counts: vec![0; rules.len()],
        declined: Vec::new(),
        repeated_kept_text: 0,
        deleted: false,
        found: rules.iter().map(|_| imports::Found::default()).collect(),
        clashes: Vec::new(),
        ledger: Ledger::new(rules.len()),
    };
    let stuck = fixes.passes(rules, &mut doc, max_passes, select)?;
    result.repeated_kept_text = fixes.repeated_kept_text;
    if !fixes.clashes.is_empty() {
        // Two edits of one node, or an edit over a fix: none of the file's fixes stand.
        result.conflicts = fixes
            .clashes
            .into_iter()
            .map(|(rule, c)| EditConflict {
                path: path.to_string(),
                rule,
                line: c.line,
                detail: c.detail,
            })
            .collect();
        result.remaining = result.findings.clone();
        return Ok(result);
    }
    if let Some((rule, conflict)) = fixes.imports(rules, &mut doc)? {
        // An import that would bind a name twice: the file is left out, as for a clash.
        result.conflicts = vec![EditConflict {
            path: path.to_string(),
            rule,
            line: conflict.line,
            detail: format!("{} (adding it would bind the name twice)", conflict.detail),
        }];
        result.remaining = result.findings.clone();
        return Ok(result);
    }

    let final_tree = AstGrep::doc(doc.clone());
    result.remaining = findings(
        path,
        &final_tree,
        &live_rules(rules, &doc.src),
        Suppressions::of(&final_tree).as_ref(),
    );
    if doc.src != text {
        result.introduces_parse_error =
            !result.had_parse_error && rewrite::has_parse_error(&final_tree);
        // Only a deletion can empty a block.
        result.leaves_empty_block = fixes.deleted
            && rewrite::empty_blocks(&final_tree) > rewrite::empty_blocks(&input_tree);
        result.after = Some(doc.src);
    }
    result.counts = rules
        .iter()
        .zip(&fixes.counts)
        .filter(|(_, n)| **n > 0)
        .map(|(r, n)| (r.id.clone(), *n))
        .collect();
    result.unconverged = rules
        .iter()
        .zip(&stuck)
        .filter_map(|(r, s)| {
            s.map(|passes| Unconverged {
                path: path.to_string(),
                rule: r.id.clone(),
                passes,
            })
        })
        .collect();
    Ok(result)
}

/// The longest a file's fixes may make it: 8 times its length (at most 256 MiB), and
/// never less than 1 MiB more than it is. A fix that matches its own output (`kind:
/// identifier` fixed to `log($$$)`) multiplies the text at every pass: 60 s and 8 GB by
/// pass 5 on a one-line file, had it no bound. Real codemods stay far below.
pub const fn fixed_len_limit(len: usize) -> usize {
    const CAP: usize = 256 << 20;
    const SLACK: usize = 1 << 20;
    let factor = len.saturating_mul(8);
    let capped = if factor < CAP { factor } else { CAP };
    let least = len.saturating_add(SLACK);
    if capped > least {
        capped
    } else {
        least
    }
}

/// The rules of `rules` that may match in `text` (see [`Rule::may_match`]), in order.
pub fn live_rules<'r>(rules: &[&'r Rule], text: &str) -> Vec<&'r Rule> {
    rules
        .iter()
        .copied()
        .filter(|r| r.may_match(text))
        .collect()
}

pub use inject::injected_regions;
pub use inject::run_file_injected;
pub use inject::FileRules;
pub use inject::Region;
