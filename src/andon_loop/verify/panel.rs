//! Approach (a), the adversarial panel (R101–R105; `docs/panel.md`): the role packets written
//! round by round, the role outputs read back, the reported commands re-run, and the judgment
//! turned into a proof.

use std::path::Path;

use super::super::error::Error;
use super::executed::{runner, sealed};
use super::fix;
use super::proof::{Inputs, Proof, ProofTarget};
use crate::config::Config;
use crate::index::Index;
use crate::ledger::{Reason, Verdict, Wire};

/// Approach (a), the adversarial panel (R101–R105; `docs/panel.md`). andon calls no model: it
/// writes the role packets into `--panel DIR`, reads the role outputs from it
/// (`output-for.json`, `output-against.json`, `output-evidence.json`, then
/// `output-adjudicator.json`), re-runs every command the evidence role reports, and judges.
pub(super) fn panel(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    target: &ProofTarget,
    inputs: &Inputs,
    nonce: &str,
) -> Proof {
    use crate::panel::{self, Role};
    let Some(dir) = &inputs.panel else {
        return Proof::unknown(
            "approach (a) needs the panel: give --panel DIR; andon writes the role packets there and reads the role outputs from it".into(),
            "unavailable without role outputs: the wire stays unknown",
        );
    };
    let input = panel_input(idx, target, inputs);
    let (outputs, refused) = read_role_outputs(dir);
    // skip_verification (R7): the adjudicator's pass, the panel's referee, is neither asked nor read
    let referee = !cfg.settings.skip_verification.value;
    if let Some(waiting) = await_round(dir, &input, &outputs, refused, referee) {
        return waiting;
    }
    let runner = runner(cfg, inputs, nonce);
    let checks: Vec<panel::Check> =
        outputs.iter().filter(|o| o.role == Role::Evidence).flat_map(|o| o.checks.clone()).collect();
    let reruns = match sealed(root, cfg, || panel::rerun(root, &checks, &runner)) {
        Ok(r) => r,
        Err(p) => return *p,
    };
    // condition 3: the panel cannot adjudicate away a tier-1 hold on the wire
    let hold = target
        .wire
        .as_ref()
        .and_then(|w| fix::structural_of(idx, Some(w), "", "").ok())
        .is_some_and(|(v, _, hold, _, _)| hold && v != Verdict::Proven);
    let j = panel::judge_with(&input, &outputs, &reruns, hold, referee);
    let mut proof = panel_proof(&input, &j, hold);
    if !referee {
        proof
            .references
            .push("verification_skipped: no adjudicator judged the panel (skip_verification = true)".into());
        proof.detail = format!("{}; verification_skipped", proof.detail);
    }
    proof
}

/// What the panel is told about the fix under review: the target's wire (else its site), claim,
/// criteria and diff, who built it, and the repository text that addresses the tool.
fn panel_input(idx: &Index, target: &ProofTarget, inputs: &Inputs) -> crate::panel::PanelInput {
    crate::panel::PanelInput {
        wire: target.wire.clone().unwrap_or(Wire { producer: target.path.clone(), consumer: target.path.clone() }),
        gap: target.id.clone(),
        claim: target.claim.clone(),
        criteria: target.criteria.clone(),
        diff: target.diff.clone(),
        proposer: inputs.proposer.clone().unwrap_or_default(),
        for_case: None,
        prior_verdicts: Vec::new(),
        proposer_reasoning: None,
        // text in the changed files that addresses the tool: quoted to the roles as data (R123)
        repo_text: crate::ops::suspected_injections(idx)
            .into_iter()
            .filter(|i| i.path == target.path || target.diff.contains(&format!("+++ b/{}", i.path)))
            .map(|i| (format!("{}:{}", i.path, i.line), i.text))
            .collect(),
    }
}

/// A role's output: a regular file in the panel directory itself (a link is refused: it could
/// lead anywhere; a FIFO would block the proof forever), 16 MiB at most.
fn read_output(file: &Path) -> std::io::Result<Vec<u8>> {
    if std::fs::symlink_metadata(file)?.file_type().is_symlink() {
        return Err(std::io::Error::other(
            "a symbolic link: a role writes its output as a file in the panel directory",
        ));
    }
    crate::index::walk::read_regular(file, 16 << 20)
}

/// Reads every role's output from `dir`: the outputs that parse as their role's, and why each
/// other one was refused (a missing output is simply not there yet).
fn read_role_outputs(dir: &Path) -> (Vec<crate::panel::RoleOutput>, Vec<String>) {
    use crate::panel::{self, Role};
    let mut outputs = Vec::new();
    let mut refused = Vec::new();
    for r in Role::ALL {
        let file = dir.join(format!("output-{}.json", r.name()));
        match read_output(&file) {
            Ok(bytes) => match panel::parse_output(&bytes) {
                Ok(o) if o.role == r => outputs.push(o),
                Ok(o) => refused.push(format!("{}: holds a {} output", file.display(), o.role.name())),
                Err(e) => refused.push(format!("{}: {e}", file.display())),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => refused.push(format!("{}: {e}", file.display())),
        }
    }
    (outputs, refused)
}

/// The panel's three rounds, each with who answers it: the two advocates; the evidence role,
/// shown both advocates' claims to turn into checked facts; the adjudicator, shown all three.
fn panel_rounds(
    input: &crate::panel::PanelInput,
    outputs: &[crate::panel::RoleOutput],
) -> [(Vec<crate::panel::Packet>, &'static str); 3] {
    use crate::panel::{self, Role};
    let advocates: Vec<panel::RoleOutput> =
        outputs.iter().filter(|o| matches!(o.role, Role::For | Role::Against)).cloned().collect();
    let mut first = panel::packets(input, &advocates);
    let evidence = first.split_off(2);
    let quoted: Vec<panel::RoleOutput> = outputs.iter().filter(|o| o.role != Role::Adjudicator).cloned().collect();
    [
        (first, "the advocates (for, against)"),
        (evidence, "the evidence role"),
        (vec![panel::adjudicator_packet(input, &quoted)], "the adjudicator"),
    ]
}

/// The first round not every role of which has an accepted output: its packets (and the index
/// of all packets so far) are written to `dir`, and the proof says the panel awaits it. `None`:
/// every role has answered.
fn await_round(
    dir: &Path,
    input: &crate::panel::PanelInput,
    outputs: &[crate::panel::RoleOutput],
    mut refused: Vec<String>,
    referee: bool,
) -> Option<Proof> {
    use crate::panel::{self, Role};
    // An output counts once andon accepts it against the packet it answers; a refused one (and
    // one that answered an older packet: an output its packet quotes changed) is asked again.
    let checked = panel::validate(input, outputs);
    let accepted = |r: Role| outputs.iter().zip(&checked).any(|(o, ok)| o.role == r && ok.is_ok());
    refused.extend(checked.iter().filter_map(|c| c.as_ref().err()).map(|e| format!("refused: {e}")));
    let all = panel_rounds(input, outputs);
    let rounds = &all[..if referee { all.len() } else { all.len() - 1 }];
    for (i, (round, who)) in rounds.iter().enumerate() {
        if round.iter().all(|p| accepted(p.role)) {
            continue;
        }
        // `packets.json` lists every packet handed out so far: this round's and the earlier ones
        let index: Vec<panel::Packet> = rounds[..=i].iter().flat_map(|(r, _)| r.iter().cloned()).collect();
        let written =
            round.iter().try_for_each(|p| write_packet(dir, p.role.name(), p)).and_then(|_| write_index(dir, &index));
        if let Err(e) = written {
            return Some(Proof::unknown(format!("the panel packets could not be written: {e}"), "unknown"));
        }
        let files: Vec<String> = round.iter().map(|p| format!("packet-{}.json", p.role.name())).collect();
        let mut p = Proof::unknown(
            format!(
                "the panel awaits {who}: {} in {}; each role writes output-<role>.json there",
                files.join(", "),
                dir.display()
            ),
            "no verdict until every role has answered",
        );
        p.references = round.iter().map(|p| format!("{} {}", p.role.name(), p.hash)).collect();
        p.references.extend(refused);
        return Some(p);
    }
    None
}

/// Writes one role packet to `dir` as `packet-<name>.json`, atomically.
fn write_packet(dir: &Path, name: &str, p: &crate::panel::Packet) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let file = dir.join(format!("packet-{name}.json"));
    // whole, through a fresh temporary file: never through a link planted in the directory
    crate::text::write_atomic(&file, p.body.as_bytes()).map_err(Error::io(&file))
}

/// The proof of a panel that rendered its judgment.
fn panel_proof(input: &crate::panel::PanelInput, j: &crate::panel::Judgment, hold: bool) -> Proof {
    use crate::panel::Outcome;
    let per: Vec<String> = j
        .per_criterion
        .iter()
        .map(|(id, o, why)| format!("{}: {}: {why}", crate::text::short(id), format!("{o:?}").to_lowercase()))
        .collect();
    Proof {
        verdict: j.verdict,
        tier: None,
        hold,
        claim: format!("the adversarial panel judged {} criteria mechanically", input.criteria.len()),
        detail: if j.reasons.is_empty() { "every criterion passed".into() } else { j.reasons.join("; ") },
        references: per,
        artifact: None,
        // each criterion's own verdict, once the panel rendered one at all (an incomplete panel
        // or a standing hold leaves every obligation with the panel's verdict)
        per_criterion: if j.verdict == Verdict::Unknown || hold { Vec::new() } else { criterion_verdicts(input, j) },
        // a load-bearing criterion neither side carries: the evidence is contested (R92)
        reason: (j.verdict == Verdict::Unproven && j.per_criterion.iter().any(|(_, o, _)| *o == Outcome::Neither))
            .then_some(Reason::Contested),
        capability: None,
    }
}

/// Each criterion's own verdict from the panel's outcome for it.
fn criterion_verdicts(input: &crate::panel::PanelInput, j: &crate::panel::Judgment) -> Vec<(String, Verdict, String)> {
    use crate::panel::Outcome;
    j.per_criterion
        .iter()
        .map(|(id, o, why)| {
            let lb = input.criteria.iter().any(|c| &c.id == id && c.load_bearing);
            let v = match o {
                Outcome::Pass => Verdict::Proven,
                Outcome::Fail => Verdict::Refuted,
                Outcome::Neither if lb => Verdict::Unproven,
                // not load-bearing: neither side carrying it does not block (R104)
                Outcome::Neither => Verdict::Proven,
                Outcome::Unbacked => Verdict::Unproven,
                Outcome::Unknown => Verdict::Unknown,
            };
            (id.clone(), v, why.clone())
        })
        .collect()
}

/// `packets.json`: every packet written, with the hash its role output must quote.
fn write_index(dir: &Path, packets: &[crate::panel::Packet]) -> Result<(), Error> {
    let rows: Vec<serde_json::Value> = packets
        .iter()
        .map(|p| {
            serde_json::json!({ "role": p.role.name(), "file": format!("packet-{}.json", p.role.name()),
                "packet_hash": p.hash, "output": format!("output-{}.json", p.role.name()), "access": p.access })
        })
        .collect();
    let file = dir.join("packets.json");
    let text =
        serde_json::to_string_pretty(&serde_json::json!({ "andon_panel_index": 1, "packets": rows })).expect("json");
    crate::text::write_atomic(&file, text.as_bytes()).map_err(Error::io(&file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_packet_is_never_written_through_a_link_planted_in_the_panel_directory() {
        let panel = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let dir = panel.path();
        for name in ["packet-for.json.tmp", "packets.json.tmp", "packet-for.json"] {
            std::os::unix::fs::symlink(outside.path().join(name), dir.join(name)).unwrap();
        }
        let p = crate::panel::Packet {
            role: crate::panel::Role::For,
            access: vec![],
            body: "{}".into(),
            hash: "0".repeat(32),
        };
        write_packet(dir, "for", &p).unwrap();
        write_index(dir, &[p]).unwrap();
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "nothing was written outside");
        let written = std::fs::symlink_metadata(dir.join("packet-for.json")).unwrap();
        assert!(written.is_file(), "the packet replaced the link, as a file");
        assert!(std::fs::symlink_metadata(dir.join("packets.json")).unwrap().is_file());
    }

    #[cfg(unix)]
    #[test]
    fn a_role_output_that_is_a_fifo_or_a_link_is_refused_never_waited_on() {
        let panel = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let dir = panel.path();
        assert!(std::process::Command::new("mkfifo").arg(dir.join("output-for.json")).status().unwrap().success());
        std::fs::write(outside.path().join("o.json"), "{}").unwrap();
        std::os::unix::fs::symlink(outside.path().join("o.json"), dir.join("output-against.json")).unwrap();
        let (outputs, refused) = read_role_outputs(dir);
        assert!(outputs.is_empty());
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(refused.iter().any(|r| r.contains("not a regular file")), "{refused:?}");
        assert!(refused.iter().any(|r| r.contains("symbolic link")), "{refused:?}");
    }
}
