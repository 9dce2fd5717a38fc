//! `git astedit new`: ast-grep's `new` (issue 51, item 4): a project, or a rule, rule
//! test or utility rule in one, written as ast-grep 0.51.1 writes them.

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::lang::Lang;
use git_astedit::ops::scaffold::Item;
use git_astedit::ops::scaffold::NewRequest;
use git_astedit::render::Printed;
use git_astedit::Error;

use super::Ctx;

/// Create an ast-grep project, or a rule, rule test or utility rule in one
///
/// Writes the files ast-grep's `new` writes: `new project` an sgconfig.yml with
/// `rules/`, `rule-tests/` and `utils/` in the current folder; `new rule NAME -l LANG`
/// a rule in the project's first rule folder (and its test, when the project has a test
/// folder); `new test NAME` a rule test; `new util NAME -l LANG` a utility rule. Never
/// writes over a file. Nothing is asked: give NAME and -l on the command line (-y is
/// accepted, and changes nothing).
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct NewArgs {
    #[command(subcommand)]
    pub item: Option<NewItem>,

    #[command(flatten)]
    pub args: ItemArgs,
}

#[derive(Debug, clap::Subcommand)]
pub enum NewItem {
    /// Create an ast-grep project: sgconfig.yml, rules/, rule-tests/ and utils/
    Project(ItemArgs),
    /// Create a rule (and its test, when the project has a test folder)
    Rule(ItemArgs),
    /// Create a rule test
    Test(ItemArgs),
    /// Create a global utility rule
    Util(ItemArgs),
}

#[derive(Debug, Default, clap::Args)]
pub struct ItemArgs {
    /// The id of the item to create
    #[arg(value_name = "NAME")]
    pub name: Option<String>,

    /// The language of the rule or utility rule
    #[arg(short = 'l', long, value_name = "LANG")]
    pub lang: Option<String>,

    /// Accepted for ast-grep's sake: nothing is asked here
    #[arg(short = 'y', long)]
    pub yes: bool,

    /// The project's sgconfig.yml (default: the nearest one from the current folder up)
    #[arg(short = 'c', long, value_name = "CONFIG_FILE")]
    pub config: Option<std::path::PathBuf>,

    /// Accepted for ast-grep's sake: `new` loads no language library
    #[arg(long, value_name = "POLICY")]
    pub custom_languages: Option<String>,
}

pub fn run(ctx: &mut Ctx, args: NewArgs) -> Result<Exit, Error> {
    if ctx.json {
        return Err(UsageError(
            "new prints the files it wrote; it has no JSON output (drop --json)".into(),
        )
        .into());
    }
    let Some(item) = args.item else {
        let name = args.args.name.as_deref().unwrap_or("NAME");
        return Err(UsageError(format!(
            "say what to create: `git astedit new project`, `new rule {name} -l LANG`, \
             `new test {name}` or `new util {name} -l LANG`"
        ))
        .into());
    };
    let (kind, args) = match item {
        NewItem::Project(a) => ("project", a),
        NewItem::Rule(a) => ("rule", a),
        NewItem::Test(a) => ("test", a),
        NewItem::Util(a) => ("util", a),
    };
    let name = || {
        args.name.clone().ok_or_else(|| {
            let lang = if matches!(kind, "rule" | "util") {
                " -l LANG"
            } else {
                ""
            };
            UsageError(format!(
                "give the {kind}'s id: `git astedit new {kind} NAME{lang}` (nothing is asked \
                 here)"
            ))
        })
    };
    let lang = || -> Result<Lang, UsageError> {
        let Some(lang) = &args.lang else {
            return Err(UsageError(format!(
                "give the {kind}'s language: `git astedit new {kind} NAME -l LANG`"
            )));
        };
        lang.parse::<Lang>().map_err(|e| UsageError(e.to_string()))
    };
    if args.lang.is_some() && !matches!(kind, "rule" | "util") {
        return Err(UsageError(format!(
            "-l/--lang is for a rule or a utility rule, not a {kind}"
        ))
        .into());
    }
    let item = match kind {
        "project" => Item::Project,
        "rule" => Item::Rule {
            name: name()?,
            lang: lang()?,
        },
        "test" => Item::Test { name: name()? },
        _ => Item::Util {
            name: name()?,
            lang: lang()?,
        },
    };
    let request = NewRequest {
        item,
        config: args.config,
    };
    let (repo, out) = ctx.parts()?;
    let report = git_astedit::ops::scaffold::run(repo, &request)?;
    let mut printed = Printed::new();
    for (what, path) in &report.created {
        match *what {
            "project" => printed.out(format!(
                "Created an ast-grep project: {path}, with rules/, rule-tests/ and utils/\n"
            )),
            what => printed.out(format!("Created {what} at {path}\n")),
        };
    }
    out.printed(&printed)?;
    Ok(Exit::Ok)
}
