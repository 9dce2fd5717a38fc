//! The lines every text block ends with: the notes of opening the repository (what
//! recovery did), then the result's warnings.

/// Appends `note: …` per note and `warning: …` per warning.
pub fn push_notes(text: &mut String, notes: &[String], warnings: &[String]) {
    for n in notes {
        text.push_str(&format!("note: {n}\n"));
    }
    for w in warnings {
        text.push_str(&format!("warning: {w}\n"));
    }
}
