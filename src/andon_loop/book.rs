//! The ledger as one step of the loop will leave it: the state and records read when the step
//! began, with every event the step plans already applied in memory. Nothing reaches the log
//! until the step writes [`Book::planned`] in one write (one record group), so a step that is
//! killed or refused leaves the whole step or none of it.

use super::error::Error;
use crate::ledger::{self, Event, LedgerError, Record, State};

/// The state a step plans on, and the events it will record.
#[derive(Clone, Debug, Default)]
pub struct Book {
    /// The state as it will be once the planned events are recorded.
    pub state: State,
    /// The log's records, the planned ones last (their `seq` as the write will number them).
    pub records: Vec<Record>,
    planned: Vec<Event>,
    now: u64,
}

impl Book {
    /// A book over the ledger as read (empty when the loop has never run), its records stamped `now`.
    pub fn new(state: State, records: Vec<Record>, now: u64) -> Book {
        Book { state, records, planned: Vec::new(), now }
    }

    /// Plans `events`: each is applied to the state in order, as the writer will apply it. A
    /// transition the fold refuses refuses the whole step, and nothing is written.
    pub fn record(&mut self, events: &[Event]) -> Result<(), LedgerError> {
        for e in events {
            let seq = self.records.len() as u64 + 1;
            ledger::apply(&mut self.state, seq, e)
                .map_err(|m| LedgerError::Refused(format!("refused, nothing written: {m}")))?;
            self.records.push(Record { seq, at: self.now, event: e.clone(), more: 0, prev: None });
            self.planned.push(e.clone());
        }
        Ok(())
    }

    /// The events this step planned, in order.
    pub fn planned(&self) -> &[Event] {
        &self.planned
    }

    /// The state as it would be after `events`, without planning them (to ask the andon rule
    /// before deciding what to record).
    pub fn after(&self, events: &[Event]) -> Result<State, Error> {
        let mut after = self.state.clone();
        for (i, e) in events.iter().enumerate() {
            ledger::apply(&mut after, self.records.len() as u64 + 1 + i as u64, e)
                .map_err(|e| Error::Event(e.to_string()))?;
        }
        Ok(after)
    }

    /// The next evidence id of gap `gap`: `E-<gap>-<n>`.
    pub fn next_evidence_id(&self, gap: &str) -> String {
        format!("E-{gap}-{}", self.state.gap_evidence.get(gap).map_or(0, Vec::len) + 1)
    }
}
