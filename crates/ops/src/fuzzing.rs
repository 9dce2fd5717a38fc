/*!
The fuzz targets' entry points (`fuzz/fuzz_targets/`), one function per target, so that
the inputs the fuzzers found stay regression tests of the ordinary suite: every file
under `tests/fuzz_regressions/<target>/` goes through the same function in the unit test
below. Each function must return (never panic, abort or run away) whatever the bytes.
Not an API.
*/

use crate::lang::Lang;

use crate::patch;
use crate::rewrite::Query;
use crate::scan;

/// Splits an input at its first NUL byte: (before, after); no NUL: (all, "").
fn split(data: &[u8]) -> (String, String) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (
            String::from_utf8_lossy(&data[..i]).into_owned(),
            String::from_utf8_lossy(&data[i + 1..]).into_owned(),
        ),
        None => (String::from_utf8_lossy(data).into_owned(), String::new()),
    }
}

/// `patch`: `PATCH [NUL FILE]`: the patch parsed and resolved against a tree holding
/// FILE at `f.txt` (and at `src/f.txt`, for patches that name a folder).
pub fn patch(data: &[u8]) {
    let (text, file) = split(data);
    let tree =
        patch::MemTree::from_files([("f.txt", file.as_bytes()), ("src/f.txt", file.as_bytes())]);
    let _ = patch::resolve_text(&text, &tree, "");
}

/// The languages the pattern target picks from (first byte of the input).
const LANGS: [Lang; 6] = [
    Lang::JavaScript,
    Lang::TypeScript,
    Lang::Rust,
    Lang::Python,
    Lang::Go,
    Lang::Html,
];

/// `pattern`: `LANG-BYTE PATTERN [NUL SOURCE]`: the pattern compiled for the language
/// and searched for in SOURCE.
pub fn pattern(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let lang = LANGS[pick as usize % LANGS.len()];
    let (pattern, source) = split(rest);
    if let Ok(query) = Query::new(&pattern, lang) {
        if query.may_match(&source) {
            let _ = query.find(&source);
        }
    }
}

/// `rules`: `FORMAT-BYTE TEXT`: a rule file (even byte: astedit.toml, odd: ast-grep
/// YAML) loaded; its JavaScript rules then run, fixes included, on a small file.
pub fn rules(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let format = if pick % 2 == 0 {
        scan::rules::TextFormat::Toml
    } else {
        scan::rules::TextFormat::Yaml
    };
    let text = String::from_utf8_lossy(rest);
    let Ok(set) = scan::rules::from_text(&text, format, "fuzz") else {
        return;
    };
    let js: Vec<&scan::rules::Rule> = set
        .rules
        .iter()
        .filter(|r| r.lang == Lang::JavaScript)
        .collect();
    if js.is_empty() {
        return;
    }
    const SAMPLE: &str = "import x from 'y';\nfunction f(a, b) { if (a == b) { console.log(a); } return [a, b]; }\nlet s = `t${f(1, 2)}`;\n";
    let _ = scan::engine::run_file("a.js", SAMPLE, Lang::JavaScript, &js, scan::Mode::Fix, 3);
}

/// `journal`: a journal commit's message read as an event.
pub fn journal(data: &[u8]) {
    crate::txn::fuzzing::journal_event(data);
}

/// `record`: bytes read as the applying record.
pub fn record(data: &[u8]) {
    crate::txn::fuzzing::applying_record(data);
}

#[cfg(test)]
mod tests {
    /// Every kept input of `target` through `entry`.
    fn replay(target: &str, entry: fn(&[u8])) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fuzz_regressions")
            .join(target);
        let Ok(files) = std::fs::read_dir(&dir) else {
            return;
        };
        for file in files.flatten() {
            let data = std::fs::read(file.path()).expect("read a kept input");
            entry(&data);
        }
    }

    #[test]
    fn kept_fuzz_inputs_still_return() {
        replay("patch", super::patch);
        replay("pattern", super::pattern);
        replay("rules", super::rules);
        replay("journal", super::journal);
        replay("record", super::record);
    }
}
