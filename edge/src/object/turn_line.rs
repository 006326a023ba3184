//! The turn line: one turn holds the conversation at a time ([`Slot`], released when
//! dropped); the posts that arrive meanwhile wait first come first served, at most
//! [`MAX_WAITING`] of them ([`Inner::acquire`]); a background turn waits however many are
//! ahead ([`Inner::acquire_unbounded`]); a regeneration takes the conversation only when it
//! is free ([`Inner::try_acquire`]).

use std::rc::Rc;

use futures_channel::oneshot;

use super::Inner;
use crate::error::ApiError;

/// Posts waiting for the running turn, at most; one more is refused (429).
pub(crate) const MAX_WAITING: usize = 4;

impl Inner {
    /// Waits for the conversation: at once when no turn runs, else after the turns ahead;
    /// 429 when [`MAX_WAITING`] posts already wait.
    pub(super) async fn acquire(self: &Rc<Self>) -> Result<Slot, ApiError> {
        if !self.busy.get() {
            self.busy.set(true);
            return Ok(Slot(self.clone()));
        }
        let rx = {
            let mut waiting = self.waiting.borrow_mut();
            waiting.retain(|tx| !tx.is_canceled());
            if waiting.len() >= MAX_WAITING {
                return Err(ApiError::ConversationBusy);
            }
            let (tx, rx) = oneshot::channel();
            waiting.push_back(tx);
            rx
        };
        rx.await
            .map_err(|_| ApiError::Internal(worker::Error::RustError("slot lost".into())))?;
        Ok(Slot(self.clone()))
    }

    /// The conversation after every turn ahead, however many wait (background turns: the
    /// queue's consumer waits rather than being refused).
    pub(super) async fn acquire_unbounded(self: &Rc<Self>) -> Result<Slot, ApiError> {
        if !self.busy.get() {
            self.busy.set(true);
            return Ok(Slot(self.clone()));
        }
        let (tx, rx) = oneshot::channel();
        self.waiting.borrow_mut().push_back(tx);
        rx.await
            .map_err(|_| ApiError::Internal(worker::Error::RustError("slot lost".into())))?;
        Ok(Slot(self.clone()))
    }

    /// The conversation at once when no turn runs or waits.
    pub(super) fn try_acquire(self: &Rc<Self>) -> Option<Slot> {
        if self.busy.get() {
            return None;
        }
        self.busy.set(true);
        Some(Slot(self.clone()))
    }

    /// The turn holding the conversation ended: the next post waiting takes it.
    fn release(&self) {
        loop {
            let next = self.waiting.borrow_mut().pop_front();
            match next {
                Some(tx) => {
                    if tx.send(()).is_ok() {
                        return;
                    }
                }
                None => {
                    self.busy.set(false);
                    return;
                }
            }
        }
    }
}

/// The conversation, held by one turn; released when dropped.
pub(crate) struct Slot(Rc<Inner>);

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Slot")
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.release();
    }
}
