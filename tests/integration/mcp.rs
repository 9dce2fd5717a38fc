//! Integration tests: `mcp`.
