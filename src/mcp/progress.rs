//! Progress notifications of a long call (a cold `index`, `check` with a base): sent only when
//! the request carried a `progressToken`, always increasing, in order, before the call's result.

use std::sync::Mutex;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::mpsc::UnboundedSender;

/// Where a call's work reports its progress; the server forwards each report in order.
pub(crate) struct Progress {
    token: Option<ProgressToken>,
    tx: Option<UnboundedSender<ProgressNotificationParam>>,
    /// The last progress value sent.
    last: Mutex<f64>,
}

impl Progress {
    pub(crate) fn new(
        token: Option<ProgressToken>,
        tx: Option<UnboundedSender<ProgressNotificationParam>>,
    ) -> Progress {
        Progress { token, tx, last: Mutex::new(0.0) }
    }

    /// Sends `value` with `total` and `message`, when it is above the last value sent (reports
    /// from parallel workers arrive out of order: a late, lower one is dropped).
    fn send(&self, value: f64, total: Option<f64>, message: String) {
        let (Some(token), Some(tx)) = (&self.token, &self.tx) else { return };
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if value <= *last {
            return;
        }
        *last = value;
        let mut p = ProgressNotificationParam::new(token.clone(), value);
        p.total = total;
        p.message = Some(message);
        let _ = tx.send(p);
    }
}

impl crate::api::Progress for Progress {
    /// A parse's progress, `(done, total)` files, reported about fifty times over the parse.
    fn files(&self, done: u64, total: u64) {
        let step = (total / 50).max(1);
        if total > 0 && (done.is_multiple_of(step) || done == total) {
            self.send(done as f64, Some(total as f64), format!("parsing {done}/{total} files"));
        }
    }

    /// A named phase of the work begins.
    fn phase(&self, message: &str) {
        let last = *self.last.lock().unwrap_or_else(|p| p.into_inner());
        self.send(last + 1.0, None, message.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Progress as _;

    #[test]
    fn reports_out_of_order_never_go_back_and_keep_their_message() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let p = Progress::new(Some(ProgressToken(rmcp::model::NumberOrString::Number(1))), Some(tx));
        for done in [2, 3, 1, 4, 7, 5, 6] {
            p.files(done, 7);
        }
        p.phase("judging");
        drop(p);
        let mut seen = Vec::new();
        while let Ok(n) = rx.try_recv() {
            seen.push((n.progress, n.total, n.message.unwrap()));
        }
        let want: Vec<(f64, Option<f64>, String)> = vec![
            (2.0, Some(7.0), "parsing 2/7 files".into()),
            (3.0, Some(7.0), "parsing 3/7 files".into()),
            (4.0, Some(7.0), "parsing 4/7 files".into()),
            (7.0, Some(7.0), "parsing 7/7 files".into()),
            (8.0, None, "judging".into()),
        ];
        assert_eq!(seen, want);
    }
}
