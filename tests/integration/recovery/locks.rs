//! Stale locks: a dead process's lock broken and journalled (once, among many), a live
//! holder's kept, a reused pid or another boot told apart.

use super::events;
use super::stage;
use crate::util::TestRepo;

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The start time of a process, field 22 of /proc/<pid>/stat.
fn start_time(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let rest = &stat[stat.rfind(')').expect(")") + 1..];
    rest.split_whitespace()
        .nth(19)
        .and_then(|f| f.parse().ok())
        .expect("start time")
}

#[test]
fn a_lock_of_a_dead_process_is_broken_and_journalled() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    let id = stage(&t, &[("a.txt", Some("b\n"))]);
    let lock = t.path().join(".git/astedit.lock");
    let host = hostname();
    // A pid that is not running.
    let dead = format!(
        "{{\"pid\":{},\"host\":\"{host}\",\"time\":0,\"op\":\"apply\"}}",
        u32::MAX - 3
    );
    std::fs::write(&lock, dead).expect("write lock");
    t.run(&["apply", &id]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "b\n");
    assert!(!lock.exists());
    let ev = events(&t);
    assert_eq!(ev[0]["event"], "applied");
    let note = ev[0]["notes"][0].as_str().unwrap_or("").to_string();
    assert!(note.starts_with("lock-broken:"), "{:?}", ev[0]);
    assert!(note.contains(&format!("pid {}", u32::MAX - 3)), "{note}");
    assert!(!t.path().join(".git/astedit-notes.pending").exists());
}

#[test]
fn a_live_holder_keeps_its_lock_but_a_reused_pid_or_another_boot_does_not() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    stage(&t, &[("a.txt", Some("b\n"))]);
    let lock = t.path().join(".git/astedit.lock");
    let host = hostname();
    let me = std::process::id();
    let start = start_time(me);
    // This test process, alive, with its true start time: the lock holds.
    let live = format!(
        "{{\"pid\":{me},\"host\":\"{host}\",\"start\":{start},\"time\":0,\"op\":\"apply\"}}"
    );
    std::fs::write(&lock, &live).expect("write lock");
    let out = t.run(&["apply", "--json"]);
    out.assert_code(6);
    assert_eq!(out.json()["error"]["code"], "locked");
    // The same without a start time (an old lock): not provably gone, it holds too.
    let old = format!("{{\"pid\":{me},\"host\":\"{host}\",\"time\":0,\"op\":\"apply\"}}");
    std::fs::write(&lock, &old).expect("write lock");
    t.run(&["apply"]).assert_code(6);
    // Another host: it cannot be judged from here.
    let elsewhere = format!(
        "{{\"pid\":{},\"host\":\"not-{host}\",\"time\":0,\"op\":\"apply\"}}",
        u32::MAX - 3
    );
    std::fs::write(&lock, &elsewhere).expect("write lock");
    t.run(&["apply"]).assert_code(6);
    assert_eq!(t.read_string("a.txt"), "a\n");
    // Our pid with another start time: the pid was reused, the holder is gone.
    let reused = format!(
        "{{\"pid\":{me},\"host\":\"{host}\",\"start\":{},\"time\":0,\"op\":\"apply\"}}",
        start + 1
    );
    std::fs::write(&lock, &reused).expect("write lock");
    t.run(&["apply"]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "b\n");
    // A lock from another boot is gone whatever its pid.
    let rebooted = format!(
        "{{\"pid\":{me},\"host\":\"{host}\",\"start\":{start},\"boot\":\"another-boot\",\"time\":0,\"op\":\"undo\"}}"
    );
    std::fs::write(&lock, &rebooted).expect("write lock");
    t.run(&["undo"]).assert_code(0);
    assert_eq!(t.read_string("a.txt"), "a\n");
}

/// Many processes at once find the same dead lock: exactly one apply wins, the others
/// exit 6 (never two holders).
#[test]
fn a_dead_lock_is_broken_by_exactly_one_of_many() {
    let t = TestRepo::new();
    t.write("a.txt", "a\n");
    t.commit_all("init");
    stage(&t, &[("a.txt", Some("b\n"))]);
    let dead = format!(
        "{{\"pid\":{},\"host\":\"{}\",\"time\":0,\"op\":\"apply\"}}",
        u32::MAX - 3,
        hostname()
    );
    std::fs::write(t.path().join(".git/astedit.lock"), dead).expect("write lock");
    let children: Vec<_> = (0..6)
        .map(|_| {
            t.command(".", &["apply"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn")
        })
        .collect();
    let codes: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait").status.code())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == Some(0)).count(),
        1,
        "{codes:?}"
    );
    assert!(
        codes
            .iter()
            .all(|c| matches!(c, Some(0) | Some(1) | Some(6))),
        "{codes:?}"
    );
    assert_eq!(t.read_string("a.txt"), "b\n");
    let applied = events(&t)
        .iter()
        .filter(|e| e["event"] == "applied")
        .count();
    assert_eq!(applied, 1);
}
