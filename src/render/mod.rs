//! Rendering: diffs, summaries, JSON shapes. Never touches git.
