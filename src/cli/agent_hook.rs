/*!
`git astedit agent-hook`: the command a coding agent's harness runs around its own
Read/Edit/Write tools (see `ops::agent_hook`). It reads one hook event as JSON on
stdin, in the harness's own shape, and answers in that harness's protocol on stdout:

* Claude Code (`agent-hook claude-code`, hook events `PreToolUse`/`PostToolUse`/
  `PostToolUseFailure`): a refusal is `hookSpecificOutput.permissionDecision: "deny"`
  with the reason the model reads; an allowed call prints nothing (so the user's
  permission rules still apply); a warning after the edit is `decision: "block"` with
  its reason, which Claude Code gives the model.
* OpenCode (`agent-hook opencode`, called by the plugin `install opencode` writes, from
  `tool.execute.before`/`after`): `{"decision": "allow" | "deny", "reason": …}`.

A failure of our own (no repository, an unreadable event) is said on stderr and exits
1, which both harnesses treat as a non-blocking error: a broken hook never stops an
agent, and never exits 2 (Claude Code's "block").
*/

use std::io::Read;
use std::path::PathBuf;

use git_astedit::error::Exit;
use git_astedit::ops::agent_hook;
use git_astedit::ops::agent_hook::AgentHookError;
use git_astedit::ops::agent_hook::Harness;
use git_astedit::ops::agent_hook::HookEvent;
use git_astedit::ops::agent_hook::Phase;
use git_astedit::ops::agent_hook::ToolKind;
use git_astedit::Error;
use serde::Deserialize;

use super::Ctx;

/// Keep agents' own Read/Edit/Write and shell commands safe: hooks for Claude Code,
/// Codex and OpenCode
#[derive(Debug, clap::Subcommand)]
pub enum AgentHookCommand {
    /// Answer one Claude Code hook event (PreToolUse/PostToolUse JSON on stdin)
    ///
    /// After Read, remembers the blob the session saw; before Edit, MultiEdit or Write,
    /// refuses (permissionDecision "deny") when the file changed since that session
    /// last read it; after the edit, journals it as an applied transaction with the
    /// session as agent (`git astedit log`, `git astedit undo`).
    ClaudeCode,
    /// Answer one Codex hook event (Claude Code's wire format: PreToolUse/PostToolUse of
    /// its shell tools and apply_patch, JSON on stdin)
    ///
    /// The shell command or patch is journalled as one transaction of the session
    /// (what the work tree changed in its window, less what others journalled in it).
    Codex,
    /// Answer one event of the OpenCode plugin (tool.execute.before/after JSON on stdin)
    Opencode,
    /// Write a harness's hook configuration into this work tree
    ///
    /// claude-code: adds the PreToolUse/PostToolUse entries to .claude/settings.json
    /// (other settings and hooks are kept). opencode: writes the plugin
    /// .opencode/plugin/git-astedit.js.
    Install(InstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The harness: claude-code or opencode
    #[arg(value_enum)]
    pub harness: HarnessArg,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum HarnessArg {
    ClaudeCode,
    Opencode,
}

pub fn run(ctx: &mut Ctx, cmd: AgentHookCommand) -> Result<Exit, Error> {
    let harness = match cmd {
        AgentHookCommand::Install(args) => return install(ctx, args),
        AgentHookCommand::ClaudeCode => Harness::ClaudeCode,
        AgentHookCommand::Opencode => Harness::OpenCode,
        AgentHookCommand::Codex => Harness::Codex,
    };
    let mut input = String::new();
    let answer = std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| AgentHookError::BadEvent(e.to_string()).into())
        .and_then(|_| answer(harness, &input));
    match answer {
        Ok(Some(text)) => {
            ctx.out.print(&text)?;
            Ok(Exit::Ok)
        }
        Ok(None) => Ok(Exit::Ok),
        Err(e) => {
            ctx.out.warn(&format!("git astedit agent-hook: {e}"));
            Ok(Exit::NothingFound)
        }
    }
}

fn install(ctx: &mut Ctx, args: InstallArgs) -> Result<Exit, Error> {
    let harness = match args.harness {
        HarnessArg::ClaudeCode => Harness::ClaudeCode,
        HarnessArg::Opencode => Harness::OpenCode,
    };
    let (repo, out) = ctx.parts()?;
    let done = agent_hook::install(repo, harness)?;
    let path = done
        .path
        .strip_prefix(&repo.workdir)
        .unwrap_or(&done.path)
        .display()
        .to_string();
    out.print(&if done.unchanged {
        format!("{path} already runs git astedit agent-hook; nothing changed\n")
    } else {
        format!(
            "wrote {path}: {} hooks now run git astedit agent-hook\n",
            harness.name()
        )
    })?;
    Ok(Exit::Ok)
}

/// The harness's answer to the event in `input` (nothing to print: `None`).
fn answer(harness: Harness, input: &str) -> Result<Option<String>, Error> {
    let (event, tool_input) = match harness {
        Harness::ClaudeCode | Harness::Codex => match claude_event(harness, input)? {
            Some((e, input)) => (e, input),
            None => return Ok(None),
        },
        Harness::OpenCode => match opencode_event(input)? {
            Some(e) => (e, serde_json::Value::Null),
            None => return Ok(None),
        },
    };
    // A hook journals under the lock: it waits its turn behind an apply (bounded well
    // inside the harness's own hook timeout).
    git_astedit::ops::session::wait_for_lock(std::time::Duration::from_secs(20));
    let repo = agent_hook::open(&event.cwd)?;
    let outcome = agent_hook::handle(&repo, &event)?;
    Ok(match harness {
        Harness::ClaudeCode | Harness::Codex => match (outcome.deny, outcome.warn) {
            (Some(reason), _) => Some(serde_json::json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }})),
            (None, Some(reason)) => Some(serde_json::json!({"decision": "block",
                                                           "reason": reason})),
            // Claude Code: the command with the session in its environment. No
            // permissionDecision: the user's permission rules still decide. (Codex
            // takes updatedInput only with "allow", which we never answer.)
            (None, None) => match (harness, outcome.command) {
                (Harness::ClaudeCode, Some(command)) => {
                    let mut input = tool_input;
                    input["command"] = serde_json::json!(command);
                    Some(serde_json::json!({"hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "updatedInput": input,
                    }}))
                }
                _ => None,
            },
        }
        .map(|answer| answer.to_string() + "\n"),
        Harness::OpenCode => Some(
            match outcome.deny {
                Some(reason) => serde_json::json!({"decision": "deny", "reason": reason}),
                None => serde_json::json!({"decision": "allow",
                                           "journalled": outcome.journalled,
                                           "warning": outcome.warn,
                                           "command": outcome.command}),
            }
            .to_string()
                + "\n",
        ),
    })
}

fn bad(e: impl std::fmt::Display) -> Error {
    AgentHookError::BadEvent(e.to_string()).into()
}

/// A Claude Code hook event (the fields we read).
#[derive(Debug, Deserialize)]
struct ClaudeEvent {
    session_id: String,
    #[serde(default)]
    cwd: Option<PathBuf>,
    hook_event_name: String,
    #[serde(default)]
    tool_name: String,
    #[serde(default)]
    tool_input: serde_json::Value,
    #[serde(default)]
    tool_response: serde_json::Value,
    #[serde(default)]
    tool_use_id: Option<String>,
}

/// The common event of a Claude Code (or Codex) hook event, with the tool's input;
/// `None` for events and tools we do not look at.
fn claude_event(
    harness: Harness,
    input: &str,
) -> Result<Option<(HookEvent, serde_json::Value)>, Error> {
    let ev: ClaudeEvent = serde_json::from_str(input).map_err(bad)?;
    let phase = match ev.hook_event_name.as_str() {
        "PreToolUse" => Phase::Before,
        "PostToolUse" => Phase::After,
        "PostToolUseFailure" => Phase::Failed,
        _ => return Ok(None),
    };
    // Codex's shell tools all come as `Bash`; its `apply_patch` carries the patch in
    // `tool_input.command` as well.
    let tool = match (harness, ev.tool_name.as_str()) {
        (_, "Bash") | (Harness::Codex, "apply_patch") => ToolKind::Shell,
        (Harness::ClaudeCode, "Read") => ToolKind::Read,
        (Harness::ClaudeCode, "Edit" | "MultiEdit" | "Write") => ToolKind::Write,
        _ => return Ok(None),
    };
    let command = ev.tool_input["command"].as_str().map(str::to_string);
    let path = match (tool, ev.tool_input["file_path"].as_str()) {
        (ToolKind::Shell, _) if command.is_some() => PathBuf::new(),
        (ToolKind::Read | ToolKind::Write, Some(p)) => PathBuf::from(p),
        _ => return Ok(None),
    };
    let response = &ev.tool_response;
    let event = HookEvent {
        harness,
        session: ev.session_id,
        phase,
        tool,
        tool_name: ev.tool_name.clone(),
        path,
        cwd: cwd_or_here(ev.cwd)?,
        original: response["originalFile"].as_str().map(str::to_string),
        created: response["type"] == "create",
        command,
        tool_use_id: ev.tool_use_id,
    };
    Ok(Some((event, ev.tool_input)))
}

/// An OpenCode plugin event (as our plugin sends it).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OpenCodeEvent {
    hook: String,
    tool: String,
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(default)]
    args: serde_json::Value,
    #[serde(default)]
    directory: Option<PathBuf>,
    #[serde(default, rename = "callID")]
    call_id: Option<String>,
}

fn opencode_event(input: &str) -> Result<Option<HookEvent>, Error> {
    let ev: OpenCodeEvent = serde_json::from_str(input).map_err(bad)?;
    let phase = match ev.hook.as_str() {
        "tool.execute.before" => Phase::Before,
        "tool.execute.after" => Phase::After,
        _ => return Ok(None),
    };
    let tool = match ev.tool.as_str() {
        "read" => ToolKind::Read,
        "edit" | "multiedit" | "write" => ToolKind::Write,
        "bash" => ToolKind::Shell,
        _ => return Ok(None),
    };
    let command = ev.args["command"].as_str().map(str::to_string);
    let path = match (tool, ev.args["filePath"].as_str()) {
        (ToolKind::Shell, _) if command.is_some() => "",
        (ToolKind::Read | ToolKind::Write, Some(p)) => p,
        _ => return Ok(None),
    };
    Ok(Some(HookEvent {
        harness: Harness::OpenCode,
        session: ev.session_id,
        phase,
        tool,
        tool_name: ev.tool.clone(),
        path: PathBuf::from(path),
        cwd: cwd_or_here(ev.directory)?,
        original: None,
        created: false,
        command,
        tool_use_id: ev.call_id,
    }))
}

fn cwd_or_here(cwd: Option<PathBuf>) -> Result<PathBuf, Error> {
    match cwd {
        Some(c) => Ok(c),
        None => std::env::current_dir().map_err(bad),
    }
}
