/*!
A review as text (`review ID --text`, for a terminal or an SSH session) and as one
static HTML file (`review ID --html FILE`, `scan --stage --review-html FILE`: no
script, no style sheet or font fetched, nothing but the file, for a CI artifact or a
link from a pull request).
*/

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::review::Decided;
use crate::report::review::Group;
use crate::report::review::Review;
use crate::report::review::ReviewState;
use crate::report::review::SitePage;
use crate::report::review::SplitReport;
use crate::text::escape_line;

/// Lines of a representative diff shown per side in text, at most.
const TEXT_DIFF_LINES: usize = 12;

/// How many groups the HTML file shows representative diffs for; the rest are rows.
const HTML_DIFFS: usize = 2_000;

/// The HTML file's size cap in bytes (5 MB, a CI artifact or a PR comment's link):
/// the summary, the counts and the outliers are always there; groups' rows, then their
/// representative diffs, stop where the next one would pass it, and the file says
/// what it left out.
pub const HTML_MAX_BYTES: usize = 5_000_000;

/// The share of the cap the table of groups may take (the rest is for diffs).
const HTML_TABLE_BYTES: usize = 2_000_000;

/// Bytes of one side of a representative diff shown in the HTML file, at most.
const HTML_SIDE_BYTES: usize = 32 * 1024;

fn decision_word(g: &Group) -> String {
    match g.decision {
        Some(d) => d.as_str().to_string() + "ed",
        None if g.accepted + g.rejected > 0 => {
            format!("{} accepted, {} rejected", g.accepted, g.rejected)
        }
        None => "undecided".into(),
    }
}

fn made_by(g: &Group) -> String {
    g.rule
        .as_ref()
        .map(|r| format!("rule {r}"))
        .or_else(|| g.op.as_ref().map(|o| format!("op {o}")))
        .unwrap_or_else(|| "no rule".into())
}

fn side_lines(text: &str, sign: char, out: &mut String) {
    let lines: Vec<&str> = text.split('\n').collect();
    for l in lines.iter().take(TEXT_DIFF_LINES) {
        out.push_str(&format!("    {sign}{}\n", escape_line(l)));
    }
    if lines.len() > TEXT_DIFF_LINES {
        out.push_str(&format!(
            "    {sign}… ({} more lines)\n",
            lines.len() - TEXT_DIFF_LINES
        ));
    }
}

impl TextReport for Review {
    fn text(&self, _style: &Style) -> Printed {
        let mut p = Printed::new();
        let mut out = format!(
            "Preview {} ({}): {} site{} in {} group{}, {} outlier{}; {} accepted, {} \
             rejected, {} undecided\n",
            self.preview,
            self.kind,
            self.sites,
            if self.sites == 1 { "" } else { "s" },
            self.groups.len(),
            if self.groups.len() == 1 { "" } else { "s" },
            self.outliers,
            if self.outliers == 1 { "" } else { "s" },
            self.accepted,
            self.rejected,
            self.undecided
        );
        if self.dependents > 0 {
            out.push_str(&format!(
                "{} dependent change{} (imports, formatting) kept when a site of their file \
                 is accepted\n",
                self.dependents,
                if self.dependents == 1 { "" } else { "s" }
            ));
        }
        if let Some(b) = self.batches.first() {
            out.push_str(&format!(
                "Last decided by {} at {}\n",
                escape_line(&b.by),
                b.time
            ));
        }
        for g in &self.groups {
            out.push('\n');
            let tag = if g.outlier.is_some() { "OUTLIER " } else { "" };
            out.push_str(&format!(
                "{tag}group {}  {} site{} in {} file{}  {}  [{}]\n",
                g.key,
                g.count,
                if g.count == 1 { "" } else { "s" },
                g.files.len(),
                if g.files.len() == 1 { "" } else { "s" },
                escape_line(&made_by(g)),
                decision_word(g)
            ));
            if let Some(why) = &g.outlier {
                out.push_str(&format!("  why: {}\n", escape_line(why)));
            }
            out.push_str(&format!("  change: {}\n", escape_line(&g.template)));
            let r = &g.representative;
            out.push_str(&format!("  {}:{}\n", escape_line(&r.path), r.line));
            side_lines(&r.before, '-', &mut out);
            side_lines(&r.after, '+', &mut out);
        }
        p.out(out);
        for n in &self.notes {
            p.note(format!("note: {n}"));
        }
        if !self.obeyed {
            p.warn(
                "some decisions were fetched and are not signed by an allowed signer: they are \
                 shown, and apply does not obey them",
            );
        }
        p
    }
}

impl TextReport for SitePage {
    fn text(&self, _style: &Style) -> Printed {
        let mut out = format!(
            "group {}: sites {}-{} of {}\n",
            self.group,
            self.offset + 1.min(self.sites.len()),
            self.offset + self.sites.len(),
            self.total
        );
        for s in &self.sites {
            out.push_str(&format!(
                "\nsite {}  {}:{}  [{}]\n",
                s.id,
                escape_line(&s.diff.path),
                s.diff.line,
                s.decision.map_or("undecided", |d| d.as_str())
            ));
            side_lines(&s.diff.before, '-', &mut out);
            side_lines(&s.diff.after, '+', &mut out);
        }
        let mut p = Printed::new();
        p.out(out);
        p
    }
}

impl TextReport for Decided {
    fn text(&self, _style: &Style) -> Printed {
        let mut p = Printed::new();
        p.out(match &self.commit {
            Some(c) => format!(
                "Decided {} site{} of {} (by {}, batch {}): {} accepted, {} rejected, {} \
                 undecided.\n",
                self.changed,
                if self.changed == 1 { "" } else { "s" },
                self.preview,
                escape_line(&self.by),
                &c[..c.len().min(12)],
                self.accepted,
                self.rejected,
                self.undecided
            ),
            None => format!(
                "Nothing changed for {}: {} accepted, {} rejected, {} undecided.\n",
                self.preview, self.accepted, self.rejected, self.undecided
            ),
        });
        p
    }
}

impl TextReport for SplitReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut out = String::new();
        for part in &self.parts {
            out.push_str(&format!(
                "Staged {} ({}): the accepted sites of {} in {} file{}.\n",
                part.id,
                escape_line(&part.of),
                self.preview,
                part.files.len(),
                if part.files.len() == 1 { "" } else { "s" }
            ));
        }
        match &self.remainder {
            Some(rest) => out.push_str(&format!(
                "Preview {} is replaced by these parts and {}, pending with the sites no \
                 part took ({} file{}); its rejected sites are dropped.\n",
                self.preview,
                rest.id,
                rest.files.len(),
                if rest.files.len() == 1 { "" } else { "s" }
            )),
            None => out.push_str(&format!(
                "Preview {} is replaced by these parts; its rejected sites are dropped.\n",
                self.preview
            )),
        }
        let mut p = Printed::new();
        p.out(out);
        p
    }
}

/// Escapes text for HTML content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}\
h1{font-size:1.3em}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left}\
section{border:1px solid #ccc;border-radius:4px;margin:1em 0;padding:.5em 1em}\
section.outlier{border-color:#c60;background:#fff8f0}.tag{font-weight:bold;color:#c60}\
pre{margin:.3em 0;padding:.3em;overflow-x:auto;background:#f6f6f6}\
.del{color:#a00}.add{color:#060}.meta{color:#666}code{background:#f0f0f0}";

/// The review as one static HTML file: a summary, then every group (outliers first)
/// with its count, files, change and a representative diff, within
/// [`HTML_MAX_BYTES`]. No script runs, nothing is fetched.
pub fn html(review: &Review) -> String {
    let mut head = String::with_capacity(64 * 1024);
    head.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'\">\n",
    );
    head.push_str(&format!(
        "<title>Review of preview {}</title>\n<style>{CSS}</style></head><body>\n",
        esc(&review.preview)
    ));
    head.push_str(&format!(
        "<h1>Review of preview <code>{}</code> ({})</h1>\n<p>{}</p>\n",
        esc(&review.preview),
        esc(&review.kind),
        esc(&cut_bytes(&review.summary, 4096).0)
    ));
    head.push_str(&format!(
        "<p id=\"counts\"><b>{}</b> sites in <b>{}</b> groups, <b>{}</b> outliers, {} \
         dependent changes; {} accepted, {} rejected, {} undecided.</p>\n",
        review.sites,
        review.groups.len(),
        review.outliers,
        review.dependents,
        review.accepted,
        review.rejected,
        review.undecided
    ));
    for n in review.notes.iter().take(20) {
        head.push_str(&format!(
            "<p class=\"meta\">{}</p>\n",
            esc(&cut_bytes(n, 4096).0)
        ));
    }
    // Room for the note on what was left out and the closing tags.
    let budget = HTML_MAX_BYTES.saturating_sub(head.len() + 2048);
    let mut table = String::from(
        "<table><tr><th>group</th><th>sites</th><th>files</th><th>made by</th>\
         <th>decision</th></tr>\n",
    );
    let mut rows = 0;
    for g in &review.groups {
        let row = group_row(g);
        if table.len() + row.len() > HTML_TABLE_BYTES.min(budget) {
            break;
        }
        table.push_str(&row);
        rows += 1;
    }
    table.push_str("</table>\n");
    let mut sections = String::new();
    let mut shown = 0;
    for g in review.groups.iter().take(rows.min(HTML_DIFFS)) {
        let section = group_section(g);
        if table.len() + sections.len() + section.len() > budget {
            break;
        }
        sections.push_str(&section);
        shown += 1;
    }
    let mut out = head;
    if let Some(note) = left_out(review, rows, shown) {
        out.push_str(&note);
    }
    out.push_str(&table);
    out.push_str(&sections);
    if shown < rows {
        out.push_str(&format!(
            "<p class=\"meta\">{} more groups are listed above without their diffs.</p>\n",
            rows - shown
        ));
    }
    out.push_str("</body></html>\n");
    out
}

/// What the file leaves out, said at its top: groups not listed (their sites and
/// outliers counted) and groups listed without their diff.
fn left_out(review: &Review, rows: usize, shown: usize) -> Option<String> {
    let total = review.groups.len();
    if rows == total && shown == rows {
        return None;
    }
    let mut parts = Vec::new();
    if rows < total {
        let rest = &review.groups[rows..];
        let sites: usize = rest.iter().map(|g| g.count).sum();
        let outliers = rest.iter().filter(|g| g.outlier.is_some()).count();
        parts.push(format!(
            "the last {} groups ({} sites, {} of them outlier groups) are not listed",
            total - rows,
            sites,
            outliers
        ));
    }
    if shown < rows {
        parts.push(format!(
            "{} listed groups have no representative diff here",
            rows - shown
        ));
    }
    let why = if shown < rows.min(HTML_DIFFS) || rows < total {
        format!("to keep this file under {} MB", HTML_MAX_BYTES / 1_000_000)
    } else {
        format!("diffs are shown for the first {HTML_DIFFS} groups")
    };
    Some(format!(
        "<p class=\"tag\" id=\"left-out\">Left out, {why}: {}. <code>git astedit review {} \
         --text</code> or the local page shows every group and site.</p>\n",
        parts.join("; "),
        esc(&review.preview)
    ))
}

/// `s` cut to at most `max` bytes on a character boundary, and how many bytes were
/// left out.
fn cut_bytes(s: &str, max: usize) -> (std::borrow::Cow<'_, str>, usize) {
    if s.len() <= max {
        return (s.into(), 0);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (s[..end].into(), s.len() - end)
}

fn group_row(g: &Group) -> String {
    format!(
        "<tr><td><a href=\"#g-{k}\"><code>{k}</code></a>{}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td></tr>\n",
        if g.outlier.is_some() {
            " <span class=\"tag\">outlier</span>"
        } else {
            ""
        },
        g.count,
        g.files.len(),
        esc(&cut_bytes(&made_by(g), 1024).0),
        esc(&decision_word(g)),
        k = esc(&g.key),
    )
}

/// One side of a representative diff, each line after `sign`, within
/// [`HTML_SIDE_BYTES`] (saying how much it left out).
fn diff_side(text: &str, sign: char, class: &str, out: &mut String) {
    let (shown, cut) = cut_bytes(text, HTML_SIDE_BYTES);
    for l in shown.split('\n') {
        out.push_str(&format!(
            "<span class=\"{class}\">{sign}{}</span>\n",
            esc(l)
        ));
    }
    if cut > 0 {
        out.push_str(&format!(
            "<span class=\"meta\">{sign}… ({cut} more bytes left out)</span>\n"
        ));
    }
}

fn group_section(g: &Group) -> String {
    let mut out = String::new();
    let class = if g.outlier.is_some() {
        "group outlier"
    } else {
        "group"
    };
    out.push_str(&format!(
        "<section class=\"{class}\" id=\"g-{}\">\n<h2>{}<code>{}</code>: {} site{} in {} \
         file{}</h2>\n",
        esc(&g.key),
        if g.outlier.is_some() {
            "<span class=\"tag\">Outlier</span> "
        } else {
            ""
        },
        esc(&g.key),
        g.count,
        if g.count == 1 { "" } else { "s" },
        g.files.len(),
        if g.files.len() == 1 { "" } else { "s" },
    ));
    if let Some(why) = &g.outlier {
        out.push_str(&format!("<p class=\"tag\">{}</p>\n", esc(why)));
    }
    out.push_str(&format!(
        "<p class=\"meta\">{} · {} · change <code>{}</code></p>\n",
        esc(&cut_bytes(&made_by(g), 1024).0),
        esc(&decision_word(g)),
        esc(&g.template)
    ));
    let r = &g.representative;
    out.push_str(&format!(
        "<p class=\"meta\">{}:{}</p>\n<pre>",
        esc(&r.path),
        r.line
    ));
    diff_side(&r.before, '-', "del", &mut out);
    diff_side(&r.after, '+', "add", &mut out);
    out.push_str("</pre>\n");
    let shown: Vec<String> = g.files.iter().take(20).map(|f| esc(f)).collect();
    out.push_str(&format!(
        "<p class=\"meta\">files: {}{}</p>\n</section>\n",
        shown.join(", "),
        if g.files.len() > 20 {
            format!(" and {} more", g.files.len() - 20)
        } else {
            String::new()
        }
    ));
    out
}

/// The MCP `review` tool's text: the counts, then one line a group (outliers first)
/// with its key, count, rule or op, decision and change.
pub fn agent_text(
    review: &Review,
    decided: Option<&Decided>,
    next_offset: Option<usize>,
) -> String {
    let mut out = String::new();
    if let Some(d) = decided {
        out.push_str(&d.text(&Style::default()).stdout());
    }
    out.push_str(&format!(
        "Preview {} ({}): {} sites, {} outliers, {} dependent changes; {} accepted, \
         {} rejected, {} undecided.\n",
        review.preview,
        review.kind,
        review.sites,
        review.outliers,
        review.dependents,
        review.accepted,
        review.rejected,
        review.undecided
    ));
    for g in &review.groups {
        out.push_str(&format!(
            "{}{} ×{} {} [{}] {}\n",
            if g.outlier.is_some() { "OUTLIER " } else { "" },
            g.key,
            g.count,
            escape_line(&made_by(g)),
            decision_word(g),
            escape_line(&g.template)
        ));
    }
    if let Some(next) = next_offset {
        out.push_str(&format!("More: call again with offset {next}.\n"));
    }
    if !review.obeyed {
        out.push_str("Some decisions were fetched and are not obeyed by apply.\n");
    }
    out
}

/// `list`'s and `show`'s line about what was decided on a preview's review:
/// `review: 3 accepted, 1 rejected, 12 undecided (by review page, agent X)`.
pub fn state_line(s: &ReviewState) -> String {
    let counts = match (s.accepted, s.rejected, s.undecided, &s.inherited_from) {
        (Some(a), Some(r), Some(u), _) => format!("{a} accepted, {r} rejected, {u} undecided"),
        (Some(a), Some(r), None, _) => format!("{a} accepted, {r} rejected"),
        (_, _, _, Some(from)) => format!("decisions inherited from {from}"),
        _ => "decided".to_string(),
    };
    let by: Vec<String> = s.by.iter().map(|b| escape_line(b).into_owned()).collect();
    format!("review: {counts} (by {})", by.join(", "))
}
