//! Opening a URL in the user's browser: the front end's own child, as the pager is.
//!
//! `$BROWSER` first (a `:`-separated list of commands, as `man`, `git web--browse`
//! and Python's `webbrowser` read it; `%s` in a command stands for the URL, else the
//! URL is its last argument), then the platform's opener: `open` on macOS, `start` on
//! Windows, `xdg-open` elsewhere. The URL is ours (`http://127.0.0.1:…`), so it cannot
//! be read as an option.

use std::process::Command;
use std::process::Stdio;

/// Starts a browser on `url` without waiting for it; `Err` says what was tried.
pub fn open(url: &str) -> Result<(), String> {
    let mut tried = Vec::new();
    let from_env = std::env::var("BROWSER").unwrap_or_default();
    let mut commands: Vec<Vec<String>> = from_env
        .split(':')
        .map(|c| c.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|c| !c.is_empty())
        .map(|mut words| {
            if words.iter().any(|w| w.contains("%s")) {
                words.iter_mut().for_each(|w| *w = w.replace("%s", url));
            } else {
                words.push(url.to_string());
            }
            words
        })
        .collect();
    commands.push(if cfg!(target_os = "macos") {
        vec!["open".into(), url.into()]
    } else if cfg!(windows) {
        // `start`'s first quoted argument is the window's title.
        vec![
            "cmd".into(),
            "/C".into(),
            "start".into(),
            "\"\"".into(),
            url.into(),
        ]
    } else {
        vec!["xdg-open".into(), url.into()]
    });
    for words in commands {
        let started = Command::new(&words[0])
            .args(&words[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match started {
            Ok(mut child) => {
                // Reaped when it ends (an opener returns at once; a browser may not).
                std::thread::spawn(move || child.wait());
                return Ok(());
            }
            Err(e) => tried.push(format!("{}: {e}", words[0])),
        }
    }
    Err(tried.join("; "))
}
