//! Telling the caller that a request has gone out.
//!
//! The agent commits the user's prompt (and, for a new run, creates the
//! history database) while the prompt's request is in flight rather than
//! before it: that work waits for [`Sent`] so that it does not compete with
//! building and sending the request (two cores, several threads), and the
//! chat waits for the commit before it handles the answer.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::oneshot;

/// Fired (or dropped) once the request body it was given to has been handed
/// to the connection, or when the request ends without it (an error before
/// sending, a cancel). Pass it to [`crate::GeminiClient::stream_notifying`].
pub type Sent = oneshot::Sender<()>;

/// A request body of known length (so the request keeps its
/// `Content-Length`) that fires its [`Sent`] when the connection has taken
/// all of it: the connection drops the body then, before it writes the
/// request out; dropped unsent, it fires too.
pub(crate) struct SignallingBody {
    data: Option<Bytes>,
    sent: Option<Sent>,
}

impl SignallingBody {
    pub(crate) fn new(data: Bytes, sent: Sent) -> Self {
        Self {
            data: Some(data),
            sent: Some(sent),
        }
    }

    fn fire(&mut self) {
        if let Some(sent) = self.sent.take() {
            let _ = sent.send(());
        }
    }
}

impl Body for SignallingBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        match this.data.take() {
            Some(data) => Poll::Ready(Some(Ok(Frame::data(data)))),
            None => {
                this.fire();
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.data.as_ref().map_or(0, |d| d.len() as u64))
    }
}

impl Drop for SignallingBody {
    fn drop(&mut self) {
        self.fire();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn the_body_is_whole_with_its_length_and_fires_once_taken() {
        let (tx, mut rx) = oneshot::channel();
        let mut body = SignallingBody::new(Bytes::from_static(b"{\"a\":1}"), tx);
        assert_eq!(body.size_hint().exact(), Some(7));
        assert!(!body.is_end_stream());
        let frame = body.frame().await.unwrap().unwrap();
        assert_eq!(frame.into_data().unwrap(), Bytes::from_static(b"{\"a\":1}"));
        assert!(body.is_end_stream());
        assert!(rx.try_recv().is_err(), "not before the connection lets go");
        drop(body);
        assert_eq!(rx.try_recv(), Ok(()));
    }

    #[test]
    fn a_body_dropped_unsent_fires_too() {
        let (tx, mut rx) = oneshot::channel();
        drop(SignallingBody::new(Bytes::from_static(b"x"), tx));
        assert_eq!(rx.try_recv(), Ok(()));
    }
}
