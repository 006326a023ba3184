//! What the loader tells the panel, through the iframe's URL.
//!
//! `embed.js` opens `/chat?site_key=pk_…#lang=vi&title=…&color=%230b3d91&mode=inline&origin=https%3A%2F%2Fshop.example`.
//! The public key is in the query: the Worker serves the page with that site's
//! `frame-ancestors` policy, so the panel uses that key and no other. The rest is in the
//! fragment, which never reaches the server or its logs. The browser decodes both
//! (`URLSearchParams`); this module only interprets the pairs.

use crate::i18n::Lang;

/// How the panel is embedded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Mode {
    /// Opened from the launcher; has a close button; Esc closes it.
    #[default]
    Popup,
    /// Placed into an element of the page; always open.
    Inline,
}

/// The panel's options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Options {
    /// The site's public key (`pk_…`, from the query), sent as `X-API-Key`.
    pub site_key: String,
    /// UI and conversation language chosen by the embed tag (else the site's).
    pub lang: Option<Lang>,
    /// Header title chosen by the embed tag (else the site's).
    pub title: Option<String>,
    /// Primary colour chosen by the embed tag.
    pub color: Option<String>,
    /// Popup or inline.
    pub mode: Mode,
    /// The host page's origin: as the loader states it when read from the URL, then, at
    /// boot, as verified by `host::embedder_origin`. The only target of the panel's
    /// `postMessage`s, and the embedder it names to the API.
    pub parent_origin: Option<String>,
    /// Start a new conversation instead of resuming the stored one.
    pub reset: bool,
    /// The signed user token (`data-user-token` on the tag), sent as `X-User-Token`.
    /// Kept in the fragment: never in a URL a server sees.
    pub user_token: Option<String>,
}

/// The fragment keys the loader sets.
pub(crate) const KEYS: [&str; 7] = ["lang", "title", "color", "mode", "origin", "reset", "token"];

impl Options {
    /// The options for public key `site_key` (the query's) and the fragment's decoded
    /// `(key, value)` pairs; unknown keys (a `site_key` among them) are ignored, blank
    /// values unset.
    pub(crate) fn from_pairs<K, V>(site_key: &str, pairs: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut options = Self {
            site_key: site_key.trim().to_string(),
            ..Self::default()
        };
        for (key, value) in pairs {
            let value = value.as_ref().trim();
            if value.is_empty() {
                continue;
            }
            match key.as_ref() {
                "lang" => options.lang = Lang::parse(value),
                "title" => options.title = Some(value.chars().take(80).collect()),
                "color" => options.color = Some(value.to_string()),
                "mode" if value == "inline" => options.mode = Mode::Inline,
                "origin" if value.starts_with("http://") || value.starts_with("https://") => {
                    options.parent_origin = Some(value.to_string());
                }
                "reset" => options.reset = value == "1",
                "token" => options.user_token = Some(value.to_string()),
                _ => {}
            }
        }
        options
    }

    /// The panel's language and title: the embed tag's, else the site's, else the
    /// defaults (Vietnamese; "Trợ lý ảo"/"Assistant").
    pub(crate) fn resolve(
        &self,
        site_lang: Option<Lang>,
        site_title: Option<&str>,
    ) -> (Lang, String) {
        let lang = self.lang.or(site_lang).unwrap_or_default();
        let title = self
            .title
            .as_deref()
            .or(site_title.map(str::trim).filter(|t| !t.is_empty()))
            .unwrap_or(lang.strings().title);
        (lang, title.to_string())
    }

    /// Where the conversation id is kept (per site key) in the panel's `localStorage`.
    pub(crate) fn storage_key(&self) -> String {
        format!("concierge.conversation.{}", self.site_key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_option() {
        let options = Options::from_pairs(
            "pk_demo",
            [
                // The query's key is the one the Worker served the page for: not this.
                ("site_key", "pk_other"),
                ("lang", "en-US"),
                ("title", " An Phát PC "),
                ("color", "#ff6600"),
                ("mode", "inline"),
                ("origin", "https://shop.example"),
                ("reset", "1"),
                ("token", "eyJzdWIiOiJ1In0.c2ln"),
                ("unknown", "x"),
            ],
        );
        assert_eq!(
            options,
            Options {
                site_key: "pk_demo".into(),
                lang: Some(Lang::En),
                title: Some("An Phát PC".into()),
                color: Some("#ff6600".into()),
                mode: Mode::Inline,
                parent_origin: Some("https://shop.example".into()),
                reset: true,
                user_token: Some("eyJzdWIiOiJ1In0.c2ln".into()),
            }
        );
        assert_eq!(options.storage_key(), "concierge.conversation.pk_demo");
    }

    #[test]
    fn the_tag_wins_over_the_site_and_the_site_over_defaults() {
        let tag = Options::from_pairs("pk_x", [("lang", "en"), ("title", "Shop")]);
        assert_eq!(
            tag.resolve(Some(Lang::Vi), Some("Site")),
            (Lang::En, "Shop".into())
        );
        let none = Options::default();
        assert_eq!(
            none.resolve(Some(Lang::En), Some("Site")),
            (Lang::En, "Site".into())
        );
        assert_eq!(
            none.resolve(Some(Lang::En), Some("  ")),
            (Lang::En, "Assistant".into())
        );
        assert_eq!(none.resolve(None, None), (Lang::Vi, "Trợ lý ảo".into()));
    }

    #[test]
    fn defaults_and_rejects() {
        let options = Options::from_pairs(
            "pk_x",
            [
                ("lang", "fr"),
                ("title", "   "),
                ("mode", "fullscreen"),
                ("origin", "javascript:x"),
                ("reset", "0"),
            ],
        );
        assert_eq!(options.lang, None);
        assert_eq!(options.title, None);
        assert_eq!(options.mode, Mode::Popup);
        assert_eq!(options.parent_origin, None);
        assert!(!options.reset);
        let long = "x".repeat(200);
        let options = Options::from_pairs("pk_x", [("title", long.as_str())]);
        assert_eq!(options.title.map(|t| t.len()), Some(80));
    }
}
