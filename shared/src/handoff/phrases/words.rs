//! The vocabulary [`asks_for_person`](super::asks_for_person) matches with: the persons
//! (and how clearly each names a support person), the verbs that ask for one, the small
//! words allowed around them, and the words that cancel or change a match.

/// How clearly a phrase names a person who is not the assistant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Clarity {
    /// A support person beyond doubt ("tư vấn viên", "a human", "live agent").
    Clear,
    /// Anyone ("nhân viên", "someone", "staff"): a request only after a contact verb.
    Plain,
}

/// The persons, Vietnamese and English. The longest match at a position wins.
pub(super) const PERSONS: &[(&str, Clarity)] = &[
    ("nhân viên tư vấn", Clarity::Clear),
    ("nhân viên hỗ trợ", Clarity::Clear),
    ("nhân viên chăm sóc khách hàng", Clarity::Clear),
    ("nhân viên cskh", Clarity::Clear),
    ("nhân viên thật", Clarity::Clear),
    ("nhân viên trực", Clarity::Clear),
    ("nhân viên trực tuyến", Clarity::Clear),
    ("tư vấn viên", Clarity::Clear),
    ("người thật", Clarity::Clear),
    ("người thực", Clarity::Clear),
    ("con người", Clarity::Clear),
    ("người trực", Clarity::Clear),
    ("người hỗ trợ", Clarity::Clear),
    ("người tư vấn", Clarity::Clear),
    ("người phụ trách", Clarity::Clear),
    ("cskh", Clarity::Clear),
    ("chăm sóc khách hàng", Clarity::Clear),
    ("bộ phận chăm sóc khách hàng", Clarity::Clear),
    ("bộ phận hỗ trợ", Clarity::Clear),
    ("tổng đài viên", Clarity::Clear),
    ("nhân viên", Clarity::Plain),
    ("nhân viên bán hàng", Clarity::Plain),
    ("quản lý", Clarity::Plain),
    ("chủ shop", Clarity::Plain),
    ("chủ cửa hàng", Clarity::Plain),
    ("admin", Clarity::Plain),
    ("ai đó", Clarity::Plain),
    ("human", Clarity::Clear),
    ("human being", Clarity::Clear),
    ("human agent", Clarity::Clear),
    ("real person", Clarity::Clear),
    ("real human", Clarity::Clear),
    ("actual person", Clarity::Clear),
    ("actual human", Clarity::Clear),
    ("live person", Clarity::Clear),
    ("live agent", Clarity::Clear),
    ("live chat", Clarity::Clear),
    ("live support", Clarity::Clear),
    ("support agent", Clarity::Clear),
    ("customer service", Clarity::Clear),
    ("customer support", Clarity::Clear),
    ("customer care", Clarity::Clear),
    ("representative", Clarity::Clear),
    ("customer representative", Clarity::Clear),
    ("operator", Clarity::Clear),
    ("staff member", Clarity::Clear),
    ("person", Clarity::Plain),
    ("someone", Clarity::Plain),
    ("somebody", Clarity::Plain),
    ("anyone", Clarity::Plain),
    ("anybody", Clarity::Plain),
    ("agent", Clarity::Plain),
    ("rep", Clarity::Plain),
    ("staff", Clarity::Plain),
    ("employee", Clarity::Plain),
    ("manager", Clarity::Plain),
    ("supervisor", Clarity::Plain),
    ("owner", Clarity::Plain),
    ("support", Clarity::Plain),
    ("support team", Clarity::Plain),
    ("sales", Clarity::Plain),
    ("people", Clarity::Plain),
];

/// Verbs that ask to be put in touch: any person after them is a request.
pub(super) const CONTACT: &[&str] = &[
    "gặp",
    "nói chuyện",
    "nói",
    "trò chuyện",
    "chat",
    "nhắn",
    "nhắn tin",
    "kết nối",
    "chuyển",
    "liên hệ",
    "liên lạc",
    "gọi",
    "hỏi",
    "trao đổi",
    "talk",
    "speak",
    "connect",
    "transfer",
    "put",
    "reach",
    "contact",
    "call",
    "escalate",
    "hand",
    "switch",
    "forward",
];

/// Verbs that ask for something: only a clear person after them is a request.
pub(super) const WANT: &[&str] = &[
    "cần",
    "muốn",
    "xin",
    "cho",
    "tìm",
    "want",
    "wanna",
    "need",
    "get",
    "have",
    "like",
    "prefer",
    "request",
    "is there",
    "are there",
    "any",
];

/// Small words allowed between a verb and its person (at most [`MAX_GAP`]).
pub(super) const GAP: &[&str] = &[
    "với",
    "cho",
    "tôi",
    "em",
    "mình",
    "tui",
    "tớ",
    "anh",
    "chị",
    "bạn",
    "được",
    "một",
    "1",
    "bên",
    "trực",
    "tiếp",
    "sang",
    "qua",
    "tới",
    "đến",
    "ngay",
    "luôn",
    "giúp",
    "dùm",
    "giùm",
    "hộ",
    "các",
    "vị",
    "cái",
    "thử",
    "lại",
    "cùng",
    "liền",
    "nhanh",
    "a",
    "an",
    "the",
    "your",
    "ur",
    "you",
    "me",
    "us",
    "to",
    "with",
    "some",
    "one",
    "of",
    "please",
    "pls",
    "plz",
    "now",
    "right",
    "just",
    "through",
    "from",
    "directly",
    "real",
    "actual",
    "live",
    "over",
    "back",
    "asap",
    "immediately",
    "quickly",
];

/// How many small words may stand between a verb and its person.
pub(super) const MAX_GAP: usize = 4;

/// Words that may surround a clear person making up the whole message.
pub(super) const BARE: &[&str] = &[
    "ơi", "ạ", "à", "a", "nhé", "nha", "đâu", "với", "cho", "em", "tôi", "mình", "xin", "vậy",
    "đi", "có", "không", "ko", "k", "nào", "online", "hả", "chứ", "ai", "là", "shop", "alo",
    "hello", "hi", "hey", "please", "pls", "plz", "an", "the", "i", "now", "ok", "okay", "here",
    "there", "any", "anyone", "is", "are", "some", "one", "real",
];

/// The most words a whole-message request has.
pub(super) const BARE_MAX_WORDS: usize = 8;

/// Negations and past markers that cancel a verb just after them.
pub(super) const NEGATIONS: &[&str] = &[
    "không", "ko", "k", "hông", "hổng", "chẳng", "chả", "đừng", "đã", "vừa", "chưa", "khỏi",
    "don't", "dont", "do not", "not", "never", "no need", "didn't", "didnt", "won't", "wont",
    "doesn't", "already", "without",
];

/// Words that may stand between a negation and the verb it cancels ("không **muốn**
/// gặp", "don't **want to** talk").
pub(super) const BRIDGE: &[&str] = &[
    "muốn", "cần", "được", "có", "thể", "phải", "hề", "định", "hay", "want", "wanna", "need", "to",
    "really", "even", "ever", "have", "like", "would", "going", "gonna", "will", "d",
];

/// How many bridge words may stand between a negation and its verb.
pub(super) const MAX_BRIDGE: usize = 4;

/// Words that, right after a person, make it someone who is not a support person.
pub(super) const NOT_SUPPORT: &[&str] = &[
    "giao",
    "ship",
    "shipper",
    "vận chuyển",
    "bảo vệ",
    "kho",
    "bưu",
    "rồi",
    "resources",
    "resource",
    "rights",
    "body",
    "error",
    "nature",
    "race",
];
