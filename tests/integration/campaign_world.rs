//! The world campaign tests run in (issue 27, shared by `campaign` and
//! `campaign_trust`): local bare repositories made here, stand-in `gh` and `glab` on
//! PATH that record their argument vectors and answer with JSON shaped as gh's and
//! GitLab's API's, the state read back from `refs/astedit-campaign/<name>`.

use std::path::Path;
use std::path::PathBuf;

use crate::util::Output;
use crate::util::TestRepo;

/// A stand-in `gh`: each call's argv recorded (NUL-separated, one file per call, numbered
/// under a lock: a campaign runs gh from several threads); pull requests kept per
/// repository (the folder gh runs in) under `$GH_STUB_DIR/prs/`, numbered from a
/// counter; a file `prs/<repo>.state` holding MERGED or CLOSED flips one. Each write
/// (`pr create`, `pr edit`) appends its start time to `writes`. `hold-create-<repo>`
/// makes that repository's `pr create` wait (after `held-<repo>` appears) until the file
/// is removed; `kill-on-create-<repo>` SIGKILLs the publisher right after the forge
/// opened the PR; `fail-create-<repo>` makes `pr create` fail. A new pull request
/// replaces the repository's old one (and its state). A file per running call sits in `running/`. `pr ready` marks a draft
/// ready, `pr merge` merges (the state MERGED); `repo list` and `search repos` print
/// the JSON the test left in `repo-list.json` and `search-repos.json`.
///
/// As gh does, `pr list` says who opened the pull request (`author`), whether its head
/// is in another repository (`prs/<repo>.fork` holds the fork's owner: then
/// `isCrossRepository` is true), the head commit (an open one's: the remote branch's,
/// read with `git ls-remote`), `reviewDecision` (`prs/<repo>.review`, else empty: no
/// review required) and `latestReviews` (`prs/<repo>.reviews`, else none). A pull
/// request of another head branch is the JSON list in `branches/<repo>/<branch, / as
/// _>`, else none.
pub(crate) const GH_STUB: &str = r#"#!/bin/sh
dir="$GH_STUB_DIR"
started=$(date +%s.%N)
mkdir -p "$dir/calls" "$dir/prs" "$dir/running"
: > "$dir/running/$$"
trap 'rm -f "$dir/running/$$"' EXIT
lock() { while ! mkdir "$dir/lock" 2>/dev/null; do sleep 0.01; done; }
unlock() { rmdir "$dir/lock"; }
lock
n=$(ls "$dir/calls" | wc -l | tr -d ' ')
: > "$dir/calls/$n"
for a in "$@"; do printf '%s\0' "$a" >> "$dir/calls/$n"; done
unlock
repo=$(basename "$PWD")
pr_json() {
  num=$(cat "$dir/prs/$repo")
  state=OPEN
  [ -f "$dir/prs/$repo.state" ] && state=$(cat "$dir/prs/$repo.state")
  checks='[]'
  [ -f "$dir/prs/$repo.checks" ] && checks=$(cat "$dir/prs/$repo.checks")
  review=''
  [ -f "$dir/prs/$repo.review" ] && review=$(cat "$dir/prs/$repo.review")
  draft=true
  [ -f "$dir/prs/$repo.ready" ] && draft=false
  reviews='[]'
  [ -f "$dir/prs/$repo.reviews" ] && reviews=$(cat "$dir/prs/$repo.reviews")
  owner=acme cross=false head=''
  if [ -f "$dir/prs/$repo.fork" ]; then
    owner=$(cat "$dir/prs/$repo.fork") cross=true
  elif [ "$state" = OPEN ]; then
    head=$(git ls-remote origin refs/heads/astedit/log-to-logger | cut -f1)
  fi
  echo "{\"number\":$num,\"url\":\"https://github.com/acme/$repo/pull/$num\",\"state\":\"$state\",\"isDraft\":$draft,\"headRefName\":\"astedit/log-to-logger\",\"headRefOid\":\"$head\",\"isCrossRepository\":$cross,\"headRepositoryOwner\":{\"id\":\"U_1\",\"login\":\"$owner\"},\"author\":{\"login\":\"astedit-bot\"},\"statusCheckRollup\":$checks,\"reviewDecision\":\"$review\",\"latestReviews\":$reviews}"
}
case "$1 $2" in
  "--version "*) echo "gh version 2.99.0 (stand-in)" ;;
  "auth status") ;;
  "pr list")
    if [ "$4" != astedit/log-to-logger ]; then
      cat "$dir/branches/$repo/$(printf '%s' "$4" | tr / _)" 2>/dev/null || echo '[]'
    elif [ -f "$dir/prs/$repo" ]; then echo "[$(pr_json)]"; else echo '[]'; fi ;;
  "pr view")
    if [ -f "$dir/prs/$repo" ]; then pr_json; else
      echo "no pull requests found for branch \"$3\"" >&2; exit 1
    fi ;;
  "pr create")
    if [ -f "$dir/fail-create-$repo" ]; then
      echo "GraphQL: something went wrong (createPullRequest)" >&2; exit 1
    fi
    if [ -f "$dir/hold-create-$repo" ]; then
      : > "$dir/held-$repo"
      while [ -f "$dir/hold-create-$repo" ]; do sleep 0.05; done
    fi
    lock
    num=$(( $(cat "$dir/counter" 2>/dev/null || echo 0) + 1 ))
    echo "$num" > "$dir/counter"
    echo "$num" > "$dir/prs/$repo"
    rm -f "$dir/prs/$repo.state" "$dir/prs/$repo.fork"
    echo "$started $repo create" >> "$dir/writes"
    unlock
    echo "https://github.com/acme/$repo/pull/$num"
    if [ -f "$dir/kill-on-create-$repo" ]; then
      rm -f "$dir/kill-on-create-$repo"
      kill -9 "$PPID"
    fi ;;
  "pr edit")
    lock
    echo "$started $repo edit" >> "$dir/writes"
    unlock ;;
  "pr ready") : > "$dir/prs/$repo.ready" ;;
  "pr merge")
    lock
    echo "$started $repo merge" >> "$dir/writes"
    unlock
    echo MERGED > "$dir/prs/$repo.state" ;;
  "repo list"|"search repos")
    # The answer the test left for this listing (`repo-list.json`, `search-repos.json`).
    cat "$dir/$1-$2.json" ;;
  *) echo "unexpected gh call: $*" >&2; exit 9 ;;
esac
"#;

/// A stand-in `glab`, beside the stand-in `gh` (same folder, same call log: its calls
/// are recorded with `glab` first): merge requests per repository under
/// `$GH_STUB_DIR/mrs/`; `mrs/<repo>.pipeline` holds the head pipeline's status and
/// `mrs/<repo>.merge-status` GitLab's `detailed_merge_status` (`draft_status` while a
/// draft); `mrs/<repo>.fork` makes the source project another one (a fork).
/// `glab api projects/:id/merge_requests/IID/approvals` answers as GitLab's approvals
/// endpoint: `mrs/<repo>.approvals`, else one approval required and none given
/// (`mrs/<repo>.approvals-fail`: it fails, as for a token without the right scope).
pub(crate) const GLAB_STUB: &str = r#"#!/bin/sh
dir="$GH_STUB_DIR"
mkdir -p "$dir/calls" "$dir/mrs"
lock() { while ! mkdir "$dir/lock" 2>/dev/null; do sleep 0.01; done; }
unlock() { rmdir "$dir/lock"; }
lock
n=$(ls "$dir/calls" | wc -l | tr -d ' ')
printf 'glab\0' > "$dir/calls/$n"
for a in "$@"; do printf '%s\0' "$a" >> "$dir/calls/$n"; done
unlock
repo=$(basename "$PWD")
mr_json() {
  iid=$(cat "$dir/mrs/$repo")
  state=opened
  [ -f "$dir/mrs/$repo.state" ] && state=$(cat "$dir/mrs/$repo.state")
  pipeline=null
  [ -f "$dir/mrs/$repo.pipeline" ] && pipeline="{\"status\":\"$(cat "$dir/mrs/$repo.pipeline")\"}"
  draft=true ms=draft_status
  [ -f "$dir/mrs/$repo.ready" ] && draft=false ms=not_approved
  [ -f "$dir/mrs/$repo.merge-status" ] && ms=$(cat "$dir/mrs/$repo.merge-status")
  source=7
  [ -f "$dir/mrs/$repo.fork" ] && source=99
  sha=$(git ls-remote origin refs/heads/astedit/log-to-logger | cut -f1)
  echo "{\"iid\":$iid,\"project_id\":7,\"source_project_id\":$source,\"target_project_id\":7,\"web_url\":\"https://gitlab.com/acme/$repo/-/merge_requests/$iid\",\"state\":\"$state\",\"draft\":$draft,\"author\":{\"id\":1,\"username\":\"astedit-bot\"},\"sha\":\"$sha\",\"head_pipeline\":$pipeline,\"detailed_merge_status\":\"$ms\"}"
}
case "$1 $2" in
  "--version "*) echo "glab 1.99.0 (stand-in)" ;;
  "auth status") ;;
  "mr list")
    if [ -f "$dir/mrs/$repo" ]; then echo "[$(mr_json)]"; else echo '[]'; fi ;;
  "mr view") mr_json ;;
  "mr create")
    lock
    num=$(( $(cat "$dir/counter" 2>/dev/null || echo 0) + 1 ))
    echo "$num" > "$dir/counter"
    echo "$num" > "$dir/mrs/$repo"
    rm -f "$dir/mrs/$repo.fork" "$dir/mrs/$repo.ready"
    unlock
    echo "Creating merge request for astedit/log-to-logger into main in acme/$repo"
    echo "https://gitlab.com/acme/$repo/-/merge_requests/$num" ;;
  "mr update")
    for a in "$@"; do [ "$a" != --ready ] || : > "$dir/mrs/$repo.ready"; done ;;
  "api projects/:id/merge_requests/"*)
    if [ -f "$dir/mrs/$repo.approvals-fail" ]; then
      echo "glab: 403 Forbidden (GET https://gitlab.com/api/v4/projects/7/merge_requests/1/approvals)" >&2
      exit 1
    elif [ -f "$dir/mrs/$repo.approvals" ]; then cat "$dir/mrs/$repo.approvals"; else
      echo '{"id":70,"iid":1,"project_id":7,"state":"opened","approved":false,"approvals_required":1,"approvals_left":1,"approved_by":[]}'
    fi ;;
  "mr merge") echo merged > "$dir/mrs/$repo.state" ;;
  *) echo "unexpected glab call: $*" >&2; exit 9 ;;
esac
"#;

/// Removes the stand-in's hold files when dropped: a failing test must not leave a
/// publisher waiting forever.
pub(crate) struct Release(pub(crate) Vec<PathBuf>);

impl Drop for Release {
    fn drop(&mut self) {
        for f in &self.0 {
            let _ = std::fs::remove_file(f);
        }
    }
}

pub(crate) struct World {
    pub(crate) state: TestRepo,
    pub(crate) root: tempfile::TempDir,
    pub(crate) gh: tempfile::TempDir,
}

impl World {
    pub(crate) fn new() -> World {
        let state = TestRepo::new();
        state.write("README", "campaign state\n");
        state.commit_all("init");
        let gh = tempfile::tempdir().expect("tempdir");
        let bin = gh.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        std::fs::write(bin.join("gh"), GH_STUB).expect("write gh");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("gh"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        std::fs::write(bin.join("glab"), GLAB_STUB).expect("write glab");
        std::fs::set_permissions(bin.join("glab"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        World {
            state,
            root: tempfile::tempdir().expect("tempdir"),
            gh,
        }
    }

    pub(crate) fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let d = dir.display().to_string();
        let mut all = vec!["-C", d.as_str()];
        all.extend_from_slice(args);
        self.state.git(&all)
    }

    /// A bare repository `<name>.git` with one commit of `files` on `main`.
    pub(crate) fn bare(&self, name: &str, files: &[(&str, &str)]) -> PathBuf {
        let work = self.root.path().join("src").join(name);
        std::fs::create_dir_all(&work).expect("mkdir");
        self.git_in(&work, &["init", "-q", "-b", "main"]);
        for (p, c) in files {
            let f = work.join(p);
            std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
            std::fs::write(f, c).expect("write");
        }
        self.git_in(&work, &["add", "-A"]);
        self.git_in(&work, &["commit", "-q", "-m", "init"]);
        let bare = self.root.path().join(format!("{name}.git"));
        let b = bare.display().to_string();
        self.git_in(&work, &["clone", "-q", "--bare", ".", &b]);
        self.git_in(&work, &["remote", "add", "origin", &b]);
        bare
    }

    /// Commits `files` on top of `branch` in the bare repository (someone else's push).
    pub(crate) fn push(
        &self,
        name: &str,
        branch: &str,
        files: &[(&str, &str)],
        msg: &str,
    ) -> String {
        let tmp = self.root.path().join(format!("push-{name}-{}", msg.len()));
        let _ = std::fs::remove_dir_all(&tmp);
        let bare = self.root.path().join(format!("{name}.git"));
        let (b, t) = (bare.display().to_string(), tmp.display().to_string());
        self.state
            .git(&["clone", "-q", "--branch", branch, "--", &b, &t]);
        for (p, c) in files {
            std::fs::write(tmp.join(p), c).expect("write");
        }
        self.git_in(&tmp, &["add", "-A"]);
        self.git_in(&tmp, &["commit", "-q", "-m", msg]);
        self.git_in(&tmp, &["push", "-q", "origin", &format!("HEAD:{branch}")]);
        self.git_in(&tmp, &["rev-parse", "HEAD"]).trim().to_string()
    }

    pub(crate) fn bare_rev(&self, name: &str, rev: &str) -> String {
        let bare = self.root.path().join(format!("{name}.git"));
        self.git_in(&bare, &["rev-parse", rev]).trim().to_string()
    }

    pub(crate) fn bare_show(&self, name: &str, spec: &str) -> String {
        let bare = self.root.path().join(format!("{name}.git"));
        self.git_in(&bare, &["show", spec])
    }

    /// Runs git astedit with the stand-in gh first on PATH; `campaign publish`,
    /// `refresh` and `status` get the world's `--workspace` unless they name one (the
    /// clones are where `stage --workspace` made them, never where the state says).
    pub(crate) fn run(&self, args: &[&str]) -> Output {
        crate::util::run_command(self.command(args))
    }

    /// [`World::run`] with no git identity at all (an empty HOME: a CI runner).
    pub(crate) fn run_without_identity(&self, args: &[&str]) -> Output {
        let home = self.root.path().join("empty-home");
        std::fs::create_dir_all(&home).expect("mkdir");
        let mut cmd = self.command(args);
        crate::util::without_identity(&mut cmd, &home);
        crate::util::run_command(cmd)
    }

    /// SIGKILLs git astedit `args` where the fault hook pauses at `point`.
    pub(crate) fn kill_at(&self, args: &[&str], point: &str) {
        crate::util::kill_command_at(self.command(args), point);
    }

    pub(crate) fn command(&self, args: &[&str]) -> std::process::Command {
        let ws = self.workspace();
        let mut args = args.to_vec();
        let sub = args.iter().position(|a| *a == "campaign").map(|i| i + 1);
        if sub.is_some_and(|i| {
            matches!(
                args.get(i),
                Some(&"publish" | &"refresh" | &"status" | &"merge")
            ) && !args.contains(&"--workspace")
        }) {
            args.extend(["--workspace", ws.as_str()]);
        }
        let args = &args[..];
        let path = format!(
            "{}:{}",
            self.gh.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = self.state.command(".", args);
        cmd.env("PATH", path).env("GH_STUB_DIR", self.gh.path());
        cmd
    }

    pub(crate) fn calls(&self) -> Vec<Vec<String>> {
        let dir = self.gh.path().join("calls");
        let n = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        (0..n)
            .map(|i| {
                let raw = std::fs::read(dir.join(i.to_string())).expect("call");
                String::from_utf8(raw)
                    .expect("utf8")
                    .split_terminator('\0')
                    .map(str::to_string)
                    .collect()
            })
            .collect()
    }

    pub(crate) fn creates(&self) -> usize {
        self.calls()
            .iter()
            .filter(|c| c.len() > 1 && c[0] == "pr" && c[1] == "create")
            .count()
    }

    /// `git ARGS` in the state repository with `input` on its standard input; its output.
    pub(crate) fn state_git_fed(&self, args: &[&str], input: &str) -> String {
        let mut cmd = std::process::Command::new("git");
        self.state.env(&mut cmd);
        cmd.current_dir(self.state.path())
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("git");
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(input.as_bytes()).expect("write");
        }
        let out = child.wait_with_output().expect("git");
        String::from_utf8(out.stdout).expect("utf8")
    }

    /// How many entries of state commit `commit` have each status, read with git.
    pub(crate) fn statuses_at(&self, commit: &str) -> serde_json::Value {
        let blobs: String = self
            .state
            .git(&["ls-tree", commit])
            .lines()
            .filter_map(|l| l.split_whitespace().nth(2))
            .map(|id| format!("{id}\n"))
            .collect();
        let text = self.state_git_fed(&["cat-file", "--batch"], &blobs);
        let mut counts = serde_json::Map::new();
        // Each entry is pretty JSON with its status on a line of its own.
        for line in text.lines() {
            if let Some(status) = line.trim().strip_prefix("\"status\": \"") {
                let status = status.trim_end_matches([',', '"']).to_string();
                let n = counts.get(&status).and_then(|v| v.as_u64()).unwrap_or(0);
                counts.insert(status, (n + 1).into());
            }
        }
        serde_json::Value::Object(counts)
    }

    /// The number the stand-in gave `repo`'s pull request.
    pub(crate) fn pr_of(&self, repo: &str) -> u64 {
        std::fs::read_to_string(self.gh.path().join("prs").join(repo))
            .expect("a pull request")
            .trim()
            .parse()
            .expect("number")
    }

    /// Waits (at most a minute) until `ready` holds.
    #[track_caller]
    pub(crate) fn wait_for(&self, ready: impl Fn() -> bool) {
        for _ in 0..1200 {
            if ready() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("waited a minute in vain; gh calls: {:?}", self.calls());
    }

    /// Waits until no stand-in call runs (a killed publisher's children finish; one
    /// killed by SIGPIPE leaves its file behind, but not its process).
    pub(crate) fn settle(&self) {
        let running = self.gh.path().join("running");
        self.wait_for(|| {
            std::fs::read_dir(&running).map_or(true, |d| {
                d.flatten()
                    .all(|e| !Path::new("/proc").join(e.file_name()).exists())
            })
        });
    }

    /// The stand-in's writes (`pr create`, `pr edit`): start time, repository, kind.
    pub(crate) fn writes(&self) -> Vec<(f64, String, String)> {
        std::fs::read_to_string(self.gh.path().join("writes"))
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let mut w = l.split_whitespace();
                (
                    w.next().and_then(|t| t.parse().ok()).expect("time"),
                    w.next().expect("repo").to_string(),
                    w.next().expect("kind").to_string(),
                )
            })
            .collect()
    }

    pub(crate) fn flip(&self, repo: &str, state: &str) {
        std::fs::write(
            self.gh.path().join("prs").join(format!("{repo}.state")),
            state,
        )
        .expect("flip");
    }

    /// Writes the spec of `head` (a spec without repositories) and the repositories
    /// `keys` (each one file with a match, base `main`), stages and publishes it; the
    /// spec's path.
    pub(crate) fn published(&self, head: &str, keys: &[&str]) -> String {
        let mut spec = head.to_string();
        for k in keys {
            let b = self.bare(k, &[("src/app.ts", "console.log(1);\n")]);
            spec.push_str(&format!(
                "[[repos]]\nurl = \"{}\"\nbase = \"main\"\n",
                b.display()
            ));
        }
        let spec = self.spec(&spec);
        let ws = self.workspace();
        self.run(&["campaign", "stage", &spec, "--workspace", &ws])
            .assert_code(0);
        self.run(&["campaign", "publish", &spec]).assert_code(0);
        spec
    }

    /// Makes `repo`'s pull request green (checks passing) and, when given, sets its
    /// `reviewDecision`.
    pub(crate) fn green(&self, repo: &str, review: Option<&str>) {
        let prs = self.gh.path().join("prs");
        let checks = r#"[{"status":"COMPLETED","conclusion":"SUCCESS"}]"#;
        std::fs::write(prs.join(format!("{repo}.checks")), checks).expect("checks");
        if let Some(r) = review {
            std::fs::write(prs.join(format!("{repo}.review")), r).expect("review");
        }
    }

    pub(crate) fn workspace(&self) -> String {
        self.root.path().join("ws").display().to_string()
    }

    pub(crate) fn spec(&self, body: &str) -> String {
        let p = self.root.path().join("campaign.toml");
        std::fs::write(&p, body).expect("spec");
        p.display().to_string()
    }
}

pub(crate) fn by_key(
    report: &serde_json::Value,
) -> std::collections::BTreeMap<String, serde_json::Value> {
    report["repos"]
        .as_array()
        .expect("repos")
        .iter()
        .map(|r| (r["key"].as_str().expect("key").to_string(), r.clone()))
        .collect()
}

pub(crate) const SPEC_HEAD: &str = r#"name = "log-to-logger"
[change]
ops = [{ pattern = "console.log($A)", rewrite = "logger.info($A)" }]
lang = "ts"
[pr]
branch = "astedit/log-to-logger"
title = "Route logs through the logger"
body = "Automated change for {repo}."
draft = true
labels = ["codemod"]
reviewers = ["octocat"]
rate_per_minute = 6000
"#;

pub(crate) fn app_world() -> (World, String) {
    let w = World::new();
    let b = w.bare(
        "app",
        &[
            ("src/app.ts", "console.log(1);\n"),
            (".gitignore", ".env\n"),
        ],
    );
    let spec = w.spec(&format!(
        "{SPEC_HEAD}[[repos]]\nurl = \"{}\"\nbase = \"main\"\n",
        b.display()
    ));
    (w, spec)
}

/// Rewrites entry `key` of the campaign's state in a new state commit, as anyone who
/// can push the shared state ref could.
pub(crate) fn forge_state(w: &World, key: &str, change: impl FnOnce(&mut serde_json::Value)) {
    let refname = "refs/astedit-campaign/log-to-logger";
    let mut entry: serde_json::Value =
        serde_json::from_str(&w.state.git(&["show", &format!("{refname}:{key}.json")]))
            .expect("entry");
    change(&mut entry);
    let file = w.root.path().join("forged.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&entry).expect("json")).expect("write");
    let blob = w
        .state
        .git(&["hash-object", "-w", "--", &file.display().to_string()]);
    let listing: String = w
        .state
        .git(&["ls-tree", refname])
        .lines()
        .map(|l| {
            if l.ends_with(&format!("\t{key}.json")) {
                format!("100644 blob {}\t{key}.json\n", blob.trim())
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let tree = w.state_git_fed(&["mktree"], &listing);
    let commit = w
        .state
        .git(&["commit-tree", tree.trim(), "-p", refname, "-m", "forged"]);
    w.state.git(&["update-ref", refname, commit.trim()]);
}

/// The entry of `key` in the campaign's state, as committed.
pub(crate) fn state_entry(w: &World, key: &str) -> serde_json::Value {
    let text = w.state.git(&[
        "show",
        &format!("refs/astedit-campaign/log-to-logger:{key}.json"),
    ]);
    serde_json::from_str(&text).expect("state entry")
}
