//! One integration-test binary: every module drives the real `git-astedit` binary
//! against real temporary git repositories.

mod util;

mod agent_hook;
mod apply;
mod bounds;
mod cache;
mod campaign;
mod codemods;
mod context;
mod contract;
mod customlang;
mod edit;
mod firstday;
mod firsthour;
mod flags;
mod gitstate;
mod grep;
mod guide;
mod inject;
mod interactive;
mod journal;
mod js;
mod look;
mod lsp;
mod lsp_astgrep;
mod lsp_nvim;
mod manpages;
mod mcp;
mod mcp_lines;
mod mcp_replace;
mod partial;
mod patch;
mod recovery;
mod reflocks;
mod refresh;
mod repo;
mod ruletest;
mod run;
mod sarif;
mod scan;
mod sgconfig;
mod snapshots;
mod suppress;
mod trust;
mod verify;
