/*!
Printers (layer 7 of the house): they turn a typed report ([`crate::report`]) into what
a person reads. A front end chooses its printer once per run ([`printer::Format`]) and
hands every report to it; no command module branches on the output format. Printers
never touch git: what they need of the repository (how paths are quoted) comes in as a
plain value ([`printer::Style`]), and diffs come as text, made below by
[`crate::diff`].
*/

pub mod agent;
pub mod campaign;
pub mod consent;
pub mod error;
pub mod gc;
pub mod grep;
pub mod hook;
pub mod lane;
pub mod list;
pub mod log;
pub mod merge;
pub mod printer;
pub mod recover;
pub mod resolve;
pub mod review;
pub mod ruletest;
pub mod scan;
pub mod show;
pub mod stage;
pub mod trust;
pub mod verify;

pub use printer::Format;
pub use printer::Printed;
pub use printer::Style;
pub use printer::TextReport;

// The base-layer helpers printers use most, under the names the front ends know.
pub use crate::diff::file_diff;
pub use crate::diff::line_counts;
pub use crate::diff::paint;
pub use crate::diff::render_diffs;
pub use crate::diff::render_diffs_counted;
pub use crate::diff::stat_line;
pub use crate::diff::style;
pub use crate::diff::DiffFile;
pub use crate::diff::LimitedDiff;
pub use crate::diff::LineCounts;
pub use crate::diff::Side;
pub use crate::text::escape_line;
pub use crate::text::first_line;
pub use crate::text::format_time;
pub use crate::text::plural;
pub use crate::text::Quoting;
