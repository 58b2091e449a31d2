//! The client closing stdin ends the session only once every call in flight has answered: the
//! end of input is held back while a call runs, so a long call (a cold `index`, a `loop` step)
//! still writes its result to stdout, which stays open.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;

/// The calls in flight.
#[derive(Clone)]
pub(crate) struct InFlight(std::sync::Arc<watch::Sender<usize>>);

/// One call in flight, until dropped (answered, failed or cancelled).
pub(crate) struct Call(InFlight);

impl InFlight {
    pub(crate) fn new() -> InFlight {
        InFlight(std::sync::Arc::new(watch::channel(0).0))
    }

    /// A call begins.
    pub(crate) fn begin(&self) -> Call {
        self.0.send_modify(|n| *n += 1);
        Call(self.clone())
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.0.0.send_modify(|n| *n -= 1);
    }
}

/// `R` whose end of input waits until no call is in flight.
pub(crate) struct UntilIdle<R> {
    inner: R,
    calls: InFlight,
    idle: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl<R> UntilIdle<R> {
    pub(crate) fn new(inner: R, calls: InFlight) -> UntilIdle<R> {
        UntilIdle { inner, calls, idle: None }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for UntilIdle<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        if self.idle.is_none() {
            let before = buf.filled().len();
            ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
            if buf.filled().len() > before || buf.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            let mut rx = self.calls.0.subscribe();
            self.idle = Some(Box::pin(async move {
                let _ = rx.wait_for(|n| *n == 0).await;
            }));
        }
        let idle = self.idle.as_mut().expect("set above");
        ready!(idle.as_mut().poll(cx));
        // the end of input, now that every call has answered
        Poll::Ready(Ok(()))
    }
}
