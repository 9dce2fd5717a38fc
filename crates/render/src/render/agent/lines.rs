//! The text block of `read`: the address first (path, blob, range), then the lines
//! numbered as an editor shows them.

use super::notes::push_notes;
use crate::report::ReadReport;

pub fn read_text(out: &ReadReport, notes: &[String]) -> String {
    let mut text = format!(
        "{} blob {} lines {}-{} of {}\n",
        out.path, out.blob, out.start, out.end, out.total_lines
    );
    for (i, line) in out.text.split_inclusive('\n').enumerate() {
        text.push_str(&format!("{:>6}\t{line}", out.start + i));
        if !line.ends_with('\n') {
            text.push('\n');
        }
    }
    if let Some(next) = out.next_start {
        text.push_str(&format!(
            "note: cut at the byte budget after line {}; read with start {next} for the rest\n",
            out.end
        ));
    }
    text.push_str(&format!(
        "Edit with edit_lines {{\"path\": \"{}\", \"blob\": \"{}\", \"edits\": [{{\"start\": …, \"end\": …, \"text\": …}}]}}.\n",
        out.path, out.blob
    ));
    push_notes(&mut text, notes, &[]);
    text
}
