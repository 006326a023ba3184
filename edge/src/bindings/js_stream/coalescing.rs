//! [`Coalescing`]: a [`BodyWriter`] that groups frames arriving in quick succession into
//! one write (see the parent module's documentation).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::{BodyWriter, clear_timeout, set_timeout};

/// The longest a frame waits for the frames after it before it is written on its own:
/// 20 writes a second at most, which still reads as a smooth stream (30 ms before; 50 ms
/// took the bench's CPU per streamed answer from ~52 to ~47 ms).
pub(crate) const FLUSH_INTERVAL_MS: f64 = 50.0;

/// What a [`Coalescing`] writer holds between writes.
struct Held {
    writer: BodyWriter,
    /// Frames not yet written.
    buffer: Vec<u8>,
    /// When the last write happened (the Worker's clock), if any did.
    last_write_ms: Option<f64>,
    /// The pending timer that writes what is held, if armed.
    timer: Option<JsValue>,
}

impl Held {
    fn flush(&mut self, now_ms: f64) {
        if !self.buffer.is_empty() {
            self.writer.write(&self.buffer);
            self.buffer.clear();
            self.last_write_ms = Some(now_ms);
        }
    }
}

/// A response body written in groups of frames (see the module's documentation).
pub(crate) struct Coalescing {
    held: Rc<RefCell<Held>>,
    /// Writes what is held; called by the timer armed when a frame is held back.
    on_timer: Closure<dyn FnMut()>,
}

impl Coalescing {
    pub(crate) fn new(writer: BodyWriter) -> Self {
        let held = Rc::new(RefCell::new(Held {
            writer,
            buffer: Vec::new(),
            last_write_ms: None,
            timer: None,
        }));
        let shared = held.clone();
        let on_timer = Closure::new(move || {
            let mut held = shared.borrow_mut();
            held.timer = None;
            held.flush(js_sys::Date::now());
        });
        Self { held, on_timer }
    }

    /// Queues `frame` with what is held and writes it all now.
    pub(crate) fn write_now(&self, frame: &[u8]) {
        let mut held = self.held.borrow_mut();
        held.buffer.extend_from_slice(frame);
        held.flush(js_sys::Date::now());
    }

    /// Queues `frame`: written now when the last write is at least [`FLUSH_INTERVAL_MS`]
    /// old (or there was none), otherwise with the frames that follow, at the latest when
    /// the interval is over.
    pub(crate) fn write_soon(&self, frame: &[u8]) {
        let now = js_sys::Date::now();
        let mut held = self.held.borrow_mut();
        held.buffer.extend_from_slice(frame);
        let since = held.last_write_ms.map_or(f64::INFINITY, |last| now - last);
        if since >= FLUSH_INTERVAL_MS {
            held.flush(now);
        } else if held.timer.is_none() {
            let wait = (FLUSH_INTERVAL_MS - since).ceil() as i32;
            held.timer = Some(set_timeout(self.on_timer.as_ref().unchecked_ref(), wait));
        }
    }

    /// Whether the client went away (a write was rejected).
    pub(crate) fn is_gone(&self) -> bool {
        self.held.borrow().writer.is_gone()
    }

    /// Writes the client has not read yet (see [`BodyWriter::unread_writes`]).
    pub(crate) fn unread_writes(&self) -> u64 {
        self.held.borrow().writer.unread_writes()
    }

    /// Writes the client has read so far.
    pub(crate) fn settled_writes(&self) -> u64 {
        self.held.borrow().writer.settled_writes()
    }

    /// Breaks the body (what is held is dropped): its reader sees an error.
    pub(crate) fn abort(&self, reason: &str) {
        let mut held = self.held.borrow_mut();
        if let Some(timer) = held.timer.take() {
            clear_timeout(&timer);
        }
        held.buffer.clear();
        held.writer.abort(reason);
    }

    /// Writes what is held and ends the body.
    pub(crate) fn close(&self) {
        let mut held = self.held.borrow_mut();
        if let Some(timer) = held.timer.take() {
            clear_timeout(&timer);
        }
        held.flush(js_sys::Date::now());
        held.writer.close();
    }
}

impl Drop for Coalescing {
    fn drop(&mut self) {
        // The timer must not call `on_timer` once it is dropped.
        if let Some(timer) = self.held.borrow_mut().timer.take() {
            clear_timeout(&timer);
        }
    }
}
