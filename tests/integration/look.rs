//! Integration tests: colour, the pager and progress bars (issue 13, items 5 and 6),
//! as git's own commands behave. Terminals are pseudo-terminals made by util-linux's
//! `script`; the pager is a shell script that records its input and environment.

use std::path::Path;
use std::process::Command;
use std::process::Stdio;

use crate::util::Output;
use crate::util::TestRepo;

const ESC: &str = "\x1b[";

/// A committed repository with two matches of `console.log($A)` in `a.js`.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("a.js", "console.log(1);\nfoo();\nconsole.log(2);\n");
    repo.commit_all("init");
    repo
}

/// `repo` with a pending preview (`console.log` → `log`), for `show`.
fn repo_with_preview() -> TestRepo {
    let repo = repo();
    repo.run(&["edit", "-p", "console.log($A)", "-r", "log($A)"])
        .assert_code(0);
    repo
}

/// A fake pager: writes its input to `<dir>/paged` and its environment to
/// `<dir>/paged.env`. Returns the command that runs it.
fn fake_pager(dir: &Path, name: &str) -> String {
    let script = dir.join(name);
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > '{out}'\nenv > '{out}.env'\n",
            out = dir.join(format!("{name}.out")).display()
        ),
    )
    .expect("write pager");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.display().to_string()
}

/// What a fake pager named `name` was given, if it ran.
fn paged(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(format!("{name}.out"))).ok()
}

/// The environment a fake pager named `name` ran with: `KEY=value` lines.
fn paged_env(dir: &Path, name: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(format!("{name}.out.env")))
        .expect("pager env")
        .lines()
        .map(str::to_string)
        .collect()
}

fn quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// Runs `git-astedit <args>` with stdout and stderr on a pseudo-terminal (through
/// `script`), with the repository's test environment plus `TERM=xterm` (as a terminal
/// has) and `env`. `stdout_to`: a file that takes stdout instead, so that the terminal
/// shows stderr alone. Returns what the terminal showed (`\r\n` line ends, as a
/// terminal has them).
pub(crate) fn on_tty(
    repo: &TestRepo,
    args: &[&str],
    env: &[(&str, &str)],
    stdout_to: Option<&Path>,
) -> Output {
    let prepared = repo.command(".", args);
    let mut argv = vec![prepared.get_program().to_string_lossy().into_owned()];
    argv.extend(
        prepared
            .get_args()
            .map(|a| a.to_string_lossy().into_owned()),
    );
    run_on_tty(repo, &argv, env, stdout_to)
}

/// [`on_tty`] for any program (`argv[0]`).
fn run_on_tty(
    repo: &TestRepo,
    argv: &[String],
    env: &[(&str, &str)],
    stdout_to: Option<&Path>,
) -> Output {
    let mut line = argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ");
    if let Some(file) = stdout_to {
        line.push_str(&format!(" > {}", quote(&file.display().to_string())));
    }
    let prepared = repo.command(".", &[]);
    let mut cmd = Command::new("script");
    cmd.env_clear();
    for (k, v) in prepared.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.env("TERM", "xterm");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(["-qec", &line, "/dev/null"])
        .current_dir(repo.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = cmd
        .output()
        .expect("util-linux `script` runs the command on a pseudo-terminal");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn grep_args() -> Vec<&'static str> {
    vec!["grep", "-p", "console.log($A)"]
}

/// `grep`'s two lines with git's `color.grep` colours.
const COLOURED_GREP: &str = "\x1b[35ma.js\x1b[0m:\x1b[32m1\x1b[0m:1: console.log(1)\n\
                             \x1b[35ma.js\x1b[0m:\x1b[32m3\x1b[0m:1: console.log(2)\n";
const PLAIN_GREP: &str = "a.js:1:1: console.log(1)\na.js:3:1: console.log(2)\n";

#[test]
fn colour_is_off_on_a_pipe_and_on_when_asked() {
    let repo = repo();
    let out = repo.run(&grep_args());
    out.assert_code(0);
    assert_eq!(out.stdout, PLAIN_GREP);
    for flag in ["--color=always", "--color"] {
        let mut args = vec![flag];
        args.extend(grep_args());
        let out = repo.run(&args);
        out.assert_code(0);
        assert_eq!(out.stdout, COLOURED_GREP, "{flag}");
    }
    // Global: after the command too; the last of --color/--no-color wins.
    let out = repo.run(&["grep", "-p", "console.log($A)", "--color=always"]);
    assert_eq!(out.stdout, COLOURED_GREP);
    let out = repo.run(&[
        "--color=always",
        "--no-color",
        "grep",
        "-p",
        "console.log($A)",
    ]);
    assert_eq!(out.stdout, PLAIN_GREP);
    let out = repo.run(&["--color=never", "grep", "-p", "console.log($A)"]);
    assert_eq!(out.stdout, PLAIN_GREP);
    // `--color WHEN` is not taken: WHEN needs `=`, as in git.
    let out = repo.run(&["--color", "grep", "-p", "console.log($A)"]);
    assert_eq!(out.stdout, COLOURED_GREP);
    let out = repo.run(&["--color=sometimes", "grep", "-p", "x"]);
    out.assert_code(2);
    // Never inside JSON.
    let out = repo.run(&[
        "--color=always",
        "--json",
        "edit",
        "-p",
        "console.log($A)",
        "-r",
        "f($A)",
    ]);
    out.assert_code(0);
    assert!(!out.stdout.contains("\\u001b"), "{}", out.stdout);
    // Context lines: path and line number coloured, separators plain.
    let out = repo.run(&["--color=always", "grep", "-p", "console.log($A)", "-A", "1"]);
    assert_eq!(
        out.stdout,
        "\x1b[35ma.js\x1b[0m:\x1b[32m1\x1b[0m:1: console.log(1)\n\
         \x1b[35ma.js\x1b[0m-\x1b[32m2\x1b[0m-foo();\n\
         \x1b[35ma.js\x1b[0m:\x1b[32m3\x1b[0m:1: console.log(2)\n"
    );
}

#[test]
fn colour_on_a_terminal_is_auto_and_no_color_turns_auto_off() {
    let repo = repo();
    let mut args = vec!["-P"];
    args.extend(grep_args());
    let out = on_tty(&repo, &args, &[], None);
    out.assert_code(0);
    assert_eq!(out.stdout, COLOURED_GREP.replace('\n', "\r\n"));
    let out = on_tty(&repo, &args, &[("NO_COLOR", "1")], None);
    assert_eq!(out.stdout, PLAIN_GREP.replace('\n', "\r\n"));
    // NO_COLOR only turns `auto` off.
    let mut always = vec!["--color=always"];
    always.extend(&args);
    let out = on_tty(&repo, &always, &[("NO_COLOR", "1")], None);
    assert_eq!(out.stdout, COLOURED_GREP.replace('\n', "\r\n"));
    let out = on_tty(&repo, &args, &[("TERM", "dumb")], None);
    assert_eq!(out.stdout, PLAIN_GREP.replace('\n', "\r\n"));
}

#[test]
fn color_ui_and_the_command_line_take_precedence_as_in_git() {
    let repo = repo();
    repo.git(&["config", "color.ui", "always"]);
    assert_eq!(repo.run(&grep_args()).stdout, COLOURED_GREP);
    repo.git(&["config", "color.ui", "never"]);
    let mut args = vec!["-P"];
    args.extend(grep_args());
    let out = on_tty(&repo, &args, &[], None);
    assert_eq!(out.stdout, PLAIN_GREP.replace('\n', "\r\n"));
    // The command line wins over config.
    let mut always = vec!["--color=always"];
    always.extend(grep_args());
    assert_eq!(repo.run(&always).stdout, COLOURED_GREP);
    // color.grep wins over color.ui; `true` means auto (plain on a pipe).
    repo.git(&["config", "color.grep", "always"]);
    assert_eq!(repo.run(&grep_args()).stdout, COLOURED_GREP);
    repo.git(&["config", "color.grep", "true"]);
    assert_eq!(repo.run(&grep_args()).stdout, PLAIN_GREP);
    // `git -c` reaches us through GIT_CONFIG_PARAMETERS.
    let out = repo.run_with(
        ".",
        &grep_args(),
        &[("GIT_CONFIG_PARAMETERS", "'color.grep'='always'")],
        None,
    );
    assert_eq!(out.stdout, COLOURED_GREP);
}

#[test]
fn git_dash_c_and_git_dash_p_reach_the_command_through_git() {
    let repo = repo();
    // `git astedit` finds git-astedit on PATH, as git does for any git-NAME.
    let bin_dir = crate::util::bin().parent().expect("bin dir").to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let path = path.to_string_lossy().into_owned();
    let git = |args: &[&str]| {
        let mut argv = vec!["git".to_string()];
        argv.extend(args.iter().map(|a| a.to_string()));
        argv
    };
    let out = run_on_tty(
        &repo,
        &git(&[
            "-c",
            "color.grep=never",
            "astedit",
            "-P",
            "grep",
            "-p",
            "console.log($A)",
        ]),
        &[("PATH", &path)],
        None,
    );
    out.assert_code(0);
    assert_eq!(out.stdout, PLAIN_GREP.replace('\n', "\r\n"));
    // `git -p astedit grep`: git's pager reads our stdout (a pipe), and we keep colour
    // for it as git's own commands do (GIT_PAGER_IN_USE).
    let pager = fake_pager(repo.path(), "gitpager");
    let core = format!("core.pager={pager}");
    let out = run_on_tty(
        &repo,
        &git(&[
            "-c",
            &core,
            "-p",
            "astedit",
            "grep",
            "-p",
            "console.log($A)",
        ]),
        &[("PATH", &path)],
        None,
    );
    out.assert_code(0);
    assert_eq!(
        paged(repo.path(), "gitpager").as_deref(),
        Some(COLOURED_GREP)
    );
}

#[test]
fn color_diff_false_leaves_diffs_plain_and_grep_coloured() {
    let repo = repo_with_preview();
    repo.git(&["config", "color.ui", "always"]);
    let show = repo.run(&["show"]);
    show.assert_code(0);
    assert!(show
        .stdout
        .contains("\x1b[1mdiff --git a/a.js b/a.js\x1b[0m\n"));
    assert!(show.stdout.contains("\x1b[31m-console.log(1);\x1b[0m\n"));
    assert!(show.stdout.contains("\x1b[32m+log(1);\x1b[0m\n"));
    assert!(show.stdout.contains("\x1b[36m@@ -1,3 +1,3 @@\x1b[0m\n"));
    repo.git(&["config", "color.diff", "false"]);
    let show = repo.run(&["show"]);
    assert!(!show.stdout.contains(ESC), "{}", show.stdout);
    assert!(show.stdout.contains("-console.log(1);\n+log(1);\n"));
    assert_eq!(repo.run(&grep_args()).stdout, COLOURED_GREP);
    // Under a pager that git started, auto colour is on unless color.pager is false.
    repo.git(&["config", "--unset", "color.ui"]);
    repo.git(&["config", "--unset", "color.diff"]);
    let env = [("GIT_PAGER_IN_USE", "true")];
    assert_eq!(
        repo.run_with(".", &grep_args(), &env, None).stdout,
        COLOURED_GREP
    );
    repo.git(&["config", "color.pager", "false"]);
    assert_eq!(
        repo.run_with(".", &grep_args(), &env, None).stdout,
        PLAIN_GREP
    );
}

#[test]
fn show_pages_through_git_pager_with_git_s_environment_and_colour() {
    let repo = repo_with_preview();
    let pager = fake_pager(repo.path(), "pager");
    let plain = repo.run(&["--color=always", "show"]).stdout;
    let out = on_tty(&repo, &["show"], &[("GIT_PAGER", &pager)], None);
    out.assert_code(0);
    // Everything went to the pager, coloured (less -R shows it), byte for byte.
    assert_eq!(paged(repo.path(), "pager").as_deref(), Some(plain.as_str()));
    assert!(plain.contains(ESC));
    assert_eq!(out.stdout, "");
    let env = paged_env(repo.path(), "pager");
    for want in ["LESS=FRX", "LV=-c", "GIT_PAGER_IN_USE=true"] {
        assert!(env.iter().any(|l| l == want), "{want} not in {env:?}");
    }
    // color.pager=false: plain into our pager too, as into git's.
    repo.git(&["config", "color.pager", "false"]);
    on_tty(&repo, &["show"], &[("GIT_PAGER", &pager)], None).assert_code(0);
    let text = paged(repo.path(), "pager").expect("paged");
    assert!(text.contains("diff --git") && !text.contains(ESC), "{text}");
    repo.git(&["config", "--unset", "color.pager"]);
    // LESS and LV the user set are kept.
    let out = on_tty(
        &repo,
        &["show"],
        &[("GIT_PAGER", &pager), ("LESS", "S"), ("LV", "x")],
        None,
    );
    out.assert_code(0);
    let env = paged_env(repo.path(), "pager");
    assert!(env.iter().any(|l| l == "LESS=S"), "{env:?}");
    assert!(env.iter().any(|l| l == "LV=x"), "{env:?}");
}

#[test]
fn the_pager_comes_from_git_pager_then_pager_cmd_then_core_pager_then_pager() {
    let repo = repo_with_preview();
    let dir = repo.path();
    let (env_pager, cmd_pager, core_pager, pager_var) = (
        fake_pager(dir, "env"),
        fake_pager(dir, "cmd"),
        fake_pager(dir, "core"),
        fake_pager(dir, "var"),
    );
    let clear = |names: &[&str]| {
        for n in names {
            let _ = std::fs::remove_file(dir.join(format!("{n}.out")));
        }
    };
    let all = ["env", "cmd", "core", "var"];
    let which = || {
        all.iter()
            .filter(|n| paged(dir, n).is_some())
            .copied()
            .collect::<Vec<_>>()
    };
    // PAGER alone.
    on_tty(&repo, &["show"], &[("PAGER", &pager_var)], None).assert_code(0);
    assert_eq!(which(), ["var"]);
    clear(&all);
    // core.pager over PAGER.
    repo.git(&["config", "core.pager", &core_pager]);
    on_tty(&repo, &["show"], &[("PAGER", &pager_var)], None).assert_code(0);
    assert_eq!(which(), ["core"]);
    clear(&all);
    // pager.show naming a command over core.pager.
    repo.git(&["config", "pager.show", &cmd_pager]);
    on_tty(&repo, &["show"], &[("PAGER", &pager_var)], None).assert_code(0);
    assert_eq!(which(), ["cmd"]);
    clear(&all);
    // GIT_PAGER over everything.
    on_tty(
        &repo,
        &["show"],
        &[("PAGER", &pager_var), ("GIT_PAGER", &env_pager)],
        None,
    )
    .assert_code(0);
    assert_eq!(which(), ["env"]);
    clear(&all);
    // pager.show=false: no pager; output on the terminal.
    repo.git(&["config", "pager.show", "false"]);
    let out = on_tty(&repo, &["show"], &[("GIT_PAGER", &env_pager)], None);
    assert_eq!(which(), Vec::<&str>::new());
    assert!(out.stdout.contains("diff --git"), "{}", out.stdout);
    // A command that does not page by default pages with pager.<cmd>=true or -p.
    repo.git(&["config", "--unset", "pager.show"]);
    on_tty(&repo, &["list"], &[("GIT_PAGER", &env_pager)], None).assert_code(0);
    assert_eq!(which(), Vec::<&str>::new());
    on_tty(&repo, &["-p", "list"], &[("GIT_PAGER", &env_pager)], None).assert_code(0);
    assert!(paged(dir, "env").is_some_and(|t| t.contains("  edit  ")));
    clear(&all);
    repo.git(&["config", "pager.list", "true"]);
    on_tty(&repo, &["list"], &[("GIT_PAGER", &env_pager)], None).assert_code(0);
    assert_eq!(which(), ["env"]);
    clear(&all);
}

#[test]
fn no_pager_for_no_pager_json_a_pipe_or_cat() {
    let repo = repo_with_preview();
    let dir = repo.path();
    let pager = fake_pager(dir, "pager");
    let env = [("GIT_PAGER", pager.as_str())];
    for args in [
        &["-P", "show"][..],
        &["--no-pager", "show"],
        &["--json", "show"],
        &["show", "--json"],
        &["-p", "-P", "show"],
    ] {
        let out = on_tty(&repo, args, &env, None);
        out.assert_code(0);
        assert!(paged(dir, "pager").is_none(), "{args:?} paged");
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    // On a pipe: no pager, even with -p.
    let out = repo.run_with(".", &["-p", "show"], &env, None);
    out.assert_code(0);
    assert!(out.stdout.contains("diff --git"));
    assert!(paged(dir, "pager").is_none());
    // `cat` or an empty pager: none.
    for none in ["cat", ""] {
        let out = on_tty(&repo, &["show"], &[("GIT_PAGER", none)], None);
        out.assert_code(0);
        assert!(
            out.stdout.contains("diff --git"),
            "{none:?}: {}",
            out.stdout
        );
    }
    // -p/-P sit before the command beside -C DIR.
    repo.write("sub/b.js", "console.log(3);\n");
    let out = on_tty(
        &repo,
        &["-C", "sub", "-p", "grep", "-p", "console.log($A)"],
        &env,
        None,
    );
    out.assert_code(0);
    assert_eq!(
        paged(dir, "pager").as_deref(),
        Some("\x1b[35mb.js\x1b[0m:\x1b[32m1\x1b[0m:1: console.log(3)\n")
    );
}

#[test]
fn quitting_the_pager_early_ends_the_run_quietly() {
    let repo = TestRepo::new();
    let text: String = (0..20_000)
        .map(|i| format!("console.log({i});\n"))
        .collect();
    repo.write("a.js", &text);
    repo.commit_all("init");
    // A pager that reads one line and leaves, as a user quitting less does.
    let out = on_tty(
        &repo,
        &["grep", "--max-count", "0", "-p", "console.log($A)"],
        &[("GIT_PAGER", "head -n 1 >/dev/null")],
        None,
    );
    out.assert_code(0);
    assert!(!out.stdout.contains("error"), "{}", out.stdout);
}

/// A repository with enough files that every engine reports some progress.
fn many_files_repo() -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..40 {
        repo.write(&format!("src/f{i}.js"), format!("console.log({i});\n"));
    }
    repo.commit_all("init");
    repo
}

#[test]
fn progress_shows_on_a_terminal_and_never_on_a_pipe_or_under_json() {
    let repo = many_files_repo();
    let now = [("GIT_ASTEDIT_PROGRESS_DELAY_MS", "0")];
    let results = repo.path().join(".git/results");
    // stdout to a file: the terminal shows stderr alone.
    let out = on_tty(&repo, &grep_args(), &now, Some(&results));
    out.assert_code(0);
    assert!(out.stdout.contains("searching"), "{:?}", out.stdout);
    assert!(out.stdout.contains("/40 files"), "{:?}", out.stdout);
    assert!(out.stdout.contains("matches"), "{:?}", out.stdout);
    let lines = std::fs::read_to_string(&results).expect("results");
    assert_eq!(lines.lines().count(), 40);
    assert!(!lines.contains(ESC));
    // A run that ends before the delay draws nothing (a delay no test run reaches).
    let later = [("GIT_ASTEDIT_PROGRESS_DELAY_MS", "600000")];
    let out = on_tty(&repo, &grep_args(), &later, Some(&results));
    out.assert_code(0);
    assert_eq!(out.stdout, "");
    // Never under --json, nor on a pipe.
    let mut json = grep_args();
    json.push("--json");
    let out = on_tty(&repo, &json, &now, Some(&results));
    assert_eq!(out.stdout, "");
    let out = repo.run_with(".", &grep_args(), &now, None);
    out.assert_code(0);
    assert_eq!(out.stderr, "");

    // edit, apply, undo, scan.
    let out = on_tty(
        &repo,
        &["edit", "-p", "console.log($A)", "-r", "log($A)"],
        &now,
        Some(&results),
    );
    out.assert_code(0);
    assert!(out.stdout.contains("searching"), "{:?}", out.stdout);
    let out = on_tty(&repo, &["apply"], &now, Some(&results));
    out.assert_code(0);
    assert!(out.stdout.contains("checking"), "{:?}", out.stdout);
    assert!(out.stdout.contains("writing"), "{:?}", out.stdout);
    assert_eq!(repo.read_string("src/f3.js"), "log(3);\n");
    let out = on_tty(&repo, &["undo"], &now, Some(&results));
    out.assert_code(0);
    assert!(out.stdout.contains("writing"), "{:?}", out.stdout);
    assert_eq!(repo.read_string("src/f3.js"), "console.log(3);\n");
    repo.write(
        "astedit.toml",
        "[[rules]]\nid = \"no-log\"\nlanguage = \"javascript\"\nmessage = \"no\"\nrule.pattern = \"console.log($A)\"\n",
    );
    let out = on_tty(&repo, &["scan"], &now, Some(&results));
    assert!(out.stdout.contains("searching"), "{:?}", out.stdout);
    let piped = repo.run_with(".", &["scan"], &now, None);
    assert!(!piped.stderr.contains("searching"), "{}", piped.stderr);
}

#[test]
fn ctrl_c_waits_for_the_pager_before_the_run_ends() {
    let repo = repo_with_preview();
    let dir = repo.path();
    let mark = |name: &str| dir.join(".git").join(name);
    // A pager that records who started it, reads everything, then stays until the
    // test lets it go (a user still reading), and leaves a mark when it ends.
    let pager = format!(
        "echo $PPID > '{pid}'; cat > /dev/null; touch '{ready}'; \
         while [ ! -e '{go}' ]; do sleep 0.05; done; touch '{done}'",
        pid = mark("pid").display(),
        ready = mark("ready").display(),
        go = mark("go").display(),
        done = mark("done").display(),
    );
    let prepared = repo.command(".", &["show"]);
    let line = format!("{} show", quote(&prepared.get_program().to_string_lossy()));
    let mut cmd = Command::new("script");
    cmd.env_clear();
    for (k, v) in prepared.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.env("TERM", "xterm")
        .env("GIT_PAGER", &pager)
        .args(["-qec", &line, "/dev/null"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut script = cmd.spawn().expect("script");
    let wait_for = |path: &Path| {
        for _ in 0..600 {
            if path.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("{} never appeared", path.display());
    };
    wait_for(&mark("ready"));
    let pid = std::fs::read_to_string(mark("pid")).expect("pid");
    let pid = pid.trim();
    let alive = |pid: &str| {
        Command::new("kill")
            .args(["-0", pid])
            .stderr(Stdio::null())
            .status()
            .expect("kill")
            .success()
    };
    assert!(alive(pid));
    let sent = Command::new("kill")
        .args(["-INT", pid])
        .status()
        .expect("kill");
    assert!(sent.success());
    // Still there while the pager is: it waits for the user to leave it.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(alive(pid), "the run ended while its pager was still open");
    std::fs::write(mark("go"), "").expect("go");
    let status = script.wait().expect("wait");
    assert!(mark("done").exists(), "the run ended before its pager");
    // And then it died of the signal, as without a pager.
    assert!(!status.success());
}
