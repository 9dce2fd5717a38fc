//! One integration-test binary: every module drives the real `git-astedit` binary
//! against real temporary git repositories.

mod util;

mod apply;
mod bounds;
mod cache;
mod context;
mod contract;
mod edit;
mod firsthour;
mod flags;
mod gitstate;
mod grep;
mod interactive;
mod journal;
mod js;
mod look;
mod manpages;
mod mcp;
mod partial;
mod patch;
mod recovery;
mod reflocks;
mod refresh;
mod repo;
mod ruletest;
mod sarif;
mod scan;
mod sgconfig;
mod snapshots;
mod suppress;
mod verify;
