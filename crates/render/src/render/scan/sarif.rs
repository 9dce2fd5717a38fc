/*!
SARIF 2.1.0 as typed structs: the subset `scan --format sarif` writes, each field named
and shaped as the OASIS schema has it (tests validate the output against that schema,
vendored in `tests/data/sarif/`).

What code-scanning services need from us, beyond the findings: paths as relative URI
references (percent-encoded, resolved against `%SRCROOT%`), a `partialFingerprints`
entry that stays the same across runs and line shifts (so an alert is tracked, not
duplicated, when code above it moves), the fix of each fixable finding as a region
replacement, and the rules as reporting descriptors.
*/

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use sha2::Digest;

use crate::levels::Severity;
use crate::report::FindingRow;
use crate::report::ScanReport;
use crate::scan::baseline::key_text;
use crate::scan::FindingFix;

/// The base id every artifact location is relative to: the work tree's root.
pub const SRCROOT: &str = "%SRCROOT%";

/// The `partialFingerprints` key of our fingerprint (versioned: a change in what it
/// hashes must change the key, not silently every value). v2: the text hashed is
/// `--baseline`'s key text (comments inside a match left out, whitespace folded as
/// there); v1 hashed the text with its comments and whitespace runs as one space.
pub const FINGERPRINT_KEY: &str = "astedit/v2";

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

#[derive(Debug, Serialize)]
pub struct Log {
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    pub version: &'static str,
    pub runs: Vec<Run>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub tool: Tool,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub original_uri_base_ids: BTreeMap<String, ArtifactLocation>,
    pub column_kind: &'static str,
    pub results: Vec<SarifResult>,
}

#[derive(Debug, Serialize)]
pub struct Tool {
    pub driver: ToolComponent,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolComponent {
    pub name: &'static str,
    pub version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub information_uri: Option<&'static str>,
    pub rules: Vec<ReportingDescriptor>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportingDescriptor {
    pub id: String,
    pub short_description: Message,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<MultiformatMessage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help_uri: Option<String>,
    pub default_configuration: ReportingConfiguration,
    pub properties: RuleProperties,
}

#[derive(Debug, Serialize)]
pub struct ReportingConfiguration {
    pub level: Level,
}

#[derive(Debug, Serialize)]
pub struct RuleProperties {
    pub language: String,
    pub fixable: bool,
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl From<Severity> for Level {
    fn from(s: Severity) -> Level {
        match s {
            Severity::Error => Level::Error,
            Severity::Warning => Level::Warning,
            Severity::Info | Severity::Hint => Level::Note,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Message {
    pub text: String,
}

#[derive(Debug, Serialize)]
pub struct MultiformatMessage {
    pub text: String,
    pub markdown: String,
}

/// `result` in the schema (named so as not to shadow `Result`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifResult {
    pub rule_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_index: Option<usize>,
    pub level: Level,
    pub message: Message,
    pub locations: Vec<Location>,
    pub partial_fingerprints: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<Fix>,
    /// With `--baseline`: `new`, `unchanged`, or `absent` (a base finding fixed since).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_state: Option<&'static str>,
    pub properties: ResultProperties,
}

#[derive(Debug, Serialize)]
pub struct ResultProperties {
    pub fixable: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    pub physical_location: PhysicalLocation,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalLocation {
    pub artifact_location: ArtifactLocation,
    pub region: Region,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactLocation {
    pub uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri_base_id: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    pub start_line: usize,
    pub start_column: usize,
    pub end_line: usize,
    pub end_column: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<ArtifactContent>,
}

#[derive(Debug, Serialize)]
pub struct ArtifactContent {
    pub text: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fix {
    pub description: Message,
    pub artifact_changes: Vec<ArtifactChange>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactChange {
    pub artifact_location: ArtifactLocation,
    pub replacements: Vec<Replacement>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replacement {
    pub deleted_region: Region,
    pub inserted_content: ArtifactContent,
}

/// A SARIF log with one run: every loaded rule as a reporting descriptor, every finding
/// as a result. Finding paths are relative to the work tree, which becomes the
/// `%SRCROOT%` base (as a `file:` URI).
pub fn log(report: &ScanReport) -> Log {
    let findings = &report.findings;
    let root = Some(report.workdir.as_path());
    let descriptors = report
        .rules
        .iter()
        .map(|r| ReportingDescriptor {
            id: r.id.clone(),
            short_description: Message {
                text: if r.message.is_empty() {
                    r.id.clone()
                } else {
                    crate::text::one_line(&r.message)
                },
            },
            help: r.note.as_ref().map(|note| MultiformatMessage {
                text: note.clone(),
                markdown: note.clone(),
            }),
            // The schema wants an absolute URI; a relative `url` would fail it.
            help_uri: r.url.clone().filter(|u| is_absolute_uri(u)),
            default_configuration: ReportingConfiguration {
                level: r.severity.into(),
            },
            properties: RuleProperties {
                language: r.language.clone(),
                fixable: r.fixable,
                source: r.source.clone(),
            },
        })
        .collect();
    let rule_index = rule_index(report);
    let absent = report.absent.as_deref().unwrap_or_default();
    // The absent ones (with `--baseline`) after the current ones, fingerprinted among
    // the base's findings they come from.
    let results = findings
        .iter()
        .zip(fingerprints(findings))
        .chain(absent.iter().zip(fingerprints(absent)))
        .map(|(f, fingerprint)| result(f, fingerprint, &rule_index))
        .collect();
    let original_uri_base_ids = root
        .and_then(root_uri)
        .map(|uri| {
            BTreeMap::from([(
                SRCROOT.to_string(),
                ArtifactLocation {
                    uri,
                    uri_base_id: None,
                },
            )])
        })
        .unwrap_or_default();
    Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: ToolComponent {
                    name: "git-astedit",
                    version: crate::VERSION,
                    information_uri: None,
                    rules: descriptors,
                },
            },
            original_uri_base_ids,
            column_kind: "unicodeCodePoints",
            results,
        }],
    }
}

/// Each rule's index in the run's rule list, by id.
fn rule_index(report: &ScanReport) -> HashMap<String, usize> {
    report
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.clone(), i))
        .collect()
}

/// One finding as a SARIF result.
fn result(f: &FindingRow, fingerprint: String, rule_index: &HashMap<String, usize>) -> SarifResult {
    let location = artifact_location(&f.repo_path);
    SarifResult {
        rule_id: f.rule.clone(),
        rule_index: rule_index.get(f.rule.as_str()).copied(),
        level: f.severity.into(),
        message: Message {
            text: f.message.clone(),
        },
        locations: vec![Location {
            physical_location: PhysicalLocation {
                artifact_location: location.clone(),
                region: Region {
                    start_line: f.line,
                    start_column: f.column,
                    end_line: f.end_line,
                    end_column: f.end_column,
                    snippet: Some(ArtifactContent {
                        text: f.text.clone(),
                    }),
                },
            },
        }],
        partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY, fingerprint)]),
        fixes: f
            .fix
            .as_ref()
            .filter(|_| f.baseline != Some(crate::scan::baseline::State::Absent))
            .map(|fix| vec![sarif_fix(&f.rule, location, fix)])
            .unwrap_or_default(),
        baseline_state: f.baseline.map(|s| s.as_str()),
        properties: ResultProperties { fixable: f.fixable },
    }
}

/// The key the results are written under, as the indented log has it.
const RESULTS_KEY: &str = "\"results\": [";

/// The log written as it goes: its head (the tool and rules, up to `"results": [`),
/// each file's results as they come, and the rest at the end; the same bytes as
/// [`log`] indented whole. A file's fingerprints depend on that file's findings
/// alone (the occurrence count is per path), so they are computed file by file.
pub struct Streamed {
    rule_index: HashMap<String, usize>,
    /// The indentation of the results' key line.
    indent: String,
    any: bool,
}

impl Streamed {
    /// The writer, and the log's head for `head` (a report with its rules, no
    /// findings).
    pub fn start(head: &ScanReport) -> Result<(Streamed, String), serde_json::Error> {
        let whole = serde_json::to_string_pretty(&log(head))?;
        let at = whole
            .find(RESULTS_KEY)
            .map_or(whole.len(), |at| at + RESULTS_KEY.len());
        let text = whole[..at].to_string();
        // The whitespace the key's line starts with.
        let line = text.rsplit('\n').next().unwrap_or("");
        let indent = line[..line.len() - line.trim_start().len()].to_string();
        let streamed = Streamed {
            rule_index: rule_index(head),
            indent,
            any: false,
        };
        Ok((streamed, text))
    }

    /// One file's results, each an element of the results array, indented as the
    /// whole log's printer would.
    pub fn file(&mut self, rows: &[FindingRow]) -> Result<String, serde_json::Error> {
        let inner = format!("{}  ", self.indent);
        let mut out = String::new();
        for (f, fingerprint) in rows.iter().zip(fingerprints(rows)) {
            let text = serde_json::to_string_pretty(&result(f, fingerprint, &self.rule_index))?;
            out.push_str(if self.any { ",\n" } else { "\n" });
            self.any = true;
            // serde_json escapes newlines inside strings: every line break is the
            // printer's, so each line takes the element's indentation.
            for (i, line) in text.split('\n').enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(&inner);
                out.push_str(line);
            }
        }
        Ok(out)
    }

    /// The log's rest after the results, for `report` (the whole scan's, no findings
    /// held), with the closing newline.
    pub fn finish(self, report: &ScanReport) -> Result<String, serde_json::Error> {
        let whole = serde_json::to_string_pretty(&log(report))?;
        let rest = match whole.find(RESULTS_KEY) {
            Some(at) => &whole[at + RESULTS_KEY.len()..],
            None => "",
        };
        Ok(if self.any {
            format!("\n{}{rest}\n", self.indent)
        } else {
            format!("{rest}\n")
        })
    }
}

fn sarif_fix(rule: &str, location: ArtifactLocation, fix: &FindingFix) -> Fix {
    Fix {
        description: Message {
            text: format!("fix of {rule}"),
        },
        artifact_changes: vec![ArtifactChange {
            artifact_location: location,
            replacements: vec![Replacement {
                deleted_region: Region {
                    start_line: fix.start_line,
                    start_column: fix.start_column,
                    end_line: fix.end_line,
                    end_column: fix.end_column,
                    snippet: None,
                },
                inserted_content: ArtifactContent {
                    text: fix.inserted.clone(),
                },
            }],
        }],
    }
}

fn artifact_location(path: &str) -> ArtifactLocation {
    ArtifactLocation {
        uri: encode_path(path),
        uri_base_id: Some(SRCROOT.to_string()),
    }
}

/// A repository-relative path (`/`-separated) as a relative URI reference: each segment
/// percent-encoded (RFC 3986) except the unreserved characters, so that spaces, `%`,
/// `#`, `?`, `:` and non-ASCII (as UTF-8 bytes) survive a round trip.
pub fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The work tree as an absolute `file:` URI ending in `/`, as `originalUriBaseIds`
/// wants; `None` for a path that is not absolute or not UTF-8.
fn root_uri(root: &Path) -> Option<String> {
    let text = root.to_str()?;
    if !root.is_absolute() {
        return None;
    }
    let mut uri = format!("file://{}", encode_path(text));
    if !uri.ends_with('/') {
        uri.push('/');
    }
    Some(uri)
}

/// A scheme (`https:`) before anything else: RFC 3986's absolute URI, roughly.
fn is_absolute_uri(s: &str) -> bool {
    match s.split_once(':') {
        Some((scheme, rest)) => {
            !rest.is_empty()
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// One fingerprint per finding, in order: a hash of the rule id, the path, the matched
/// text as `--baseline` keys it ([`key_text`]: comments inside left out, whitespace
/// folded), and the finding's index among the findings equal in those three (in
/// position order). No line or column goes in, so a line inserted above a finding or
/// a comment added inside it leaves its fingerprint alone, and two identical findings
/// in one file still differ.
pub fn fingerprints(findings: &[FindingRow]) -> Vec<String> {
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (&findings[a], &findings[b]);
        (&fa.repo_path, fa.line, fa.column, &fa.rule).cmp(&(
            &fb.repo_path,
            fb.line,
            fb.column,
            &fb.rule,
        ))
    });
    let mut seen: HashMap<(&str, &str, String), usize> = HashMap::new();
    let mut out = vec![String::new(); findings.len()];
    for i in order {
        let f = &findings[i];
        let normalized = key_text(&f.text, &f.comments);
        let occurrence = seen
            .entry((f.rule.as_str(), f.repo_path.as_str(), normalized.clone()))
            .or_insert(0);
        let mut hash = sha2::Sha256::new();
        for part in [
            f.rule.as_bytes(),
            f.repo_path.as_bytes(),
            normalized.as_bytes(),
        ] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
        hash.update((*occurrence as u64).to_le_bytes());
        *occurrence += 1;
        let digest = hash.finalize();
        out[i] = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_percent_encoded_per_segment() {
        assert_eq!(encode_path("src/a.ts"), "src/a.ts");
        assert_eq!(
            encode_path("src/with space é.ts"),
            "src/with%20space%20%C3%A9.ts"
        );
        assert_eq!(encode_path("x%25y.ts"), "x%2525y.ts");
        assert_eq!(encode_path("a#b?c:d.ts"), "a%23b%3Fc%3Ad.ts");
    }

    #[test]
    fn root_uri_is_absolute_with_a_trailing_slash() {
        assert_eq!(
            root_uri(Path::new("/tmp/my repo")).as_deref(),
            Some("file:///tmp/my%20repo/")
        );
        assert_eq!(root_uri(Path::new("relative")), None);
    }

    #[test]
    fn help_uri_only_when_absolute() {
        assert!(is_absolute_uri("https://example.com/rules#x"));
        assert!(!is_absolute_uri("docs/rules.md"));
        assert!(!is_absolute_uri("C"));
    }
}
