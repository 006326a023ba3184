//! The warranty rules' word lists (folded) and the scan's reach.

/// Labels that announce a number that is not a serial: phone, order, price, invoice,
/// account, voucher.
pub(super) const OTHER_LABELS: &[&[&str]] = &[
    &["so", "dien", "thoai"],
    &["dien", "thoai"],
    &["sdt"],
    &["dt"],
    &["phone"],
    &["tel"],
    &["hotline"],
    &["zalo"],
    &["goi"],
    &["call"],
    &["don", "hang"],
    &["ma", "don"],
    &["order"],
    &["gia"],
    &["price"],
    &["hoa", "don"],
    &["invoice"],
    &["stk"],
    &["tai", "khoan"],
    &["account"],
    &["voucher"],
    &["coupon"],
    &["ma", "giam", "gia"],
];

/// Words that may stand between a label and its value (folded).
pub(super) const FILLERS: &[&str] = &[
    "la", "cua", "em", "e", "minh", "toi", "anh", "chi", "ban", "may", "nay", "no", "do", "day",
    "a", "da", "thi", "nhu", "sau", "so", "ma", "cho", "shop", "ad", "oi", "nhe", "nha", "ne",
    "ha", "vay", "voi", "qua", "san", "pham", "sp", "con", "cai", "chiec", "ben", "is", "my",
    "the", "number", "nr", "num", "of", "this", "it", "its", "s", "here", "an", "i", "product",
    "device", "mine", "as", "follows", "code", "please", "pls", "ok", "okay", "yes", "thanks",
    "thank", "you", "hi", "hello", "m", "am",
];

/// Words that may surround a serial sent alone: politeness and "here it is" (folded).
pub(super) const POLITE: &[&str] = &[
    "la", "cua", "em", "e", "minh", "toi", "day", "a", "da", "nhe", "nha", "ne", "shop", "oi",
    "ad", "ok", "okay", "here", "it", "is", "its", "s", "my", "mine", "this", "thanks", "thank",
    "you", "please", "pls",
];

/// Product lines and well-known codes: followed by digits they name a model or a code
/// (`RTX4090`, `iphone15`, `COVID19`), and a word right after them is part of the name.
pub(super) const PRODUCT_WORDS: &[&str] = &[
    "rtx",
    "gtx",
    "gt",
    "rx",
    "arc",
    "radeon",
    "geforce",
    "quadro",
    "iphone",
    "ipad",
    "ipod",
    "imac",
    "macbook",
    "galaxy",
    "note",
    "pixel",
    "redmi",
    "poco",
    "xperia",
    "ryzen",
    "xeon",
    "core",
    "celeron",
    "pentium",
    "athlon",
    "ddr",
    "lpddr",
    "gddr",
    "ps",
    "xbox",
    "thinkpad",
    "ideapad",
    "yoga",
    "zenbook",
    "vivobook",
    "rog",
    "tuf",
    "strix",
    "legion",
    "nitro",
    "predator",
    "aspire",
    "swift",
    "omen",
    "pavilion",
    "victus",
    "envy",
    "spectre",
    "xps",
    "inspiron",
    "vostro",
    "latitude",
    "alienware",
    "surface",
    "windows",
    "win",
    "office",
    "android",
    "ios",
    "usb",
    "wifi",
    "hdmi",
    "mp",
    "covid",
    "intel",
    "amd",
    "nvidia",
    "asus",
    "msi",
    "acer",
    "dell",
    "hp",
    "lenovo",
    "samsung",
    "apple",
    "gigabyte",
    "logitech",
    "sony",
];

/// Units and currencies: a number followed by one is a quantity (`16GB`, `500 k`).
pub(super) const UNITS: &[&str] = &[
    "gb", "tb", "mb", "kb", "g", "ghz", "mhz", "hz", "w", "kw", "wh", "mah", "v", "k", "tr",
    "trieu", "p", "fps", "inch", "in", "cm", "mm", "m", "kg", "ms", "x", "th", "st", "nd", "rd",
    "d", "dong", "vnd", "usd", "nits", "bit", "nghin", "ngan", "h", "am", "pm", "min", "s",
];

/// How many filler words may stand between a label and its value.
pub(super) const MAX_FILLERS: usize = 6;
/// The most words in a label.
pub(super) const MAX_LABEL_WORDS: usize = 3;
/// How many words back a product name may reach (`Ryzen 7 7800X3D`).
pub(super) const MAX_NAME_WORDS: usize = 3;
