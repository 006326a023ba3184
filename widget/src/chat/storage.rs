//! The conversation id kept in `localStorage` (nothing when storage is unavailable).

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

pub(super) fn storage_get(key: &str) -> Option<String> {
    storage()?
        .get_item(key)
        .ok()
        .flatten()
        .filter(|v| !v.is_empty())
}

pub(super) fn storage_set(key: &str, value: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(key, value);
    }
}

pub(super) fn storage_remove(key: &str) {
    if let Some(s) = storage() {
        let _ = s.remove_item(key);
    }
}
