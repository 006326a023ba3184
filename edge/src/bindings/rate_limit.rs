//! The Workers rate-limiting binding, called structurally (`binding.limit({key})`) so it
//! works with both the production binding and the local simulator.

use wasm_bindgen_futures::JsFuture;
use worker::Env;

/// Whether `key` is still under the limit of binding `name`. `Err` when the binding is
/// missing, failed, or answered without a `success` flag.
pub(crate) async fn allow(env: &Env, name: &str, key: &str) -> Result<bool, worker::Error> {
    let binding = js_sys::Reflect::get(env, &name.into())?;
    if binding.is_undefined() {
        return Err(worker::Error::RustError(format!(
            "binding {name} is missing"
        )));
    }
    let limit: js_sys::Function = js_sys::Reflect::get(&binding, &"limit".into())?.into();
    let options = js_sys::Object::new();
    js_sys::Reflect::set(&options, &"key".into(), &key.into())?;
    let promise: js_sys::Promise = limit.call1(&binding, &options)?.into();
    let outcome = JsFuture::from(promise).await?;
    js_sys::Reflect::get(&outcome, &"success".into())?
        .as_bool()
        .ok_or_else(|| {
            worker::Error::RustError(format!("binding {name} answered without `success`"))
        })
}
