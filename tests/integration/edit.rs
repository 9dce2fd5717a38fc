//! Integration tests: `edit`.

#[allow(unused_imports)]
use crate::util::TestRepo;
