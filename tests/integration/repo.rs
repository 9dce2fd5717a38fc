//! Integration tests: `repo`.

#[allow(unused_imports)]
use crate::util::TestRepo;
