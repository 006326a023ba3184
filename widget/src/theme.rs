//! Colours: the merchant's primary colour, made readable (WCAG 2.x AA).
//!
//! A merchant picks any primary colour. The panel uses it in two ways, and fixes what it
//! must so that both meet AA (4.5:1 for normal text):
//! - as a **background** (header, the visitor's bubbles, the send button), with
//!   [`Theme::on_primary`] as the text colour on it: white when white reaches 4.5:1,
//!   otherwise black (one of the two always does: the worst case is about 4.58:1);
//! - as **text and outlines on white** (links, starter prompts, focus rings), as
//!   [`Theme::accent`]: the primary colour darkened just enough to reach 4.5:1 on white.
//!
//! The loader (`embed.js`) applies the same white-or-black rule to the launcher.

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rgb(pub u8, pub u8, pub u8);

/// WCAG AA for normal text.
pub(crate) const AA: f64 = 4.5;

/// White.
pub(crate) const WHITE: Rgb = Rgb(255, 255, 255);
/// Black.
pub(crate) const BLACK: Rgb = Rgb(0, 0, 0);
/// The default primary colour (deep blue).
pub(crate) const DEFAULT_PRIMARY: Rgb = Rgb(0x0b, 0x3d, 0x91);

impl Rgb {
    /// Parse `#rgb` or `#rrggbb` (the `#` is optional; case-insensitive).
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let hex = text.trim();
        let hex = hex.strip_prefix('#').unwrap_or(hex);
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let channel = |s: &str| u8::from_str_radix(s, 16).ok();
        match hex.len() {
            3 => {
                let mut c = hex.chars().map(|c| c.to_digit(16).map(|d| (d * 17) as u8));
                Some(Self(c.next()??, c.next()??, c.next()??))
            }
            6 => Some(Self(
                channel(&hex[0..2])?,
                channel(&hex[2..4])?,
                channel(&hex[4..6])?,
            )),
            _ => None,
        }
    }

    /// `#rrggbb`.
    pub(crate) fn to_hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// WCAG relative luminance, 0 (black) to 1 (white).
    pub(crate) fn luminance(self) -> f64 {
        fn linear(c: u8) -> f64 {
            let c = f64::from(c) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                pow((c + 0.055) / 1.055, 2.4)
            }
        }
        0.2126 * linear(self.0) + 0.7152 * linear(self.1) + 0.0722 * linear(self.2)
    }

    /// This colour mixed with black: `amount` 0 keeps it, 1 gives black.
    fn darken(self, amount: f64) -> Self {
        let keep = 1.0 - amount.clamp(0.0, 1.0);
        let ch = |c: u8| (f64::from(c) * keep).round() as u8;
        Self(ch(self.0), ch(self.1), ch(self.2))
    }
}

/// `x^y`. In the browser, JavaScript's `Math.pow` (Rust's would add libm's `pow` to the
/// download).
#[cfg(target_arch = "wasm32")]
fn pow(x: f64, y: f64) -> f64 {
    js_sys::Math::pow(x, y)
}

#[cfg(not(target_arch = "wasm32"))]
fn pow(x: f64, y: f64) -> f64 {
    x.powf(y)
}

/// WCAG contrast ratio between two colours, 1 to 21.
pub(crate) fn contrast(a: Rgb, b: Rgb) -> f64 {
    let (la, lb) = (a.luminance(), b.luminance());
    let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
    (hi + 0.05) / (lo + 0.05)
}

/// The panel's colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Theme {
    /// The merchant's colour, as given.
    pub primary: Rgb,
    /// Text on [`primary`](Self::primary): white or black, whichever reaches AA.
    pub on_primary: Rgb,
    /// The primary colour for text and outlines on white, darkened to reach AA.
    pub accent: Rgb,
}

impl Theme {
    /// The theme for a merchant colour (`#rgb`/`#rrggbb`); the default when absent or
    /// unparseable.
    pub(crate) fn new(primary: Option<&str>) -> Self {
        let primary = primary.and_then(Rgb::parse).unwrap_or(DEFAULT_PRIMARY);
        let on_primary = if contrast(primary, WHITE) >= AA {
            WHITE
        } else {
            BLACK
        };
        let mut accent = primary;
        let mut step = 0.0;
        while contrast(accent, WHITE) < AA && step < 1.0 {
            step += 0.02;
            accent = primary.darken(step);
        }
        Self {
            primary,
            on_primary,
            accent,
        }
    }

    /// CSS custom properties to set on the panel's root.
    pub(crate) fn css_vars(&self) -> [(&'static str, String); 3] {
        [
            ("--cw-primary", self.primary.to_hex()),
            ("--cw-on-primary", self.on_primary.to_hex()),
            ("--cw-accent", self.accent.to_hex()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stylesheet's fixed colours (`widget/style/widget.css`): text on backgrounds.
    const FIXED_PAIRS: [(Rgb, Rgb); 4] = [
        (Rgb(0x1f, 0x23, 0x28), WHITE),                 // body text
        (Rgb(0x1f, 0x23, 0x28), Rgb(0xf0, 0xf3, 0xf6)), // assistant bubble
        (Rgb(0x57, 0x60, 0x6a), WHITE),                 // secondary text
        (Rgb(0xa4, 0x0e, 0x26), Rgb(0xff, 0xeb, 0xe9)), // error text
    ];

    /// Dark mode's colours (`widget/style/widget.css`, `[data-theme="dark"]`).
    const DARK_BODY: Rgb = Rgb(0x14, 0x17, 0x1c);
    const DARK_BUBBLE: Rgb = Rgb(0x26, 0x2c, 0x34);
    const DARK_PAIRS: [(Rgb, Rgb); 7] = [
        (Rgb(0xe6, 0xed, 0xf3), DARK_BODY),             // body text
        (Rgb(0xe6, 0xed, 0xf3), DARK_BUBBLE),           // assistant bubble
        (Rgb(0xa8, 0xb1, 0xbb), DARK_BODY),             // secondary text
        (Rgb(0xa8, 0xb1, 0xbb), DARK_BUBBLE),           // secondary text in a bubble
        (Rgb(0xff, 0xb4, 0xab), Rgb(0x42, 0x18, 0x1c)), // error text
        (Rgb(0x6c, 0xd4, 0x8a), DARK_BUBBLE),           // a tool done
        (Rgb(0xff, 0xb4, 0xab), DARK_BUBBLE),           // a tool failed
    ];

    /// `color-mix(in srgb, c 35%, #fff)`, dark mode's accent (the stylesheet mixes it).
    fn dark_accent(c: Rgb) -> Rgb {
        let mix = |v: u8| (f64::from(v) * 0.35 + 255.0 * 0.65).round() as u8;
        Rgb(mix(c.0), mix(c.1), mix(c.2))
    }

    #[test]
    fn dark_mode_meets_aa_with_any_merchant_colour() {
        for (fg, bg) in DARK_PAIRS {
            assert!(contrast(fg, bg) >= AA, "{fg:?} on {bg:?}");
        }
        let steps = [0u8, 0x33, 0x66, 0x99, 0xcc, 0xff];
        for r in steps {
            for g in steps {
                for b in steps {
                    let accent = dark_accent(Rgb(r, g, b));
                    assert!(contrast(accent, DARK_BUBBLE) >= AA, "{accent:?}");
                    assert!(contrast(accent, DARK_BODY) >= AA, "{accent:?}");
                }
            }
        }
    }

    #[test]
    fn parses_hex_colours() {
        assert_eq!(Rgb::parse("#0b3d91"), Some(DEFAULT_PRIMARY));
        assert_eq!(Rgb::parse("0B3D91"), Some(DEFAULT_PRIMARY));
        assert_eq!(Rgb::parse("#fa0"), Some(Rgb(0xff, 0xaa, 0x00)));
        for bad in [
            "", "#", "#12", "#12345", "#gggggg", "red", "#ffffff0", "#ééé",
        ] {
            assert_eq!(Rgb::parse(bad), None, "{bad}");
        }
        assert_eq!(Rgb(1, 2, 255).to_hex(), "#0102ff");
    }

    #[test]
    fn contrast_matches_wcag_reference_values() {
        assert!((contrast(BLACK, WHITE) - 21.0).abs() < 1e-9);
        assert!((contrast(WHITE, WHITE) - 1.0).abs() < 1e-9);
        // #767676 on white is the classic just-AA grey (4.54:1).
        assert!((contrast(Rgb(0x76, 0x76, 0x76), WHITE) - 4.54).abs() < 0.01);
    }

    #[test]
    fn default_theme_meets_aa() {
        let theme = Theme::new(None);
        assert_eq!(theme.primary, DEFAULT_PRIMARY);
        assert_eq!(theme.on_primary, WHITE);
        assert_eq!(theme.accent, DEFAULT_PRIMARY, "already AA on white");
        assert!(contrast(theme.primary, theme.on_primary) >= 10.0);
        for (fg, bg) in FIXED_PAIRS {
            assert!(contrast(fg, bg) >= AA, "{fg:?} on {bg:?}");
        }
    }

    #[test]
    fn light_merchant_colours_get_dark_text_and_a_darker_accent() {
        let theme = Theme::new(Some("#ffd400")); // yellow
        assert_eq!(theme.on_primary, BLACK);
        assert!(contrast(theme.accent, WHITE) >= AA);
        assert_ne!(theme.accent, theme.primary);
        assert!(
            contrast(theme.accent, WHITE) < AA + 0.5,
            "darkened only as needed"
        );
    }

    #[test]
    fn every_colour_meets_aa_both_ways() {
        // A coarse sweep of the RGB cube, both extremes included.
        let steps = [0u8, 0x33, 0x66, 0x77, 0x88, 0x99, 0xcc, 0xff];
        for r in steps {
            for g in steps {
                for b in steps {
                    let hex = Rgb(r, g, b).to_hex();
                    let theme = Theme::new(Some(&hex));
                    assert!(contrast(theme.primary, theme.on_primary) >= AA, "{hex}");
                    assert!(contrast(theme.accent, WHITE) >= AA, "{hex}");
                }
            }
        }
    }

    #[test]
    fn unparseable_colours_fall_back_to_the_default() {
        assert_eq!(Theme::new(Some("javascript:x")), Theme::new(None));
        let vars = Theme::new(None).css_vars();
        assert_eq!(vars[0], ("--cw-primary", "#0b3d91".to_string()));
        assert_eq!(vars[1].1, "#ffffff");
    }
}
