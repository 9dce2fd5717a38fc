//! An agent harness's edit tool on top of the library: the model asks to replace
//! `OLD` with `NEW` in `FILE`; the tool stages that as a preview, shows the diff, applies
//! it, and (this being a demonstration) undoes it again.
//!
//! ```text
//! cargo run -p astedit --example edit_tool -- REPO [FILE OLD NEW]
//! ```
//!
//! Without `FILE OLD NEW` it stages a rule's fixes instead (the name `x` becomes `y` in
//! the repository's Python files), so `REPO` is all it needs.

use std::process::ExitCode;

use astedit::ApplyOptions;
use astedit::Edit;
use astedit::Identity;
use astedit::Options;
use astedit::Repository;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // What an edit tool hands back to the model: the stable code and the hint.
            eprintln!("edit_tool: error[{}]: {e}", e.code());
            if let Some(hint) = e.hint() {
                eprintln!("hint: {hint}");
            }
            ExitCode::from(e.exit_code().max(1))
        }
    }
}

fn run(args: &[String]) -> Result<(), astedit::Error> {
    let Some(path) = args.first() else {
        eprintln!("usage: edit_tool REPO [FILE OLD NEW]");
        std::process::exit(2);
    };
    // One harness session: its work is found again by `git astedit log --session`.
    let session = format!("{}", std::process::id());
    let repo = Repository::open_with(
        path,
        Options::new().identity(Identity::session("edit-tool-example", &session)),
    )?;
    let edit = match args {
        [_, file, old, new, ..] => Edit::replace(file, old, new),
        _ => Edit::rules(FIRST_WORD_RULE).paths(["."]),
    }
    .reason("edit_tool example");

    let staged = repo.stage(&edit)?;
    let Some(id) = staged.id.clone() else {
        println!("nothing to change");
        return Ok(());
    };
    println!("staged {id}: {}", staged.summary);
    print!("{}", repo.diff(&id)?);

    let applied = repo.apply(&id, &ApplyOptions::default())?;
    println!(
        "applied {}: wrote {}",
        applied.id,
        applied.written.join(", ")
    );

    let undone = repo.undo(&id, Some("the example undoes its edit"))?;
    println!(
        "undone {}: restored {}",
        undone.id,
        undone.written.join(", ")
    );

    for event in repo.journal(3)? {
        let agent = event.agent.as_deref().unwrap_or("-");
        println!("journal: {} {} by {agent}", event.event, event.id);
    }
    Ok(())
}

/// With no edit named: the name `x` becomes `y` in Python files, a rule with a fix.
const FIRST_WORD_RULE: &str = "\
id: rename-x
language: python
rule:
  pattern: x
fix: y
";
