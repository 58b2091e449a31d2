//! Parsing `ledger.jsonl`: the header, the records with their line numbers, and every problem of
//! the text itself (a torn last line, bytes that are not UTF-8, an interrupted write).

use super::{Header, Issue, Record};

/// The parsed log: header, records (with their line numbers), and every problem found.
pub struct Log {
    pub header: Option<Header>,
    pub records: Vec<(u64, Record)>,
    pub issues: Vec<Issue>,
    /// The first line of an interrupted write: a last line without a newline, or whole lines of
    /// a write whose last record is missing. `andon ledger repair` sets it aside.
    pub torn: Option<u64>,
}

/// Reads and strictly parses `ledger.jsonl` text.
pub fn parse(text: &str) -> Log {
    parse_bytes(text.as_bytes())
}

/// Reads and strictly parses the bytes of `ledger.jsonl`: a line that is not UTF-8 is a problem
/// on its line, as a line that is not a record is.
pub fn parse_bytes(bytes: &[u8]) -> Log {
    let mut log = Log { header: None, records: Vec::new(), issues: Vec::new(), torn: None };
    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        lines.pop();
    }
    let n_lines = lines.len() as u64;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        log.torn = Some(n_lines);
        log.issues.push(Issue {
            line: n_lines,
            message: "the last line is torn (no newline: a write was interrupted); it is not read, and nothing is appended until `andon ledger repair` sets it aside".into(),
        });
    }
    for (i, raw) in lines.iter().enumerate() {
        let n = i as u64 + 1;
        if log.torn == Some(n) {
            break;
        }
        let line = match std::str::from_utf8(raw.strip_suffix(b"\r").unwrap_or(raw)) {
            Ok(l) => l,
            Err(e) => {
                log.issues.push(Issue {
                    line: n,
                    message: format!(
                        "not valid UTF-8 (byte {} of the line): the file was edited or damaged",
                        e.valid_up_to() + 1
                    ),
                });
                continue;
            }
        };
        if n == 1 {
            match serde_json::from_str::<Header>(line) {
                Ok(h) => log.header = Some(h),
                Err(e) => log.issues.push(Issue { line: 1, message: format!("bad header: {e}") }),
            }
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) => log.records.push((n, r)),
            Err(e) => log.issues.push(Issue { line: n, message: format!("bad record: {e}") }),
        }
    }
    check_writes(&mut log);
    if bytes.is_empty() {
        log.issues.push(Issue { line: 1, message: "the ledger is empty: it has no header".into() });
    }
    log
}

/// Writes: a record with `more = k` is followed by k records counting down to 0. A write whose
/// last record is missing is interrupted: `torn` moves to its first line.
fn check_writes(log: &mut Log) {
    let mut open: Option<(u64, u32)> = None; // (first line of the write, records still expected)
    for (n, r) in &log.records {
        match open {
            Some((first, k)) if r.more + 1 != k => {
                log.issues.push(Issue {
                    line: *n,
                    message: format!(
                        "the write that starts on line {first} is broken: a record is missing or out of place"
                    ),
                });
                open = None;
            }
            Some((first, _)) if r.more > 0 => open = Some((first, r.more)),
            Some(_) => open = None,
            None if r.more > 0 => open = Some((*n, r.more)),
            None => {}
        }
    }
    if let Some((first, k)) = open {
        let start = log.torn.map_or(first, |t| t.min(first));
        log.torn = Some(start);
        log.issues.push(Issue {
            line: first,
            message: format!("the write that starts here is incomplete ({k} record(s) missing: it was interrupted); nothing is appended until `andon ledger repair` sets it aside"),
        });
    }
}
