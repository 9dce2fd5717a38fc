//! Engine tests across the five languages the issue names.

mod bench;
mod incremental;
mod layout;
mod patterns;
mod rewriting;
mod robustness;
mod search;
mod selecting;

use crate::lang::Lang;
use ast_grep_core::replacer::TemplateFix;
use ast_grep_core::Pattern;

use super::*;

fn ops(pairs: &[(&str, &str)]) -> Vec<Op> {
    pairs
        .iter()
        .map(|(p, r)| Op {
            pattern: p.to_string(),
            rewrite: r.to_string(),
            selector: None,
        })
        .collect()
}

fn rewrite(lang: Lang, pairs: &[(&str, &str)], src: &str) -> Option<FileRewrite> {
    let rw = Rewriter::new(&ops(pairs), lang).expect("ops compile");
    rw.rewrite(src).expect("rewrite succeeds")
}

fn rewritten(lang: Lang, pairs: &[(&str, &str)], src: &str) -> String {
    rewrite(lang, pairs, src).map_or_else(|| src.to_string(), |r| r.text)
}
