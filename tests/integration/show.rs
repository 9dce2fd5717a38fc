//! Integration tests: `show`.

#[allow(unused_imports)]
use crate::util::TestRepo;
