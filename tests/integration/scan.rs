//! Integration tests: `scan`.
