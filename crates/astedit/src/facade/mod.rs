//! The façade's parts: the repository handle and its calls, the edits it stages, the
//! reports it returns, its error. Only this crate's own types cross its surface.

pub mod calls;
pub mod edit;
pub mod error;
pub mod repository;
pub mod settings;
pub mod types;
