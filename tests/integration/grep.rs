//! Integration tests: `grep`.

#[allow(unused_imports)]
use crate::util::TestRepo;
