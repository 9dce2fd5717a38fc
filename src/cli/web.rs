/*!
`git astedit review ID`'s page: a local web server for one browser tab, serving the
preview's review and nothing else.

It listens on 127.0.0.1 only (a random port unless `--port`), and every request passes
[`guard`] first (loopback peer, `Host`, `Origin`, a POST's content type, the session:
a one-time token in the printed URL spent for a `SameSite=Strict; HttpOnly` cookie).
Every answer says `Referrer-Policy: no-referrer` and a Content-Security-Policy that
allows the page's own script and style only (no inline code, no other origin, no
frames). The page ([`PAGE`], [`SCRIPT`], [`STYLE`]) is compiled into the binary; it
fetches nothing from the network.

The routes: `GET /` (the page), `GET /review.js`, `GET /review.css`, `GET /api/review`
(the groups; with `?representatives=N` only the first N groups' representative diffs,
which is what the page's first screen draws: it fetches the others as groups come into
view), `GET /api/sites?group=KEY&offset=N&limit=N` (a group's sites, a page at a time), `POST /api/decide` and `POST /api/apply` (JSON bodies). What they answer comes
from a [`Backend`]: the review operations of `ops::review`, which group, decide and
apply; nothing here re-derives them.

[`http`] reads a request within fixed bounds (16 KiB of head, 4 MiB of body, a read
timeout) on a thread per connection (at most [`MAX_CONNECTIONS`]), and hands it to the
one thread that holds the repository, which checks, answers and closes the
connection. The server stops after a successful apply (the preview is then applied,
or what is left of it is a new preview with its own id), or on Ctrl-C, which ends the
process: a batch of decisions is one ref update, and an apply that was interrupted is
finished or rolled back by recovery, as any other.
*/

use std::net::SocketAddr;
use std::net::TcpListener;
use std::net::TcpStream;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use git_astedit::error::Exit;
use git_astedit::ops::review::Decision;
use git_astedit::ops::review::Target;
use git_astedit::repo::Repo;
use git_astedit::report::ErrorReport;
use git_astedit::Error;

use super::Out;

mod backend;
mod guard;
mod http;

use guard::Guard;
use guard::Verdict;
use http::ReadError;
use http::Request;
use http::Response;

/// The page, its script and its style: compiled in, served as they are.
const PAGE: &str = include_str!("web/review.html");
const SCRIPT: &str = include_str!("web/review.js");
const STYLE: &str = include_str!("web/review.css");

/// Connections being read at once, at most; more are closed unanswered.
const MAX_CONNECTIONS: usize = 32;
/// How long a request may take to arrive, and its answer to be taken.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Sites in one page of `/api/sites`, at most.
const MAX_LIMIT: usize = 500;

/// The policy every answer carries: this origin's script and style only.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; \
                   frame-ancestors 'none'";

/// `POST /api/decide`'s body: `{"decisions": [{"group": KEY, "decision": "accept"}, …]}`
/// (`site` instead of `group` for one site; `null` for undecided).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideBody {
    decisions: Vec<DecideItem>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideItem {
    group: Option<String>,
    site: Option<String>,
    decision: Option<Decision>,
}

/// What the server asks of the review model (`ops::review` for the CLI; a fixed one
/// in the tests). Answers are JSON for the page.
pub trait Backend {
    /// The groups, outliers first, with their counts and decisions.
    fn review(&mut self) -> Result<serde_json::Value, Error>;
    /// Sites `offset..offset + limit` of group `group`, and how many there are.
    fn sites(
        &mut self,
        group: &str,
        offset: usize,
        limit: usize,
    ) -> Result<serde_json::Value, Error>;
    /// Records decisions (one batch), made on the page.
    fn decide(
        &mut self,
        decisions: &[(Target, Option<Decision>)],
    ) -> Result<serde_json::Value, Error>;
    /// Applies what the decisions say.
    fn apply(&mut self) -> Result<serde_json::Value, Error>;
}

/// How to serve.
#[derive(Debug, Clone)]
pub struct Options {
    /// 0: any free port.
    pub port: u16,
}

/// `git astedit review ID`: serves preview `id`'s review until an apply, printing the
/// URL (with `open`, also opening a browser on it), then the apply's report.
pub fn run(
    repo: &Repo,
    out: &mut Out,
    id: Option<&str>,
    options: &Options,
    open: bool,
) -> Result<Exit, Error> {
    let model = git_astedit::ops::review::load(repo, id)?;
    let server = Server::bind(options)?;
    out.print(&format!("{}\n", server.url()))?;
    out.flush()?;
    out.note(&format!(
        "serving the review of {} on this URL (one load; Ctrl-C stops, apply ends it)",
        model.preview_id()
    ));
    if open {
        if let Err(why) = super::browser::open(server.url()) {
            out.warn(&format!("no browser started ({why}): open the URL above"));
        }
    }
    let mut page = backend::Review::new(repo, model);
    server.serve(&mut page)?;
    let report = page.applied.expect("the server stops after an apply only");
    out.emit(&report)?;
    Ok(report.exit())
}

/// A bound, not yet serving server: its URL (with the one-time token) is known.
pub struct Server {
    listener: TcpListener,
    guard: Guard,
    url: String,
}

impl Server {
    /// Binds 127.0.0.1 (only) and draws the token and the session's cookie.
    pub fn bind(options: &Options) -> Result<Server, Error> {
        let addr = SocketAddr::from(([127, 0, 0, 1], options.port));
        let io = |action, e| git_astedit::error::IoError {
            action,
            path: addr.to_string(),
            source: e,
        };
        let listener = TcpListener::bind(addr).map_err(|e| io("listen on", e))?;
        let port = listener
            .local_addr()
            .map_err(|e| io("listen on", e))?
            .port();
        let token = guard::secret().map_err(|e| io("draw a token for", e))?;
        let session = guard::secret().map_err(|e| io("draw a token for", e))?;
        Ok(Server {
            listener,
            url: format!("http://127.0.0.1:{port}/?token={token}"),
            guard: Guard::new(port, token, session),
        })
    }

    /// The URL to open: good for one load.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Serves until an apply succeeds (its report is returned). Listening errors end
    /// the server; a bad request only ends its connection.
    pub fn serve(mut self, backend: &mut dyn Backend) -> Result<serde_json::Value, Error> {
        let (tx, rx) = std::sync::mpsc::channel::<(TcpStream, SocketAddr, Request)>();
        let listener = self
            .listener
            .try_clone()
            .map_err(|e| git_astedit::error::IoError {
                action: "listen on",
                path: self.url.clone(),
                source: e,
            })?;
        // The accepting thread and the readers end with the process.
        std::thread::spawn(move || accept(listener, tx));
        for (mut stream, peer, request) in rx {
            let (response, applied) = self.answer(backend, peer, &request);
            // A peer that went away took the answer with it; the next one may come.
            let _ = http::write_response(&mut stream, &secured(response));
            if let Some(report) = applied {
                return Ok(report);
            }
        }
        unreachable!("the accepting thread holds the sender while the listener lives")
    }

    /// The answer to one request, and the apply's report once it has succeeded.
    fn answer(
        &mut self,
        backend: &mut dyn Backend,
        peer: SocketAddr,
        request: &Request,
    ) -> (Response, Option<serde_json::Value>) {
        if let Verdict::Answer(refusal) = self.guard.check(peer, request) {
            return (refusal, None);
        }
        let result = match (request.method.as_str(), request.path.as_str()) {
            ("GET", "/") => Ok(Response::new(200, "text/html; charset=utf-8", PAGE)),
            ("GET", "/review.js") => {
                Ok(Response::new(200, "text/javascript; charset=utf-8", SCRIPT))
            }
            ("GET", "/review.css") => Ok(Response::new(200, "text/css; charset=utf-8", STYLE)),
            ("GET", "/api/review") => review(backend, request),
            ("GET", "/api/sites") => sites(backend, request),
            ("POST", "/api/decide") => decide(backend, request),
            ("POST", "/api/apply") => {
                return match backend.apply() {
                    Ok(report) => (Response::json(200, &report), Some(report)),
                    Err(e) => (failure(&e), None),
                }
            }
            (_, "/" | "/review.js" | "/review.css" | "/api/review" | "/api/sites")
            | (_, "/api/decide" | "/api/apply") => Ok(Response::text(405, "method not allowed")),
            _ => Ok(Response::text(
                404,
                "not found: this server serves one review",
            )),
        };
        (result.unwrap_or_else(|e| failure(&e)), None)
    }
}

/// The review; with `representatives=N`, the representative diffs of the first N
/// groups only (a preview of hundreds of groups would send megabytes the page does not
/// draw: it asks for the others with `/api/sites?group=KEY&limit=1`).
fn review(backend: &mut dyn Backend, request: &Request) -> Result<Response, Error> {
    let keep = match request.param("representatives") {
        None => None,
        Some(n) => match n.parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => return Ok(Response::text(400, "representatives= is a number")),
        },
    };
    let mut review = backend.review()?;
    if let (Some(keep), Some(groups)) = (keep, review["groups"].as_array_mut()) {
        for g in groups.iter_mut().skip(keep) {
            if let Some(g) = g.as_object_mut() {
                g.remove("representative");
            }
        }
    }
    Ok(Response::json(200, &review))
}

fn sites(backend: &mut dyn Backend, request: &Request) -> Result<Response, Error> {
    let Some(group) = request.param("group") else {
        return Ok(Response::text(400, "group= is required"));
    };
    let number = |name, default: usize| match request.param(name) {
        None => Some(default),
        Some(v) => v.parse::<usize>().ok(),
    };
    let (Some(offset), Some(limit)) = (number("offset", 0), number("limit", 100)) else {
        return Ok(Response::text(400, "offset= and limit= are numbers"));
    };
    let page = backend.sites(group, offset, limit.min(MAX_LIMIT))?;
    Ok(Response::json(200, &page))
}

fn decide(backend: &mut dyn Backend, request: &Request) -> Result<Response, Error> {
    let body: DecideBody = match serde_json::from_slice(&request.body) {
        Ok(body) => body,
        Err(e) => return Ok(Response::text(400, &format!("bad decisions: {e}"))),
    };
    let mut decisions = Vec::with_capacity(body.decisions.len());
    for d in body.decisions {
        let target = match (d.group, d.site) {
            (Some(key), None) => Target::Group(key),
            (None, Some(id)) => Target::Site(id),
            _ => {
                return Ok(Response::text(
                    400,
                    "a decision names one group or one site",
                ))
            }
        };
        decisions.push((target, d.decision));
    }
    Ok(Response::json(200, &backend.decide(&decisions)?))
}

/// An operation's error as the CLI's `--json` prints it, with a status for its class.
fn failure(err: &Error) -> Response {
    use git_astedit::error::Exit;
    let status = match err.exit() {
        Exit::BadInput | Exit::NothingFound => 400,
        Exit::Stale | Exit::Unplaceable => 409,
        Exit::Refused => 403,
        Exit::Locked => 423,
        Exit::Ok | Exit::Internal => 500,
    };
    Response::json(status, &ErrorReport::new(err))
}

/// The headers every answer carries, refusals included.
fn secured(response: Response) -> Response {
    response
        .with("Referrer-Policy", "no-referrer")
        .with("Content-Security-Policy", CSP)
        .with("X-Content-Type-Options", "nosniff")
        .with("X-Frame-Options", "DENY")
        .with("Cross-Origin-Opener-Policy", "same-origin")
        .with("Cross-Origin-Resource-Policy", "same-origin")
        .with("Cache-Control", "no-store")
}

/// Accepts connections and reads each on its own thread; hands whole requests on.
fn accept(listener: TcpListener, tx: std::sync::mpsc::Sender<(TcpStream, SocketAddr, Request)>) {
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let (tx, open) = (tx.clone(), open.clone());
        std::thread::spawn(move || {
            let read = stream
                .set_read_timeout(Some(TIMEOUT))
                .and_then(|()| stream.set_write_timeout(Some(TIMEOUT)))
                .and_then(|()| stream.peer_addr());
            if let Ok(peer) = read {
                match http::read_request(&mut stream) {
                    Ok(request) => {
                        let _ = tx.send((stream, peer, request));
                    }
                    Err(ReadError::TooLarge(status)) => {
                        let answer = Response::text(status, "request too large");
                        let _ = http::write_response(&mut stream, &secured(answer));
                    }
                    Err(ReadError::Malformed(why)) => {
                        let _ =
                            http::write_response(&mut stream, &secured(Response::text(400, why)));
                    }
                    Err(ReadError::Io) => {}
                }
            }
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;
    use std::io::Write as _;

    use super::*;

    /// The review of a fixed JSON, recording what it was asked.
    #[derive(Default)]
    struct Fixed {
        decided: Vec<(Target, Option<Decision>)>,
        applied: bool,
    }

    impl Backend for Fixed {
        fn review(&mut self) -> Result<serde_json::Value, Error> {
            Ok(serde_json::json!({
                "preview": "abc123", "sites": 3, "outliers": 1,
                "groups": [
                    {"key": "g1", "rule": "no-console", "count": 2, "files": ["a.js"],
                     "outlier": false, "decision": null,
                     "representative": {"path": "a.js", "line": 1,
                                        "before": "console.log(x)", "after": "logger.info(x)"}},
                    {"key": "g2", "rule": "no-console", "count": 1, "files": ["b.js"],
                     "outlier": true, "decision": null,
                     "representative": {"path": "b.js", "line": 4,
                                        "before": "console.log(y) // keep", "after": "logger.info(y)"}}
                ]
            }))
        }
        fn sites(
            &mut self,
            group: &str,
            offset: usize,
            limit: usize,
        ) -> Result<serde_json::Value, Error> {
            Ok(serde_json::json!({"group": group, "offset": offset, "limit": limit, "sites": []}))
        }
        fn decide(
            &mut self,
            decisions: &[(Target, Option<Decision>)],
        ) -> Result<serde_json::Value, Error> {
            self.decided.extend_from_slice(decisions);
            Ok(serde_json::json!({"decided": decisions.len()}))
        }
        fn apply(&mut self) -> Result<serde_json::Value, Error> {
            self.applied = true;
            Ok(serde_json::json!({"applied": true}))
        }
    }

    /// Sends raw requests to a server on a thread; returns the answers' texts and
    /// the backend once the server has stopped (after an apply).
    fn session(requests: impl FnOnce(&dyn Fn(String) -> String, u16, &str)) -> Fixed {
        let server = Server::bind(&Options { port: 0 }).expect("bind");
        let url = server.url().to_string();
        let port: u16 = url["http://127.0.0.1:".len()..]
            .split('/')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("port");
        let token = url.split("token=").nth(1).expect("token").to_string();
        let handle = std::thread::spawn(move || {
            let mut backend = Fixed::default();
            server.serve(&mut backend).expect("serve");
            backend
        });
        let send = |raw: String| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
            s.write_all(raw.as_bytes()).expect("send");
            let mut answer = String::new();
            s.read_to_string(&mut answer).expect("answer");
            answer
        };
        requests(&send, port, &token);
        handle.join().expect("server thread")
    }

    #[test]
    fn a_session_decides_and_applies_and_refusals_decide_nothing() {
        let backend = session(|send, port, token| {
            let host = format!("Host: 127.0.0.1:{port}\r\n");
            // No token: refused, no cookie.
            let a = send(format!("GET / HTTP/1.1\r\n{host}\r\n"));
            assert!(a.starts_with("HTTP/1.1 403 "), "{a}");
            assert!(a.contains("Referrer-Policy: no-referrer\r\n"), "{a}");
            // The token: a cookie and a redirect.
            let a = send(format!("GET /?token={token} HTTP/1.1\r\n{host}\r\n"));
            assert!(a.starts_with("HTTP/1.1 303 "), "{a}");
            let cookie = a
                .lines()
                .find_map(|l| l.strip_prefix("Set-Cookie: "))
                .and_then(|c| c.split(';').next())
                .expect("cookie")
                .to_string();
            let c = format!("Cookie: {cookie}\r\n");
            let page = send(format!("GET / HTTP/1.1\r\n{host}{c}\r\n"));
            assert!(page.starts_with("HTTP/1.1 200 "), "{page}");
            assert!(page.contains("Content-Security-Policy: default-src 'none'; script-src 'self'"));
            assert!(
                page.contains("<script src=\"/review.js\"></script>"),
                "{page}"
            );
            let groups = send(format!("GET /api/review HTTP/1.1\r\n{host}{c}\r\n"));
            assert!(groups.contains("\"key\":\"g2\""), "{groups}");
            assert_eq!(groups.matches("\"representative\"").count(), 2, "{groups}");
            // The first screen's request: the first group's representative only.
            let first = send(format!(
                "GET /api/review?representatives=1 HTTP/1.1\r\n{host}{c}\r\n"
            ));
            assert!(first.contains("\"key\":\"g2\""), "{first}");
            assert_eq!(first.matches("\"representative\"").count(), 1, "{first}");
            assert!(first.contains("console.log(x)") && !first.contains("// keep"));
            let bad = send(format!(
                "GET /api/review?representatives=x HTTP/1.1\r\n{host}{c}\r\n"
            ));
            assert!(bad.starts_with("HTTP/1.1 400 "), "{bad}");
            let s = send(format!(
                "GET /api/sites?group=g1&offset=2&limit=9999 HTTP/1.1\r\n{host}{c}\r\n"
            ));
            assert!(s.contains("\"limit\":500"), "{s}");
            let body = r#"{"decisions":[{"group":"g1","decision":"accept"},{"site":"s9","decision":null}]}"#;
            let post = |origin: &str, host: &str, cookie: &str, path: &str, body: &str| {
                send(format!(
                    "POST {path} HTTP/1.1\r\n{host}{cookie}{origin}Content-Type: application/json\r\n\
                     Content-Length: {}\r\n\r\n{body}",
                    body.len()
                ))
            };
            let own = format!("Origin: http://127.0.0.1:{port}\r\n");
            // Refused: another Origin, no Origin, a wrong Host, no cookie, the spent token.
            for (origin, h, ck, want) in [
                (
                    "Origin: http://evil.example\r\n",
                    host.as_str(),
                    c.as_str(),
                    "403",
                ),
                ("", host.as_str(), c.as_str(), "403"),
                (own.as_str(), "Host: evil.example\r\n", c.as_str(), "421"),
                (own.as_str(), host.as_str(), "", "403"),
            ] {
                for path in ["/api/decide", "/api/apply"] {
                    let a = post(origin, h, ck, path, body);
                    assert!(a.starts_with(&format!("HTTP/1.1 {want} ")), "{a}");
                }
            }
            let a = post(&own, &host, "", &format!("/api/decide?token={token}"), body);
            assert!(a.starts_with("HTTP/1.1 403 "), "{a}");
            let a = post(
                &own,
                &host,
                &c,
                "/api/decide",
                "{\"decisions\":[{\"oops\":1}]}",
            );
            assert!(a.starts_with("HTTP/1.1 400 "), "{a}");
            let a = post(&own, &host, &c, "/api/decide", body);
            assert!(a.starts_with("HTTP/1.1 200 "), "{a}");
            let a = send(format!("GET /etc/passwd HTTP/1.1\r\n{host}{c}\r\n"));
            assert!(a.starts_with("HTTP/1.1 404 "), "{a}");
            let a = post(&own, &host, &c, "/api/apply", "{}");
            assert!(a.starts_with("HTTP/1.1 200 "), "{a}");
        });
        assert_eq!(
            backend.decided,
            vec![
                (Target::Group("g1".into()), Some(Decision::Accept)),
                (Target::Site("s9".into()), None)
            ]
        );
        assert!(backend.applied);
    }
}
