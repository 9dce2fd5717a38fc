#![no_main]
// The MCP server's line handler: the stdio framing's check of one line, then, for a
// line it passes on, the SDK's reading of it as a client message.
#[allow(dead_code)]
#[path = "../../src/cli/mcp/stdio.rs"]
mod stdio;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if stdio::check_line(data) == stdio::Verdict::Pass {
        let _ = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(data);
    }
});
