//! Campaign reports as text, and `campaign status --html`: one self-contained page (an
//! inline SVG burndown and a table; no script, no network).

use super::Printed;
use super::Style;
use super::TextReport;
use crate::report::campaign::CampaignMatrixReport;
use crate::report::campaign::CampaignReport;
use crate::report::campaign::CampaignStatusReport;
use crate::report::campaign::CampaignTargetsReport;
use crate::report::campaign::RepoStatus;
use crate::report::campaign::Totals;

fn totals_line(t: &Totals) -> String {
    let parts: Vec<String> = RepoStatus::ALL
        .iter()
        .filter_map(|s| t.get(s).map(|n| format!("{n} {}", s.name())))
        .collect();
    if parts.is_empty() {
        "no repositories".into()
    } else {
        parts.join(", ")
    }
}

impl TextReport for CampaignReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        let mut out = String::new();
        for o in &self.outcomes {
            out.push_str(&format!("{:<24} {:<10}", o.key, o.action));
            if let Some(n) = &o.note {
                out.push_str(&format!(" {}", super::first_line(n)));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "campaign {} {}: {}\n",
            self.name,
            self.command,
            totals_line(&self.totals)
        ));
        printed.out(out);
        for n in &self.notes {
            printed.note(n.clone());
        }
        printed
    }
}

impl TextReport for CampaignStatusReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        let mut out = String::new();
        for r in &self.repos {
            out.push_str(&format!("{:<24} {:<10}", r.key, r.status.name()));
            if let Some(u) = &r.pr_url {
                out.push_str(&format!(" {u}"));
                let said: Vec<&str> = [r.checks.as_deref(), r.review.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect();
                if !said.is_empty() {
                    out.push_str(&format!(" [{}]", said.join(", ")));
                }
            } else if let Some(p) = &r.preview {
                out.push_str(&format!(" preview {p}"));
            }
            if let Some(why) = &r.reason {
                out.push_str(&format!("  ({})", super::first_line(why)));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "campaign {}: {} ({})\n",
            self.name,
            totals_line(&self.totals),
            crate::text::plural(self.burndown.len(), "state commit")
        ));
        printed.out(out);
        for n in &self.notes {
            printed.note(n.clone());
        }
        printed
    }
}

impl TextReport for CampaignMatrixReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        printed.out(format!("{}\n", self.github));
        printed
    }
}

impl TextReport for CampaignTargetsReport {
    fn text(&self, _style: &Style) -> Printed {
        let mut printed = Printed::new();
        let mut out = String::new();
        for r in &self.repos {
            out.push_str(&format!(
                "{:<24} {} {} ({})\n",
                r.key,
                crate::text::escape_line(&r.source),
                r.base.as_deref().unwrap_or("-"),
                r.from
            ));
        }
        out.push_str(&format!(
            "campaign {} stage --dry-run: {}; nothing staged\n",
            self.name,
            crate::text::plural(self.repos.len(), "repository")
        ));
        printed.out(out);
        printed
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Only http(s) links are made clickable.
fn link(url: &str, text: &str) -> String {
    if url.starts_with("https://") || url.starts_with("http://") {
        format!("<a href=\"{}\">{}</a>", esc(url), esc(text))
    } else {
        esc(text)
    }
}

/// The burndown: per state commit, the repositories still to do (staged, stale,
/// published, diverged, undone) against those merged.
fn chart(report: &CampaignStatusReport) -> String {
    let (w, h, pad) = (640.0_f64, 240.0_f64, 30.0_f64);
    let points = &report.burndown;
    let open = |t: &Totals| {
        [
            RepoStatus::Staged,
            RepoStatus::Stale,
            RepoStatus::Published,
            RepoStatus::Diverged,
            RepoStatus::Undone,
        ]
        .iter()
        .map(|s| t.get(s).copied().unwrap_or(0))
        .sum::<usize>()
    };
    let merged = |t: &Totals| t.get(&RepoStatus::Merged).copied().unwrap_or(0);
    let max = points
        .iter()
        .map(|p| open(&p.totals).max(merged(&p.totals)))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let n = points.len().max(2) as f64 - 1.0;
    let line = |f: &dyn Fn(&Totals) -> usize| -> String {
        points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let x = pad + (w - 2.0 * pad) * i as f64 / n;
                let y = h - pad - (h - 2.0 * pad) * f(&p.totals) as f64 / max;
                format!("{x:.1},{y:.1}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "<svg id=\"burndown\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"burndown\">\
         <line x1=\"{pad}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#888\"/>\
         <line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{b}\" stroke=\"#888\"/>\
         <text x=\"4\" y=\"{t}\" font-size=\"11\">{max}</text>\
         <polyline class=\"open\" fill=\"none\" stroke=\"#d9534f\" stroke-width=\"2\" points=\"{open}\"/>\
         <polyline class=\"merged\" fill=\"none\" stroke=\"#5cb85c\" stroke-width=\"2\" points=\"{merged}\"/>\
         <text x=\"{lx}\" y=\"16\" font-size=\"12\" fill=\"#d9534f\">open</text>\
         <text x=\"{lx2}\" y=\"16\" font-size=\"12\" fill=\"#5cb85c\">merged</text></svg>",
        b = h - pad,
        r = w - pad,
        t = pad + 4.0,
        open = line(&open),
        merged = line(&merged),
        lx = w - 120.0,
        lx2 = w - 70.0,
    )
}

/// `segment` percent-encoded for a relative URL (all but unreserved characters).
fn url_segment(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The file name of repository `key`'s review page in the folder `status --html`
/// writes them to: the key's letters, digits, `-`, `_` and `.` kept, anything else
/// `_`, and a hash of the key so that two keys never share a name.
pub fn review_file_name(key: &str) -> String {
    let safe: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{}-{:08x}.html", safe.trim_start_matches('.'), hash as u32)
}

/// `campaign status --html`: one static page, everything inline; each repository with
/// a review in the report links its page in the folder `reviews` (relative to the
/// page).
pub fn html(report: &CampaignStatusReport, reviews: &str) -> String {
    let mut rows = String::new();
    for r in &report.repos {
        let mut pr = match (&r.pr_url, r.pr_number) {
            (Some(u), Some(n)) => link(u, &format!("#{n}")),
            (Some(u), None) => link(u, u),
            _ => String::new(),
        };
        for said in [r.checks.as_deref(), r.review.as_deref()]
            .into_iter()
            .flatten()
        {
            pr.push_str(&format!(" <small>{}</small>", esc(said)));
        }
        let preview = match (&r.preview, &r.checkout) {
            (Some(p), Some(c)) => format!(
                "<code title=\"git -C {} diff refs/astedit/{p}~ refs/astedit/{p}\">{p}</code>",
                esc(c)
            ),
            (Some(p), None) => format!("<code>{}</code>", esc(p)),
            _ => String::new(),
        };
        let preview = match report.reviews.get(&r.key) {
            Some(review) => format!(
                "{preview} <a class=\"review\" href=\"{}/{}\">review</a> <small>{} sites, {} in outliers</small>",
                esc(&url_segment(reviews)),
                esc(&review_file_name(&r.key)),
                review.sites,
                review.outliers,
            ),
            None => preview,
        };
        rows.push_str(&format!(
            "<tr class=\"{s}\"><td>{}</td><td>{s}</td><td>{}</td><td>{}</td><td>{}</td><td>{pr}</td><td>{}</td></tr>\n",
            esc(&r.key),
            r.file_count,
            r.replacements,
            preview,
            esc(r.reason.as_deref().unwrap_or("")),
            s = r.status.name(),
        ));
    }
    let totals: String = RepoStatus::ALL
        .iter()
        .filter_map(|s| {
            report
                .totals
                .get(s)
                .map(|n| format!("<li data-status=\"{}\">{}: {n}</li>", s.name(), s.name()))
        })
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Campaign {name}</title><style>\
         body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}\
         tr.merged{{background:#eef9ee}}tr.failed,tr.stale,tr.diverged{{background:#fbeaea}}tr.undone{{background:#fdf6e3}}\
         </style></head><body>\n<h1>Campaign {name}</h1>\n<p>State {commit} ({commits})</p>\n\
         <ul id=\"totals\">{totals}</ul>\n{chart}\n<table id=\"repos\"><thead><tr><th>repository</th>\
         <th>status</th><th>files</th><th>replacements</th><th>preview</th><th>pull request</th>\
         <th>reason</th></tr></thead><tbody>\n{rows}</tbody></table>\n</body></html>\n",
        name = esc(&report.name),
        commit = esc(report.state_commit.as_deref().unwrap_or("")),
        commits = crate::text::plural(report.burndown.len(), "state commit"),
        chart = chart(report),
    )
}
