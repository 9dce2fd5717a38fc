//! The stdio framing: `Content-Length` headers, then a JSON-RPC message, both ways.
//!
//! Unlike `lsp_server`'s own stdio transport, which ends the connection at the first
//! malformed message, a bad message here is answered and skipped:
//!
//! * a body that is not JSON gets a parse error (`-32700`, id null);
//! * JSON that is no JSON-RPC message gets an invalid request (`-32600`), with its id
//!   when it has one;
//! * a header block without a usable `Content-Length` gets a parse error and the
//!   reader looks for the next header block;
//! * a body longer than [`MAX_MESSAGE`] gets an invalid request and is read past in
//!   slices, never held.
//!
//! A document's text (`textDocument/didOpen`, `textDocument/didChange`) is decoded
//! from the bytes read straight into its parameters ([`Incoming::Open`],
//! [`Incoming::Change`]): a large document is not held as a JSON value, then as the
//! message's copy of it, then as the parameters. An opened document's text is
//! unescaped in place in the bytes read, which become the text: it is held once.
//!
//! `$/cancelRequest` and `window/workDoneProgress/cancel` are noted in [`Cancelled`] as
//! soon as they are read, so a request the server has not reached yet is answered as
//! cancelled instead of run, and a long one that is running (stage-all, the workspace's
//! diagnostics) stops between files. The reader ends at the end of stdin (the client
//! is gone, which cancels whatever runs) or after `exit`.

use std::collections::HashSet;
use std::io::BufRead;
use std::io::Read;
use std::io::Write;
use std::sync::Arc;
use std::sync::Mutex;

use crossbeam_channel::Receiver;
use crossbeam_channel::Sender;
use lsp_server::Message;
use lsp_server::RequestId;

/// The largest message read: 64 MiB (a 10 MB document, JSON-escaped, fits).
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// The longest header line read before giving up on it.
const MAX_HEADER_LINE: usize = 8 * 1024;

/// What goes out: a message, or an error whose id is null (it answers bytes that held
/// no id), which `lsp_server`'s types cannot say.
pub enum Out {
    Message(Message),
    Raw(serde_json::Value),
}

/// What the client cancelled: requests by id, work-done progress by token (a
/// `window/workDoneProgress/cancel`), and everything once it is gone (the end of
/// stdin). Shared with the loop, which asks while a long request runs.
#[derive(Clone, Default)]
pub struct Cancelled(Arc<Mutex<Marks>>);

#[derive(Default)]
struct Marks {
    ids: HashSet<RequestId>,
    tokens: HashSet<String>,
    gone: bool,
}

impl Cancelled {
    fn marks(&self) -> std::sync::MutexGuard<'_, Marks> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self, id: RequestId) {
        self.marks().ids.insert(id);
    }

    fn add_token(&self, token: String) {
        self.marks().tokens.insert(token);
    }

    fn client_gone(&self) {
        self.marks().gone = true;
    }

    /// Whether `id` was cancelled (forgetting it: an id is answered once).
    pub fn take(&self, id: &RequestId) -> bool {
        self.marks().ids.remove(id)
    }

    /// Whether the request `id`, or the progress `token` it reports to, was
    /// cancelled, or the client is gone (remembered: see [`Cancelled::forget`]).
    pub fn asked(&self, id: &RequestId, token: Option<&str>) -> bool {
        let marks = self.marks();
        marks.gone || marks.ids.contains(id) || token.is_some_and(|t| marks.tokens.contains(t))
    }

    /// Forgets a request that has been answered, and its progress token.
    pub fn forget(&self, id: &RequestId, token: Option<&str>) {
        let mut marks = self.marks();
        marks.ids.remove(id);
        if let Some(token) = token {
            marks.tokens.remove(token);
        }
    }
}

/// A progress token as a key: its JSON text (`"abc"` and `7` stay apart).
pub fn token_key(token: &lsp_types::NumberOrString) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

/// What the reader hands the loop.
pub enum Incoming {
    Message(Message),
    /// A `textDocument/didOpen` notification's parameters.
    Open(lsp_types::DidOpenTextDocumentParams),
    /// A `textDocument/didChange` notification's parameters.
    Change(lsp_types::DidChangeTextDocumentParams),
}

/// The two threads and their channels.
pub struct Transport {
    pub incoming: Receiver<Incoming>,
    pub outgoing: Sender<Out>,
    pub cancelled: Cancelled,
    reader: std::thread::JoinHandle<()>,
    writer: std::thread::JoinHandle<()>,
}

impl Transport {
    /// Starts reading `input` and writing `output` on threads of their own.
    pub fn start(
        input: impl Read + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> Transport {
        // Bounded: a client that floods the server waits instead of growing its memory.
        let (in_tx, incoming) = crossbeam_channel::bounded::<Incoming>(256);
        let (outgoing, out_rx) = crossbeam_channel::unbounded::<Out>();
        let cancelled = Cancelled::default();
        let reader = {
            let outgoing = outgoing.clone();
            let cancelled = cancelled.clone();
            std::thread::spawn(move || {
                read_loop(
                    std::io::BufReader::new(input),
                    &in_tx,
                    &outgoing,
                    &cancelled,
                )
            })
        };
        let writer = std::thread::spawn(move || write_loop(output, &out_rx));
        Transport {
            incoming,
            outgoing,
            cancelled,
            reader,
            writer,
        }
    }

    /// Waits for everything sent to be written (or for the client to be gone). The
    /// reader is not waited for: it may be blocked on a stdin nobody closes.
    pub fn finish(self) {
        drop(self.outgoing);
        let _ = self.writer.join();
        drop(self.reader);
    }
}

fn write_loop(mut output: impl Write, out_rx: &Receiver<Out>) {
    for out in out_rx {
        let text = match out {
            Out::Message(m) => {
                let mut buf = Vec::new();
                if m.write(&mut buf).is_err() {
                    continue;
                }
                if output.write_all(&buf).and_then(|_| output.flush()).is_err() {
                    return;
                }
                continue;
            }
            Out::Raw(value) => value.to_string(),
        };
        let framed = format!("Content-Length: {}\r\n\r\n{text}", text.len());
        if output
            .write_all(framed.as_bytes())
            .and_then(|_| output.flush())
            .is_err()
        {
            // The client is gone; nothing is left to say.
            return;
        }
    }
}

/// An error answer with a null id.
fn error_out(code: i32, message: &str) -> Out {
    error_for(serde_json::Value::Null, code, message)
}

fn error_for(id: serde_json::Value, code: i32, message: &str) -> Out {
    Out::Raw(serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    }))
}

const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;

fn read_loop(
    mut input: impl BufRead,
    in_tx: &Sender<Incoming>,
    outgoing: &Sender<Out>,
    cancelled: &Cancelled,
) {
    loop {
        let body = match read_frame(&mut input) {
            Frame::End => {
                cancelled.client_gone();
                return;
            }
            Frame::Bad(why) => {
                let _ = outgoing.send(error_out(PARSE_ERROR, &why));
                continue;
            }
            Frame::TooLong(len) => {
                let _ = outgoing.send(error_out(
                    INVALID_REQUEST,
                    &format!("message of {len} bytes is over the limit of {MAX_MESSAGE}"),
                ));
                continue;
            }
            Frame::Body(body) => body,
        };
        let body = match document_notification(body) {
            Ok(document) => {
                if in_tx.send(document).is_err() {
                    return;
                }
                continue;
            }
            Err(body) => body,
        };
        let value: serde_json::Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                let _ = outgoing.send(error_out(PARSE_ERROR, &format!("not JSON: {e}")));
                continue;
            }
        };
        let id = value.get("id").cloned();
        let msg: Message = match serde_json::from_value(value) {
            Ok(m) => m,
            Err(e) => {
                // A response we cannot read needs no answer; a request does.
                let why = format!("not a JSON-RPC message: {e}");
                match id {
                    Some(id) if id.is_number() || id.is_string() => {
                        let _ = outgoing.send(error_for(id, INVALID_REQUEST, &why));
                    }
                    Some(_) => {}
                    None => {
                        let _ = outgoing.send(error_out(INVALID_REQUEST, &why));
                    }
                }
                continue;
            }
        };
        let exit = matches!(&msg, Message::Notification(n) if n.method == "exit");
        if let Message::Notification(n) = &msg {
            if n.method == "$/cancelRequest" {
                if let Some(id) = cancelled_id(&n.params) {
                    cancelled.add(id);
                }
            }
            if n.method == "window/workDoneProgress/cancel" {
                let token = n.params.get("token").cloned().map(serde_json::from_value);
                if let Some(Ok(token)) = token {
                    cancelled.add_token(token_key(&token));
                }
            }
        }
        if in_tx.send(Incoming::Message(msg)).is_err() || exit {
            return;
        }
    }
}

/// A `didOpen` or `didChange` notification decoded from its bytes into its
/// parameters, the text copied once (an opened document's not at all: see
/// [`decode_open`]); the bytes back for any other message, and for one whose
/// parameters do not decode (read then as any message: dropped, as a notification
/// that does not parse is).
fn document_notification(body: Vec<u8>) -> Result<Incoming, Vec<u8>> {
    /// What tells the message apart; the rest (the parameters) is skipped unread.
    #[derive(serde::Deserialize)]
    struct Head {
        method: Option<String>,
        id: Option<serde::de::IgnoredAny>,
    }
    #[derive(serde::Deserialize)]
    struct Params<P> {
        params: P,
    }
    let Ok(head) = serde_json::from_slice::<Head>(&body) else {
        return Err(body);
    };
    // A request of that name: answered as any request the server does not serve.
    let method = head.method.filter(|_| head.id.is_none());
    match method.as_deref() {
        Some("textDocument/didOpen") => decode_open(body),
        Some("textDocument/didChange") => match serde_json::from_slice::<Params<_>>(&body) {
            Ok(p) => Ok(Incoming::Change(p.params)),
            Err(_) => Err(body),
        },
        _ => Err(body),
    }
}

/// A `didOpen` whose text is unescaped in place, to the front of the bytes read,
/// which then are the text (a 50 MB document is 50 MB once, not as well a JSON
/// value, serde's scratch buffer and a copy). The bytes back, untouched, when the
/// parameters do not decode as serde would decode them.
fn decode_open(mut body: Vec<u8>) -> Result<Incoming, Vec<u8>> {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Params<'a> {
        #[serde(borrow)]
        text_document: Item<'a>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Item<'a> {
        uri: lsp_types::Uri,
        language_id: String,
        version: i32,
        #[serde(borrow)]
        text: &'a serde_json::value::RawValue,
    }
    let (uri, language_id, version, text) = match serde_json::from_slice::<Message>(&body) {
        Ok(Message {
            params: Params { text_document: t },
        }) => {
            let raw = t.text.get();
            let at = raw.as_ptr() as usize - body.as_ptr() as usize;
            (
                t.uri,
                t.language_id,
                t.version,
                (raw.starts_with('"'), at, raw.len()),
            )
        }
        Err(_) => return Err(body),
    };
    // Not a string, or one serde would refuse: the bytes as they were.
    let (is_string, at, len) = text;
    if !is_string || !unescapes(&body[at + 1..at + len - 1]) {
        return Err(body);
    }
    let n = unescape_to_front(&mut body, at + 1, at + len - 1);
    body.truncate(n);
    let text = match String::from_utf8(body) {
        Ok(text) => text,
        // Checked by `unescapes`: not reached.
        Err(e) => return Err(e.into_bytes()),
    };
    Ok(Incoming::Open(lsp_types::DidOpenTextDocumentParams {
        text_document: lsp_types::TextDocumentItem {
            uri,
            language_id,
            version,
            text,
        },
    }))
}

/// Whether the inside of a JSON string (its escapes already checked by serde's
/// parse of it as a raw value) decodes as serde decodes it into a Rust string:
/// UTF-8, and every UTF-16 surrogate escape paired.
fn unescapes(raw: &[u8]) -> bool {
    if std::str::from_utf8(raw).is_err() {
        return false;
    }
    let mut at = 0;
    while let Some(i) = memchr::memchr(b'\\', &raw[at..]) {
        let i = at + i;
        if raw.get(i + 1) != Some(&b'u') {
            at = i + 2;
            continue;
        }
        let Some(n) = hex4(raw, i + 2) else {
            return false;
        };
        at = i + 6;
        if (0xDC00..=0xDFFF).contains(&n) {
            return false;
        }
        if (0xD800..=0xDBFF).contains(&n) {
            let paired = raw.get(at..at + 2) == Some(b"\\u".as_slice())
                && hex4(raw, at + 2).is_some_and(|m| (0xDC00..=0xDFFF).contains(&m));
            if !paired {
                return false;
            }
            at += 6;
        }
    }
    true
}

/// The four hex digits at `at`, as a number.
fn hex4(raw: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(raw.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

/// Unescapes the JSON string between `start` and `end` (checked by [`unescapes`])
/// to the front of `buf`; the length written. Writing never passes reading: an
/// escape is never shorter than what it stands for.
fn unescape_to_front(buf: &mut [u8], start: usize, end: usize) -> usize {
    let (mut read, mut write) = (start, 0);
    while read < end {
        let run = memchr::memchr(b'\\', &buf[read..end]).unwrap_or(end - read);
        buf.copy_within(read..read + run, write);
        read += run;
        write += run;
        if read >= end {
            break;
        }
        let byte = match buf[read + 1] {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'u' => {
                let mut n = hex4(buf, read + 2).unwrap_or(0xFFFD);
                read += 6;
                if (0xD800..=0xDBFF).contains(&n) {
                    let low = hex4(buf, read + 2).unwrap_or(0xDC00);
                    n = 0x10000 + ((n - 0xD800) << 10) + (low - 0xDC00);
                    read += 6;
                }
                let c = char::from_u32(n).unwrap_or(char::REPLACEMENT_CHARACTER);
                write += c.encode_utf8(&mut buf[write..write + 4]).len();
                continue;
            }
            // `"`, `\\` and `/` stand for themselves.
            other => other,
        };
        buf[write] = byte;
        write += 1;
        read += 2;
    }
    write
}

/// The id of a `$/cancelRequest`'s params.
fn cancelled_id(params: &serde_json::Value) -> Option<RequestId> {
    match params.get("id")? {
        serde_json::Value::Number(n) => Some(RequestId::from(i32::try_from(n.as_i64()?).ok()?)),
        serde_json::Value::String(s) => Some(RequestId::from(s.clone())),
        _ => None,
    }
}

/// One read of a framed message.
enum Frame {
    Body(Vec<u8>),
    /// The header block was unusable (the reason).
    Bad(String),
    /// A `Content-Length` over the limit; the body was read past.
    TooLong(usize),
    /// The end of the input.
    End,
}

fn read_frame(input: &mut impl BufRead) -> Frame {
    let mut length: Option<Result<usize, String>> = None;
    let mut seen_any = false;
    loop {
        let mut line = Vec::new();
        match input
            .by_ref()
            .take(MAX_HEADER_LINE as u64)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => return Frame::End,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !seen_any {
                // Blank lines between messages are tolerated.
                continue;
            }
            break;
        }
        seen_any = true;
        let header = text.split_once(':').filter(|(name, _)| {
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
        if let Some((name, value)) = header {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = Some(
                    value
                        .trim()
                        .parse::<usize>()
                        .map_err(|_| format!("bad Content-Length: {:?}", value.trim())),
                );
            }
        } else {
            // Not a header: stray bytes (a body that overran its length, garbage).
            return Frame::Bad(format!("not a header: {:?}", cut(text)));
        }
    }
    let length = match length {
        None => return Frame::Bad("no Content-Length header".into()),
        Some(Err(why)) => return Frame::Bad(why),
        Some(Ok(n)) => n,
    };
    if length > MAX_MESSAGE {
        let skipped = std::io::copy(
            &mut input.by_ref().take(length as u64),
            &mut std::io::sink(),
        );
        return match skipped {
            Ok(n) if n == length as u64 => Frame::TooLong(length),
            _ => Frame::End,
        };
    }
    let mut body = vec![0; length];
    match input.read_exact(&mut body) {
        Ok(()) => Frame::Body(body),
        Err(_) => Frame::End,
    }
}

/// At most 80 characters of `text`, for an error message.
fn cut(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_message(text_json: &str) -> Vec<u8> {
        format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"file:///r/a.js","languageId":"javascript","version":7,"text":{text_json}}}}}}}"#
        )
        .into_bytes()
    }

    #[test]
    fn an_opened_text_is_what_serde_decodes() {
        let texts = [
            "",
            "plain",
            "a\nb\r\n\t\"q\" \\ / \u{8}\u{c} é 漢 😀",
            "\u{0}\u{1f}\u{7f}",
        ];
        for text in texts {
            let json = serde_json::to_string(text).unwrap();
            // And every non-ASCII character as \u escapes (surrogate pairs), and `/`
            // as `\/`.
            let mut escaped = String::new();
            for c in json.chars() {
                match c {
                    '/' => escaped.push_str("\\/"),
                    c if c.is_ascii() => escaped.push(c),
                    c => {
                        for u in c.encode_utf16(&mut [0; 2]) {
                            escaped.push_str(&format!("\\u{u:04X}"));
                        }
                    }
                }
            }
            for json in [json, escaped] {
                let Ok(Incoming::Open(p)) = document_notification(open_message(&json)) else {
                    panic!("not decoded: {json}");
                };
                assert_eq!(p.text_document.text, text, "{json}");
                assert_eq!(p.text_document.version, 7);
                assert_eq!(p.text_document.uri.as_str(), "file:///r/a.js");
            }
        }
    }

    #[test]
    fn what_serde_refuses_is_handed_back_untouched() {
        for json in [
            r#""\uD800""#,
            r#""\uDC00x""#,
            r#""\uD800\u0041""#,
            r#""\uD800\n""#,
            "7",
            r#"["x"]"#,
        ] {
            let body = open_message(json);
            let serde: Result<lsp_types::DidOpenTextDocumentParams, _> = serde_json::from_slice::<
                serde_json::Value,
            >(&body)
            .map_err(|e| e.to_string())
            .and_then(|v| serde_json::from_value(v["params"].clone()).map_err(|e| e.to_string()));
            assert!(serde.is_err(), "{json}");
            match document_notification(body.clone()) {
                Err(back) => assert_eq!(back, body, "{json}"),
                Ok(_) => panic!("decoded: {json}"),
            }
        }
    }
}
