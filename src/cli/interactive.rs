/*!
`edit -i` / `scan -i`: one change at a time, as `git add -p` asks about hunks.

The library offers each change just before making it ([`Select`]); here it is shown as
a small diff with its file and the question `Apply this change [y,n,a,d,q,e,?]?`, and the
answer is read as one line of stdin. Like `git add -p`, the diff and the question go to
stdout (they are what the person reads and answers), so `printf 'y\nn\n' | git astedit
edit -i …` works, and so does piping the output. End of input is `q`. When stdin is not
a terminal the answer read is echoed after the question, so a transcript reads right.
*/

use std::io::BufRead;
use std::io::IsTerminal;
use std::io::Write;

use git_astedit::render::escape_line;
use git_astedit::select::Origin;
use git_astedit::select::Proposal;
use git_astedit::select::Select;
use git_astedit::Error;
use similar::ChangeTag;
use similar::TextDiff;

use super::Out;

/// The question, as `git add -p` words its own.
const QUESTION: &str = "Apply this change [y,n,a,d,q,e,?]? ";

const HELP: &str = "\
y - apply this change
n - do not apply this change
a - apply this change and all later ones in this file
d - do not apply this change or any later one in this file
q - quit; do not apply this change or any later one (those accepted so far are kept)
e - edit this change's replacement in your editor; what you save is made instead
    (saved unchanged: as y; saved empty: as n)
? - print help
";

/// Lines of context around a change.
const CONTEXT: usize = 3;

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const BOLD_BLUE: &str = "\x1b[1;34m";

/// How a session went.
#[derive(Debug, Clone, Copy)]
pub struct Asked {
    /// Changes offered (asked about, or decided by `a`, `d` or `q`).
    pub offered: usize,
}

/// Runs `run` with a prompter on stdin/stdout. What stdout holds so far is written
/// first, so the questions come after it. `repo` says which editor `e` opens.
pub fn session<T>(
    out: &mut Out,
    color: bool,
    several_ops: bool,
    repo: &git_astedit::repo::Repo,
    run: impl FnOnce(&mut Prompter<'static>) -> Result<T, Error>,
) -> Result<(T, Asked), Error> {
    out.flush()?;
    let mut prompter = Prompter::stdio(color, several_ops);
    prompter.editor = git_astedit::ops::editor::command(repo);
    let result = run(&mut prompter);
    let asked = Asked {
        offered: prompter.offered,
    };
    Ok((result?, asked))
}

/// What the person said for the rest of the current file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileChoice {
    Ask,
    AcceptRest,
    SkipRest,
}

/// Asks a person about each change: questions to `output`, answers from `input`.
pub struct Prompter<'a> {
    input: Box<dyn BufRead + 'a>,
    output: Box<dyn Write + 'a>,
    color: bool,
    /// Write the answer read after the question (stdin is not a terminal).
    echo: bool,
    /// Label changes with their op (`edit` with several ops).
    several_ops: bool,
    file: Option<String>,
    choice: FileChoice,
    quit: bool,
    /// Changes offered and accepted, whether asked or answered by `a`/`d`/`q`.
    pub offered: usize,
    pub accepted: usize,
    /// The editor `e` runs (a shell command, as git runs it), or why there is none.
    pub editor: Result<String, String>,
}

impl<'a> Prompter<'a> {
    /// Asks on stdout and reads answers from stdin.
    pub fn stdio(color: bool, several_ops: bool) -> Prompter<'static> {
        let echo = !std::io::stdin().is_terminal();
        Prompter::new(
            Box::new(std::io::stdin().lock()),
            Box::new(std::io::stdout()),
            color,
            echo,
            several_ops,
        )
    }

    pub fn new(
        input: Box<dyn BufRead + 'a>,
        output: Box<dyn Write + 'a>,
        color: bool,
        echo: bool,
        several_ops: bool,
    ) -> Prompter<'a> {
        Prompter {
            input,
            output,
            color,
            echo,
            several_ops,
            file: None,
            choice: FileChoice::Ask,
            quit: false,
            offered: 0,
            accepted: 0,
            editor: Err("no editor".into()),
        }
    }

    /// `e`: the proposed replacement edited in the editor. `Ok(None)`: saved empty.
    fn edit(&mut self, p: &Proposal<'_>) -> Result<Option<String>, String> {
        let editor = self.editor.clone()?;
        let name = std::path::Path::new(p.path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        git_astedit::ops::editor::edit(&editor, &name, p.after())
    }

    fn paint(&self, style: &str, text: &str) -> String {
        if self.color {
            format!("{style}{text}{RESET}")
        } else {
            text.to_string()
        }
    }

    fn write(&mut self, text: &str) -> bool {
        let written = self
            .output
            .write_all(text.as_bytes())
            .and_then(|()| self.output.flush());
        // A change that cannot be shown cannot be accepted: the session ends as with
        // `q`, and the caller's next write to stdout reports the failure (a closed
        // pipe quietly, as everywhere).
        if written.is_err() {
            self.quit = true;
        }
        written.is_ok()
    }

    /// Reads one answer; `None` at end of input (or when stdin cannot be read).
    fn read_answer(&mut self) -> Option<String> {
        let mut line = Vec::new();
        match self.input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(String::from_utf8_lossy(&line).trim().to_string()),
        }
    }

    /// Asks until a valid answer comes; `q` at end of input.
    fn ask(&mut self) -> char {
        loop {
            let question = self.paint(BOLD_BLUE, QUESTION);
            if !self.write(&question) {
                return 'q';
            }
            let Some(answer) = self.read_answer() else {
                self.write("\n");
                return 'q';
            };
            if self.echo && !self.write(&format!("{answer}\n")) {
                return 'q';
            }
            match answer.to_ascii_lowercase().as_str() {
                "y" => return 'y',
                "n" => return 'n',
                "a" => return 'a',
                "d" => return 'd',
                "q" => return 'q',
                "e" => return 'e',
                "?" => {}
                _ => {
                    let why =
                        self.paint(RED, &format!("Unknown answer '{}'.", escape_line(&answer)));
                    if !self.write(&format!("{why}\n")) {
                        return 'q';
                    }
                }
            }
            let help = self.paint(RED, HELP);
            if !self.write(&help) {
                return 'q';
            }
        }
    }

    /// The change as a diff: a file header the first time its file comes, then one
    /// hunk with [`CONTEXT`] lines around the lines it touches.
    fn render(&self, p: &Proposal<'_>, new_file: bool) -> String {
        let mut out = String::new();
        if new_file {
            let path = escape_line(p.path);
            out.push_str(&self.paint(
                BOLD,
                &format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}"),
            ));
            out.push('\n');
        }
        let shown = p.shown();
        let text: &str = &shown.text;
        let (start, end) = (shown.start.min(text.len()), shown.end.min(text.len()));
        let (start, end) = match (text.is_char_boundary(start), text.is_char_boundary(end)) {
            (true, true) => (start, end),
            // Edits are made on node boundaries; never slice a character regardless.
            _ => return format!("{}:{}\n", escape_line(p.path), shown.start),
        };
        // The whole lines the change touches.
        let region_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        // The start of the change's last character (its end when it is empty).
        let last = text[start..end]
            .char_indices()
            .next_back()
            .map_or(end, |(i, _)| start + i);
        let region_end = text[last..]
            .find('\n')
            .map_or(text.len(), |i| last + i + 1)
            .max(end);
        let before = &text[region_start..region_end];
        let after = format!(
            "{}{}{}",
            &text[region_start..start],
            p.after(),
            &text[end..region_end]
        );
        // Context lines above and below.
        let above: Vec<&str> = text[..region_start].split_inclusive('\n').collect();
        let above = &above[above.len().saturating_sub(CONTEXT)..];
        let below: Vec<&str> = text[region_end..]
            .split_inclusive('\n')
            .take(CONTEXT)
            .collect();
        let first_line = text[..region_start].matches('\n').count() + 1 - above.len();

        let diff = TextDiff::from_lines(before, after.as_str());
        let mut body = Vec::new();
        for line in above {
            body.push((' ', *line));
        }
        for change in diff.iter_all_changes() {
            let sign = match change.tag() {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
            };
            body.push((sign, change.value()));
        }
        for line in &below {
            body.push((' ', *line));
        }
        let old_count = body.iter().filter(|(s, _)| *s != '+').count();
        let new_count = body.iter().filter(|(s, _)| *s != '-').count();
        let label = match p.origin {
            Origin::Op(i) if self.several_ops => format!(" op {}", i + 1),
            Origin::Op(_) => String::new(),
            Origin::Rule(id) => format!(" rule {}", escape_line(id)),
        };
        let (line, column) = shown.line_column();
        out.push_str(&self.paint(
            CYAN,
            &format!("@@ -{first_line},{old_count} +{first_line},{new_count} @@"),
        ));
        out.push_str(&format!(
            " {}:{line}:{column}{label}\n",
            escape_line(p.path)
        ));
        if let Some(kept) = p.change.repeated_kept() {
            // The pattern covers less than the node it matched: the rest stays, and this
            // replacement says it again (`assert x == 1, msg, msg`).
            out.push_str(&self.paint(
                RED,
                &format!(
                    "warning: `{}` is kept after this change (the pattern does not cover it) \
                     and the change repeats it: the result holds it twice",
                    escape_line(kept.trim())
                ),
            ));
            out.push('\n');
        }
        for (sign, value) in body {
            let line = value.strip_suffix('\n').unwrap_or(value);
            let line = format!("{sign}{}", line.strip_suffix('\r').unwrap_or(line));
            match sign {
                '-' => out.push_str(&self.paint(RED, &line)),
                '+' => out.push_str(&self.paint(GREEN, &line)),
                _ => out.push_str(&line),
            }
            out.push('\n');
            if !value.ends_with('\n') {
                out.push_str("\\ No newline at end of file\n");
            }
        }
        out
    }
}

impl Select for Prompter<'_> {
    fn select(&mut self, p: &Proposal<'_>) -> bool {
        if self.quit {
            return false;
        }
        let new_file = self.file.as_deref() != Some(p.path);
        if new_file {
            self.file = Some(p.path.to_string());
            self.choice = FileChoice::Ask;
        }
        self.offered += 1;
        let take = match self.choice {
            FileChoice::AcceptRest => true,
            FileChoice::SkipRest => false,
            FileChoice::Ask => {
                let shown = self.render(p, new_file);
                if !self.write(&shown) {
                    return false;
                }
                let mut answer = self.ask();
                while answer == 'e' {
                    match self.edit(p) {
                        Ok(Some(own)) => {
                            *p.change.replaced.borrow_mut() = Some(own);
                            break;
                        }
                        Ok(None) => {
                            let note = self.paint(RED, "Saved empty: this change is not made.");
                            self.write(&format!("{note}\n"));
                            answer = 'n';
                        }
                        Err(why) => {
                            let why = self.paint(RED, &format!("error: {why}"));
                            if !self.write(&format!("{why}\n")) {
                                return false;
                            }
                            answer = self.ask();
                        }
                    }
                }
                match answer {
                    'y' | 'e' => true,
                    'a' => {
                        self.choice = FileChoice::AcceptRest;
                        true
                    }
                    'd' => {
                        self.choice = FileChoice::SkipRest;
                        false
                    }
                    'q' => {
                        self.quit = true;
                        false
                    }
                    _ => false,
                }
            }
        };
        if take {
            self.accepted += 1;
        }
        take
    }

    fn finished(&self) -> bool {
        self.quit
    }
}

#[cfg(test)]
mod tests {
    use git_astedit::select::Proposed;

    use super::*;

    fn proposal<'a>(text: &'a str, before: &str, after: &'a str) -> Proposal<'a> {
        let start = text.find(before).expect("in text");
        Proposal {
            path: "a.js",
            origin: Origin::Op(0),
            change: Proposed {
                text,
                start,
                end: start + before.len(),
                after,
                site_start: start,
                site_end: start + before.len(),
                earlier: &[],
                kept: "",
                replaced: Box::leak(Box::new(std::cell::RefCell::new(None))),
            },
            around: None,
        }
    }

    fn session(answers: &str, proposals: &[Proposal<'_>]) -> (Vec<bool>, String) {
        let mut shown = Vec::new();
        let mut prompter = Prompter::new(
            Box::new(answers.as_bytes()),
            Box::new(&mut shown),
            false,
            true,
            false,
        );
        let taken = proposals.iter().map(|p| prompter.select(p)).collect();
        drop(prompter);
        (taken, String::from_utf8(shown).expect("utf-8"))
    }

    #[test]
    fn a_change_that_repeats_kept_text_says_so_on_its_hunk() {
        let text = "assert r.code == 200, r.text\n";
        let after = "assert r.code == 200, r.text";
        let mut p = proposal(text, "assert r.code == 200", after);
        p.change.kept = ", r.text";
        let (_, shown) = session("n\n", &[p]);
        assert!(
            shown.contains("warning: `, r.text` is kept after this change"),
            "{shown}"
        );
        let (_, shown) = session("n\n", &[proposal(text, "assert r.code == 200", after)]);
        assert!(!shown.contains("warning"), "{shown}");
    }

    #[test]
    fn a_change_is_shown_with_context_and_a_hunk_header() {
        let text = "1\n2\n3\n4\nfoo(x);\n6\n7\n8\n9\n";
        let (taken, shown) = session("y\n", &[proposal(text, "foo(x)", "bar(x)")]);
        assert_eq!(taken, vec![true]);
        assert_eq!(
            shown,
            "diff --git a/a.js b/a.js\n--- a/a.js\n+++ b/a.js\n\
             @@ -2,7 +2,7 @@ a.js:5:1\n 2\n 3\n 4\n-foo(x);\n+bar(x);\n 6\n 7\n 8\n\
             Apply this change [y,n,a,d,q,e,?]? y\n"
        );
    }

    #[test]
    fn a_change_ending_in_a_wide_character_or_a_newline_shows_its_lines() {
        let text = "x = 'é';\ny = 1;\n";
        let (_, shown) = session("n\n", &[proposal(text, "'é'", "'e'")]);
        assert!(shown.contains("-x = 'é';\n+x = 'e';\n y = 1;\n"), "{shown}");
        let (_, shown) = session("n\n", &[proposal(text, "x = 'é';\n", "")]);
        assert!(
            shown.contains("@@ -1,2 +1,1 @@ a.js:1:1\n-x = 'é';\n y = 1;\n"),
            "{shown}"
        );
    }

    #[test]
    fn answers_steer_the_file_and_the_session() {
        let text = "a(1); a(2); a(3);";
        let ps: Vec<Proposal<'_>> = ["a(1)", "a(2)", "a(3)"]
            .iter()
            .map(|b| proposal(text, b, "b()"))
            .collect();
        assert_eq!(session("n\na\n", &ps).0, vec![false, true, true]);
        assert_eq!(session("d\n", &ps).0, vec![false, false, false]);
        assert_eq!(session("y\nq\n", &ps).0, vec![true, false, false]);
        // End of input is `q`.
        assert_eq!(session("y\n", &ps).0, vec![true, false, false]);
        // An unknown answer repeats the question with the help.
        let (taken, shown) = session("maybe\n\ny\nn\nn\n", &ps);
        assert_eq!(taken, vec![true, false, false]);
        assert!(shown.contains("Unknown answer 'maybe'."), "{shown}");
        assert_eq!(shown.matches("d - do not apply").count(), 2, "{shown}");
        assert!(
            shown.ends_with("\\ No newline at end of file\nApply this change [y,n,a,d,q,e,?]? n\n"),
            "{shown}"
        );
    }
}
