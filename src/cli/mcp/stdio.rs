//! The stdio framing in front of the SDK: one JSON-RPC message per line, checked before
//! the protocol sees it.
//!
//! * A line longer than [`MAX_MESSAGE`] (16 MiB) is answered with a JSON-RPC error
//!   (`-32600`, id null) and skipped, without buffering it: a runaway client cannot
//!   make the server hold unbounded input or hang.
//! * A line that is not JSON is answered with a parse error (`-32700`, id null) and
//!   skipped, before `initialize` as after it.
//! * A request whose params cannot fit (not an object; `tools/call` without a string
//!   `name` or with non-object `arguments`) is answered with `-32602` and its own id.
//!
//! Everything else passes through unchanged. Replies from the SDK and from this filter
//! go out through one writer, a whole line at a time, so they never interleave.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::AsyncBufReadExt;
use tokio::io::AsyncWriteExt;
use tokio::io::DuplexStream;
use tokio::sync::mpsc;

/// The largest message the server reads: 16 MiB.
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// The tasks that connect the SDK's pipes to stdio.
pub struct Framed {
    reader: tokio::task::JoinHandle<()>,
    writer: tokio::task::JoinHandle<()>,
}

fn error_line(code: i64, message: &str) -> Vec<u8> {
    error_line_for(&serde_json::Value::Null, code, message)
}

fn error_line_for(id: &serde_json::Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

impl Framed {
    /// Starts the reader and writer tasks on the current runtime; returns what the SDK
    /// reads (checked lines from stdin) and writes (copied to stdout line by line).
    ///
    /// `closed` is set as soon as stdin ends (or fails), before the SDK sees it, so that
    /// calls in flight can be cancelled at once.
    pub fn start(closed: Arc<AtomicBool>) -> (DuplexStream, DuplexStream, Framed) {
        let (input, mut feed) = tokio::io::duplex(1 << 20);
        let (output, from_sdk) = tokio::io::duplex(1 << 20);
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();

        // stdout: one writer, whole lines.
        let writer = tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            while let Some(line) = rx.recv().await {
                if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                    // The client is gone; nothing is left to say.
                    break;
                }
            }
        });

        // The SDK's output, line by line, into the writer.
        let sdk_tx = tx.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(from_sdk);
            loop {
                let mut line = Vec::new();
                match lines.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if sdk_tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });

        // stdin: checked lines into the SDK; faults answered directly.
        let reader = tokio::spawn(async move {
            let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
            let mut line: Vec<u8> = Vec::new();
            let mut too_long = false;
            while let Ok(chunk) = stdin.fill_buf().await {
                if chunk.is_empty() {
                    // End of input: a last line without its newline still counts.
                    if !too_long && !line.is_empty() {
                        line.push(b'\n');
                        let _ = pass(&mut feed, &tx, &line).await;
                    }
                    break;
                }
                let (taken, done) = match memchr::memchr(b'\n', chunk) {
                    Some(i) => (i + 1, true),
                    None => (chunk.len(), false),
                };
                if !too_long {
                    if line.len() + taken > MAX_MESSAGE + 1 {
                        too_long = true;
                        line = Vec::new();
                    } else {
                        line.extend_from_slice(&chunk[..taken]);
                    }
                }
                stdin.consume(taken);
                if !done {
                    continue;
                }
                if too_long {
                    let message = format!(
                        "message too large: the limit is {} MiB per line",
                        MAX_MESSAGE / (1024 * 1024)
                    );
                    if tx.send(error_line(-32600, &message)).is_err() {
                        break;
                    }
                } else if pass(&mut feed, &tx, &line).await.is_err() {
                    break;
                }
                line.clear();
                too_long = false;
            }
            closed.store(true, Ordering::SeqCst);
            // Dropping `feed` closes the SDK's input: the session ends.
        });

        (input, output, Framed { reader, writer })
    }

    /// Waits until every reply is written (after the SDK has finished).
    pub async fn finish(self) {
        self.reader.abort();
        // The writer ends once the SDK's output is closed and the reader is gone.
        let _ = self.writer.await;
    }
}

/// What the framing does with one line.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Blank: nothing to do.
    Skip,
    /// Answered here with this reply line; the SDK never sees it.
    Answer(Vec<u8>),
    /// Handed to the SDK unchanged.
    Pass,
}

/// Checks one line (the MCP line handler's first step; also the fuzz target's entry).
pub fn check_line(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let Ok(message) = serde_json::from_slice::<serde_json::Value>(line) else {
        return Verdict::Answer(error_line(-32700, "parse error: not a JSON message"));
    };
    match bad_params(&message) {
        Some(fault) => Verdict::Answer(fault),
        None => Verdict::Pass,
    }
}

/// Hands one line to the SDK, or answers it with a parse error. `Err` when the SDK's
/// input is closed.
async fn pass(
    feed: &mut DuplexStream,
    tx: &mpsc::UnboundedSender<Vec<u8>>,
    line: &[u8],
) -> Result<(), ()> {
    match check_line(line) {
        Verdict::Skip => Ok(()),
        Verdict::Answer(reply) => tx.send(reply).map_err(|_| ()),
        Verdict::Pass => feed.write_all(line).await.map_err(|_| ()),
    }
}

/// Answers a request whose params cannot fit its method with `-32602` and the
/// request's own id. The SDK would answer these as an unknown method (`-32601`), or
/// not at all, since it fails to parse them as any request it knows.
fn bad_params(message: &serde_json::Value) -> Option<Vec<u8>> {
    let id = message.get("id")?;
    if !(id.is_string() || id.is_number()) {
        return None;
    }
    let method = message.get("method")?.as_str()?;
    let params = message.get("params");
    let fault = match params {
        Some(p) if !(p.is_object() || p.is_null()) => Some(format!(
            "invalid params for {method}: params must be an object"
        )),
        _ if method == "tools/call" => {
            let p = params.cloned().unwrap_or_default();
            if !p["name"].is_string() {
                Some("invalid params for tools/call: name must be the tool's name, a string".into())
            } else if !(p["arguments"].is_object() || p["arguments"].is_null()) {
                Some(format!(
                    "invalid params for tools/call: arguments must be an object of the tool's \
                     fields (see the inputSchema of {}), not {}",
                    p["name"],
                    kind(&p["arguments"])
                ))
            } else {
                None
            }
        }
        _ => None,
    }?;
    Some(error_line_for(id, -32602, &fault))
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_skipped_answered_or_passed() {
        assert_eq!(check_line(b" \n"), Verdict::Skip);
        assert!(matches!(check_line(b"{\n"), Verdict::Answer(_)));
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#;
        assert!(matches!(check_line(call), Verdict::Answer(_)));
        assert_eq!(
            check_line(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            Verdict::Pass
        );
    }

    /// The MCP fuzz target's kept inputs (`tests/fuzz_regressions/mcp_line/`).
    #[test]
    fn kept_fuzz_inputs_still_return() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fuzz_regressions/mcp_line");
        let Ok(files) = std::fs::read_dir(dir) else {
            return;
        };
        for file in files.flatten() {
            let data = std::fs::read(file.path()).expect("read a kept input");
            if check_line(&data) == Verdict::Pass {
                let _ = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(&data);
            }
        }
    }
}
