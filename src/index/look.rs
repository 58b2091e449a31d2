//! Looking at one walked file: reading, hashing, decoding and extracting its facts.

use super::*;

pub(super) fn kind_code(k: FileKind) -> (u8, Option<Lang>) {
    match k {
        FileKind::Source(l) => (0, Some(l)),
        FileKind::Manifest => (1, None),
        FileKind::SourceAndManifest(l) => (2, Some(l)),
    }
}

pub(super) fn skipped_message(why: &str) -> String {
    match why {
        "binary" => "binary file (a NUL byte in its first 8 KiB); not parsed".into(),
        "too-large" => "larger than the size limit (`index.max_file_size` / `--max-filesize`); not parsed".into(),
        "unreadable" => "cannot be read; check its permissions".into(),
        other => other.to_string(),
    }
}

/// Reads, hashes and (when new) parses one file.
pub(super) fn look_at(
    ctx: &mut extract::Context,
    e: &WalkEntry,
    old: Option<(usize, &FileMeta)>,
    max_size: u64,
    follow: bool,
) -> Job {
    let (kind, lang) = kind_code(e.kind);
    let mut meta = FileMeta {
        path: e.rel.clone(),
        kind,
        lang: lang.map(|l| l.name().to_string()).unwrap_or_default(),
        size: e.size,
        mtime_ns: e.mtime_ns,
        hash: 0,
        skipped: None,
        facts: 0,
    };
    if e.size > max_size {
        if let Some((oi, o)) = old
            && o.skipped.as_deref() == Some("too-large")
            && o.size == e.size
        {
            meta.skipped = o.skipped.clone();
            meta.facts = o.facts;
            return Job::Reuse(oi, Some(Box::new(meta)));
        }
        return skipped(e, meta, "too-large", format!("{} bytes, over the {max_size}-byte limit; not parsed", e.size));
    }
    let bytes = match walk::read_source(&e.abs, follow, max_size) {
        Ok(walk::SourceRead::Bytes(b)) => b,
        Ok(walk::SourceRead::TooLarge(n)) => {
            meta.size = n;
            return skipped(e, meta, "too-large", format!("over the {max_size}-byte limit when read; not parsed"));
        }
        Err(err) => {
            return skipped(e, meta, "unreadable", format!("cannot be read ({err})"));
        }
    };
    // the size is what was read (the file may have changed since the walk's stat)
    meta.size = bytes.len() as u64;
    meta.hash = xxhash_rust::xxh3::xxh3_128(&bytes);
    if let Some((oi, o)) = old
        && o.hash == meta.hash
        && o.kind == meta.kind
        && matches!(o.skipped.as_deref(), None | Some("binary"))
    {
        meta.facts = o.facts;
        meta.skipped = o.skipped.clone();
        return Job::Reuse(oi, Some(Box::new(meta)));
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return skipped(e, meta, "binary", skipped_message("binary"));
    }
    let (text, diags) = decoded(e, &bytes);
    let (core, detail) = extract_file(ctx, e, (meta.hash, meta.size), &text, diags.first());
    meta.facts = (core.row_count() + detail.row_count()) as u64;
    Job::New(Box::new((meta, FileFacts::new(core, &detail), diags)))
}

/// A file that is not parsed: its one `Skipped` fact and the diagnostic saying why.
pub(super) fn skipped(e: &WalkEntry, mut meta: FileMeta, why: &str, message: String) -> Job {
    let mut b = SegmentBuilder::new();
    b.push(rel::SKIPPED, &[e.rel.as_str().into(), why.into()]);
    meta.skipped = Some(why.to_string());
    meta.facts = 1;
    let d = Diag { path: e.rel.clone(), line: 0, kind: why.to_string(), message };
    Job::New(Box::new((meta, FileFacts::new(b.finish(), &Segment::default()), vec![d])))
}

/// The file's text; invalid UTF-8 is replaced, with a diagnostic at the line of the first
/// invalid byte.
pub(super) fn decoded<'b>(e: &WalkEntry, bytes: &'b [u8]) -> (std::borrow::Cow<'b, str>, Vec<Diag>) {
    match std::str::from_utf8(bytes) {
        Ok(t) => (std::borrow::Cow::Borrowed(t), Vec::new()),
        Err(err) => {
            let upto = &bytes[..err.valid_up_to()];
            let line = upto.iter().filter(|b| **b == b'\n').count() as u32 + 1;
            let d = Diag {
                path: e.rel.clone(),
                line,
                kind: "invalid-utf8".into(),
                message: "not valid UTF-8; invalid bytes were replaced before parsing".into(),
            };
            (String::from_utf8_lossy(bytes), vec![d])
        }
    }
}

/// Extracts one file's facts (core and detail segments): its source facts, hash and size as read (with the
/// invalid UTF-8, if any, as a parse error) and its manifest facts.
pub(super) fn extract_file(
    ctx: &mut extract::Context,
    e: &WalkEntry,
    (hash, size): (u128, u64),
    text: &str,
    invalid_utf8: Option<&Diag>,
) -> (Segment, Segment) {
    let mut b = crate::facts::SplitBuilder::default();
    if let FileKind::Source(l) | FileKind::SourceAndManifest(l) = e.kind {
        extract::extract_source(ctx, l, &e.rel, text, &mut b);
    }
    if kind_code(e.kind).1.is_some() {
        let hex = format!("{hash:032x}");
        b.push(
            rel::FILE_HASH,
            &[e.rel.as_str().into(), hex.as_str().into(), (size.min(u32::MAX as u64) as u32).into()],
        );
        if let Some(d) = invalid_utf8 {
            b.push(
                rel::PARSE_ERROR,
                &[e.rel.as_str().into(), d.line.into(), 1.into(), d.line.into(), 1.into(), "invalid-utf8".into()],
            );
        }
    }
    if matches!(e.kind, FileKind::Manifest | FileKind::SourceAndManifest(_)) {
        extract::extract_manifest(&mut b.core, &e.rel, text);
    }
    b.finish()
}
