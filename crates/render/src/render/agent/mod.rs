/*!
The MCP server's text blocks: what an agent reads first in a tool result, made from the
same typed report the structured content carries. Tool files call these; they write no
text of their own. Unlike the CLI's text, these name tool calls (`resolve {…}`), not
commands.
*/

pub mod error;
pub mod grep;
pub mod lines;
pub mod notes;
pub mod previews;
pub mod resolve;
pub mod stage;
