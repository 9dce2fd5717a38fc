//! Who may talk to the review page: every request is checked here before anything
//! else reads it.
//!
//! * The peer is on the loopback interface (the listener binds 127.0.0.1 only; this
//!   holds even if that changes).
//! * `Host` is exactly `127.0.0.1:PORT` or `localhost:PORT`: a page of another site
//!   whose name was re-pointed at 127.0.0.1 (DNS rebinding) sends its own name.
//! * An `Origin`, when sent, is this server's; a POST must send one (browsers do on
//!   every POST), and `Sec-Fetch-Site`, when sent, must say `same-origin`. A POST's
//!   body must be `application/json`, which no cross-site form can send.
//! * The session: a random token in the URL the command prints, spent on its first
//!   use for a session cookie (`HttpOnly; SameSite=Strict`, named after the port so
//!   two servers do not share it); the browser is then sent to the URL without the
//!   token, so it stays out of history and of `Referer` (also `no-referrer`). The
//!   token is spent because the command line that opened the browser is readable by
//!   every local user in the process list; the cookie is another random value.

use std::net::SocketAddr;

use super::http::Request;
use super::http::Response;

/// 32 random bytes, hex.
pub fn secret() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// What to do with a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Serve it.
    Serve,
    /// Answer this instead (a refusal, or the token's redirect with its cookie).
    Answer(Response),
}

/// The session's secrets and the port they are good for.
pub struct Guard {
    port: u16,
    /// `None` once spent.
    token: Option<String>,
    session: String,
}

impl Guard {
    pub fn new(port: u16, token: String, session: String) -> Guard {
        Guard {
            port,
            token: Some(token),
            session,
        }
    }

    fn cookie_name(&self) -> String {
        format!("astedit-review-{}", self.port)
    }

    fn origins(&self) -> [String; 2] {
        [
            format!("http://127.0.0.1:{}", self.port),
            format!("http://localhost:{}", self.port),
        ]
    }

    /// Checks `request` from `peer`; may spend the token.
    pub fn check(&mut self, peer: SocketAddr, request: &Request) -> Verdict {
        match self.refusal(peer, request) {
            Some((status, why)) => Verdict::Answer(Response::text(status, why)),
            None => self.session_check(request),
        }
    }

    /// Everything but the session: peer, Host, Origin, the POST's headers.
    fn refusal(&self, peer: SocketAddr, request: &Request) -> Option<(u16, &'static str)> {
        if !peer.ip().is_loopback() {
            return Some((403, "refused: not from this machine"));
        }
        let hosts = [
            format!("127.0.0.1:{}", self.port),
            format!("localhost:{}", self.port),
        ];
        match request.header("host") {
            Ok(Some(host)) if hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) => {}
            _ => {
                return Some((
                    421,
                    "refused: wrong Host (open the URL git astedit printed)",
                ))
            }
        }
        let post = request.method == "POST";
        match request.header("origin") {
            Ok(Some(origin)) if self.origins().iter().any(|o| o == origin) => {}
            Ok(None) if !post => {}
            Ok(None) => return Some((403, "refused: a POST without Origin")),
            _ => return Some((403, "refused: another Origin")),
        }
        match request.header("sec-fetch-site") {
            Ok(None) => {}
            Ok(Some("same-origin")) => {}
            // A navigation typed or opened from outside the browser's pages.
            Ok(Some("none")) if !post => {}
            _ => return Some((403, "refused: a cross-site request")),
        }
        if post {
            let json = request
                .header("content-type")
                .ok()
                .flatten()
                .is_some_and(|t| {
                    t.split(';')
                        .next()
                        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
                });
            if !json {
                return Some((415, "refused: a POST's body is application/json"));
            }
        }
        None
    }

    fn session_check(&mut self, request: &Request) -> Verdict {
        let name = self.cookie_name();
        let cookie_ok = request
            .headers
            .iter()
            .filter(|(n, _)| n == "cookie")
            .flat_map(|(_, v)| v.split(';'))
            .filter_map(|c| c.trim().split_once('='))
            .any(|(n, v)| n == name && same(v, &self.session));
        let offered = request.param("token");
        if cookie_ok {
            return match offered {
                // A second load of the printed URL in the same browser: drop the token.
                Some(_) if request.method == "GET" => Verdict::Answer(home()),
                _ => Verdict::Serve,
            };
        }
        let spend = request.method == "GET"
            && request.path == "/"
            && matches!((&self.token, offered), (Some(t), Some(o)) if same(t, o));
        if !spend {
            return Verdict::Answer(Response::text(
                403,
                "refused: no session (open the URL git astedit review printed, once)",
            ));
        }
        self.token = None;
        Verdict::Answer(home().with(
            "Set-Cookie",
            format!("{name}={}; Path=/; HttpOnly; SameSite=Strict", self.session),
        ))
    }
}

/// The redirect to the page without a token in its URL.
fn home() -> Response {
    Response::text(303, "see /").with("Location", "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORT: u16 = 4711;

    fn peer() -> SocketAddr {
        "127.0.0.1:50000".parse().expect("address")
    }

    fn request(method: &str, target: &str, headers: &[(&str, &str)]) -> Request {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        Request {
            method: method.into(),
            path: path.into(),
            query: query
                .split('&')
                .filter(|q| !q.is_empty())
                .map(|q| {
                    let (k, v) = q.split_once('=').unwrap_or((q, ""));
                    (k.into(), v.into())
                })
                .collect(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string()))
                .collect(),
            body: Vec::new(),
        }
    }

    fn guard() -> Guard {
        Guard::new(PORT, "t0k".into(), "s3ss".into())
    }

    fn status(v: &Verdict) -> u16 {
        match v {
            Verdict::Serve => 200,
            Verdict::Answer(r) => r.status,
        }
    }

    const HOST: (&str, &str) = ("Host", "127.0.0.1:4711");
    const COOKIE: (&str, &str) = ("Cookie", "other=1; astedit-review-4711=s3ss");
    const ORIGIN: (&str, &str) = ("Origin", "http://127.0.0.1:4711");
    const JSON: (&str, &str) = ("Content-Type", "application/json");

    #[test]
    fn the_token_is_spent_once_for_a_cookie() {
        let mut g = guard();
        let v = g.check(peer(), &request("GET", "/?token=t0k", &[HOST]));
        let Verdict::Answer(r) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(r.status, 303);
        assert_eq!(r.header("location"), Some("/"));
        assert_eq!(
            r.header("set-cookie"),
            Some("astedit-review-4711=s3ss; Path=/; HttpOnly; SameSite=Strict")
        );
        // Spent: the same URL without the cookie is refused.
        let again = g.check(peer(), &request("GET", "/?token=t0k", &[HOST]));
        assert_eq!(status(&again), 403);
        // With the cookie: served, and a token in the URL is dropped by a redirect.
        assert_eq!(
            g.check(peer(), &request("GET", "/", &[HOST, COOKIE])),
            Verdict::Serve
        );
        assert_eq!(
            status(&g.check(peer(), &request("GET", "/?token=x", &[HOST, COOKIE]))),
            303
        );
    }

    #[test]
    fn no_token_no_cookie_wrong_token_are_refused() {
        let mut g = guard();
        for target in ["/", "/?token=bad", "/api/review", "/api/review?token=t0k"] {
            assert_eq!(
                status(&g.check(peer(), &request("GET", target, &[HOST]))),
                403
            );
        }
        let wrong = (
            "Cookie",
            "astedit-review-4711=s3sx; astedit-review-4712=s3ss",
        );
        assert_eq!(
            status(&g.check(peer(), &request("GET", "/", &[HOST, wrong]))),
            403
        );
        // The token was never spent by those.
        assert_eq!(
            status(&g.check(peer(), &request("GET", "/?token=t0k", &[HOST]))),
            303
        );
    }

    #[test]
    fn host_origin_and_peer_are_checked_before_the_session() {
        let mut g = guard();
        let ok = [HOST, COOKIE, ORIGIN, JSON];
        assert_eq!(
            g.check(peer(), &request("POST", "/api/decide", &ok)),
            Verdict::Serve
        );
        let localhost = [
            ("Host", "localhost:4711"),
            COOKIE,
            ("Origin", "http://localhost:4711"),
            JSON,
        ];
        assert_eq!(
            g.check(peer(), &request("POST", "/api/decide", &localhost)),
            Verdict::Serve
        );
        let cases: &[(&[(&str, &str)], u16)] = &[
            (&[("Host", "evil.example:4711"), COOKIE], 421),
            (&[("Host", "127.0.0.1:4712"), COOKIE], 421),
            (&[COOKIE], 421),
            (&[HOST, ("Host", "127.0.0.1:4711"), COOKIE], 421),
            (&[HOST, COOKIE, ("Origin", "http://evil.example")], 403),
            (&[HOST, COOKIE, ("Origin", "null")], 403),
            (&[HOST, COOKIE, ("Sec-Fetch-Site", "cross-site")], 403),
        ];
        for (headers, want) in cases {
            assert_eq!(
                status(&g.check(peer(), &request("GET", "/", headers))),
                *want,
                "{headers:?}"
            );
        }
        let posts: &[(&[(&str, &str)], u16)] = &[
            (&[HOST, COOKIE, JSON], 403),
            (
                &[HOST, COOKIE, ("Origin", "http://evil.example"), JSON],
                403,
            ),
            (&[HOST, COOKIE, ORIGIN, ("Content-Type", "text/plain")], 415),
            (&[HOST, COOKIE, ORIGIN], 415),
            (
                &[HOST, COOKIE, ORIGIN, JSON, ("Sec-Fetch-Site", "same-site")],
                403,
            ),
            (&[HOST, ORIGIN, JSON], 403),
        ];
        for (headers, want) in posts {
            assert_eq!(
                status(&g.check(peer(), &request("POST", "/api/apply", headers))),
                *want,
                "{headers:?}"
            );
        }
        let remote: SocketAddr = "192.168.1.5:50000".parse().expect("address");
        assert_eq!(status(&g.check(remote, &request("GET", "/", &ok))), 403);
    }

    #[test]
    fn secrets_differ() {
        let (a, b) = (secret().expect("random"), secret().expect("random"));
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
