//! `git astedit schema`: the JSON Schema of every `--json` output (and tool result).

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::report::schema;
use git_astedit::Error;

use super::Ctx;

/// Print the JSON Schema of a command's `--json` output
///
/// With COMMAND: the schema of that command's output (its report, or the error
/// report). Without: every command's, keyed by name. Draft 2020-12, standard keywords
/// and formats only; `error` names the error report alone, `campaign-spec` the
/// campaign spec (TOML) a user writes.
#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// A command with a --json output (e.g. grep, edit, list), or `error`
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

pub fn run(ctx: &mut Ctx, args: SchemaArgs) -> Result<Exit, Error> {
    let value = match &args.command {
        None => schema::all(),
        Some(name) => schema::for_command(name).ok_or_else(|| {
            let names: Vec<&str> = schema::commands().iter().map(|(n, _)| *n).collect();
            UsageError(format!(
                "no schema for '{name}': commands with a --json output are {} \
                 (and `campaign-spec`, the campaign spec's)",
                names.join(", ")
            ))
        })?,
    };
    let text = serde_json::to_string_pretty(&value).map_err(super::OutputError::Encode)?;
    ctx.out.print(&text)?;
    ctx.out.print("\n")?;
    Ok(Exit::Ok)
}
