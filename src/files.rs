//! Which files a command works on. (In progress.)
