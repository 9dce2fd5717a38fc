//! Integration tests: `patch`.

#[allow(unused_imports)]
use crate::util::TestRepo;
