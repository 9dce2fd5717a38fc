/*!
Which findings a change introduced: the findings of the tree now matched with those the
same rules find at a base commit (`scan --baseline REV`), so that CI can fail on what a
change brings and not on what the repository already had.

A finding is matched by its rule, its file (the base's path carried over a rename) and
its matched text with the whitespace folded and the comments inside it left out, never
by its line: code that moved down, was re-indented, had lines added above it or a
comment edited inside it is still the same finding. What is left unmatched is then
matched by rule and text alone, so code moved to another file is not new either. Equal
keys are counted, not collapsed: two identical findings where the base had one are one
`unchanged` and one `new` (the later one). Base findings left unmatched are `absent`
(fixed, or removed with their code).

Nothing here reads git: the caller gives both sides' findings and the renames.
*/

use std::collections::HashMap;
use std::collections::VecDeque;

use schemars::JsonSchema;
use serde::Serialize;

/// A finding's standing against the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "BaselineState")]
pub enum State {
    /// Not at the base: the change introduced it.
    New,
    /// At the base too (maybe moved, re-indented or in a renamed file).
    Unchanged,
    /// At the base and gone now (fixed, or its code removed).
    Absent,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::New => "new",
            State::Unchanged => "unchanged",
            State::Absent => "absent",
        }
    }
}

/// What a finding is matched by: its rule, its path (on the tree's side of a
/// rename) and its [`key_text`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    pub rule: String,
    pub path: String,
    pub text: String,
}

impl Key {
    /// The key of matched text whose comments are not known (a fix's replaced text).
    pub fn of(rule: &str, path: &str, text: &str) -> Key {
        Key {
            rule: rule.to_string(),
            path: path.to_string(),
            text: key_text(text, &[]),
        }
    }

    /// A finding's key.
    pub fn of_finding(f: &super::Finding) -> Key {
        Key {
            rule: f.rule.clone(),
            path: f.path.clone(),
            text: key_text(&f.text, &f.comments),
        }
    }
}

/// What identifies a finding's matched text, line-free: the text without the comments
/// inside it (`comments`, byte ranges; each one a space) and with its whitespace
/// folded ([`normalize`]), so that a comment added, edited or removed inside a match,
/// re-indenting and re-wrapping change nothing. The one definition behind both
/// `--baseline`'s matching and SARIF's `partialFingerprints`.
pub fn key_text(text: &str, comments: &[(usize, usize)]) -> String {
    match comments {
        [] => normalize(text),
        _ => normalize(&without(text, comments)),
    }
}

/// `text` with each of `ranges` (byte ranges, in order, not overlapping) replaced by
/// a space: a comment separates what is on either side of it. Ranges that do not fit
/// the text are ignored.
pub fn without(text: &str, ranges: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(a, b) in ranges {
        let (Some(keep), Some(_)) = (text.get(at..a), text.get(a..b)) else {
            continue;
        };
        out.push_str(keep);
        out.push(' ');
        at = b;
    }
    out.push_str(&text[at..]);
    out
}

/// The text without its whitespace, but for one space where a run of it separates
/// two word characters (`return x`): re-indenting, re-wrapping or re-spacing a finding
/// keeps its key.
pub fn normalize(text: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(text.len());
    let mut gap = false;
    for c in text.chars() {
        if c.is_whitespace() {
            gap = true;
            continue;
        }
        if gap && word(c) && out.chars().next_back().is_some_and(word) {
            out.push(' ');
        }
        gap = false;
        out.push(c);
    }
    out
}

/// The outcome of a match: the state of each current finding (in their order) and
/// the base findings that have no match now (their indices, in order).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Matched {
    pub current: Vec<State>,
    pub absent: Vec<usize>,
}

impl Matched {
    /// How many current findings are new.
    pub fn new_count(&self) -> usize {
        self.current.iter().filter(|s| **s == State::New).count()
    }

    /// How many current findings are unchanged.
    pub fn unchanged_count(&self) -> usize {
        self.current.len() - self.new_count()
    }
}

/// Matches the current findings' keys with the base's. Each side is in its scan's
/// order (path, then position), so among equal keys the earlier ones are matched
/// first. `renamed` maps a base path to the path it has now.
///
/// Two rounds: first within a file (its base path carried over a rename); then what
/// is left on both sides by rule and text alone, so that code moved to another file
/// (or a rename git did not see, the file changed too much) is not new either.
///
/// `fresh` says which current findings lie on lines the change added (may be empty):
/// among equal keys those are the last to be matched, so that of two identical findings
/// where the base had one, the one on an added line is the new one.
pub fn classify(
    current: &[Key],
    base: &[Key],
    renamed: &HashMap<String, String>,
    fresh: &[bool],
) -> Matched {
    let is_fresh = |i: usize| fresh.get(i).copied().unwrap_or(false);
    let mut order: Vec<usize> = (0..current.len()).collect();
    order.sort_by_key(|&i| (is_fresh(i), i));
    let mut waiting: HashMap<Key, VecDeque<usize>> = HashMap::new();
    for (i, key) in base.iter().enumerate() {
        let key = match renamed.get(&key.path) {
            Some(now) => Key {
                path: now.clone(),
                ..key.clone()
            },
            None => key.clone(),
        };
        waiting.entry(key).or_default().push_back(i);
    }
    let mut states = vec![State::New; current.len()];
    for &i in &order {
        if waiting
            .get_mut(&current[i])
            .and_then(VecDeque::pop_front)
            .is_some()
        {
            states[i] = State::Unchanged;
        }
    }
    // The second round: by rule and text, whatever the path.
    let mut left: Vec<usize> = waiting.into_values().flatten().collect();
    left.sort_unstable();
    let mut moved: HashMap<(&str, &str), VecDeque<usize>> = HashMap::new();
    for &i in &left {
        moved
            .entry((base[i].rule.as_str(), base[i].text.as_str()))
            .or_default()
            .push_back(i);
    }
    let mut matched = std::collections::HashSet::new();
    for &i in &order {
        if states[i] != State::New {
            continue;
        }
        let key = &current[i];
        let slot = moved.get_mut(&(key.rule.as_str(), key.text.as_str()));
        if let Some(b) = slot.and_then(VecDeque::pop_front) {
            states[i] = State::Unchanged;
            matched.insert(b);
        }
    }
    left.retain(|i| !matched.contains(i));
    Matched {
        current: states,
        absent: left,
    }
}

impl Matched {
    /// Whether a group of identical findings (one rule, one text) is split: some of
    /// its current findings new and some unchanged, or some of its base findings
    /// absent and some matched. Only then do renames and added lines change the
    /// outcome: a group's counts of new and absent findings are the same whatever
    /// pairs them (the second round pairs across paths), so renames and added lines
    /// only pick which of a split group's findings are the new or absent ones.
    pub fn splits(&self, current: &[Key], base: &[Key]) -> bool {
        // Per (rule, text): [new, unchanged, absent, matched base].
        let mut groups: HashMap<(&str, &str), [usize; 4]> = HashMap::new();
        for (key, state) in current.iter().zip(&self.current) {
            let g = groups.entry((&key.rule, &key.text)).or_default();
            g[usize::from(*state != State::New)] += 1;
        }
        let mut absent = vec![false; base.len()];
        for &i in &self.absent {
            absent[i] = true;
        }
        for (key, gone) in base.iter().zip(absent) {
            let g = groups.entry((&key.rule, &key.text)).or_default();
            g[if gone { 2 } else { 3 }] += 1;
        }
        groups
            .values()
            .any(|g| (g[0] > 0 && g[1] > 0) || (g[2] > 0 && g[3] > 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(rule: &str, path: &str, text: &str) -> Key {
        Key::of(rule, path, text)
    }

    #[test]
    fn normalized_text_keeps_only_the_spaces_between_words() {
        assert_eq!(
            normalize("  return  eval(\n    x ,y )\n"),
            "return eval(x,y)"
        );
        assert_eq!(normalize("a b\tc"), "a b c");
        assert_eq!(normalize(""), "");
    }

    #[test]
    fn comments_inside_a_match_are_left_out_of_its_key() {
        let before = "isinstance(\n    x,  # type: ignore\n    str)";
        let comment = before.find('#').expect("a comment");
        let end = before[comment..].find('\n').expect("a line end") + comment;
        assert_eq!(
            without(before, &[(comment, end)]),
            "isinstance(\n    x,   \n    str)"
        );
        assert_eq!(
            normalize(&without(before, &[(comment, end)])),
            "isinstance(x,str)"
        );
        assert_eq!(without("a/*c*/b", &[(1, 6)]), "a b");
        // Ranges that do not fit are ignored.
        assert_eq!(without("ab", &[(1, 9)]), "ab");
    }

    #[test]
    fn whitespace_and_position_do_not_matter() {
        let base = [key("r", "a.py", "print(x,\n  y)")];
        let now = [key("r", "a.py", "    print(x, y)")];
        let m = classify(&now, &base, &HashMap::new(), &[]);
        assert_eq!(m.current, [State::Unchanged]);
        assert!(m.absent.is_empty());
    }

    #[test]
    fn duplicates_are_counted() {
        let base = [key("r", "a.py", "f()")];
        let now = [key("r", "a.py", "f()"), key("r", "a.py", "f()")];
        let m = classify(&now, &base, &HashMap::new(), &[]);
        assert_eq!(m.current, [State::Unchanged, State::New]);
        assert_eq!((m.new_count(), m.unchanged_count()), (1, 1));
        // The one on an added line is the new one.
        let m = classify(&now, &base, &HashMap::new(), &[true, false]);
        assert_eq!(m.current, [State::New, State::Unchanged]);
    }

    #[test]
    fn renames_carry_the_base_path_and_the_rest_is_absent() {
        let base = [
            key("r", "old.py", "f()"),
            key("r", "old.py", "g()"),
            key("s", "b.py", "f()"),
        ];
        let now = [key("r", "new.py", "f()"), key("r", "old.py", "h()")];
        let renamed = HashMap::from([("old.py".to_string(), "new.py".to_string())]);
        let m = classify(&now, &base, &renamed, &[]);
        assert_eq!(m.current, [State::Unchanged, State::New]);
        assert_eq!(m.absent, [1, 2]);
    }

    #[test]
    fn only_a_split_group_needs_renames_or_added_lines() {
        let base = [key("r", "old.py", "f()"), key("r", "b.py", "g()")];
        // Moved to a renamed file, one new finding: nothing split.
        let now = [key("r", "new.py", "f()"), key("r", "b.py", "h()")];
        let m = classify(&now, &base, &HashMap::new(), &[]);
        assert!(!m.splits(&now, &base));
        // A second f(): one unchanged, one new (which one, renames and lines decide).
        let now = [key("r", "a.py", "f()"), key("r", "new.py", "f()")];
        let m = classify(&now, &base, &HashMap::new(), &[]);
        assert!(m.splits(&now, &base));
        // One of two g() fixed: which one is absent is a split too.
        let base = [key("r", "a.py", "g()"), key("r", "b.py", "g()")];
        let now = [key("r", "b.py", "g()")];
        let m = classify(&now, &base, &HashMap::new(), &[]);
        assert!(m.splits(&now, &base));
    }

    #[test]
    fn another_rule_is_another_finding_and_a_file_keeps_its_own_first() {
        let base = [key("r", "a.py", "f()")];
        let now = [key("s", "a.py", "f()"), key("r", "b.py", "f()")];
        let m = classify(&now, &base, &HashMap::new(), &[]);
        assert_eq!(m.current, [State::New, State::Unchanged]);
        assert!(m.absent.is_empty());
        // A copy in another file while the original stays is new.
        let now = [key("r", "a.py", "f()"), key("r", "b.py", "f()")];
        let m = classify(&now, &base, &HashMap::new(), &[]);
        assert_eq!(m.current, [State::Unchanged, State::New]);
    }
}
