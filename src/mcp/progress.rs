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

    /// Sends `value` (raised above the last one sent) with `total` and `message`.
    fn send(&self, value: f64, total: Option<f64>, message: String) {
        let (Some(token), Some(tx)) = (&self.token, &self.tx) else { return };
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let value = if value > *last { value } else { *last + 1.0 };
        *last = value;
        let mut p = ProgressNotificationParam::new(token.clone(), value);
        p.total = total.map(|t| t.max(value));
        p.message = Some(message);
        let _ = tx.send(p);
    }

    /// A parse's progress, `(done, total)` files, reported about fifty times over the parse.
    pub(crate) fn files(&self) -> impl Fn(u64, u64) + Sync + '_ {
        move |done: u64, total: u64| {
            let step = (total / 50).max(1);
            if total > 0 && (done.is_multiple_of(step) || done == total) {
                self.send(done as f64, Some(total as f64), format!("parsing {done}/{total} files"));
            }
        }
    }

    /// A named phase of the work begins.
    pub(crate) fn phase(&self, message: &str) {
        let last = *self.last.lock().unwrap_or_else(|p| p.into_inner());
        self.send(last + 1.0, None, message.to_string());
    }
}
