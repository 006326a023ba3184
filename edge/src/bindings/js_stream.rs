//! Byte streams on the platform's own stream objects, without a Rust task per chunk.
//!
//! - [`BodyWriter`]: a response body the turn writes frames into. It is the writable side of
//!   an `IdentityTransformStream` (workerd's native byte pipe); the readable side is the
//!   response body. A write is one call into JS: no channel, no task woken to pull.
//! - [`Coalescing`]: a [`BodyWriter`] that groups frames arriving in quick succession
//!   (a model's tokens, often a few ms apart) into one write, at most one write per
//!   [`FLUSH_INTERVAL_MS`](coalescing::FLUSH_INTERVAL_MS): a write into the body costs
//!   the Worker far more CPU than the bytes it carries. Every frame stays its own event;
//!   only their grouping into writes changes (`js_stream/coalescing.rs`).
//! - [`ChunkReader`]: reads a fetched body chunk by chunk with one pair of callbacks made
//!   once, instead of two new closures and a new future per chunk. A gathering reader
//!   can wait for several chunks in one read (workerd's `readAtLeast`): each read that
//!   reaches the Worker costs a promise, a wake-up and a pass through the turn's futures,
//!   far more than the bytes it carries.

use std::cell::RefCell;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Poll, Waker};

use js_sys::{Promise, Uint8Array};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use worker::web_sys::ReadableStream;

mod coalescing;

pub(crate) use coalescing::Coalescing;

#[wasm_bindgen]
extern "C" {
    /// `IdentityTransformStream` (workerd) or `TransformStream`.
    type Pipe;
    #[wasm_bindgen(method, getter)]
    fn readable(this: &Pipe) -> ReadableStream;
    #[wasm_bindgen(method, getter)]
    fn writable(this: &Pipe) -> Writable;

    type Writable;
    #[wasm_bindgen(method, js_name = getWriter)]
    fn get_writer(this: &Writable) -> Writer;

    type Writer;
    #[wasm_bindgen(method)]
    fn write(this: &Writer, chunk: &Uint8Array) -> Promise;
    #[wasm_bindgen(method)]
    fn close(this: &Writer) -> Promise;
    #[wasm_bindgen(method)]
    fn abort(this: &Writer, reason: &JsValue) -> Promise;

    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &js_sys::Function, ms: i32) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue);

    /// A promise, settled into JS functions (that own their Rust closures).
    type Thenable;
    #[wasm_bindgen(method, js_name = then)]
    fn then_fns(this: &Thenable, ok: &js_sys::Function, err: &js_sys::Function) -> JsValue;
    #[wasm_bindgen(method, js_name = catch)]
    fn catch_fn(this: &Thenable, err: &js_sys::Function) -> JsValue;

    /// A `ReadableStream`, as the source of `pipeTo`.
    type Source;
    #[wasm_bindgen(method, js_name = pipeTo)]
    fn pipe_to(this: &Source, dest: &Writable, options: &js_sys::Object) -> Promise;

    type Body;
    #[wasm_bindgen(method, js_name = getReader)]
    fn get_reader(this: &Body) -> Reader;

    type Reader;
    #[wasm_bindgen(method)]
    fn read(this: &Reader) -> Promise;
    /// workerd's BYOB extension: resolves once at least `min` bytes (or the end) are in.
    #[wasm_bindgen(method, js_name = readAtLeast)]
    fn read_at_least(this: &Reader, min: u32, view: &Uint8Array) -> Promise;
    #[wasm_bindgen(method, js_name = releaseLock)]
    fn release_lock(this: &Reader);
    #[wasm_bindgen(method, catch, js_name = getReader)]
    fn get_reader_with(this: &Body, options: &js_sys::Object) -> Result<Reader, JsValue>;
}

/// The writing end of a streamed response body.
pub(crate) struct BodyWriter {
    writer: Writer,
    /// Swallows a write's rejection (the client went away): the turn goes on regardless.
    /// A JS function that owns its Rust closure: a write settling after this writer is
    /// gone (the client left, the object was reset) must not call a dropped closure.
    ignore: js_sys::Function,
    /// Set once a write was rejected: the body is gone.
    gone: Rc<std::cell::Cell<bool>>,
    /// Counts a settled write (the reader took it); owns its Rust closure, like `ignore`.
    settle: js_sys::Function,
    /// Writes made and writes settled: the difference is what the reader has not taken
    /// yet (a client that stops reading leaves it growing).
    written: std::cell::Cell<u64>,
    settled: Rc<std::cell::Cell<u64>>,
}

impl std::fmt::Debug for BodyWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyWriter").finish_non_exhaustive()
    }
}

impl BodyWriter {
    /// A writer and the body it feeds.
    pub(crate) fn new() -> worker::Result<(Self, ReadableStream)> {
        let pipe = new_pipe()?;
        Ok((Self::of(pipe.writable().get_writer()), pipe.readable()))
    }

    fn of(writer: Writer) -> Self {
        let gone = Rc::new(std::cell::Cell::new(false));
        let flag = gone.clone();
        let ignore = Closure::<dyn FnMut(JsValue)>::new(move |_: JsValue| flag.set(true))
            .into_js_value()
            .unchecked_into();
        let settled = Rc::new(std::cell::Cell::new(0u64));
        let count = settled.clone();
        let settle =
            Closure::<dyn FnMut(JsValue)>::new(move |_: JsValue| count.set(count.get() + 1))
                .into_js_value()
                .unchecked_into();
        Self {
            writer,
            ignore,
            gone,
            settle,
            written: std::cell::Cell::new(0),
            settled,
        }
    }

    /// Whether a write was rejected (the client went away).
    pub(crate) fn is_gone(&self) -> bool {
        self.gone.get()
    }

    /// Writes the reader has not taken yet.
    pub(crate) fn unread_writes(&self) -> u64 {
        self.written.get().saturating_sub(self.settled.get())
    }

    /// Writes the reader has taken so far.
    pub(crate) fn settled_writes(&self) -> u64 {
        self.settled.get()
    }

    /// Queue `bytes` (copied) for the client.
    pub(crate) fn write(&self, bytes: &[u8]) {
        let chunk = Uint8Array::from(bytes);
        self.written.set(self.written.get() + 1);
        let _ = self
            .writer
            .write(&chunk)
            .unchecked_ref::<Thenable>()
            .then_fns(&self.settle, &self.ignore);
    }

    /// Break the body: its reader sees an error, not an end.
    pub(crate) fn abort(&self, reason: &str) {
        let _ = self
            .writer
            .abort(&js_sys::Error::new(reason).into())
            .unchecked_ref::<Thenable>()
            .catch_fn(&self.ignore);
    }

    /// End the body after what was written.
    pub(crate) fn close(&self) {
        let _ = self
            .writer
            .close()
            .unchecked_ref::<Thenable>()
            .catch_fn(&self.ignore);
    }
}

/// A body fed from another stream by the platform's own pipe (`pipeTo`: no Rust, no JS per
/// chunk), then — once that stream has ended or broken — by a [`BodyWriter`].
pub(crate) struct Piped {
    pipe: Pipe,
    done: Promise,
}

impl std::fmt::Debug for Piped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Piped").finish_non_exhaustive()
    }
}

impl Piped {
    /// A body fed from `source`, and the pipe to [`finish`](Self::finish).
    pub(crate) fn from(source: &ReadableStream) -> worker::Result<(ReadableStream, Self)> {
        let pipe = new_pipe()?;
        let options = js_sys::Object::new();
        js_sys::Reflect::set(&options, &"preventClose".into(), &true.into())?;
        js_sys::Reflect::set(&options, &"preventAbort".into(), &true.into())?;
        let done = source
            .unchecked_ref::<Source>()
            .pipe_to(&pipe.writable(), &options);
        Ok((pipe.readable(), Self { pipe, done }))
    }

    /// Waits for `source` to end: whether it ended cleanly (not broken, and the body was not
    /// cancelled), and the writer of the rest of the body (which the caller closes).
    pub(crate) async fn finish(self) -> (bool, BodyWriter) {
        let ok = wasm_bindgen_futures::JsFuture::from(self.done)
            .await
            .is_ok();
        (ok, BodyWriter::of(self.pipe.writable().get_writer()))
    }
}

/// An `IdentityTransformStream` (workerd's native byte pipe), or a `TransformStream`.
fn new_pipe() -> worker::Result<Pipe> {
    let global = js_sys::global();
    let class = ["IdentityTransformStream", "TransformStream"]
        .into_iter()
        .find_map(|name| {
            js_sys::Reflect::get(&global, &name.into())
                .ok()
                .and_then(|c| c.dyn_into::<js_sys::Function>().ok())
        })
        .ok_or_else(|| worker::Error::RustError("no TransformStream".into()))?;
    Ok(js_sys::Reflect::construct(&class, &js_sys::Array::new())?.unchecked_into())
}

#[derive(Default)]
struct ReadState {
    result: Option<Result<JsValue, JsValue>>,
    waker: Option<Waker>,
    pending: bool,
}

/// Reads a body chunk by chunk.
pub(crate) struct ChunkReader {
    reader: Reader,
    /// Whether `reader` is a BYOB reader with workerd's `readAtLeast`.
    gathers: bool,
    /// The least bytes the next read waits for (1: whatever arrives).
    min: u32,
    state: Rc<RefCell<ReadState>>,
    /// JS functions that own their Rust closures: a read settling after this reader is
    /// dropped must not call a dropped closure.
    on_ok: js_sys::Function,
    on_err: js_sys::Function,
}

impl ChunkReader {
    pub(crate) fn new(body: &ReadableStream) -> Self {
        Self::of(body.unchecked_ref::<Body>().get_reader(), false)
    }

    fn of(reader: Reader, gathers: bool) -> Self {
        let state = Rc::new(RefCell::new(ReadState::default()));
        let settle = |state: Rc<RefCell<ReadState>>, ok: bool| {
            Closure::<dyn FnMut(JsValue)>::new(move |value: JsValue| {
                let waker = {
                    let mut state = state.borrow_mut();
                    state.result = Some(if ok { Ok(value) } else { Err(value) });
                    state.pending = false;
                    state.waker.take()
                };
                if let Some(waker) = waker {
                    waker.wake();
                }
            })
            .into_js_value()
            .unchecked_into::<js_sys::Function>()
        };
        Self {
            reader,
            gathers,
            min: 1,
            on_ok: settle(state.clone(), true),
            on_err: settle(state.clone(), false),
            state,
        }
    }

    /// A reader that can wait for several chunks at once ([`set_min`](Self::set_min)):
    /// the platform's byte-stream (BYOB) reader with workerd's `readAtLeast`, where the
    /// body is a byte stream that has it; otherwise an ordinary [`new`](Self::new) reader.
    pub(crate) fn gathering(body: &ReadableStream) -> Self {
        let options = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&options, &"mode".into(), &"byob".into());
        match body.unchecked_ref::<Body>().get_reader_with(&options) {
            Ok(byob) if js_sys::Reflect::has(&byob, &"readAtLeast".into()).unwrap_or(false) => {
                Self::of(byob, true)
            }
            Ok(byob) => {
                byob.release_lock();
                Self::new(body)
            }
            Err(_) => Self::new(body),
        }
    }

    /// The least bytes the next reads wait for (a gathering reader only).
    pub(crate) fn set_min(&mut self, min: u32) {
        self.min = min.max(1);
    }

    /// The next chunk; `None` at the end of the body. A read in flight when the returned
    /// future is dropped (a timeout) is kept and answered by the next call.
    pub(crate) async fn next(&mut self) -> Option<Result<Vec<u8>, String>> {
        let result = poll_fn(|cx| {
            let mut state = self.state.borrow_mut();
            if let Some(result) = state.result.take() {
                return Poll::Ready(result);
            }
            if !state.pending {
                state.pending = true;
                let read = if self.gathers {
                    let view = Uint8Array::new_with_length(self.min.max(16_384));
                    self.reader.read_at_least(self.min, &view)
                } else {
                    self.reader.read()
                };
                let _ = read
                    .unchecked_ref::<Thenable>()
                    .then_fns(&self.on_ok, &self.on_err);
            }
            state.waker = Some(cx.waker().clone());
            Poll::Pending
        })
        .await;
        match result {
            // An `Error` stringifies to `{}`: its message says what happened.
            Err(error) => Some(Err(match error.dyn_ref::<js_sys::Error>() {
                Some(error) => String::from(error.message()),
                None => js_sys::JSON::stringify(&error)
                    .map(String::from)
                    .unwrap_or_else(|_| "stream error".into()),
            })),
            Ok(step) => {
                let done = js_sys::Reflect::get(&step, &"done".into())
                    .map(|d| d.is_truthy())
                    .unwrap_or(true);
                if done {
                    return None;
                }
                let value = js_sys::Reflect::get(&step, &"value".into()).ok()?;
                Some(Ok(value.unchecked_into::<Uint8Array>().to_vec()))
            }
        }
    }
}
