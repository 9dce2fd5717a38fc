//! `git astedit review ID`'s page in a real browser (headless Chromium over the
//! DevTools protocol, [`crate::cdp`]), and its guards from raw requests: a session
//! only from the printed URL, no decision from another origin, another Host or
//! without Origin.

use std::io::BufRead as _;
use std::io::BufReader;
use std::io::Read as _;
use std::io::Write as _;
use std::net::TcpStream;
use std::process::Child;
use std::process::Stdio;

use serde_json::Value;

use crate::cdp::Browser;
use crate::util::TestRepo;

/// Files in the fixture, and `console.log`/`console.warn` lines in each.
const FILES: usize = 20;
const LOGS: usize = 12;
const WARNS: usize = 4;

/// A repository whose preview rewrites `console.log` (240 sites) and `console.warn`
/// (80 sites) to a logger; its formatter drops the `;` after `logger.info(log)`, a
/// change the ops do not make, so that site is an outlier. Returns the preview's id.
fn fixture(repo: &TestRepo) -> String {
    for f in 0..FILES {
        repo.write(&format!("src/f{f:02}.js"), source(f, &|s| s.to_string()));
    }
    repo.write(
        "astedit.toml",
        "[fmt]\njavascript = \"sed s/logger.info(log);/logger.info(log)/\"\n",
    );
    repo.commit_all("init");
    repo.run(&["allow"]).assert_code(0);
    let out = repo.run(&[
        "--json",
        "edit",
        "--fmt",
        "-p",
        "console.log($A)",
        "-r",
        "logger.info($A)",
        "-p",
        "console.warn($A)",
        "-r",
        "logger.warn($A)",
        "--",
        "src",
    ]);
    out.assert_code(0);
    out.json()["id"].as_str().expect("id").to_string()
}

/// File `f`'s text with each call line passed through `line`.
fn source(f: usize, line: &dyn Fn(&str) -> String) -> String {
    let mut text = format!("// file {f}\nfunction run{f}(log) {{\n");
    for i in 0..LOGS {
        let arg = if f == 7 && i == 3 {
            "log".to_string()
        } else {
            format!("{f} * {i}")
        };
        text.push_str(&format!("  {}\n", line(&format!("console.log({arg});"))));
    }
    for i in 0..WARNS {
        text.push_str(&format!(
            "  {}\n",
            line(&format!("console.warn(\"w{i}\");"))
        ));
    }
    text.push_str("}\n");
    text
}

/// The server: started with `--no-open`; its first line on stdout is the URL.
struct Server {
    child: Child,
    url: String,
    port: u16,
}

impl Server {
    fn start(repo: &TestRepo, id: &str) -> Server {
        let mut child = repo
            .command(".", &["review", id, "--no-open"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the review server");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().expect("stdout"))
            .read_line(&mut line)
            .expect("read the URL");
        let url = line.trim().to_string();
        let port = url
            .strip_prefix("http://127.0.0.1:")
            .and_then(|r| r.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("not the page's URL: {line:?}"));
        Server { child, url, port }
    }

    /// A raw request: `headers` as written, Content-Length added for a body.
    fn raw(&self, method: &str, path: &str, headers: &[String], body: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        let mut req = format!("{method} {path} HTTP/1.1\r\n");
        for h in headers {
            req.push_str(h);
            req.push_str("\r\n");
        }
        req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        s.write_all(req.as_bytes()).expect("send");
        let mut answer = String::new();
        s.read_to_string(&mut answer).expect("answer");
        answer
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn status(answer: &str) -> u16 {
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {answer}"))
}

/// The decisions' ref of the preview, if any batch was written.
fn decisions(repo: &TestRepo) -> String {
    repo.git(&[
        "for-each-ref",
        "--format=%(refname)",
        "refs/astedit-review/",
    ])
}

#[test]
fn a_review_decided_in_the_browser_applies_exactly_the_accepted_sites() {
    let Some(chromium) = crate::cdp::chromium_or_skip() else {
        return;
    };
    let repo = TestRepo::new();
    let id = fixture(&repo);
    let before = repo.snapshot();
    let server = Server::start(&repo, &id);
    let host = format!("Host: 127.0.0.1:{}", server.port);
    let origin = format!("Origin: http://127.0.0.1:{}", server.port);
    let json = "Content-Type: application/json".to_string();
    // A real decision: were a refused request served, it would be recorded.
    let review = repo.run(&["--json", "review", &id]);
    review.assert_code(0);
    let key = review.json()["groups"][0]["key"]
        .as_str()
        .expect("key")
        .to_string();
    let accept = format!(r#"{{"decisions":[{{"group":"{key}","decision":"accept"}}]}}"#);
    let accept_all = accept.as_str();

    // No session yet: the page without the token, and a decision, are refused.
    let page = server.raw("GET", "/", std::slice::from_ref(&host), "");
    assert_eq!(status(&page), 403, "{page}");
    assert!(page.contains("Referrer-Policy: no-referrer"), "{page}");
    let post = server.raw(
        "POST",
        "/api/decide",
        &[host.clone(), origin.clone(), json.clone()],
        accept_all,
    );
    assert_eq!(status(&post), 403, "{post}");

    // The printed URL opens the page; the token is gone from the address.
    let mut b = Browser::start(&chromium, repo.home());
    b.navigate(&server.url);
    b.wait_for("document.body && document.body.dataset.ready === '1'");
    assert_eq!(
        b.eval("location.href"),
        Value::from(format!("http://127.0.0.1:{}/", server.port))
    );
    let cookies = b.cookies();
    let cookie = cookies
        .iter()
        .find(|c| c["name"] == format!("astedit-review-{}", server.port))
        .unwrap_or_else(|| panic!("no session cookie: {cookies:?}"));
    assert_eq!(cookie["httpOnly"], Value::Bool(true), "{cookie}");
    assert_eq!(cookie["sameSite"], "Strict", "{cookie}");
    let session = format!(
        "Cookie: {}={}",
        cookie["name"].as_str().unwrap_or(""),
        cookie["value"].as_str().unwrap_or("")
    );

    // With the session's cookie, but from elsewhere: refused, nothing decided.
    for (headers, want) in [
        (
            vec![
                host.clone(),
                session.clone(),
                "Origin: http://evil.example".into(),
                json.clone(),
            ],
            403,
        ),
        (vec![host.clone(), session.clone(), json.clone()], 403),
        (
            vec![
                format!("Host: evil.example:{}", server.port),
                session.clone(),
                origin.clone(),
                json.clone(),
            ],
            421,
        ),
        (
            vec![
                host.clone(),
                session.clone(),
                origin.clone(),
                "Content-Type: text/plain".into(),
            ],
            415,
        ),
    ] {
        for path in ["/api/decide", "/api/apply"] {
            let a = server.raw("POST", path, &headers, accept_all);
            assert_eq!(status(&a), want, "{headers:?} {path}: {a}");
        }
    }
    // The spent token opens no second session.
    let token = server.url.split("token=").nth(1).expect("token");
    let again = server.raw(
        "GET",
        &format!("/?token={token}"),
        std::slice::from_ref(&host),
        "",
    );
    assert_eq!(status(&again), 403, "{again}");
    assert_eq!(decisions(&repo), "", "a refused request decided something");
    assert_eq!(repo.snapshot(), before);

    // The groups: the outlier first, then the two ops' groups.
    let groups = b.eval(
        "Array.from(document.querySelectorAll('#groups .group')).map(g => ({
           key: g.dataset.key, outlier: !!g.querySelector('.tag.outlier'),
           title: g.querySelector('.title').textContent,
           count: parseInt(g.querySelector('.count').textContent) }))",
    );
    let groups = groups.as_array().expect("groups").clone();
    assert!(groups[0]["outlier"] == Value::Bool(true), "{groups:?}");
    let logs = groups
        .iter()
        .position(|g| {
            g["outlier"] == Value::Bool(false)
                && g["title"].as_str().unwrap_or("").starts_with("console.log")
        })
        .unwrap_or_else(|| panic!("no console.log group: {groups:?}"));
    assert_eq!(
        groups[logs]["count"],
        Value::from(FILES * LOGS - 1),
        "{groups:?}"
    );

    // Reject the outlier (the first group has the focus), accept the console.log group.
    b.key("r");
    b.wait_for("document.querySelector('#groups .group').dataset.decision === 'reject'");
    for _ in 0..logs {
        b.key("j");
    }
    b.key("a");
    b.wait_for(&format!(
        "document.querySelectorAll('#groups .group')[{logs}].dataset.decision === 'accept'"
    ));
    // The console.warn group's sites, a page at a time.
    let warns = groups
        .iter()
        .position(|g| {
            g["title"]
                .as_str()
                .unwrap_or("")
                .starts_with("console.warn")
        })
        .unwrap_or_else(|| panic!("no console.warn group: {groups:?}"));
    let moves = warns as i64 - logs as i64;
    for _ in 0..moves.abs() {
        b.key(if moves > 0 { "j" } else { "k" });
    }
    b.key("Enter");
    b.wait_for("document.querySelectorAll('#groups .site').length === 50");
    b.key("m");
    b.wait_for("document.querySelectorAll('#groups .site').length === 80");
    assert_eq!(
        b.eval("document.querySelectorAll('#groups .site .kw, #groups .site .str').length > 0"),
        Value::Bool(true),
        "the diffs are highlighted"
    );

    // Apply: the server applies, answers, and stops.
    b.wait_for("!document.getElementById('apply').disabled");
    b.eval("document.getElementById('apply').click()");
    b.wait_for("document.body.dataset.applied === '1'");
    let mut server = server;
    let exit = server.child.wait().expect("wait for the server");
    let mut said = String::new();
    server
        .child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut said)
        .expect("read");
    assert!(exit.success(), "{exit:?} {said}");

    // The tree: every console.log rewritten but the outlier's, no console.warn.
    for f in 0..FILES {
        let want = source(f, &|l| {
            if l.starts_with("console.log(") && l != "console.log(log);" {
                l.replacen("console.log(", "logger.info(", 1)
            } else {
                l.to_string()
            }
        });
        assert_eq!(
            repo.read_string(&format!("src/f{f:02}.js")),
            want,
            "src/f{f:02}.js"
        );
    }
    // The undecided console.warn sites are pending as a preview of their own.
    let refs = repo.astedit_refs();
    assert_eq!(refs.len(), 1, "{refs:?}");
    let rest = repo.git(&["diff", &format!("{}~", refs[0]), &refs[0]]);
    let added: Vec<&str> = rest.lines().filter(|l| l.starts_with("+ ")).collect();
    assert_eq!(added.len(), FILES * WARNS, "{rest}");
    assert!(
        added.iter().all(|l| l.starts_with("+  logger.warn(")),
        "{rest}"
    );
    assert!(decisions(&repo).contains("refs/astedit-review/"));
    repo.fsck();
}

#[test]
fn the_first_screen_gets_the_first_representatives_and_the_others_come_into_view() {
    let Some(chromium) = crate::cdp::chromium_or_skip() else {
        return;
    };
    // 40 files, each changed its own way by a command: 40 groups of one site.
    const GROUPS: usize = 40;
    let repo = TestRepo::new();
    for i in 0..GROUPS {
        repo.write(&format!("src/m{i:02}.js"), format!("v{i} = {i};\n"));
    }
    repo.commit_all("init");
    let id = crate::review_groups::staged(
        &repo,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "for f in src/*.js; do sed -i 's/^v/w/' \"$f\"; done",
        ],
    );
    let server = Server::start(&repo, &id);
    let mut b = Browser::start(&chromium, repo.home());
    b.navigate(&server.url);
    b.wait_for("document.body && document.body.dataset.ready === '1'");
    // The first request carried the representatives of the first groups only: the
    // last group, far below the first screen, has none yet.
    assert_eq!(
        b.eval("document.querySelectorAll('#groups .group').length"),
        Value::from(GROUPS)
    );
    let last = format!(
        "document.querySelectorAll('#groups .group')[{}]",
        GROUPS - 1
    );
    assert_eq!(
        b.eval(&format!(
            "[{last}.querySelector('.pending') !== null, {last}.querySelector('.diff') === null]"
        )),
        serde_json::json!([true, true])
    );
    assert_eq!(
        b.eval(
            "performance.getEntriesByType('resource').map(e => new URL(e.name).pathname + \
             new URL(e.name).search).filter(p => p.startsWith('/api/review'))"
        ),
        serde_json::json!(["/api/review?representatives=12"])
    );
    // Moving down to it fetches its representative (its first site) and draws it.
    for _ in 0..GROUPS - 1 {
        b.key("j");
    }
    b.wait_for(&format!("{last}.querySelector('.diff') !== null"));
    let text = b.eval(&format!("{last}.querySelector('.diff').textContent"));
    let text = text.as_str().expect("text");
    assert!(
        text.contains("v") && text.contains("w") && !text.contains("loads when"),
        "{text}"
    );
    assert_eq!(
        b.eval(&format!("{last}.querySelector('.pending')")),
        Value::Null
    );
}
