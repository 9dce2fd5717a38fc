/*!
The parse floor of the benchmark (bench/README.md, "The parse floor"): how long it takes
to read and parse every file of one language in a corpus, and nothing else. A search, a
scan or a staging run that parses every such file cannot be faster than this; its
distance to the floor is what it adds (walking, prefiltering, matching, output).

It does what a search does per file, through the library's own pieces: git's list of
tracked files, a language chosen by extension ([`Lang::from_path`], as `-l LANG`), each
file read by [`files::load`] under the default size limit, parsed by a fresh tree-sitter
parser of the language's grammar inside a [`ParseArena`], on the same worker threads
and schedule ([`pipeline::map_sized`]; `RAYON_NUM_THREADS` sets their number). No
pattern, no match, no output but one summary line.

`cargo build --release --example parse-floor`; run in a corpus:
`parse-floor LANG` (e.g. `rust`, `ts`, `python`). Not part of the crate that ships.
*/

use std::path::Path;
use std::process::Command;
use std::process::ExitCode;
use std::str::FromStr;

use ast_grep_core::tree_sitter::LanguageExt;
use git_astedit::alloc::ParseArena;
use git_astedit::files;
use git_astedit::lang::Lang;
use git_astedit::pipeline;

fn main() -> ExitCode {
    // SAFETY: first thing in main, before anything touches tree-sitter (as the binary).
    unsafe { git_astedit::alloc::give_tree_sitter_mimalloc() };
    let Some(name) = std::env::args().nth(1) else {
        eprintln!("usage: parse-floor LANG   (in a git work tree)");
        return ExitCode::from(2);
    };
    let Ok(lang) = Lang::from_str(&name) else {
        eprintln!("parse-floor: unknown language {name}");
        return ExitCode::from(2);
    };
    let paths = match tracked_files_of(lang) {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("parse-floor: git ls-files: {e}");
            return ExitCode::from(2);
        }
    };
    let workdir = Path::new(".");
    let sizes: Vec<u64> = paths
        .iter()
        .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .collect();
    let items: Vec<usize> = (0..paths.len()).collect();
    let (mut parsed, mut bytes, mut with_errors) = (0usize, 0u64, 0usize);
    pipeline::map_sized(
        &items,
        |&i| sizes[i],
        |&i| parse_one(workdir, &paths[i], lang),
        pipeline::Delivery::AsReady,
        |_, outcome| {
            if let Some((len, errors)) = outcome {
                parsed += 1;
                bytes += len;
                with_errors += usize::from(errors);
            }
            true
        },
    );
    println!(
        "{parsed} {lang} files parsed ({bytes} bytes, {with_errors} with parse errors) on {} threads",
        pipeline::threads()
    );
    ExitCode::SUCCESS
}

/// The tracked files that `-l LANG` would pick by extension.
fn tracked_files_of(lang: Lang) -> std::io::Result<Vec<String>> {
    let out = Command::new("git").args(["ls-files", "-z"]).output()?;
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter_map(|p| std::str::from_utf8(p).ok())
        .filter(|p| !p.is_empty() && Lang::from_path(p) == Some(lang))
        .map(str::to_string)
        .collect())
}

/// Reads and parses one file, then frees its tree: (bytes, whether it has errors), or
/// None for a file a search skips (too large, binary, unreadable).
fn parse_one(workdir: &Path, path: &str, lang: Lang) -> Option<(u64, bool)> {
    let files::Loaded::Text(text, _) = files::load(workdir, path, files::DEFAULT_MAX_FILE_SIZE)
    else {
        return None;
    };
    // SAFETY: inside the arena tree-sitter only meets the parser made here and the tree
    // it makes; both are dropped before the arena closes at the end of this function.
    let arena = unsafe { ParseArena::open() };
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang.get_ts_language()).ok()?;
    let tree = parser.parse(text.as_bytes(), None)?;
    arena.pin(&tree);
    let errors = tree.root_node().has_error();
    drop(tree);
    drop(parser);
    drop(arena);
    Some((text.len() as u64, errors))
}
