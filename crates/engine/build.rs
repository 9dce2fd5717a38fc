//! Compiles `src/rewrite/walk.c`, the search's tree walk, against the sources of the
//! tree-sitter crate this is linked with: it uses tree-sitter's internal subtree
//! layout, so it must see the very headers that library was built from. The
//! tree-sitter crate (`links = "tree-sitter"`) tells us where its `include` folder is;
//! its `src` folder sits beside it.

use std::path::PathBuf;

fn main() {
    // customLanguages' per-platform libraryPath is keyed by target triple, as in ast-grep.
    println!(
        "cargo:rustc-env=ASTEDIT_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
    println!("cargo:rerun-if-changed=src/rewrite/walk.c");
    let include = PathBuf::from(
        std::env::var("DEP_TREE_SITTER_INCLUDE")
            .expect("the tree-sitter crate names its include folder (DEP_TREE_SITTER_INCLUDE)"),
    );
    let sources = include
        .parent()
        .map(|p| p.join("src"))
        .expect("tree-sitter's include folder has a parent");
    cc::Build::new()
        .std("c11")
        .include(&include)
        .include(&sources)
        .flag_if_supported("-fvisibility=hidden")
        .flag_if_supported("-Wno-unused-parameter")
        // A hot loop; debug info (line tables for our own code) would add frame pointers.
        .force_frame_pointer(false)
        .file("src/rewrite/walk.c")
        .compile("astedit_walk");
}
