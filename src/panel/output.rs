//! Reading and accepting role outputs: strict parsing with each role's own rules, the input's own
//! problems, and each output checked against the input and the packet it answers.

use super::{
    CheckStatus, Error, PanelInput, Role, RoleOutput, Stance, adjudicator_packet, appeals_to_authority, escape_inline,
    packets,
};

/// One role output, strictly: unknown or duplicate fields, wrong types and missing fields are
/// errors with line and column; then the role's own rules (see `docs/panel.md`).
pub fn parse_output(bytes: &[u8]) -> Result<RoleOutput, Error> {
    let text = std::str::from_utf8(bytes).map_err(|e| Error::Utf8 { at: e.valid_up_to() })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let o: RoleOutput = serde_json::from_str(text).map_err(|source| Error::Json { source })?;
    // serde reads a struct from an array too; the format is closed JSON objects only
    let v: serde_json::Value = serde_json::from_str(text).map_err(|source| Error::Value { source })?;
    let objects = |list: &serde_json::Value| list.as_array().is_none_or(|a| a.iter().all(serde_json::Value::is_object));
    if !v.is_object() || !v["producer"].is_object() || !objects(&v["criteria"]) || !objects(&v["checks"]) {
        return Err(Error::NotObjects);
    }
    let role = o.role;
    if o.producer.id.trim().is_empty() {
        return Err(Error::EmptyProducer { role });
    }
    if o.role == Role::Evidence && !o.criteria.is_empty() {
        return Err(Error::EvidenceVerdict);
    }
    if o.role != Role::Evidence && !o.checks.is_empty() {
        return Err(Error::ChecksOutsideEvidence { role });
    }
    for (i, c) in o.criteria.iter().enumerate() {
        let id = c.id.clone();
        if o.criteria[..i].iter().any(|d| d.id == c.id) {
            return Err(Error::CriterionTwice { role, id });
        }
        if !o.role.stances().contains(&c.stance) {
            return Err(Error::Stance { role, id, stance: c.stance });
        }
        if matches!(c.stance, Stance::Pass | Stance::Fail) && c.cites.is_empty() {
            return Err(Error::Uncited { role, id });
        }
        if c.reason.trim().is_empty() {
            return Err(Error::EmptyReason { role, id });
        }
        let text = std::iter::once(&c.reason).chain(&c.cites);
        if let Some(appeal) = text.filter_map(|t| appeals_to_authority(t)).next() {
            return Err(Error::Authority { role, id, appeal });
        }
    }
    for (i, k) in o.checks.iter().enumerate() {
        let id = k.id.clone();
        if k.id.trim().is_empty() || o.checks[..i].iter().any(|d| d.id == k.id) {
            return Err(Error::CheckId { id });
        }
        if k.command.trim().is_empty() || k.criteria.is_empty() {
            return Err(Error::CheckIncomplete { id });
        }
        if k.status != CheckStatus::Unverifiable && k.exit_code.is_none() {
            return Err(Error::NoExitCode { id, status: k.status });
        }
    }
    Ok(o)
}

/// What makes the input itself unusable: no criteria, a bad or repeated id, a criterion appealing
/// to authority (R105), no proposer provenance (R102 could not be checked).
pub fn input_problems(input: &PanelInput) -> Vec<String> {
    let mut out = Vec::new();
    if input.criteria.is_empty() {
        out.push("the contract has no criteria".to_string());
    }
    if input.proposer.trim().is_empty() {
        out.push("no proposer provenance: the against role's independence cannot be checked".into());
    }
    for (i, c) in input.criteria.iter().enumerate() {
        let id = escape_inline(&c.id);
        if c.id.trim().is_empty() || input.criteria[..i].iter().any(|d| d.id == c.id) {
            out.push(format!("criterion id `{id}` is empty or repeated"));
        }
        if let Some(p) = appeals_to_authority(&c.text) {
            out.push(format!("criterion `{id}` appeals to a person's authority (`{}`) (R105)", escape_inline(&p)));
        }
    }
    out
}

/// Producer ids compared as a reader would see them: case, surrounding space, invisible format
/// characters (zero-width spaces and joiners, bidirectional marks) and full-width forms of ASCII
/// do not make a different producer.
pub fn same_producer(a: &str, b: &str) -> bool {
    fn seen(s: &str) -> String {
        s.chars()
            .filter(|c| !matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{00ad}'))
            .map(|c| match c {
                '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0).unwrap_or(c),
                '\u{3000}' => ' ',
                c => c,
            })
            .collect::<String>()
            .trim()
            .to_lowercase()
    }
    seen(a) == seen(b)
}

/// Checks each output against the input and its packet: `Ok` for an accepted output, `Err(why)`
/// for a refused one, in `outputs` order.
pub fn validate(input: &PanelInput, outputs: &[RoleOutput]) -> Vec<Result<(), Error>> {
    let first = packets(input, outputs);
    let adjudicator = adjudicator_packet(input, outputs);
    let producer = |r: Role| outputs.iter().find(|o| o.role == r).map(|o| o.producer.id.as_str());
    let known = |id: &str| input.criteria.iter().any(|c| c.id == id);
    (outputs.iter().enumerate())
        .map(|(i, o)| {
            let role = o.role;
            if outputs[..i].iter().any(|p| p.role == o.role) {
                return Err(Error::SecondOutput { role });
            }
            let packet = if o.role == Role::Adjudicator { &adjudicator } else { &first[o.role as usize] };
            if o.packet_hash != packet.hash {
                return Err(Error::PacketHash { role, given: o.packet_hash.clone(), want: packet.hash.clone() });
            }
            if o.role == Role::Against {
                if same_producer(&o.producer.id, &input.proposer) {
                    return Err(Error::AgainstIsProposer { producer: o.producer.id.clone() });
                }
                if producer(Role::For).is_some_and(|f| same_producer(f, &o.producer.id)) {
                    return Err(Error::AgainstIsFor);
                }
            }
            let mut cited = o.criteria.iter().map(|c| &c.id).chain(o.checks.iter().flat_map(|k| &k.criteria));
            if let Some(bad) = cited.find(|id| !known(id)) {
                return Err(Error::UnknownCriterion { role, id: bad.clone() });
            }
            if o.role != Role::Evidence {
                if let Some(c) = input.criteria.iter().find(|c| !o.criteria.iter().any(|d| d.id == c.id)) {
                    return Err(Error::Unaddressed { role, id: c.id.clone() });
                }
            }
            Ok(())
        })
        .collect()
}
