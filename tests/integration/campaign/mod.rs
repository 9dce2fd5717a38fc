//! Campaigns (issue 27): local bare repositories made here, a stand-in `gh` on PATH
//! that records its argument vectors and answers `pr list`/`pr view`/`pr create` with
//! JSON like gh's, the state read back from `refs/astedit-campaign/<name>`.

use crate::campaign_world::*;

mod checkouts;
mod forges;
mod publish;
mod spec;
mod stage;

/// The 25 repositories of the issue: 10 with matches, 5 without, 1 that does not
/// parse, 1 unreachable URL and 8 plain (no code at all); the spec over them.
fn twenty_five(w: &World) -> String {
    let mut spec = SPEC_HEAD.to_string();
    let mut add = |url: String| {
        spec.push_str(&format!("[[repos]]\nurl = \"{url}\"\nbase = \"main\"\n"));
    };
    for i in 1..=10 {
        let b = w.bare(
            &format!("m{i:02}"),
            &[("src/app.ts", "console.log(1);\nconst x = 2;\n")],
        );
        add(b.display().to_string());
    }
    for i in 1..=5 {
        let b = w.bare(&format!("n{i:02}"), &[("src/app.ts", "logger.info(1);\n")]);
        add(b.display().to_string());
    }
    let b = w.bare(
        "broken",
        &[("src/bad.ts", "console.log(1);\nconst = = (;\n")],
    );
    add(b.display().to_string());
    add(w.root.path().join("nowhere.git").display().to_string());
    for i in 1..=8 {
        let b = w.bare(&format!("p{i:02}"), &[("README", "plain\n")]);
        add(b.display().to_string());
    }
    w.spec(&spec)
}
