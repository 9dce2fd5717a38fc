//! `git astedit test`: run an ast-grep project's rule tests, as `ast-grep test` does.

use std::io::BufRead as _;
use std::path::PathBuf;

use git_astedit::error::Exit;
use git_astedit::error::UsageError;
use git_astedit::ops::ruletest::Review;
use git_astedit::ops::ruletest::TestRequest;
use git_astedit::render::Style;
use git_astedit::report::ruletest::CaseVerdict;
use git_astedit::Error;

use super::Ctx;

/// Run the rule tests of an ast-grep project (`testConfigs` in sgconfig.yml)
///
/// Each test names a rule and lists `valid` code it must not report and `invalid` code
/// it must report; snapshots (`__snapshots__/<id>-snapshot.yml`) record what it reports
/// and what its fix makes of the code, in ast-grep's format. Prints ast-grep's summary
/// (`N passed; M failed;`); exits 1 when a rule fails.
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// Read rules from FILE, as `scan -c` does (can be repeated); default: astedit.toml
    /// and sgconfig.yml at the root. `testConfigs` come from the sgconfig.yml among them
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: Vec<PathBuf>,

    /// Read tests from DIR instead of the config's testConfigs
    #[arg(short = 't', long, value_name = "DIR")]
    pub test_dir: Option<PathBuf>,

    /// The folder of snapshots under each test folder (default: __snapshots__)
    #[arg(long, value_name = "DIR")]
    pub snapshot_dir: Option<PathBuf>,

    /// Only check that invalid code is reported, not what is reported
    #[arg(long, conflicts_with = "update_all")]
    pub skip_snapshot_tests: bool,

    /// Write every snapshot that changed or is missing
    #[arg(short = 'U', long)]
    pub update_all: bool,

    /// Ask about each changed snapshot (y: accept, n: keep, a: accept all, q: quit)
    #[arg(short = 'i', long, conflicts_with_all = ["update_all", "skip_snapshot_tests"])]
    pub interactive: bool,

    /// Only test rules whose id matches REGEX
    #[arg(short = 'f', long, value_name = "REGEX")]
    pub filter: Option<String>,

    /// Also test rules with `severity: off`
    #[arg(long)]
    pub include_off: bool,

    /// Load sgconfig.yml's customLanguages libraries (a library runs code when loaded):
    /// allow (every one, this run), ignore (none), or sha256:DIGEST,… (those, this run);
    /// default: those `git astedit allow` recorded
    #[arg(long, value_name = "POLICY")]
    pub custom_languages: Option<String>,

    // ast-grep's `--follow`, refused with what to type instead.
    #[command(flatten)]
    pub ast_grep: super::astgrep::TestFlags,
}

pub fn run(ctx: &mut Ctx, args: TestArgs) -> Result<Exit, Error> {
    args.ast_grep.check()?;
    let filter = super::common::filter(args.filter.as_deref())?;
    if args.interactive && ctx.json {
        return Err(UsageError("-i/--interactive cannot be combined with --json".into()).into());
    }
    let request = TestRequest {
        configs: args.config,
        test_dir: args.test_dir,
        snapshot_dir: args.snapshot_dir,
        filter,
        skip_snapshot_tests: args.skip_snapshot_tests,
        update_all: args.update_all,
        include_off: args.include_off,
    };
    let (repo, out) = ctx.parts()?;
    let mut prompter = Prompter {
        style: out.style(),
        all: false,
    };
    let review: Option<&mut dyn Review> = if args.interactive {
        Some(&mut prompter)
    } else {
        None
    };
    let report = git_astedit::ops::ruletest::run(repo, &request, review)?;
    out.emit(&report)?;
    Ok(report.exit())
}

/// `test -i`: shows a changed snapshot on stderr and reads the answer from stdin.
struct Prompter {
    style: Style,
    all: bool,
}

impl Review for Prompter {
    fn accept(&mut self, rule: &str, case: &CaseVerdict) -> Option<bool> {
        if self.all {
            return Some(true);
        }
        eprint!(
            "{}",
            git_astedit::render::ruletest::case_text(rule, case, &self.style)
        );
        loop {
            eprint!("Accept new snapshot? (Yes[y], No[n], Accept All[a], Quit[q]) ");
            let mut line = String::new();
            // End of input (or an unreadable stdin) quits, keeping the rest as it is.
            if std::io::stdin().lock().read_line(&mut line).unwrap_or(0) == 0 {
                eprintln!();
                return None;
            }
            match line.trim() {
                "y" | "Y" => return Some(true),
                "n" | "N" | "" => return Some(false),
                "a" | "A" => {
                    self.all = true;
                    return Some(true);
                }
                "q" | "Q" => return None,
                _ => continue,
            }
        }
    }
}
