//! Just enough HTTP/1.1 for one browser tab on the loopback interface: a request is
//! read whole (head and body) within fixed bounds, answered, and the connection
//! closed. No keep-alive, no chunked bodies, no pipelining: a browser that opens a
//! second connection simply waits its turn on the listen queue.

use std::io::Read;
use std::io::Write;

/// The request line and headers together, at most (a browser's are ~1 KiB).
pub const MAX_HEAD: usize = 16 * 1024;
/// A request body, at most: one batch of decisions (10,000 site ids fit well).
pub const MAX_BODY: usize = 4 * 1024 * 1024;
/// Headers in one request, at most.
const MAX_HEADERS: usize = 64;

/// One parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The path, without the query (not percent-decoded: ours are plain).
    pub path: String,
    /// The query's pairs, percent-decoded.
    pub query: Vec<(String, String)>,
    /// Names lower-cased, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (lower-case) when it is present exactly once; a
    /// repeated header is as good as absent (`Err`), so that two `Host` or `Origin`
    /// lines cannot be read one way here and another way elsewhere.
    pub fn header(&self, name: &str) -> Result<Option<&str>, ()> {
        let mut found = self.headers.iter().filter(|(n, _)| n == name);
        match (found.next(), found.next()) {
            (None, _) => Ok(None),
            (Some((_, v)), None) => Ok(Some(v.as_str())),
            (Some(_), Some(_)) => Err(()),
        }
    }

    /// The first value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a request could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// Head or body over the bounds: 431 or 413.
    TooLarge(u16),
    /// Not HTTP/1.x as we read it: 400.
    Malformed(&'static str),
    /// The peer went away or was too slow (the socket's timeout): nothing to answer.
    Io,
}

/// Reads one request from `stream`, whose read timeout bounds the wait.
pub fn read_request(stream: &mut impl Read) -> Result<Request, ReadError> {
    let mut buf = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(ReadError::TooLarge(431));
        }
        let n = stream.read(&mut chunk).map_err(|_| ReadError::Io)?;
        if n == 0 {
            return Err(ReadError::Io);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    if head_end > MAX_HEAD {
        return Err(ReadError::TooLarge(431));
    }
    let head = std::str::from_utf8(&buf[..head_end])
        .map_err(|_| ReadError::Malformed("request head is not UTF-8"))?;
    let mut request = parse_head(head)?;
    if request.header("transfer-encoding") != Ok(None) {
        return Err(ReadError::Malformed("chunked bodies are not read here"));
    }
    let length = match request.header("content-length") {
        Ok(None) => 0,
        Ok(Some(v)) => v
            .trim()
            .parse::<usize>()
            .map_err(|_| ReadError::Malformed("bad Content-Length"))?,
        Err(()) => return Err(ReadError::Malformed("two Content-Length headers")),
    };
    if length > MAX_BODY {
        return Err(ReadError::TooLarge(413));
    }
    let mut body = buf.split_off(head_end + 4);
    if body.len() > length {
        return Err(ReadError::Malformed("more bytes than Content-Length"));
    }
    let have = body.len();
    body.resize(length, 0);
    stream
        .read_exact(&mut body[have..])
        .map_err(|_| ReadError::Io)?;
    request.body = body;
    Ok(request)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn parse_head(head: &str) -> Result<Request, ReadError> {
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Malformed("bad request line"));
    };
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
        return Err(ReadError::Malformed("not HTTP/1.x"));
    }
    if !target.starts_with('/') {
        return Err(ReadError::Malformed("only origin-form targets"));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Ok((decode(k)?, decode(v)?))
        })
        .collect::<Result<Vec<_>, ReadError>>()?;
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(ReadError::Malformed("bad header line"));
        };
        if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(ReadError::Malformed("bad header name"));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
        if headers.len() > MAX_HEADERS {
            return Err(ReadError::TooLarge(431));
        }
    }
    Ok(Request {
        method: method.to_string(),
        path: path.to_string(),
        query,
        headers,
        body: Vec::new(),
    })
}

/// Percent-decoding of a query component (`+` is a space, as forms send it).
fn decode(s: &str) -> Result<String, ReadError> {
    let bad = || ReadError::Malformed("bad percent-encoding");
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'%' => {
                let hex = [bytes.next().ok_or_else(bad)?, bytes.next().ok_or_else(bad)?];
                let hex = std::str::from_utf8(&hex).map_err(|_| bad())?;
                out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

/// One response; every one closes its connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            headers: vec![("Content-Type", content_type.to_string())],
            body: body.into(),
        }
    }

    pub fn text(status: u16, body: &str) -> Response {
        Response::new(status, "text/plain; charset=utf-8", format!("{body}\n"))
    }

    pub fn json(status: u16, value: &impl serde::Serialize) -> Response {
        let body = serde_json::to_vec(value).expect("serialize a report to JSON");
        Response::new(status, "application/json", body)
    }

    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }

    #[cfg(test)]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        421 => "Misdirected Request",
        423 => "Locked",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    }
}

/// Writes `response` with its length and `Connection: close`.
pub fn write_response(stream: &mut impl Write, response: &Response) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        response.body.len()
    ));
    stream.write_all(head.as_bytes())?;
    stream.write_all(&response.body)?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Request, ReadError> {
        read_request(&mut std::io::Cursor::new(bytes.to_vec()))
    }

    #[test]
    fn reads_a_request_with_its_query_and_body() {
        let r = read(
            b"POST /api/sites?group=a%2Fb&offset=5 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\
              Content-Length: 4\r\n\r\n{}xy",
        )
        .expect("read");
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/api/sites");
        assert_eq!(r.param("group"), Some("a/b"));
        assert_eq!(r.param("offset"), Some("5"));
        assert_eq!(r.header("host"), Ok(Some("127.0.0.1:9")));
        assert_eq!(r.body, b"{}xy");
    }

    #[test]
    fn bounds_and_bad_requests_are_refused() {
        let mut big = b"GET / HTTP/1.1\r\nX: ".to_vec();
        big.extend(std::iter::repeat_n(b'a', MAX_HEAD + 10));
        big.extend(b"\r\n\r\n");
        assert!(matches!(read(&big), Err(ReadError::TooLarge(431))));
        let body = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY + 1
        );
        assert!(matches!(
            read(body.as_bytes()),
            Err(ReadError::TooLarge(413))
        ));
        for bad in [
            &b"GET http://evil/ HTTP/1.1\r\n\r\n"[..],
            b"GET / HTTP/2\r\n\r\n",
            b"GET / HTTP/1.1\r\nbad line\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
            b"GET /?t=%zz HTTP/1.1\r\n\r\n",
        ] {
            assert!(
                matches!(read(bad), Err(ReadError::Malformed(_))),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        // A body cut short is an I/O error: nothing is answered.
        assert!(matches!(
            read(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nab"),
            Err(ReadError::Io)
        ));
    }

    #[test]
    fn a_repeated_header_reads_as_neither_value() {
        let r = read(b"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n").expect("read");
        assert_eq!(r.header("host"), Err(()));
    }
}
