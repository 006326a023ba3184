//! The panel's own words, in Vietnamese (the default) and English.
//!
//! The assistant's messages come from the server in the conversation's language; these are
//! the labels, hints and errors around them.

/// A UI language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Lang {
    /// Vietnamese, the default.
    #[default]
    Vi,
    /// English.
    En,
}

impl Lang {
    /// From a language tag: `vi`, `vi-VN`, `en`, `en-GB`, … (case-insensitive).
    pub(crate) fn parse(tag: &str) -> Option<Self> {
        let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        match primary.as_str() {
            "vi" => Some(Self::Vi),
            "en" => Some(Self::En),
            _ => None,
        }
    }

    /// The BCP 47 code the API and `<html lang>` use.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Self::Vi => "vi",
            Self::En => "en",
        }
    }

    /// This language's strings.
    pub(crate) fn strings(self) -> &'static Strings {
        match self {
            Self::Vi => &VI,
            Self::En => &EN,
        }
    }
}

/// Every string the panel shows or announces.
#[derive(Debug)]
pub(crate) struct Strings {
    /// Header title when neither the embed tag nor the site sets one.
    pub title: &'static str,
    /// Close button.
    pub close: &'static str,
    /// New-conversation button.
    pub new_conversation: &'static str,
    /// Accessible name of the message list.
    pub messages_label: &'static str,
    /// Label of the message box.
    pub input_label: &'static str,
    /// Placeholder of the message box.
    pub placeholder: &'static str,
    /// Keyboard hint under the message box.
    pub input_hint: &'static str,
    /// Send button.
    pub send: &'static str,
    /// Stop button (while an answer streams).
    pub stop: &'static str,
    /// Retry button after a failure.
    pub retry: &'static str,
    /// Regenerate button on the last answer.
    pub regenerate: &'static str,
    /// Typing indicator, for screen readers.
    pub typing: &'static str,
    /// Heading of the starter prompts.
    pub starters_label: &'static str,
    /// Who wrote a message, for screen readers.
    pub you: &'static str,
    /// Who wrote a message, for screen readers.
    pub assistant: &'static str,
    /// While the conversation loads.
    pub loading: &'static str,
    /// A failed answer (server error, `failed` event).
    pub error_failed: &'static str,
    /// The network failed.
    pub error_network: &'static str,
    /// Too many requests.
    pub error_rate_limited: &'static str,
    /// The stream ended without its terminal event.
    pub error_interrupted: &'static str,
    /// The conversation could not be started or loaded.
    pub error_start: &'static str,
    /// Note on an answer the visitor stopped.
    pub stopped: &'static str,
    /// The panel opened outside a page of the site (not framed): it does not run.
    pub not_embedded: &'static str,
    /// A tool call's state: working, done, failed.
    pub tool_states: [&'static str; 3],
    /// Accessible name of a table's scrolling region.
    pub table: &'static str,
    /// Under a capped list or table: the words around how many are shown, and of how many.
    pub showing: [&'static str; 3],
    /// Heading of an answer's sources.
    pub sources: &'static str,
    /// Heading of an answer's evidence.
    pub evidence: &'static str,
    /// Accessible name of the follow-up question chips.
    pub follow_ups: &'static str,
    /// Accessible name of the chips answering the assistant's questions.
    pub control: &'static str,
    /// Feedback on an answer: thumbs up and down (names, then visible words), copy,
    /// copied, the comment box, its send button, thanks.
    pub feedback: [&'static str; 9],
    /// Around the conversation (`js/flow.js`): the "new messages" pill; the length
    /// counter's unit; the over-the-limit message before and after the limit; earlier
    /// conversations (the list and its button); the "talk to a person" button; and the
    /// request that button sends.
    pub flow: [&'static str; 7],
    /// Who wrote a person's reply ("Nhân viên"), before their name.
    pub person: &'static str,
    /// The handoff's state, as notices in the log: waiting for a person; `{0}` (a
    /// person's name) joined; the assistant is back.
    pub handoff: [&'static str; 3],
    // ---- How rich turns read (widget/js/rich.js; issue 26 items 3–4) ----
    /// A plan's stages: ready; working on step `{0}`/`{1}` (`{2}`: its purpose); `{0}` of
    /// `{1}` steps done; putting the answer together.
    pub stages: [&'static str; 4],
    /// The currency written after an amount of money.
    pub currency: &'static str,
    /// A chart's kind in its text alternative (bar, line, pie), and a chart's title when
    /// it has none and several series.
    pub charts: [&'static str; 4],
    /// A tool whose name has no word in [`Strings::vocabulary`].
    pub tool: &'static str,
    /// Words for column, series, scope and tool names: `key=words|…`, whole names first
    /// (`get_top_items`), then single words; `^` leads, `$` is a unit (in brackets at the
    /// end), `~` marks a Vietnamese word (kept in order), an empty value drops the word.
    pub vocabulary: &'static str,
}

static VI: Strings = Strings {
    title: "Trợ lý ảo",
    close: "Đóng khung trò chuyện",
    new_conversation: "Cuộc trò chuyện mới",
    messages_label: "Tin nhắn",
    input_label: "Tin nhắn của quý khách",
    placeholder: "Nhập tin nhắn…",
    input_hint: "Enter để gửi, Shift+Enter để xuống dòng",
    send: "Gửi",
    stop: "Dừng",
    retry: "Thử lại",
    regenerate: "Tạo lại câu trả lời",
    typing: "Trợ lý đang soạn câu trả lời…",
    starters_label: "Gợi ý câu hỏi",
    you: "Quý khách",
    assistant: "Trợ lý",
    loading: "Đang tải…",
    error_failed: "Xin lỗi, em chưa trả lời được. Quý khách vui lòng thử lại.",
    error_network: "Mất kết nối. Quý khách vui lòng kiểm tra mạng và thử lại.",
    error_rate_limited: "Quý khách gửi hơi nhanh. Vui lòng đợi một chút rồi thử lại.",
    error_interrupted: "Câu trả lời bị gián đoạn. Quý khách vui lòng thử lại.",
    error_start: "Không thể bắt đầu cuộc trò chuyện.",
    stopped: "Đã dừng.",
    not_embedded: "Khung trò chuyện này chỉ hoạt động trên trang web của cửa hàng.",
    tool_states: ["đang xử lý…", "xong", "lỗi"],
    table: "Bảng dữ liệu",
    showing: ["Đang hiển thị ", " mục đầu tiên trên tổng số ", "."],
    sources: "Nguồn",
    evidence: "Căn cứ",
    follow_ups: "Câu hỏi tiếp theo",
    control: "Chọn câu trả lời",
    feedback: [
        "Câu trả lời hữu ích",
        "Câu trả lời chưa hữu ích",
        "Hữu ích",
        "Chưa hữu ích",
        "Sao chép",
        "Đã sao chép",
        "Góp ý thêm (không bắt buộc)",
        "Gửi góp ý",
        "Cảm ơn quý khách đã góp ý!",
    ],
    flow: [
        "Tin nhắn mới ↓",
        "ký tự",
        "Tin nhắn dài quá ",
        " ký tự, quý khách vui lòng rút gọn.",
        "Cuộc trò chuyện trước",
        "Gặp nhân viên",
        "Gặp nhân viên",
    ],
    person: "Nhân viên",
    handoff: [
        "Đang chờ nhân viên…",
        "{0} đã tham gia cuộc trò chuyện",
        "Trợ lý đã trở lại",
    ],
    stages: [
        "Đã lập kế hoạch trả lời",
        "Đang thực hiện bước {0}/{1}: {2}",
        "Đã xong {0}/{1} bước",
        "Đang tổng hợp câu trả lời…",
    ],
    currency: "đ",
    charts: ["Biểu đồ cột", "Biểu đồ đường", "Biểu đồ tròn", "Biểu đồ"],
    tool: "Tra cứu dữ liệu",
    vocabulary: concat!(
        "get_top_items=^tìm các mục dẫn đầu|execute_aggregation=^chạy truy vấn tổng hợp|",
        "get_data_schema=^đọc cấu trúc dữ liệu|duckduckgo_search=^tìm kiếm trên web|",
        "web_search=^tìm kiếm trên web|rag=^tra cứu tài liệu|math=^tính toán|",
        "search=^tìm kiếm|find=^tìm|lookup=^tra cứu|get=^lấy|fetch=^lấy|list=^liệt kê|",
        "check=^kiểm tra|verify=^kiểm tra|compare=^so sánh|aggregate=^tổng hợp|",
        "execute=^chạy|run=^chạy|calculate=^tính|compute=^tính|summarize=^tóm tắt|",
        "total=^tổng|sum=^tổng|count=^số lượng|number=^số|num=^số|created=^ngày tạo|",
        "updated=^ngày cập nhật|at=|of=|per=|by=|id=mã|title=tiêu đề|name=tên|price=giá|",
        "cost=chi phí|amount=số tiền|revenue=doanh thu|sales=doanh số|profit=lợi nhuận|",
        "qty=số lượng|quantity=số lượng|avg=trung bình|average=trung bình|mean=trung bình|",
        "min=thấp nhất|max=cao nhất|area=diện tích|m2=$m²|sqm=$m²|pct=$%|percent=$%|",
        "rate=tỷ lệ|ratio=tỷ lệ|share=tỷ trọng|ward=phường|district=quận|city=thành phố|",
        "province=tỉnh|address=địa chỉ|room=phòng|rooms=phòng|bedrooms=phòng ngủ|floor=tầng|",
        "type=loại|category=danh mục|status=trạng thái|date=ngày|day=ngày|month=tháng|",
        "year=năm|week=tuần|time=thời gian|customer=khách hàng|customers=khách hàng|",
        "new=mới|returning=quay lại|order=đơn hàng|orders=đơn hàng|product=sản phẩm|",
        "products=sản phẩm|item=mục|items=mục|stock=tồn kho|inventory=tồn kho|channel=kênh|",
        "brand=thương hiệu|budget=ngân sách|description=mô tả|phone=số điện thoại|",
        "email=email|url=liên kết|link=liên kết|score=điểm|rating=đánh giá|discount=giảm giá|",
        "unit=đơn vị|value=giá trị|growth=tăng trưởng|change=thay đổi|period=kỳ|",
        "periods=các kỳ|data=dữ liệu|schema=cấu trúc|query=truy vấn|summary=tóm tắt|",
        "warranty=bảo hành|serial=số sê-ri|user=người dùng|users=người dùng|",
        "internal=nội bộ|public=công khai|private=riêng tư|",
        "gia=~giá|tb=~trung bình|tong=~tổng|so=~số|luong=~lượng|sl=~số lượng|",
        "doanh=~doanh|thu=~thu|dien=~diện|tich=~tích|quan=~quận|phuong=~phường|ten=~tên|",
        "ngay=~ngày|thang=~tháng|nam=~năm|phong=~phòng|khach=~khách|hang=~hàng|don=~đơn"
    ),
};

static EN: Strings = Strings {
    title: "Assistant",
    close: "Close chat",
    new_conversation: "New conversation",
    messages_label: "Messages",
    input_label: "Your message",
    placeholder: "Type a message…",
    input_hint: "Enter to send, Shift+Enter for a new line",
    send: "Send",
    stop: "Stop",
    retry: "Retry",
    regenerate: "Regenerate",
    typing: "The assistant is typing…",
    starters_label: "Suggested questions",
    you: "You",
    assistant: "Assistant",
    loading: "Loading…",
    error_failed: "Sorry, I could not answer that. Please try again.",
    error_network: "Connection lost. Please check your network and try again.",
    error_rate_limited: "You are sending messages quickly. Please wait a moment and retry.",
    error_interrupted: "The answer was interrupted. Please try again.",
    error_start: "The conversation could not be started.",
    stopped: "Stopped.",
    not_embedded: "This chat works only on the shop's own website.",
    tool_states: ["working…", "done", "failed"],
    table: "Data table",
    showing: ["Showing the first ", " of ", "."],
    sources: "Sources",
    evidence: "Evidence",
    follow_ups: "Follow-up questions",
    control: "Choose an answer",
    feedback: [
        "Helpful answer",
        "Answer not helpful",
        "Helpful",
        "Not helpful",
        "Copy",
        "Copied",
        "Add a comment (optional)",
        "Send comment",
        "Thank you for your feedback!",
    ],
    flow: [
        "New messages ↓",
        "characters",
        "Over the limit of ",
        " characters: please shorten it.",
        "Earlier conversations",
        "Talk to a person",
        "Talk to a person",
    ],
    person: "Staff",
    handoff: [
        "Waiting for a person…",
        "{0} joined the conversation",
        "The assistant is back",
    ],
    stages: [
        "Plan ready",
        "Working on step {0} of {1}: {2}",
        "{0} of {1} steps done",
        "Putting the answer together…",
    ],
    currency: "VND",
    charts: ["Bar chart", "Line chart", "Pie chart", "Chart"],
    tool: "Looking up data",
    vocabulary: "avg=average|qty=quantity|num=number|pct=$%|percent=$%|m2=$m²|sqm=$m²|id=ID|tb=average|gia=price",
};

#[cfg(test)]
mod tests {
    use super::*;

    fn all(s: &Strings) -> [&'static str; 40] {
        [
            s.title,
            s.close,
            s.new_conversation,
            s.messages_label,
            s.input_label,
            s.placeholder,
            s.input_hint,
            s.send,
            s.stop,
            s.retry,
            s.regenerate,
            s.typing,
            s.starters_label,
            s.you,
            s.assistant,
            s.loading,
            s.error_failed,
            s.error_network,
            s.error_rate_limited,
            s.error_interrupted,
            s.error_start,
            s.stopped,
            s.not_embedded,
            s.tool_states[0],
            s.tool_states[1],
            s.tool_states[2],
            s.table,
            s.showing[1],
            s.sources,
            s.evidence,
            s.follow_ups,
            s.feedback[0],
            s.feedback[1],
            s.feedback[2],
            s.feedback[3],
            s.feedback[4],
            s.feedback[5],
            s.feedback[6],
            s.feedback[7],
            s.feedback[8],
        ]
    }

    #[test]
    fn parses_language_tags() {
        assert_eq!(Lang::parse("vi"), Some(Lang::Vi));
        assert_eq!(Lang::parse("vi-VN"), Some(Lang::Vi));
        assert_eq!(Lang::parse(" EN_gb "), Some(Lang::En));
        assert_eq!(Lang::parse("fr"), None);
        assert_eq!(Lang::parse(""), None);
        assert_eq!(Lang::default(), Lang::Vi);
        assert_eq!(Lang::En.code(), "en");
    }

    #[test]
    fn every_string_is_translated() {
        let (vi, en) = (all(Lang::Vi.strings()), all(Lang::En.strings()));
        for (v, e) in vi.iter().zip(en) {
            assert!(!v.trim().is_empty() && !e.trim().is_empty());
            assert_ne!(*v, e, "untranslated: {e}");
        }
    }

    #[test]
    fn the_flow_strings_are_translated() {
        for (v, e) in Lang::Vi.strings().flow.iter().zip(Lang::En.strings().flow) {
            assert!(!v.trim().is_empty() && !e.trim().is_empty());
            assert_ne!(*v, e, "untranslated: {e}");
        }
    }

    #[test]
    fn the_handoff_words_are_translated_and_name_the_person() {
        let (vi, en) = (Lang::Vi.strings(), Lang::En.strings());
        for (v, e) in vi
            .handoff
            .iter()
            .zip(en.handoff)
            .chain([(&vi.person, en.person)])
        {
            assert!(!v.trim().is_empty() && !e.trim().is_empty());
            assert_ne!(*v, e, "untranslated: {e}");
        }
        assert!(vi.handoff[1].contains("{0}") && en.handoff[1].contains("{0}"));
        // The request the button sends is the phrase the Worker recognises.
        assert_eq!(vi.flow[6], "Gặp nhân viên");
        assert_eq!(en.flow[6], "Talk to a person");
    }

    #[test]
    fn rich_turn_words_are_translated_and_keep_their_placeholders() {
        let (vi, en) = (Lang::Vi.strings(), Lang::En.strings());
        let pairs = vi
            .stages
            .iter()
            .zip(en.stages)
            .chain(vi.charts.iter().zip(en.charts));
        for (v, e) in pairs.chain([(&vi.currency, en.currency), (&vi.tool, en.tool)]) {
            assert!(!v.trim().is_empty() && !e.trim().is_empty());
            assert_ne!(*v, e, "untranslated: {e}");
        }
        for (v, e) in vi.stages.iter().zip(en.stages) {
            for hole in ["{0}", "{1}", "{2}"] {
                assert_eq!(v.contains(hole), e.contains(hole), "{hole} in {v} / {e}");
            }
        }
        for vocabulary in [vi.vocabulary, en.vocabulary] {
            for entry in vocabulary.split('|') {
                let (key, _) = entry.split_once('=').expect("key=words");
                assert!(
                    !key.is_empty()
                        && key
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                    "{entry}"
                );
            }
        }
    }

    #[test]
    fn vietnamese_uses_the_fixed_forms_of_address() {
        let vi = Lang::Vi.strings();
        assert!(vi.input_label.contains("quý khách"));
        assert!(vi.error_failed.contains("em"));
    }
}
