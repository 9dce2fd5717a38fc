//! Integration tests: `apply`.

#[allow(unused_imports)]
use crate::util::TestRepo;
