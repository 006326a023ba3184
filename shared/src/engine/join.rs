//! Running two futures on one thread, without an executor: the engine's few combinators.

use core::future::{Future, poll_fn};
use core::pin::pin;
use core::task::Poll;

/// Runs `store` and `answer` together. `store`'s failure ends both at once (the answer is
/// dropped unfinished); otherwise both run to their end.
///
/// The answer is polled first: its model request is on its way before the write is.
pub(super) async fn alongside<S, A, T, E, R>(store: S, answer: A) -> Result<(T, R), E>
where
    S: Future<Output = Result<T, E>>,
    A: Future<Output = R>,
{
    let (mut store, mut answer) = (pin!(store), pin!(answer));
    let (mut stored, mut answered) = (None, None);
    poll_fn(|cx| {
        if answered.is_none()
            && let Poll::Ready(result) = answer.as_mut().poll(cx)
        {
            answered = Some(result);
        }
        if stored.is_none()
            && let Poll::Ready(result) = store.as_mut().poll(cx)
        {
            match result {
                Ok(value) => stored = Some(value),
                Err(error) => return Poll::Ready(Err(error)),
            }
        }
        // The write just opened the gate: the answer may go on at once.
        if stored.is_some()
            && answered.is_none()
            && let Poll::Ready(result) = answer.as_mut().poll(cx)
        {
            answered = Some(result);
        }
        match (stored.take(), answered.take()) {
            (Some(value), Some(result)) => Poll::Ready(Ok((value, result))),
            (value, result) => {
                (stored, answered) = (value, result);
                Poll::Pending
            }
        }
    })
    .await
}

/// Runs `a` and `b` together to both their ends.
pub(super) async fn both<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut a_out, mut b_out) = (None, None);
    poll_fn(|cx| {
        if a_out.is_none()
            && let Poll::Ready(out) = a.as_mut().poll(cx)
        {
            a_out = Some(out);
        }
        if b_out.is_none()
            && let Poll::Ready(out) = b.as_mut().poll(cx)
        {
            b_out = Some(out);
        }
        match (a_out.take(), b_out.take()) {
            (Some(a), Some(b)) => Poll::Ready((a, b)),
            (a, b) => {
                (a_out, b_out) = (a, b);
                Poll::Pending
            }
        }
    })
    .await
}

/// Runs `a` and `b` until either ends; `true` when `a` did (polled first).
pub(super) async fn first<A: Future, B: Future>(a: A, b: B) -> bool {
    let (mut a, mut b) = (pin!(a), pin!(b));
    poll_fn(|cx| {
        if a.as_mut().poll(cx).is_ready() {
            return Poll::Ready(true);
        }
        if b.as_mut().poll(cx).is_ready() {
            return Poll::Ready(false);
        }
        Poll::Pending
    })
    .await
}
