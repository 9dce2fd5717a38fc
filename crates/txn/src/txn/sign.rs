/*!
Signed previews: commits signed and verified by git itself, never by code of ours.

A preview travels (CI shards push their preview refs, teammates fetch them), and
nothing in its objects says who made it unless it is signed. Its id is its commit's
hash, so a signature is made with the commit, at staging ([`commit`]: `git commit-tree
-S`, fed the same tree, parents, message and identity we would have written), and is
checked by `git log --format=%G?…` ([`verify`]), which runs `gpg` or `ssh-keygen -Y`
exactly as `git verify-commit` does. Who may sign is git's own configuration:
`gpg.ssh.allowedSignersFile` (its `valid-after`/`valid-before` are checked against the
commit's time: git passes it as `-Overify-time`) and `gpg.ssh.revocationFile` (a key
listed there, or taken out of the allowed signers, makes every preview it signed
untrusted from then on), or gpg's keyring and trust.

Journal events are never signed: a hardware key would ask for a touch on every edit.
*/

use std::io::Write as _;
use std::process::Command;
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use gix::ObjectId;

use super::Error;
use crate::repo::Repo;

/// What git says of a commit's signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SigStatus {
    /// A good signature by a signer git's configuration allows, valid at the commit's time.
    Good,
    /// The signature does not match the commit (it was altered, or forged).
    Bad,
    /// A good signature by a key that is not among the allowed signers (or, for
    /// OpenPGP, a key not in the keyring).
    UnknownKey,
    /// The key is allowed, but not at the commit's time (`valid-before`/`valid-after`),
    /// or the OpenPGP key or signature expired.
    ExpiredKey,
    /// The key is listed in `gpg.ssh.revocationFile` (or revoked in the keyring).
    RevokedKey,
    /// Signed, but nobody is allowed: `gpg.ssh.allowedSignersFile` is not set or cannot
    /// be read (or, for OpenPGP, the key has no trust).
    NotAllowed,
    /// Not signed.
    Unsigned,
    /// git could not check the signature (the signing program is missing…).
    Error,
}

impl SigStatus {
    /// The stable name (`--json`).
    pub fn as_str(self) -> &'static str {
        match self {
            SigStatus::Good => "good",
            SigStatus::Bad => "bad",
            SigStatus::UnknownKey => "unknown-key",
            SigStatus::ExpiredKey => "expired-key",
            SigStatus::RevokedKey => "revoked-key",
            SigStatus::NotAllowed => "not-allowed",
            SigStatus::Unsigned => "unsigned",
            SigStatus::Error => "error",
        }
    }

    /// A few words for a person.
    pub fn describe(self) -> &'static str {
        match self {
            SigStatus::Good => "good",
            SigStatus::Bad => "bad signature",
            SigStatus::UnknownKey => "unknown key",
            SigStatus::ExpiredKey => "key not valid at the commit's time",
            SigStatus::RevokedKey => "revoked key",
            SigStatus::NotAllowed => "no signer is allowed here",
            SigStatus::Unsigned => "unsigned",
            SigStatus::Error => "cannot be checked",
        }
    }
}

/// The signature of one commit, as git verified it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureCheck {
    pub status: SigStatus,
    /// Who signed: the allowed signers' principal (ssh) or the key's user id (OpenPGP);
    /// `None` when git names nobody (an unknown key).
    pub signer: Option<String>,
    /// The key: `SHA256:…` for ssh, the fingerprint (else key id) for OpenPGP.
    pub key: Option<String>,
}

impl SignatureCheck {
    /// An unsigned commit.
    pub fn unsigned() -> SignatureCheck {
        SignatureCheck {
            status: SigStatus::Unsigned,
            signer: None,
            key: None,
        }
    }

    /// A signature git could not check (for a listing that goes on: `why` is dropped,
    /// the status says it).
    pub fn failed() -> SignatureCheck {
        SignatureCheck {
            status: SigStatus::Error,
            signer: None,
            key: None,
        }
    }

    /// Whether the commit was signed by a signer git's configuration allows, valid at
    /// the commit's time and not revoked: the one answer trust decisions read.
    pub fn trusted(&self) -> bool {
        self.status == SigStatus::Good
    }

    /// Whether the commit carries a signature at all (good or not).
    pub fn is_signed(&self) -> bool {
        self.status != SigStatus::Unsigned
    }

    /// The kind of key, for text: `ssh` or `gpg`.
    pub fn key_kind(&self) -> &'static str {
        match &self.key {
            Some(k) if k.starts_with("SHA256:") => "ssh",
            _ => "gpg",
        }
    }

    /// One line for a person: `signed by NAME (ssh key SHA256:…): good`, or `unsigned`.
    pub fn describe(&self) -> String {
        if self.status == SigStatus::Unsigned {
            return "unsigned".to_string();
        }
        let who = self.signer.as_deref().unwrap_or("an unknown signer");
        let key = match &self.key {
            Some(k) => format!(" ({} key {k})", self.key_kind()),
            None => String::new(),
        };
        format!("signed by {who}{key}: {}", self.status.describe())
    }
}

/// Verifies `commit`'s signature with git (`%G?`, `%GS`, `%GF`/`%GK` of `git log`, the
/// checks of `git verify-commit`). An unsigned commit is told without running git. An
/// error is git not running, or not knowing the commit; a signature git cannot check
/// is [`SigStatus::Error`].
pub fn verify(repo: &Repo, commit: ObjectId) -> Result<SignatureCheck, Error> {
    let raw = repo
        .git
        .find_commit(commit)
        .map_err(Error::git(format!("read commit {commit}")))?;
    let Some(ssh) = signature_header(&raw.data) else {
        return Ok(SignatureCheck::unsigned());
    };
    let first = ask_git(repo, commit, None)?;
    let check = first.check(ssh);
    if check.status == SigStatus::Bad && ssh && revocation_configured(repo) {
        // git says only "Could not verify signature" of a revoked key: the same check
        // with no revocation file tells it from an altered commit.
        let again = ask_git(repo, commit, Some("/dev/null"))?.check(ssh);
        if again.status != SigStatus::Bad && again.status != SigStatus::Error {
            return Ok(SignatureCheck {
                status: SigStatus::RevokedKey,
                ..again
            });
        }
    }
    Ok(check)
}

/// Whether the commit object `data` carries a signature header, and whether it is an
/// ssh one (`None`: unsigned).
fn signature_header(data: &[u8]) -> Option<bool> {
    for line in data.split(|&b| b == b'\n') {
        if line.is_empty() {
            // The end of the headers.
            return None;
        }
        if let Some(sig) = line
            .strip_prefix(b"gpgsig ")
            .or_else(|| line.strip_prefix(b"gpgsig-sha256 "))
        {
            return Some(sig.starts_with(b"-----BEGIN SSH SIGNATURE-----"));
        }
    }
    None
}

fn revocation_configured(repo: &Repo) -> bool {
    matches!(
        repo.config_value("gpg.ssh.revocationFile"),
        Some(Some(v)) if !v.is_empty()
    )
}

/// What `git log -1 --format=…` printed of a commit: its fields, and the words of the
/// program that checked it (`%GG`, ssh-keygen's own lines included) and of git.
struct Answer {
    letter: char,
    signer: String,
    key: String,
    fingerprint: String,
    /// `%GG`: what the checking program said (empty: it said nothing, it did not run).
    checker: String,
    /// `%GG` and git's stderr.
    words: String,
}

/// The format: `%G?`, signer, key, fingerprint and the checker's words, NUL-separated.
const FORMAT: &str = "--format=%G?%x00%GS%x00%GK%x00%GF%x00%GG";

/// Runs `git log` on `commit` (with `revocation` in place of `gpg.ssh.revocationFile`).
fn ask_git(repo: &Repo, commit: ObjectId, revocation: Option<&str>) -> Result<Answer, Error> {
    let mut cmd = git(repo);
    cmd.args(["-c", "log.showSignature=false"]);
    if let Some(file) = revocation {
        cmd.arg("-c").arg(format!("gpg.ssh.revocationFile={file}"));
    }
    let hex = commit.to_string();
    cmd.args(["log", "-1", "--no-walk", "--no-color", FORMAT])
        .args(["--end-of-options", &hex])
        .stdin(Stdio::null());
    let out = cmd.output().map_err(Error::io("run", "git log"))?;
    if !out.status.success() {
        return Err(Error::Io {
            action: "run",
            path: "git log".into(),
            source: std::io::Error::other(String::from_utf8_lossy(&out.stderr).trim().to_string()),
        });
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut fields = stdout.split('\0');
    let mut next = || fields.next().unwrap_or("").trim().to_string();
    let letter = next().chars().next().unwrap_or('E');
    let (signer, key, fingerprint, checker) = (next(), next(), next(), next());
    Ok(Answer {
        letter,
        signer,
        key,
        fingerprint,
        checker: checker.clone(),
        words: format!("{checker}\n{}", String::from_utf8_lossy(&out.stderr)),
    })
}

impl Answer {
    /// The check git's answer means (`ssh`: the signature is an ssh one).
    fn check(self, ssh: bool) -> SignatureCheck {
        let status = match self.letter {
            'G' => SigStatus::Good,
            // The checking program could not be run (`gpg.ssh.program` missing): git
            // says B, with no word from it.
            'B' if self.checker.is_empty() => SigStatus::Error,
            'B' => SigStatus::Bad,
            'X' | 'Y' => SigStatus::ExpiredKey,
            'R' => SigStatus::RevokedKey,
            'E' => SigStatus::UnknownKey,
            'U' if ssh => {
                if self.words.contains("key has expired")
                    || self.words.contains("key is not yet valid")
                {
                    SigStatus::ExpiredKey
                } else if self.words.contains("Unable to open allowed keys file") {
                    SigStatus::NotAllowed
                } else {
                    SigStatus::UnknownKey
                }
            }
            'U' => SigStatus::NotAllowed,
            // Signed (the header is there), yet git saw no signature it could check:
            // for ssh, no allowed signers file is configured.
            'N' if ssh && self.words.contains("allowedSignersFile") => SigStatus::NotAllowed,
            _ => SigStatus::Error,
        };
        let nonempty = |s: String| (!s.is_empty()).then_some(s);
        let key = nonempty(self.fingerprint).or(nonempty(self.key));
        SignatureCheck {
            status,
            signer: nonempty(self.signer),
            key,
        }
    }
}

/// git, on this repository, with messages in English (their words are read) and the
/// variables that would point it at another repository dropped.
fn git(repo: &Repo) -> Command {
    let mut cmd = Command::new("git");
    for var in crate::repo::REPOSITORY_VARS {
        cmd.env_remove(var);
    }
    cmd.arg("--git-dir")
        .arg(&repo.git_dir)
        .current_dir(&repo.workdir)
        .env("LC_ALL", "C")
        .env("LANGUAGE", "C");
    cmd
}

/// `--sign` was given: every preview and campaign state commit this process makes is
/// signed, whatever `astedit.signPreviews` says.
static SIGN_ALL: AtomicBool = AtomicBool::new(false);

/// Makes this process sign every preview and campaign state commit it makes (`--sign`).
pub fn sign_previews() {
    SIGN_ALL.store(true, Ordering::Relaxed);
}

/// Whether commits made now are signed: `--sign`, or `astedit.signPreviews` true.
pub fn signing(repo: &Repo) -> bool {
    if SIGN_ALL.load(Ordering::Relaxed) {
        return true;
    }
    match repo.config_value("astedit.signPreviews") {
        Some(Some(v)) => matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1"),
        // `astedit.signPreviews` with no value is true, as git reads a bare key.
        Some(None) => true,
        None => false,
    }
}

/// Writes `object` signed by git (`git commit-tree -S`, the key git is configured to
/// sign with: `user.signingKey`, `gpg.format`, `gpg.program`…), with the same tree,
/// parents, message, author and committer; returns its id. The tree must be written.
/// A failure is [`Error::SigningFailed`]: nothing unsigned is made in its place.
pub fn commit(repo: &Repo, object: &gix::objs::Commit, what: &str) -> Result<ObjectId, Error> {
    let mut cmd = git(repo);
    // commit-tree writes an encoding header for any other encoding; ours is UTF-8.
    cmd.args(["-c", "i18n.commitEncoding=UTF-8", "commit-tree", "-S"]);
    for p in &object.parents {
        cmd.arg("-p").arg(p.to_string());
    }
    cmd.args(["--end-of-options", &object.tree.to_string()]);
    for (role, sig) in [("AUTHOR", &object.author), ("COMMITTER", &object.committer)] {
        cmd.env(format!("GIT_{role}_NAME"), sig.name.to_string())
            .env(format!("GIT_{role}_EMAIL"), sig.email.to_string())
            .env(
                format!("GIT_{role}_DATE"),
                format!("@{}", raw_time(&sig.time)),
            );
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let failed = |detail: String| Error::SigningFailed {
        what: what.to_string(),
        detail,
    };
    let mut child = cmd
        .spawn()
        .map_err(|e| failed(format!("cannot run git: {e}")))?;
    let message = object.message.to_vec();
    let writer = child
        .stdin
        .take()
        .map(|mut pipe| std::thread::spawn(move || pipe.write_all(&message)));
    let out = child
        .wait_with_output()
        .map_err(|e| failed(format!("cannot run git: {e}")))?;
    if let Some(w) = writer {
        let _ = w.join();
    }
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(failed(if err.is_empty() {
            format!("git commit-tree -S exited with {}", out.status)
        } else {
            err
        }));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let id = ObjectId::from_hex(text.trim().as_bytes())
        .map_err(|e| failed(format!("git commit-tree printed no commit id ({e})")))?;
    Ok(id)
}

/// A time as git's raw date format: `SECONDS +HHMM`.
fn raw_time(time: &gix::date::Time) -> String {
    let offset = time.offset;
    let sign = if offset < 0 { '-' } else { '+' };
    let abs = offset.unsigned_abs();
    format!(
        "{} {sign}{:02}{:02}",
        time.seconds,
        abs / 3600,
        (abs % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_headers_are_told_apart() {
        let unsigned = b"tree 1\nauthor a\ncommitter a\n\nmessage\ngpgsig x\n";
        assert_eq!(signature_header(unsigned), None);
        let ssh = b"tree 1\ngpgsig -----BEGIN SSH SIGNATURE-----\n abc\n -----END SSH SIGNATURE-----\n\nm\n";
        assert_eq!(signature_header(ssh), Some(true));
        let pgp = b"tree 1\ngpgsig-sha256 -----BEGIN PGP SIGNATURE-----\n abc\n\nm\n";
        assert_eq!(signature_header(pgp), Some(false));
    }

    #[test]
    fn raw_times_keep_the_offset() {
        let t = gix::date::Time {
            seconds: 1_700_000_000,
            offset: -(5 * 3600 + 30 * 60),
        };
        assert_eq!(raw_time(&t), "1700000000 -0530");
        let t = gix::date::Time {
            seconds: 5,
            offset: 3600,
        };
        assert_eq!(raw_time(&t), "5 +0100");
    }

    #[test]
    fn descriptions_name_signer_key_and_status() {
        let c = SignatureCheck {
            status: SigStatus::UnknownKey,
            signer: None,
            key: Some("SHA256:abc".into()),
        };
        assert_eq!(
            c.describe(),
            "signed by an unknown signer (ssh key SHA256:abc): unknown key"
        );
        assert!(!c.trusted());
        assert_eq!(SignatureCheck::unsigned().describe(), "unsigned");
    }
}
