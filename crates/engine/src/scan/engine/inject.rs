//! Code of another language inside a host file (HTML's `<script>` and `<style>`, a
//! project's `languageInjections`): its regions found, and the rules of its language
//! run on each as a text of its own.

use crate::lang::Lang;
use ast_grep_core::tree_sitter::LanguageExt;

use super::run_file_selecting;
use super::FileResult;
use super::Finding;
use crate::rewrite;
use crate::scan::rules::Injection;
use crate::scan::Error;
use crate::scan::Mode;
use crate::scan::Rule;
use crate::select::Proposal;

/// Code of another language inside a host file: its language and byte range there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub lang: Lang,
    pub start: usize,
    pub end: usize,
}

/// The embedded regions of `text` (a file of `lang`), in position order: HTML's
/// `<script>` (JavaScript, or the language its `lang` attribute names) and `<style>`
/// (CSS), found as ast-grep finds them. Regions of a language we do not know
/// (`scss`, `coffee`) are left out.
pub fn injected_regions(text: &str, lang: Lang, custom: &[Injection]) -> Vec<Region> {
    let custom: Vec<&Injection> = custom.iter().filter(|i| i.host == lang).collect();
    if lang.injectable_languages().is_none() && custom.is_empty() {
        return Vec::new();
    }
    let Ok(root) = rewrite::parse(text, lang) else {
        return Vec::new();
    };
    // A project's own injections: where the rule matches, its `$CONTENT` is code of
    // the language `$LANG` names (one of the candidates), else the one named.
    let mut declared: Vec<Region> = Vec::new();
    for injection in &custom {
        for m in root.root().find_all(&injection.matcher) {
            let env = m.get_env();
            let Some(content) = env.get_match("CONTENT") else {
                continue;
            };
            let named = env
                .get_match("LANG")
                .and_then(|n| crate::files::parse_language(&n.text()).ok())
                .filter(|l| injection.candidates.contains(l));
            let Some(guest) = named.or(injection.default) else {
                continue;
            };
            let range = content.range();
            declared.push(Region {
                lang: guest,
                start: range.start,
                end: range.end,
            });
        }
    }
    let mut out: Vec<Region> = lang
        .extract_injections(root.root())
        .into_iter()
        .filter_map(|(name, ranges)| {
            let guest = crate::files::parse_language(&name).ok()?;
            Some(ranges.into_iter().map(move |r| Region {
                lang: guest,
                start: r.start_byte,
                end: r.end_byte,
            }))
        })
        .flatten()
        .chain(declared)
        .filter(|r| r.start < r.end && text.get(r.start..r.end).is_some())
        .collect();
    out.sort_by_key(|r| (r.start, r.end));
    out.dedup_by(|b, a| b.start < a.end);
    out
}

/// Where a region starts in its host: 1-based line and column (characters), to move
/// positions found in the region's own text to the host's.
struct Base {
    line: usize,
    column: usize,
}

impl Base {
    fn of(text: &str, at: usize) -> Base {
        let before = &text[..at];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Base {
            line: memchr::memchr_iter(b'\n', before.as_bytes()).count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }

    fn pos(&self, line: usize, column: usize) -> (usize, usize) {
        if line == 1 {
            (self.line, column + self.column - 1)
        } else {
            (line + self.line - 1, column)
        }
    }

    fn shift(&self, mut f: Finding) -> Finding {
        (f.line, f.column) = self.pos(f.line, f.column);
        (f.end_line, f.end_column) = self.pos(f.end_line, f.end_column);
        if let Some(fix) = &mut f.fix {
            (fix.start_line, fix.start_column) = self.pos(fix.start_line, fix.start_column);
            (fix.end_line, fix.end_column) = self.pos(fix.end_line, fix.end_column);
        }
        f
    }
}

/// The rules that run on one file, and the project's injections (where they look
/// inside it).
#[derive(Clone, Copy)]
pub struct FileRules<'a> {
    pub rules: &'a [&'a Rule],
    pub injections: &'a [Injection],
}

/// [`run_file_selecting`] for a file that may embed other languages: the rules of
/// its own language run on it, the others on each embedded region of theirs, as a
/// text of its own; findings are moved to the host's lines and columns, and fixed
/// regions are put back in place (the rest of the file is left as it is).
pub fn run_file_injected(
    path: &str,
    text: &str,
    lang: Lang,
    FileRules { rules, injections }: FileRules<'_>,
    mode: Mode,
    max_passes: usize,
    select: &mut dyn FnMut(&Proposal<'_>) -> bool,
) -> Result<FileResult, Error> {
    let (host, guests): (Vec<&Rule>, Vec<&Rule>) =
        rules.iter().copied().partition(|r| r.lang == lang);
    let mut result = run_file_selecting(path, text, lang, &host, mode, max_passes, select)?;
    if guests.is_empty() {
        return Ok(result);
    }
    let rules_of =
        |l: Lang| -> Vec<&Rule> { guests.iter().copied().filter(|r| r.lang == l).collect() };
    // Findings of the input.
    for region in injected_regions(text, lang, injections) {
        let rules = rules_of(region.lang);
        if rules.is_empty() {
            continue;
        }
        let part = run_file_selecting(
            path,
            &text[region.start..region.end],
            region.lang,
            &rules,
            Mode::Report,
            max_passes,
            &mut |_| true,
        )?;
        let at = Base::of(text, region.start);
        result
            .findings
            .extend(part.findings.into_iter().map(|f| at.shift(f)));
        result
            .unused_suppressions
            .extend(part.unused_suppressions.into_iter().map(|f| at.shift(f)));
        result.had_parse_error |= part.had_parse_error;
    }
    result.findings.sort_by_key(|f| (f.line, f.column));
    if mode == Mode::Report {
        return Ok(result);
    }
    // Fixes, region by region of the text the host's rules left, the last first, so
    // that the regions before keep their places.
    let mut current = result.after.clone().unwrap_or_else(|| text.to_string());
    let mut changed = false;
    let mut remaining = Vec::new();
    let mut regions = injected_regions(&current, lang, injections);
    regions.reverse();
    for region in regions {
        let rules = rules_of(region.lang);
        if rules.is_empty() {
            continue;
        }
        // Offered in the host's terms: shown with the file around the region, at its
        // place in the file (lines, context).
        let around = (&current[..region.start], &current[region.end..]);
        let mut in_host = |p: &Proposal<'_>| {
            select(&Proposal {
                around: Some(around),
                ..*p
            })
        };
        let part = run_file_selecting(
            path,
            &current[region.start..region.end],
            region.lang,
            &rules,
            mode,
            max_passes,
            &mut in_host,
        )?;
        let at = Base::of(&current, region.start);
        remaining.extend(part.remaining.into_iter().map(|f| at.shift(f)));
        result.unconverged.extend(part.unconverged);
        for (id, n) in part.counts {
            match result.counts.iter_mut().find(|(r, _)| *r == id) {
                Some((_, total)) => *total += n,
                None => result.counts.push((id, n)),
            }
        }
        if let Some(after) = part.after {
            current.replace_range(region.start..region.end, &after);
            result.introduces_parse_error |= part.introduces_parse_error;
            changed = true;
        }
    }
    if changed {
        // The host's own findings, where the fixed regions moved them.
        result.remaining = run_file_selecting(
            path,
            &current,
            lang,
            &host,
            Mode::Report,
            max_passes,
            &mut |_| true,
        )?
        .findings;
        result.after = Some(current);
    }
    result.remaining.extend(remaining);
    result.remaining.sort_by_key(|f| (f.line, f.column));
    Ok(result)
}
