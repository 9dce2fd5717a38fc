/*!
Text helpers every layer may use (the base layer of the house): times as RFC 3339,
messages kept to one line.
*/

/// Seconds since the epoch as an RFC 3339 UTC timestamp, `2026-11-30T15:33:02Z`.
pub fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}

/// Messages are meant to be one line; a multi-line one would break `path:line:` output.
pub fn one_line(s: &str) -> String {
    let first = s.lines().next().unwrap_or("").trim_end();
    if s.trim_end().contains('\n') {
        format!("{first} …")
    } else {
        first.to_string()
    }
}
