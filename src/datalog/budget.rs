//! The bounds of one run-time evaluation, and the one place that enforces them: rows per
//! relation, an estimate of the memory the rows and indexes hold, and wall time. The engine
//! reports what it visits and grows to a [`Meter`]; the meter says when to stop and why, and the
//! evaluation ends with an [`Exceeded`] naming the budget, its value, the relation that grew and
//! how to raise it. A budget of 0 lifts that limit.

use std::time::{Duration, Instant};

use super::eval::sorted_dedup;

/// The default row budget: distinct rows any one relation may hold.
pub const DEFAULT_MAX_ROWS: u64 = 20_000_000;
/// The default memory budget, in MiB: the estimated bytes of the rows an evaluation derives, their
/// indexes and its pending rows (the base facts, which the index bounds, are not counted).
pub const DEFAULT_MAX_MEMORY_MIB: u64 = 2048;
/// The default time budget, in seconds of wall time.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// How far one evaluation may go; 0 lifts a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Distinct rows per relation.
    pub max_rows: u64,
    /// Estimated memory of what the evaluation derives, in MiB.
    pub max_memory_mib: u64,
    /// Wall time of the evaluation, in seconds.
    pub timeout_secs: u64,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            max_rows: DEFAULT_MAX_ROWS,
            max_memory_mib: DEFAULT_MAX_MEMORY_MIB,
            timeout_secs: DEFAULT_TIMEOUT_SECS,
        }
    }
}

impl Budget {
    /// No limit at all (the built-in rules, whose size the index bounds).
    pub const UNLIMITED: Budget = Budget { max_rows: 0, max_memory_mib: 0, timeout_secs: 0 };
}

/// Which budget ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Rows,
    Memory,
    Time,
}

/// An evaluation stopped by its budget: which budget, the budget it had, and the relation being
/// derived when it ran out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exceeded {
    pub limit: Limit,
    pub budget: Budget,
    /// The relation's name (`?` for a query's answers).
    pub relation: String,
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = &self.budget;
        let rel = if self.relation == crate::dialect::QUERY_REL {
            "the query's answers".to_string()
        } else {
            format!("`{}`", self.relation)
        };
        let (what, flag, key) = match self.limit {
            Limit::Rows => (
                format!("the row budget ({} rows per relation) was exceeded: {rel} grew past it", b.max_rows),
                "--max-rows N",
                "query.max_rows",
            ),
            Limit::Memory => (
                format!(
                    "the memory budget ({} MiB, estimated from the rows derived, their indexes and the answer as \
                     text) was exceeded while deriving {rel}",
                    b.max_memory_mib
                ),
                "--max-memory MIB",
                "query.max_memory_mib",
            ),
            Limit::Time => (
                format!("the time budget ({} s) ran out while deriving {rel}", b.timeout_secs),
                "--timeout SECS",
                "query.timeout_secs",
            ),
        };
        write!(
            f,
            "evaluation stopped: {what}; narrow the rules (a body atom that shares no variable with the \
             others multiplies the rows), or raise the budget with `{flag}` or `{key}` in andon.toml (0 lifts it)"
        )
    }
}

impl std::error::Error for Exceeded {}

/// Estimated bytes of one row of an answer rendered as text, beyond its values.
const RENDERED_ROW_BYTES: u64 = 24;
/// Estimated bytes of one value of an answer rendered as text, beyond its text.
const RENDERED_VALUE_BYTES: u64 = 32;

/// Whether an answer of `rows` rows holding `values` values with `text` bytes of text in all fits
/// the memory budget once rendered; Err names `relation`, the relation answered.
pub fn rendered_fits(budget: Budget, rows: usize, values: usize, text: usize, relation: &str) -> Result<(), Exceeded> {
    let bytes = RENDERED_ROW_BYTES * rows as u64 + RENDERED_VALUE_BYTES * values as u64 + text as u64;
    if budget.max_memory_mib > 0 && bytes > budget.max_memory_mib.saturating_mul(1 << 20) {
        return Err(Exceeded { limit: Limit::Memory, budget, relation: relation.to_string() });
    }
    Ok(())
}

/// Elements (values) a rule's pending rows may grow by between two checks.
const CHECK_EVERY: usize = 1 << 16;
/// Pending rows below which they are not deduplicated before the rule ends.
const MIN_COMPACTION: usize = 1 << 20;
/// Rows a join may visit between two looks at the clock.
const TICKS: u32 = 1 << 12;

/// Watches one evaluation against its budget: rows visited (for the clock), the pending rows of
/// the rule being run, and the bytes held besides them.
pub struct Meter {
    budget: Budget,
    deadline: Option<Instant>,
    max_bytes: Option<u64>,
    ticks: u32,
    /// Bytes held outside the pending rows of the rule being run.
    held: u64,
    /// The pending rows' length (in values) at which to look again.
    check_at: usize,
    /// Pending rows beyond which they are deduplicated and counted.
    compact_at: usize,
    /// Set once a budget ran out: the evaluation unwinds.
    pub stop: Option<Limit>,
}

impl Meter {
    /// A meter for `budget`, its clock started now.
    pub fn new(budget: Budget) -> Meter {
        let deadline = (budget.timeout_secs > 0)
            .then(|| Instant::now().checked_add(Duration::from_secs(budget.timeout_secs)))
            .flatten();
        let max_bytes = (budget.max_memory_mib > 0).then(|| budget.max_memory_mib.saturating_mul(1 << 20));
        Meter { budget, deadline, max_bytes, ticks: TICKS, held: 0, check_at: 0, compact_at: 0, stop: None }
    }

    /// Whether the evaluation must stop.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// One row visited by a join; looks at the clock every [`TICKS`] rows. Says whether to stop.
    #[inline]
    pub fn visit(&mut self) -> bool {
        self.ticks -= 1;
        if self.ticks == 0 {
            self.ticks = TICKS;
            self.check_time();
        }
        self.stop.is_some()
    }

    /// Stops when the time budget ran out.
    pub fn check_time(&mut self) {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stop.get_or_insert(Limit::Time);
        }
    }

    /// A rule starts with `pending` rows of `arity` values to add to, while `held` bytes are held
    /// besides them.
    pub fn start_rule(&mut self, held: u64, pending: &[u32], arity: usize) {
        self.held = held;
        self.check_at = pending.len() + CHECK_EVERY;
        self.compact_at = self.next_compaction(pending.len() / arity.max(1)).saturating_mul(arity);
    }

    /// Whether the pending rows are due a look ([`Meter::grown`]).
    #[inline]
    pub fn due(&self, pending: &[u32]) -> bool {
        pending.len() >= self.check_at
    }

    /// The pending rows (`arity` values each) of the rule being run grew: checks the clock and the
    /// memory estimate; once they are due, deduplicates them and stops if they are over the row
    /// budget.
    pub fn grown(&mut self, pending: &mut Vec<u32>, arity: usize) {
        self.check_time();
        let bytes = self.held + 4 * pending.capacity() as u64;
        if self.max_bytes.is_some_and(|m| bytes > m) {
            self.stop.get_or_insert(Limit::Memory);
        }
        if arity > 0 && pending.len() > self.compact_at {
            *pending = sorted_dedup(pending, arity);
            let rows = pending.len() / arity;
            if !self.rows_fit(rows) {
                self.stop.get_or_insert(Limit::Rows);
            }
            self.compact_at = self.next_compaction(rows).saturating_mul(arity);
        }
        self.check_at = pending.len() + CHECK_EVERY;
    }

    /// The pending rows at which `rows` deduplicated rows are deduplicated again: twice as many
    /// (at least [`MIN_COMPACTION`]) so that duplicates never pile up, but once they may exceed
    /// the row budget; and never before half as many again, so the sorting adds up to a constant
    /// factor of the rows produced.
    fn next_compaction(&self, rows: usize) -> usize {
        let doubled = rows.saturating_mul(2).max(MIN_COMPACTION);
        match usize::try_from(self.budget.max_rows) {
            Ok(0) | Err(_) => doubled,
            Ok(max) => doubled.min(max.saturating_add(1)).max(rows.saturating_add(rows / 2)),
        }
    }

    /// Whether `rows` distinct rows of one relation fit the row budget.
    fn rows_fit(&self, rows: usize) -> bool {
        self.budget.max_rows == 0 || rows as u64 <= self.budget.max_rows
    }

    /// A relation was completed (or extended) to `rows` rows while `held` bytes are held in all:
    /// stops when either is over its budget, or the time is.
    pub fn settled(&mut self, rows: usize, held: u64) {
        if !self.rows_fit(rows) {
            self.stop.get_or_insert(Limit::Rows);
        }
        if self.max_bytes.is_some_and(|m| held > m) {
            self.stop.get_or_insert(Limit::Memory);
        }
        self.check_time();
    }

    /// The error for the budget that ran out while `relation` was derived.
    pub fn exceeded(&self, relation: &str) -> Option<Exceeded> {
        self.stop.map(|limit| Exceeded { limit, budget: self.budget, relation: relation.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_rows_are_deduplicated_before_they_count() {
        let mut m = Meter::new(Budget { max_rows: 3, ..Budget::UNLIMITED });
        let mut pending: Vec<u32> = Vec::new();
        m.start_rule(0, &pending, 2);
        for i in 0..40 {
            pending.extend([i % 3, 7]);
        }
        m.grown(&mut pending, 2);
        assert_eq!((m.stop, pending.len()), (None, 6));
        pending.extend([9, 9, 10, 10]);
        m.compact_at = 0;
        m.grown(&mut pending, 2);
        assert_eq!(m.stop, Some(Limit::Rows));
    }

    #[test]
    fn duplicates_never_pile_up_even_without_a_row_budget() {
        let mut m = Meter::new(Budget::UNLIMITED);
        let mut pending: Vec<u32> = Vec::new();
        m.start_rule(0, &pending, 1);
        pending.resize(MIN_COMPACTION + 1, 5);
        m.grown(&mut pending, 1);
        assert_eq!((m.stop, pending.as_slice()), (None, &[5][..]));
    }

    #[test]
    fn zero_lifts_a_limit() {
        let mut m = Meter::new(Budget::UNLIMITED);
        m.settled(usize::MAX, u64::MAX);
        for _ in 0..3 * TICKS {
            assert!(!m.visit());
        }
        let mut m = Meter::new(Budget { timeout_secs: 0, max_memory_mib: 1, max_rows: 0 });
        m.settled(10, 2 << 20);
        assert_eq!(m.stop, Some(Limit::Memory));
    }

    #[test]
    fn a_rendered_answer_counts_against_the_memory_budget() {
        let budget = Budget { max_memory_mib: 1, ..Budget::UNLIMITED };
        assert!(rendered_fits(budget, 1000, 4000, 100_000, "?").is_ok());
        let e = rendered_fits(budget, 10_000, 40_000, 100_000, "?").unwrap_err();
        assert_eq!(e.limit, Limit::Memory);
        assert!(rendered_fits(Budget::UNLIMITED, usize::MAX / 64, usize::MAX / 64, 0, "?").is_ok());
    }

    #[test]
    fn the_message_names_budget_relation_and_how_to_raise_it() {
        let e = Exceeded { limit: Limit::Rows, budget: Budget::default(), relation: "Pair".into() };
        let m = e.to_string();
        assert!(m.contains("row budget (20000000 rows per relation)") && m.contains("`Pair`"), "{m}");
        assert!(m.contains("--max-rows") && m.contains("query.max_rows"), "{m}");
        let e = Exceeded { limit: Limit::Time, budget: Budget::default(), relation: "?".into() };
        assert!(e.to_string().contains("time budget (60 s) ran out while deriving the query's answers"));
    }
}
