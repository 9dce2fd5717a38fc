//! Integration tests: man pages (`git astedit man`) and shell completions
//! (`git astedit completions`) generated from the clap definitions. The source of truth
//! for what they must cover is the binary's own `--help`, walked command by command.

use std::path::Path;
use std::process::Command;

use crate::util::bin;
use crate::util::TestRepo;

/// One command of the tree: its words after `git astedit` (empty for the root), the
/// long flags and the description its `--help` prints.
struct HelpNode {
    path: Vec<String>,
    long_flags: Vec<String>,
    description: String,
}

impl HelpNode {
    /// The page name: `git-astedit`, `git-astedit-grep`, `git-astedit-hook-install`.
    fn page(&self) -> String {
        std::iter::once("git-astedit")
            .chain(self.path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("-")
    }
}

/// Runs the binary outside any repository, with no user configuration.
fn run(args: &[&str]) -> crate::util::Output {
    let repo = TestRepo::new();
    repo.run(args)
}

/// Walks the command tree through `--help`: every subcommand (clap's `help` aside) and
/// every long flag of each.
fn help_tree() -> Vec<HelpNode> {
    let mut nodes = Vec::new();
    let mut pending = vec![Vec::<String>::new()];
    while let Some(path) = pending.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let out = run(&args);
        out.assert_code(0);
        let mut section = "";
        let mut long_flags = Vec::new();
        let mut description = String::new();
        let mut before_usage = true;
        for line in out.stdout.lines() {
            if line.starts_with("Usage:") {
                before_usage = false;
            }
            if before_usage {
                description.push_str(line);
                description.push(' ');
                continue;
            }
            if !line.starts_with(' ') && line.ends_with(':') {
                section = line;
                continue;
            }
            let item = line.trim_start();
            // An item's first column ends at two spaces (short help) or the line end.
            let head = item.split("  ").next().unwrap_or("");
            match section {
                "Commands:" if line.starts_with("  ") && !line.starts_with("   ") => {
                    let name = head.split_whitespace().next().unwrap_or("");
                    if !name.is_empty() && name != "help" {
                        let mut sub = path.clone();
                        sub.push(name.to_string());
                        pending.push(sub);
                    }
                }
                // An option starts at most 6 columns in (`  -c, --x`, `      --x`); a
                // wrapped help line that starts with a `--flag` mention is deeper.
                "Options:" if item.starts_with('-') && line.len() - item.len() <= 6 => {
                    for token in head.split([' ', ',']) {
                        if let Some(flag) = token.strip_prefix("--") {
                            // `--color[=<WHEN>]`: a flag whose value is optional.
                            let flag = flag.split('[').next().unwrap_or(flag);
                            if !flag.is_empty() && !flag.starts_with('-') {
                                long_flags.push(flag.to_string());
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        nodes.push(HelpNode {
            path,
            long_flags,
            description: words(&description),
        });
    }
    nodes.sort_by(|a, b| a.path.cmp(&b.path));
    nodes
}

/// Text with its whitespace runs made single spaces.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A roff page as plain text: control lines dropped, escapes undone, one line.
fn roff_text(page: &str) -> String {
    let body: Vec<&str> = page.lines().filter(|l| !l.starts_with('.')).collect();
    let text = body
        .join(" ")
        .replace("\\fB", "")
        .replace("\\fR", "")
        .replace("\\fI", "")
        .replace("\\*(Aq", "'")
        .replace("\\(aq", "'")
        .replace("\\-", "-")
        .replace("\\e", "\\")
        .replace("\\\\", "\\");
    words(&text)
}

#[test]
fn the_help_tree_is_what_the_tests_walk() {
    let nodes = help_tree();
    let pages: Vec<String> = nodes.iter().map(HelpNode::page).collect();
    for page in [
        "git-astedit",
        "git-astedit-grep",
        "git-astedit-hook-install",
        "git-astedit-resolve-apply",
        "git-astedit-man",
        "git-astedit-completions",
    ] {
        assert!(pages.contains(&page.to_string()), "{page} in {pages:?}");
    }
    let grep = nodes.iter().find(|n| n.path == ["grep"]).expect("grep");
    for flag in ["pattern", "json", "max-count", "help"] {
        assert!(grep.long_flags.contains(&flag.to_string()), "{flag}");
    }
    assert!(grep.description.contains("sorted by path and position"));
}

#[test]
fn the_root_page_says_what_the_commands_are_for_and_the_exit_codes() {
    let out = run(&["man"]);
    out.assert_code(0);
    let text = roff_text(&out.stdout);
    assert!(
        text.contains("previews made of git objects under refs/astedit/<id>"),
        "{text}"
    );
    for section in [
        ".SH DESCRIPTION",
        ".SH \"EXIT STATUS\"",
        ".SH \"SEE ALSO\"",
        ".SH VERSION",
    ] {
        assert!(out.stdout.contains(section), "{section}");
    }
    assert!(text.contains("Internal error (I/O, object database)."));
    // Only the root page has them.
    assert!(!run(&["man", "grep"]).stdout.contains("EXIT STATUS"));
}

#[test]
fn every_page_has_every_subcommand_and_long_flag_and_the_long_description() {
    let nodes = help_tree();
    for node in &nodes {
        let mut args = vec!["man"];
        args.extend(node.path.iter().map(String::as_str));
        let out = run(&args);
        out.assert_code(0);
        let page = &out.stdout;
        let title = format!(".TH {} 1", node.page().to_uppercase());
        assert!(page.contains(&title), "{title} in:\n{page}");
        let text = roff_text(page);
        assert!(
            text.contains(&node.description),
            "{}: description {:?} in {text}",
            node.page(),
            node.description
        );
        for flag in &node.long_flags {
            let needle = format!("--{flag}");
            assert!(
                text.contains(&needle),
                "{}: {needle} in {text}",
                node.page()
            );
        }
        // Each subcommand is listed by its own page name.
        for child in nodes
            .iter()
            .filter(|c| c.path.len() == node.path.len() + 1 && c.path.starts_with(&node.path))
        {
            let reference = format!("{}(1)", child.page());
            assert!(text.contains(&reference), "{reference} in {}", node.page());
        }
    }
}

#[test]
fn man_takes_aliases_and_rejects_unknown_subcommands() {
    let reject = run(&["man", "reject"]);
    reject.assert_code(0);
    assert!(reject.stdout.contains(".TH GIT-ASTEDIT-DISCARD 1"));

    let unknown = run(&["man", "nope"]);
    unknown.assert_code(2);
    assert!(
        unknown.stderr.contains("no manual page for 'nope'"),
        "{}",
        unknown.stderr
    );
    assert!(unknown.stdout.is_empty());

    let json = run(&["--json", "man", "hook", "nope"]);
    json.assert_code(2);
    assert_eq!(json.json()["error"]["code"], "usage");
}

/// The file names `man --install` must write: one page per node of the help tree.
fn expected_pages(nodes: &[HelpNode]) -> Vec<String> {
    let mut names: Vec<String> = nodes.iter().map(|n| format!("{}.1", n.page())).collect();
    names.sort();
    names
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn install_writes_one_page_per_command_into_dir_man1() {
    let nodes = help_tree();
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("man");
    let out = run(&["man", "--install", target.to_str().expect("utf-8")]);
    out.assert_code(0);
    let man1 = target.join("man1");
    assert!(
        out.stdout.contains(&man1.display().to_string()),
        "{}",
        out.stdout
    );
    assert_eq!(listing(&man1), expected_pages(&nodes));
    // Each file is the page `man SUBCOMMAND` prints.
    let printed = run(&["man", "hook", "install"]);
    let written = std::fs::read_to_string(man1.join("git-astedit-hook-install.1")).expect("read");
    assert_eq!(written, printed.stdout);

    // Installing again (an upgrade) overwrites in place.
    run(&["man", "--install", target.to_str().expect("utf-8")]).assert_code(0);
    assert_eq!(listing(&man1), expected_pages(&nodes));
}

#[test]
fn install_into_a_file_fails_and_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, "x").expect("write");
    let out = run(&["man", "--install", file.to_str().expect("utf-8")]);
    out.assert_code(2);
    assert!(out.stderr.contains("not-a-folder"), "{}", out.stderr);
    assert_eq!(std::fs::read(&file).expect("read"), b"x");
    let json = run(&["--json", "man", "--install", file.to_str().expect("utf-8")]);
    json.assert_code(2);
    assert_eq!(json.json()["error"]["code"], "input-not-a-folder");
}

/// A PATH folder holding `git-astedit` (a link to the built binary), as after
/// `cargo install`: `PREFIX/bin`.
fn installed_prefix() -> tempfile::TempDir {
    let prefix = tempfile::tempdir().expect("tempdir");
    let bin_dir = prefix.path().join("bin");
    std::fs::create_dir_all(&bin_dir).expect("mkdir");
    std::os::unix::fs::symlink(bin(), bin_dir.join("git-astedit")).expect("symlink");
    prefix
}

fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).expect("PATH")
}

#[test]
fn install_defaults_to_share_man_beside_the_path_folder_holding_the_binary() {
    let nodes = help_tree();
    let prefix = installed_prefix();
    let repo = TestRepo::new();
    let out = repo
        .command(".", &["man", "--install"])
        .env("PATH", path_with(&prefix.path().join("bin")))
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let man1 = prefix.path().join("share/man/man1");
    assert_eq!(listing(&man1), expected_pages(&nodes));
}

/// `git ARGS` in the repository, without the user's or the system's configuration.
fn git_in(repo: &TestRepo, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(repo.path())
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    cmd
}

fn have(program: &str, arg: &str) -> bool {
    let found = Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipped: `{program}` is not installed");
    }
    found
}

#[test]
fn man_and_git_help_open_the_installed_pages() {
    if !have("man", "--version") {
        return;
    }
    let repo = TestRepo::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let manpath = dir.path().to_str().expect("utf-8");
    repo.run(&["man", "--install", manpath]).assert_code(0);

    let found = Command::new("man")
        .args(["-w", "git-astedit-grep"])
        .env("MANPATH", manpath)
        .output()
        .expect("man -w");
    assert!(
        found.status.success(),
        "{}",
        String::from_utf8_lossy(&found.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&found.stdout).trim(),
        dir.path()
            .join("man1/git-astedit-grep.1")
            .display()
            .to_string()
    );

    // git runs `man git-astedit` for both; the binary's folder on PATH is what makes
    // `git astedit` a command at all.
    let prefix = installed_prefix();
    for args in [
        &["-c", "help.format=man", "help", "astedit"][..],
        &["astedit", "--help"][..],
    ] {
        let out = git_in(&repo, args)
            .env("PATH", path_with(&prefix.path().join("bin")))
            .env("MANPATH", manpath)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .expect("git help");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("GIT-ASTEDIT(1)"), "git {args:?}:\n{text}");
        assert!(
            text.contains("git-astedit-grep(1)"),
            "git {args:?}:\n{text}"
        );
    }
}

#[test]
fn git_help_finds_the_default_install_without_manpath() {
    if !have("man", "--version") {
        return;
    }
    let prefix = installed_prefix();
    let repo = TestRepo::new();
    let path = path_with(&prefix.path().join("bin"));
    let install = repo
        .command(".", &["man", "--install"])
        .env("PATH", &path)
        .output()
        .expect("install");
    assert!(install.status.success());
    let out = git_in(&repo, &["-c", "help.format=man", "help", "astedit"])
        .env("PATH", &path)
        .env_remove("MANPATH")
        .env("MANPAGER", "cat")
        .output()
        .expect("git help");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("GIT-ASTEDIT(1)"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// How each shell's script spells a long flag.
fn flag_in(shell: &str, flag: &str) -> String {
    match shell {
        "fish" => format!("-l {flag}"),
        _ => format!("--{flag}"),
    }
}

#[test]
fn every_completion_script_has_every_subcommand_and_long_flag() {
    let nodes = help_tree();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(&["completions", shell]);
        out.assert_code(0);
        let script = &out.stdout;
        assert!(script.contains("git-astedit"), "{shell}");
        for node in &nodes {
            if let Some(name) = node.path.last() {
                assert!(script.contains(name.as_str()), "{shell}: {name}");
            }
            for flag in &node.long_flags {
                let needle = flag_in(shell, flag);
                assert!(
                    script.contains(&needle),
                    "{shell}: {needle} ({})",
                    node.page()
                );
            }
        }
    }
    let bash = run(&["completions", "bash"]).stdout;
    assert!(bash.contains("\n_git_astedit() {"), "{bash}");
    assert!(
        bash.contains("git-astedit\n"),
        "a complete line for git-astedit"
    );
    let zsh = run(&["completions", "zsh"]).stdout;
    assert!(zsh.starts_with("#compdef git-astedit"), "{zsh}");
    assert!(zsh.contains("_git-astedit()"));

    let bad = run(&["completions", "tcsh"]);
    bad.assert_code(2);
}

/// Completes `line` in bash through git's own completion (git-completion.bash), with
/// the script `completions bash` prints loaded as bash-completion would load it.
fn bash_complete(script: &Path, prefix: &Path, line: &str) -> String {
    let program = format!(
        r#"source {git_completion}
source {script}
COMP_LINE="$1"; COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<<"$1"
[[ $1 == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))
COMPREPLY=()
__git_wrap__git_main
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        git_completion = GIT_COMPLETION,
        script = script.display(),
    );
    let out = Command::new("bash")
        .args(["-c", &program, "bash", line])
        .env("PATH", path_with(&prefix.join("bin")))
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const GIT_COMPLETION: &str = "/usr/share/bash-completion/completions/git";

#[test]
fn bash_completes_git_astedit_through_gits_completion() {
    if !have("bash", "--version") || !Path::new(GIT_COMPLETION).is_file() {
        eprintln!("skipped: bash or {GIT_COMPLETION} is absent");
        return;
    }
    let prefix = installed_prefix();
    let script = prefix.path().join("git-astedit.bash");
    std::fs::write(&script, run(&["completions", "bash"]).stdout).expect("write");
    let cases: [(&str, &[&str]); 5] = [
        ("git astedit gr", &["grep"]),
        ("git astedit grep --max", &["--max-count", "--max-filesize"]),
        ("git -C . astedit sc", &["scan"]),
        ("git astedit hook ", &["install"]),
        ("git astedit completions z", &["zsh"]),
    ];
    for (line, expected) in cases {
        let got = bash_complete(&script, prefix.path(), line);
        let got: Vec<&str> = got.lines().collect();
        for word in expected {
            assert!(got.contains(word), "{line:?}: {word} in {got:?}");
        }
    }
}

/// Completes `line` in an interactive zsh (driven through zsh/zpty) with git's own
/// completion (`_git`, shipped with zsh) and the script `completions zsh` prints on
/// `fpath` as `_git-astedit`; returns the candidates offered.
fn zsh_complete(zfunc: &Path, prefix: &Path, line: &str) -> Vec<String> {
    let work = tempfile::tempdir().expect("tempdir");
    let hits = work.path().join("hits");
    let mark = work.path().join("done");
    // `compadd` is wrapped to record what is offered; a widget completes the line and
    // then leaves a mark, which ends the wait.
    let driver = r#"zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "fpath=($ZFUNC \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "compadd () { builtin compadd -O __hits \"\$@\"; print -l -- \${^__hits} >> $HITS; builtin compadd \"\$@\" }"
zpty -w z "complete-then-mark () { zle complete-word; print done > $MARK }; zle -N complete-then-mark; bindkey '^T' complete-then-mark"
zpty -w z "$1"$'\x14'
for i in {1..600}; do [[ -e $MARK ]] && break; sleep 0.1; done
zpty -d z
"#;
    let out = Command::new("zsh")
        .args(["-f", "-c", driver, "zsh", line])
        .env("ZFUNC", zfunc)
        .env("HITS", &hits)
        .env("MARK", &mark)
        .env("PATH", path_with(&prefix.join("bin")))
        .output()
        .expect("zsh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(mark.exists(), "zsh never finished completing {line:?}");
    let text = std::fs::read_to_string(&hits).unwrap_or_default();
    text.lines().map(str::to_string).collect()
}

#[test]
fn zsh_completes_git_astedit_through_gits_completion() {
    if !have("zsh", "--version") {
        return;
    }
    let prefix = installed_prefix();
    let zfunc = prefix.path().join("zfunc");
    std::fs::create_dir_all(&zfunc).expect("mkdir");
    std::fs::write(
        zfunc.join("_git-astedit"),
        run(&["completions", "zsh"]).stdout,
    )
    .expect("write");
    let cases: [(&str, &[&str]); 3] = [
        ("git astedit gr", &["grep"]),
        ("git astedit grep --max", &["--max-count", "--max-filesize"]),
        ("git astedit hook ", &["install"]),
    ];
    for (line, expected) in cases {
        let got = zsh_complete(&zfunc, prefix.path(), line);
        for word in expected {
            assert!(got.iter().any(|g| g == word), "{line:?}: {word} in {got:?}");
        }
    }
}

#[test]
fn fish_completes_git_astedit() {
    if !have("fish", "--version") {
        return;
    }
    let prefix = installed_prefix();
    let config = prefix.path().join("config");
    let completions = config.join("fish/completions");
    std::fs::create_dir_all(&completions).expect("mkdir");
    std::fs::write(
        completions.join("git-astedit.fish"),
        run(&["completions", "fish"]).stdout,
    )
    .expect("write");
    // fish's git completion forwards `git astedit …` to git-astedit's completions;
    // the README's line for fish releases that register that forward under the wrong
    // name (3.6) does the same where it is needed, and no harm elsewhere.
    let program = r#"complete -c git -f -n '__fish_git_using_command astedit' -a '(__fish_git_complete_custom_command astedit)'
complete -C "git-astedit grep --max"
echo ---
complete -C "git astedit grep --max"
echo ---
complete -C "git astedit hook "
"#;
    let out = Command::new("fish")
        .args(["-c", program])
        .env("HOME", prefix.path())
        .env("XDG_CONFIG_HOME", &config)
        .env("XDG_DATA_HOME", prefix.path().join("data"))
        .env("PATH", path_with(&prefix.path().join("bin")))
        .output()
        .expect("fish");
    let text = String::from_utf8_lossy(&out.stdout);
    let parts: Vec<&str> = text.split("---\n").collect();
    assert_eq!(
        parts.len(),
        3,
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for part in &parts[..2] {
        assert!(part.contains("--max-count\t"), "{text}");
        assert!(part.contains("--max-filesize\t"), "{text}");
    }
    assert!(parts[2].contains("install\t"), "{text}");
}
