/*!
The byte budget of a tool result: what a model's context can take.

Every result (its text block and its structured content together) is held to a budget:
64 KiB by default (about 16k tokens, well under the 25k that Claude Code accepts),
`git astedit mcp --max-result-bytes N` for the server, `max_bytes` in any call. The
tools shape their own results first (`ast_grep` stops adding matches at the budget and
says which `offset` continues; captures are cut as match text is). [`fit`] is the net
under all of them: long strings of the structured content are cut with a marker, then
the longest lists lose their tail, then the text is cut — and the text says what was
cut and how to get the rest.
*/

use serde_json::Value;

use super::tools::Done;

/// The default budget of one tool result, in bytes.
pub const DEFAULT_RESULT_BYTES: usize = 64 * 1024;

/// The smallest budget a call may ask for: less cannot hold an error's own words.
pub const MIN_RESULT_BYTES: usize = 2 * 1024;

/// The argument every tool takes for its budget.
pub const MAX_BYTES_ARG: &str = "max_bytes";

/// The marker left where a string was cut.
fn marker(cut: usize) -> String {
    format!("…[{cut} bytes cut]")
}

/// The size the result takes on the wire, near enough: text plus JSON.
fn size(done: &Done) -> usize {
    done.text.len() + serde_json::to_string(&done.value).map_or(0, |s| s.len())
}

/// Cuts `s` to at most `keep` bytes (on a character boundary) plus a marker.
fn cut_str(s: &mut String, keep: usize) -> usize {
    if s.len() <= keep {
        return 0;
    }
    let mut at = keep;
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    let cut = s.len() - at;
    s.truncate(at);
    s.push_str(&marker(cut));
    cut
}

fn string_lengths(v: &Value, out: &mut Vec<usize>) {
    match v {
        Value::String(s) => out.push(s.len()),
        Value::Array(a) => a.iter().for_each(|x| string_lengths(x, out)),
        Value::Object(o) => o.values().for_each(|x| string_lengths(x, out)),
        _ => {}
    }
}

fn cut_strings(v: &mut Value, keep: usize, cut: &mut (usize, usize)) {
    match v {
        Value::String(s) => {
            let n = cut_str(s, keep);
            if n > 0 {
                cut.0 += 1;
                cut.1 += n;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| cut_strings(x, keep, cut)),
        Value::Object(o) => o.values_mut().for_each(|x| cut_strings(x, keep, cut)),
        _ => {}
    }
}

/// The path (object keys) and serialized size of the largest array under `v`.
fn largest_array(v: &Value, path: &mut Vec<String>, best: &mut Option<(Vec<String>, usize)>) {
    match v {
        Value::Array(a) => {
            let size = serde_json::to_string(v).map_or(0, |s| s.len());
            if a.len() > 1 && best.as_ref().is_none_or(|(_, b)| size > *b) {
                *best = Some((path.clone(), size));
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                path.push(k.clone());
                largest_array(x, path, best);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at_path<'v>(v: &'v mut Value, path: &[String]) -> Option<&'v mut Value> {
    path.iter().try_fold(v, |v, k| v.get_mut(k))
}

/// Holds `done` to `budget` bytes (see the module docs); returns what was cut, in
/// words for the text, when anything was.
pub fn fit(done: &mut Done, budget: usize) -> Option<String> {
    let budget = budget.max(MIN_RESULT_BYTES);
    if size(done) <= budget {
        return None;
    }
    let before = size(done);
    let mut said = Vec::new();
    // Room for the note this adds to the text.
    let room = budget.saturating_sub(300);

    // 1. Long strings: the longest keep the most they can, all alike.
    let mut lengths = Vec::new();
    string_lengths(&done.value, &mut lengths);
    let json = serde_json::to_string(&done.value).map_or(0, |s| s.len());
    let others = json - lengths.iter().sum::<usize>();
    let target = room.saturating_sub(done.text.len().min(room / 2) + others);
    // A cut string keeps `keep` bytes and gains its marker.
    let fits = |keep: usize| {
        lengths
            .iter()
            .map(|&l| {
                if l <= keep {
                    l
                } else {
                    keep + marker(l - keep).len()
                }
            })
            .sum::<usize>()
            <= target
    };
    let (mut lo, mut hi) = (64usize, lengths.iter().copied().max().unwrap_or(0));
    if hi > lo && !fits(hi) {
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let mut cut = (0, 0);
        cut_strings(&mut done.value, lo, &mut cut);
        if cut.0 > 0 {
            said.push(format!(
                "{} long text{} cut to {lo} bytes ({} bytes in all)",
                cut.0,
                if cut.0 == 1 { "" } else { "s" },
                cut.1
            ));
        }
    }

    // 2. The longest lists lose their tail, as much as the excess asks.
    let text_share = done.text.len().min(room / 2);
    let mut trimmed: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    loop {
        let json = serde_json::to_string(&done.value).map_or(0, |s| s.len());
        if json + text_share <= room {
            break;
        }
        let mut best = None;
        largest_array(&done.value, &mut Vec::new(), &mut best);
        let Some((path, array_size)) = best else {
            break;
        };
        let Some(Value::Array(a)) = at_path(&mut done.value, &path) else {
            break;
        };
        let total = a.len();
        let per_item = (array_size / total).max(1);
        let excess = json + text_share - room;
        let drop = (excess / per_item + 1).min(total - 1);
        a.truncate(total - drop);
        let entry = trimmed.entry(path.join(".")).or_insert((total, total));
        entry.1 = total - drop;
    }
    for (path, (total, kept)) in trimmed {
        said.push(format!("the list `{path}` kept {kept} of {total} items"));
    }

    // 3. The text.
    let json = serde_json::to_string(&done.value).map_or(0, |s| s.len());
    let text_room = room.saturating_sub(json);
    if done.text.len() > text_room {
        let n = cut_str(&mut done.text, text_room.max(256));
        if n > 0 {
            said.push(format!("the text lost its last {n} bytes"));
        }
    }
    let note = format!(
        "note: this result was cut from {before} to the {budget}-byte budget: {}. Narrow \
         the call (paths, a more specific pattern), page with `offset` where the tool has \
         it, or raise `max_bytes`.",
        said.join("; ")
    );
    done.text.push('\n');
    done.text.push_str(&note);
    done.text.push('\n');
    Some(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(text: &str, value: Value) -> Done {
        Done {
            text: text.into(),
            value,
        }
    }

    #[test]
    fn a_small_result_is_left_alone() {
        let mut d = done("hi\n", serde_json::json!({"a": "b"}));
        assert!(fit(&mut d, DEFAULT_RESULT_BYTES).is_none());
        assert_eq!(d.text, "hi\n");
    }

    #[test]
    fn long_strings_are_cut_with_a_marker_and_the_result_fits() {
        let big = "x".repeat(200_000);
        let mut d = done(
            "summary\n",
            serde_json::json!({"matches": [{"text": big.clone()}, {"text": "short"}], "diff": big}),
        );
        let note = fit(&mut d, 8 * 1024).expect("cut");
        assert!(note.contains("long texts cut"), "{note}");
        assert!(size(&d) <= 8 * 1024, "{}", size(&d));
        let text = d.value["matches"][0]["text"].as_str().expect("text");
        assert!(text.ends_with("bytes cut]"), "{text}");
        assert_eq!(d.value["matches"][1]["text"], "short");
        assert!(d.text.contains("max_bytes"));
    }

    #[test]
    fn many_small_items_lose_the_tail_of_their_list() {
        let items: Vec<Value> = (0..5000)
            .map(|i| serde_json::json!({"path": format!("src/f{i}.rs"), "line": i}))
            .collect();
        let mut d = done("rows\n", serde_json::json!({"matches": items}));
        let note = fit(&mut d, 16 * 1024).expect("cut");
        assert!(note.contains("`matches` kept"), "{note}");
        assert!(size(&d) <= 16 * 1024, "{}", size(&d));
        assert_eq!(d.value["matches"][0]["line"], 0, "the head is kept");
    }

    #[test]
    fn a_long_text_is_cut_too() {
        let mut d = done(&"line\n".repeat(50_000), serde_json::json!({}));
        fit(&mut d, 4 * 1024).expect("cut");
        assert!(size(&d) <= 4 * 1024, "{}", size(&d));
        assert!(d.text.contains("budget"));
    }
}
