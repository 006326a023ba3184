// Concierge console: its words in Vietnamese and English.
//
// The page and the scripts are written in English; `t(text, values)` gives the text in the
// console's language ("{name}" placeholders filled from `values`). The language is the
// merchant's choice (the selector in the header, kept in localStorage — a preference, not
// a secret), else the browser's first of vi/en, else Vietnamese. Static text in the page is
// translated in place; nothing inside `[data-no-i18n]` (visitors' messages, data, keys)
// is ever touched.
(function () {
  "use strict";
  var STORE = "concierge.console.lang";
  var VI = {
    "Concierge console": "Bảng điều khiển Concierge",
    "Language": "Ngôn ngữ",
    "Sign out": "Đăng xuất",
    "Sign in": "Đăng nhập",
    "Paste your site's": "Dán",
    "secret key": "khóa bí mật",
    "(": "(",
    "). It stays in this browser tab (session storage) and is sent only to this Worker, in a request header.":
      ") của trang. Khóa chỉ ở trong tab trình duyệt này (session storage) và chỉ được gửi tới Worker này, trong một header của yêu cầu.",
    "Secret key": "Khóa bí mật",
    "Keys rotated: you are signed out": "Đã đổi khóa: bạn đã được đăng xuất",
    "Your new keys are shown once. The old keys no longer work: store the new secret key now, sign in with it, and put the new public key in your pages' tag.":
      "Khóa mới chỉ hiển thị một lần. Khóa cũ không còn dùng được: hãy lưu khóa bí mật mới ngay, đăng nhập bằng nó, và đặt khóa công khai mới vào thẻ nhúng trên các trang của bạn.",
    "Public key": "Khóa công khai",
    "Console": "Bảng điều khiển",
    "Console sections": "Các mục của bảng điều khiển",
    "Overview": "Tổng quan",
    "Assistant": "Trợ lý",
    "Knowledge & data": "Tri thức & dữ liệu",
    "Try it": "Dùng thử",
    "Conversations": "Hội thoại",
    "Install": "Cài đặt",
    "Keys": "Khóa",
    "Period": "Khoảng thời gian",
    "Last 7 days": "7 ngày qua",
    "Last 14 days": "14 ngày qua",
    "Last 30 days": "30 ngày qua",
    "Conversations and visitor messages per day": "Hội thoại và tin nhắn của khách theo ngày",
    "Visitor messages: answered and unanswered": "Tin nhắn của khách: đã trả lời và chưa trả lời",
    "Votes on answers": "Đánh giá câu trả lời",
    "Top questions": "Câu hỏi thường gặp",
    "Site name": "Tên trang",
    "Template": "Mẫu trợ lý",
    "Title (widget header)": "Tiêu đề (đầu khung chat)",
    "Greeting (the first message of each conversation)": "Lời chào (tin nhắn đầu tiên của mỗi hội thoại)",
    "Empty: the template's greeting": "Để trống: lời chào của mẫu",
    "Persona": "Tính cách",
    "Empty: the template's persona": "Để trống: tính cách của mẫu",
    "Starter prompts (one a line, at most 6)": "Câu hỏi gợi ý (mỗi dòng một câu, tối đa 6)",
    "Allowed origins (one a line, like https://shop.example)": "Nguồn được phép (mỗi dòng một nguồn, ví dụ https://shop.example)",
    "Language model": "Mô hình ngôn ngữ",
    "Provider": "Nhà cung cấp",
    "Service default": "Mặc định của dịch vụ",
    "OpenAI-compatible": "Tương thích OpenAI",
    "Model": "Mô hình",
    "Endpoint (base URL)": "Địa chỉ API (base URL)",
    "API key (write-only)": "Khóa API (chỉ ghi)",
    "Embeddings endpoint": "Địa chỉ API embeddings",
    "Embeddings model": "Mô hình embeddings",
    "Max tokens": "Số token tối đa",
    "First-token timeout (ms)": "Thời gian chờ token đầu (ms)",
    "Remove the stored API key": "Xóa khóa API đã lưu",
    "Template settings": "Cài đặt của mẫu",
    "JSON, as in the API: only the settings that differ from the defaults (under each box). Only the current template's settings are shown.": "JSON, như trong API: chỉ những thiết lập khác giá trị mặc định (xem dưới mỗi ô). Chỉ hiện cài đặt của mẫu đang dùng.",
    "Support with guardrails: domain, refusals, search provider…": "Hỗ trợ có kiểm soát: lĩnh vực, câu từ chối, nhà cung cấp tìm kiếm…",
    "Knowledge base: scopes, permissions, agents…": "Cơ sở tri thức: phạm vi, quyền, tác tử…",
    "Room rental: listings schema, row cap…": "Cho thuê phòng: lược đồ tin đăng, giới hạn số dòng…",
    "Data analyst: answer formatting, rows loaded per data set…": "Phân tích dữ liệu: định dạng câu trả lời, số dòng nạp mỗi bộ dữ liệu…",
    "Defaults, used for every setting left out": "Giá trị mặc định, dùng cho mọi thiết lập bỏ trống",
    "The panel's own “+” starts a new conversation.": "Nút “+” của khung chat bắt đầu một hội thoại mới.",
    "Ask a question in the panel: what retrieval finds for it is shown here.": "Hãy đặt một câu hỏi trong khung chat: những gì truy xuất tìm thấy sẽ hiện ở đây.",
    "Copy the public key": "Sao chép khóa công khai",
    "Copy the secret key": "Sao chép khóa bí mật",
    "Copy the user-token secret": "Sao chép bí mật mã người dùng",
    "Uploaded {n} records.": "Đã tải lên {n} hồ sơ.",
    "Selected: press Ctrl+C.": "Đã chọn: nhấn Ctrl+C.",
    "Uploaded 1 record.": "Đã tải lên 1 hồ sơ.",
    "Example:": "Ví dụ:",
    "This is not valid JSON ({detail}). Paste a JSON array like the example.": "Đây không phải JSON hợp lệ ({detail}). Hãy dán một mảng JSON như ví dụ.",
    "Paste a JSON array of records, like the example.": "Hãy dán một mảng JSON các hồ sơ, như ví dụ.",
    "Record {n} is not a JSON object.": "Hồ sơ thứ {n} không phải một đối tượng JSON.",
    "Record {n} has no id.": "Hồ sơ thứ {n} không có id.",
    "Line {n}: write serial,product,warranty_until.": "Dòng {n}: hãy viết serial,product,warranty_until.",
    "Line {n} is not JSON.": "Dòng {n} không phải JSON.",
    "Nothing to upload: paste the records first.": "Chưa có gì để tải lên: hãy dán hồ sơ trước.",
    "The Worker refused the records: {message}": "Worker không nhận các hồ sơ: {message}",
    "Answer": "Câu trả lời",
    "Greeting": "Lời chào",
    "Clarifying question": "Câu hỏi làm rõ",
    "Warranty lookup": "Tra cứu bảo hành",
    "Refusal": "Từ chối",
    "Handoff notice": "Thông báo chuyển nhân viên",
    "This template has no settings of its own.": "Mẫu này không có cài đặt riêng.",
    "Save": "Lưu",
    "Saved.": "Đã lưu.",
    "Draft and live": "Bản nháp và bản đang áp dụng",
    "State:": "Trạng thái:",
    "Saving below changes the draft. Try it runs the draft; visitors keep getting the live configuration until you publish.":
      "Lưu bên dưới chỉ thay đổi bản nháp. Dùng thử chạy bản nháp; khách vẫn nhận cấu hình đang áp dụng cho tới khi bạn xuất bản.",
    "Knowledge documents and data sets are shared by the draft and the live configuration: changes to them apply to visitors at once.":
      "Tài liệu tri thức và bộ dữ liệu dùng chung cho bản nháp và bản đang áp dụng: thay đổi chúng có hiệu lực với khách ngay.",
    "Note for this version (optional)": "Ghi chú cho phiên bản này (không bắt buộc)",
    "Publish": "Xuất bản",
    "Discard the draft": "Bỏ bản nháp",
    "When the site has test cases, Publish first runs them against the draft and against the live configuration, and names every case that passes on live and fails on the draft.":
      "Khi trang có ca kiểm thử, Xuất bản sẽ chạy chúng với bản nháp và với bản đang áp dụng trước, rồi nêu tên mọi ca đạt trên bản đang áp dụng nhưng trượt trên bản nháp.",
    "Test runs": "Lượt kiểm thử",
    "Running the tests: {done} of {total}": "Đang chạy kiểm thử: {done}/{total}",
    "Draft passes {d} of {n}; live passes {l} of {m}.": "Bản nháp đạt {d}/{n} ca; bản đang áp dụng đạt {l}/{m} ca.",
    "The draft fails cases that pass on live": "Bản nháp trượt những ca đang đạt trên bản đang áp dụng",
    "Publishing now makes these answers worse for visitors. The confirmation is recorded with the version.":
      "Xuất bản lúc này sẽ làm các câu trả lời này kém đi với khách. Xác nhận của bạn được ghi cùng phiên bản.",
    "Publish anyway": "Vẫn xuất bản",
    "Make a test": "Tạo ca kiểm thử",
    "Test cases": "Ca kiểm thử",
    "{n} test cases (at most 100). Make one from any answer in Conversations.": "{n} ca kiểm thử (tối đa 100). Tạo thêm từ bất kỳ câu trả lời nào trong Hội thoại.",
    "Run against the draft": "Chạy với bản nháp",
    "Run against live": "Chạy với bản đang áp dụng",
    "Progress": "Tiến độ",
    "{done} of {total} done: {passed} passed": "Xong {done}/{total}: {passed} ca đạt",
    "Passed": "Đạt",
    "Failed": "Trượt",
    "Not run (error)": "Không chạy được (lỗi)",
    "Make a test from this answer": "Tạo ca kiểm thử từ câu trả lời này",
    "New test case from this answer": "Ca kiểm thử mới từ câu trả lời này",
    "Proposed from the stored answer: edit the checks, then save. The test runs this question (after the messages before it) against the draft or the live configuration.":
      "Đề xuất từ câu trả lời đã lưu: sửa các điều kiện kiểm tra rồi lưu. Ca kiểm thử hỏi lại câu này (sau các tin nhắn trước nó) với bản nháp hoặc bản đang áp dụng.",
    "The answer contains (one text a line)": "Câu trả lời có chứa (mỗi dòng một đoạn)",
    "The answer does not contain (one text a line)": "Câu trả lời không chứa (mỗi dòng một đoạn)",
    "Tools used (comma-separated)": "Công cụ được dùng (cách nhau bởi dấu phẩy)",
    "Vietnamese": "Tiếng Việt",
    "English": "Tiếng Anh",
    "Comes with": "Kèm theo",
    "Anything": "Bất kỳ",
    "A list": "Một danh sách",
    "A table": "Một bảng",
    "A chart": "Một biểu đồ",
    "Save the test": "Lưu ca kiểm thử",
    "Test saved: the site has {n} of {max}.": "Đã lưu ca kiểm thử: trang có {n}/{max} ca.",
    "Cancel": "Huỷ",
    "published over {n} failing cases": "xuất bản dù {n} ca trượt",
    "Versions": "Các phiên bản",
    "Every configuration that went live, newest first. Restore makes an earlier one live again (as a new version).":
      "Mọi cấu hình đã được áp dụng, mới nhất trước. Khôi phục đưa một phiên bản cũ vào áp dụng lại (thành một phiên bản mới).",
    "Draft: not published (live: version {n})": "Bản nháp: chưa xuất bản (đang áp dụng: phiên bản {n})",
    "Live: version {n}, no unpublished changes": "Đang áp dụng: phiên bản {n}, không có thay đổi chưa xuất bản",
    "created": "tạo mới",
    "changed directly": "sửa trực tiếp",
    "published": "xuất bản",
    "restored from version {n}": "khôi phục từ phiên bản {n}",
    "before versions": "trước khi có phiên bản",
    "Version {n}": "Phiên bản {n}",
    "Live": "Đang áp dụng",
    "Restore": "Khôi phục",
    "Restore version {n}": "Khôi phục phiên bản {n}",
    "Published: version {n} is live.": "Đã xuất bản: phiên bản {n} đang được áp dụng.",
    "The draft was discarded.": "Đã bỏ bản nháp.",
    "Version {n} restored: live as version {m}.": "Đã khôi phục phiên bản {n}: đang áp dụng với số phiên bản {m}.",
    "Try it runs the draft (what you saved in Assistant); visitors get the live configuration until you publish.":
      "Dùng thử chạy bản nháp (những gì bạn đã lưu ở mục Trợ lý); khách nhận cấu hình đang áp dụng cho tới khi bạn xuất bản.",
    "Knowledge documents": "Tài liệu tri thức",
    "Storage": "Dung lượng lưu trữ",
    "What this site holds, against its caps. An upload that would pass a cap is refused whole: nothing of it is written.":
      "Những gì trang này đang lưu, so với giới hạn. Một lần tải lên vượt giới hạn sẽ bị từ chối toàn bộ: không phần nào được ghi.",
    "Used": "Đã dùng",
    "Cap": "Giới hạn",
    "Share": "Tỷ lệ",
    "Rows in data sets": "Số dòng trong các bộ dữ liệu",
    "Size of data sets": "Dung lượng các bộ dữ liệu",
    "Size of documents": "Dung lượng tài liệu",
    "Warranty records": "Hồ sơ bảo hành",
    "Listings: {table}": "Tin đăng: {table}",
    "Could not read the storage use: {error}": "Không đọc được dung lượng đã dùng: {error}",
    "{n} cap(s) reached: delete something before adding more.": "Đã chạm {n} giới hạn: hãy xóa bớt trước khi thêm mới.",
    "Re-index all": "Lập chỉ mục lại tất cả",
    "Id": "Mã",
    "Title": "Tiêu đề",
    "Scope": "Phạm vi",
    "Department": "Phòng ban",
    "Status": "Trạng thái",
    "Updated": "Cập nhật",
    "Actions": "Thao tác",
    "Add or replace a document": "Thêm hoặc thay một tài liệu",
    "URL (optional)": "URL (không bắt buộc)",
    "Content": "Nội dung",
    "Save document": "Lưu tài liệu",
    "Data sets": "Bộ dữ liệu",
    "CSV files for the": "Tệp CSV cho mẫu",
    "template; column types are inferred.": "; kiểu của cột được tự nhận biết.",
    "Name": "Tên",
    "User": "Người dùng",
    "Rows": "Số dòng",
    "Columns": "Cột",
    "User id": "Mã người dùng",
    "Description": "Mô tả",
    "CSV file": "Tệp CSV",
    "Upload": "Tải lên",
    "Learned queries": "Truy vấn đã học",
    "Refresh": "Làm mới",
    "Questions whose SQL the validator accepted. The same question (from a visitor with the same role) is answered with this SQL again, without the model. Only SQL written from a question asked on its own is learned and reused; delete any you do not trust.":
      "Các câu hỏi có SQL đã được bộ kiểm tra chấp nhận. Cùng câu hỏi đó (từ khách cùng vai trò) sẽ được trả lời lại bằng SQL này, không cần mô hình. Chỉ SQL viết cho câu hỏi được hỏi riêng lẻ mới được học và dùng lại; hãy xóa những truy vấn bạn không tin cậy.",
    "Question": "Câu hỏi",
    "Role": "Vai trò",
    "Learned": "Học lúc",
    "Reused": "Dùng lại",
    "Show older": "Xem cũ hơn",
    "Records": "Bản ghi",
    "What": "Loại",
    "Warranty records (Shop) — CSV: serial,product,warranty_until": "Bảo hành (Cửa hàng) — CSV: serial,product,warranty_until",
    "Listings (Room rental) — a JSON array of listings, each with an id": "Tin đăng (Cho thuê phòng) — một mảng JSON các tin, mỗi tin có id",
    "Search pages (Support with guardrails) — a JSON array of pages": "Trang tìm kiếm (Hỗ trợ có kiểm soát) — một mảng JSON các trang",
    "Logs (Knowledge base) — one JSON object a line": "Nhật ký (Cơ sở tri thức) — mỗi dòng một đối tượng JSON",
    "Entity": "Thực thể",
    "New conversation": "Hội thoại mới",
    "Allow this console's origin": "Cho phép nguồn của bảng điều khiển này",
    "Public key (pk_…)": "Khóa công khai (pk_…)",
    "Use it": "Dùng khóa này",
    "Try as a user": "Dùng thử với vai một người dùng",
    "The console signs a user token valid for 15 minutes, so the panel speaks for this user (their data sets, knowledge scopes, role). Empty user id: an anonymous visitor.":
      "Bảng điều khiển ký một mã người dùng có hiệu lực 15 phút, để khung chat nói thay người dùng này (bộ dữ liệu, phạm vi tri thức, vai trò của họ). Để trống mã người dùng: khách ẩn danh.",
    "Permissions (comma-separated)": "Quyền (cách nhau bằng dấu phẩy)",
    "Use this user": "Dùng người dùng này",
    "Anonymous": "Ẩn danh",
    "This site has no user-token secret yet: the console needs one to sign test tokens. Your backend signs its visitors' tokens with the same secret.":
      "Trang này chưa có khóa ký mã người dùng: bảng điều khiển cần nó để ký mã dùng thử. Máy chủ của bạn ký mã cho khách bằng chính khóa này.",
    "Create a user-token secret": "Tạo khóa ký mã người dùng",
    "Shown once, give it to your backend:": "Chỉ hiện một lần, hãy đưa cho máy chủ của bạn:",
    "Show what retrieval found": "Hiện những gì truy xuất tìm thấy",
    "Search": "Tìm kiếm",
    "Votes": "Đánh giá",
    "Any": "Tất cả",
    "Any template": "Mọi mẫu",
    "Shop": "Cửa hàng",
    "Support with guardrails": "Hỗ trợ có kiểm soát",
    "Room rental": "Cho thuê phòng",
    "Knowledge base": "Cơ sở tri thức",
    "Data analyst": "Phân tích dữ liệu",
    "Not recorded (older conversations)": "Chưa ghi nhận (hội thoại cũ)",
    "Voted down": "Bị đánh giá chưa tốt",
    "Voted up": "Được đánh giá tốt",
    "From": "Từ ngày",
    "To": "Đến ngày",
    "Without an answer only": "Chỉ hội thoại chưa được trả lời",
    "Apply": "Lọc",
    "Export CSV": "Xuất CSV",
    "Export JSON": "Xuất JSON",
    "Messages": "Tin nhắn",
    "Delete conversation": "Xóa hội thoại",
    "Paste this tag into your pages, before": "Dán thẻ này vào các trang của bạn, trước",
    "Colour": "Màu",
    "Launcher": "Nút mở chat",
    "Bottom right": "Góc dưới bên phải",
    "Bottom left": "Góc dưới bên trái",
    "Copy": "Sao chép",
    "Copied.": "Đã sao chép.",
    "Check a page": "Kiểm tra một trang",
    "Page URL": "URL của trang",
    "Check": "Kiểm tra",
    "Rotate keys": "Đổi khóa",
    "New public and secret keys: the old ones stop working at once, including on the pages that embed the widget (update the tag), and this console signs you out.":
      "Tạo khóa công khai và khóa bí mật mới: khóa cũ ngừng hoạt động ngay, kể cả trên các trang đang nhúng widget (hãy cập nhật thẻ), và bảng điều khiển sẽ đăng xuất bạn.",
    "I understand: the old keys stop working now.": "Tôi hiểu: khóa cũ ngừng hoạt động ngay bây giờ.",
    // ---- dynamic text -------------------------------------------------------------------
    "This key was refused. Paste the site's secret key (sk_…) exactly as it was shown; after a key rotation only the new one works.":
      "Khóa này bị từ chối. Hãy dán đúng khóa bí mật (sk_…) của trang như khi được cấp; sau khi đổi khóa chỉ khóa mới dùng được.",
    "That is not a secret key: the console needs the site's secret key (sk_…), not its public key.":
      "Đây không phải khóa bí mật: bảng điều khiển cần khóa bí mật (sk_…) của trang, không phải khóa công khai.",
    "Could not sign in: {message}": "Không đăng nhập được: {message}",
    "Your key is no longer valid: sign in again.": "Khóa của bạn không còn hiệu lực: hãy đăng nhập lại.",
    "A key is stored (it is never shown).": "Đã lưu một khóa (không bao giờ hiển thị lại).",
    "No key stored.": "Chưa lưu khóa.",
    "The site needs a name.": "Trang cần có tên.",
    "At most 6 starter prompts.": "Tối đa 6 câu hỏi gợi ý.",
    "The greeting is one line.": "Lời chào chỉ gồm một dòng.",
    "A whole number.": "Một số nguyên.",
    "Not valid JSON ({message}).": "JSON không hợp lệ ({message}).",
    "{n} document(s).": "{n} tài liệu.",
    "{n} document(s), {pending} being indexed…": "{n} tài liệu, {pending} đang lập chỉ mục…",
    "{n} document(s) queued for indexing.": "Đã xếp {n} tài liệu chờ lập chỉ mục.",
    "Edit": "Sửa",
    "Re-index": "Lập chỉ mục lại",
    "Delete": "Xóa",
    "indexed": "đã lập chỉ mục",
    "pending": "đang chờ",
    "failed": "lỗi",
    "{n} data set(s).": "{n} bộ dữ liệu.",
    "Name the data set.": "Hãy đặt tên cho bộ dữ liệu.",
    "Whose data this is (the user id).": "Dữ liệu này của ai (mã người dùng).",
    "Choose a CSV file.": "Hãy chọn một tệp CSV.",
    "The schema's entities: {names}.": "Các thực thể trong lược đồ: {names}.",
    "The chat panel runs only on pages of the site's allowed origins. To try it here, allow this console's origin ({origin}): its pages can then use the site's public key too.":
      "Khung chat chỉ chạy trên các trang thuộc nguồn được phép của trang. Để dùng thử tại đây, hãy cho phép nguồn của bảng điều khiển ({origin}): các trang của nguồn này cũng sẽ dùng được khóa công khai.",
    "This site was created before the console kept its public key: paste it (or rotate the keys).":
      "Trang này được tạo trước khi bảng điều khiển lưu khóa công khai: hãy dán khóa đó (hoặc đổi khóa).",
    "Retrieval for: {text}": "Kết quả truy xuất cho: {text}",
    "Nothing found.": "Không tìm thấy gì.",
    "Speaking as {user} until {time}.": "Đang nói với vai {user} đến {time}.",
    "Speaking as an anonymous visitor.": "Đang nói với vai khách ẩn danh.",
    "The user id, 1 to 128 characters.": "Mã người dùng, từ 1 đến 128 ký tự.",
    "No conversations yet.": "Chưa có hội thoại nào.",
    "No conversation matches these filters.": "Không có hội thoại nào khớp bộ lọc.",
    "{n} conversation(s).": "{n} hội thoại.",
    "{n} messages": "{n} tin nhắn",
    "no answer": "chưa trả lời",
    "{n} incomplete": "{n} chưa trọn vẹn",
    "{n} down": "{n} chưa tốt",
    "{n} up": "{n} tốt",
    "Conversation {id}": "Hội thoại {id}",
    "Waiting for a person": "Khách chờ nhân viên",
    "Your name (the visitor sees it)": "Tên của bạn (khách sẽ thấy)",
    "Take over": "Tiếp nhận",
    "Hand back to the assistant": "Trả lại cho trợ lý",
    "Your reply": "Câu trả lời của bạn",
    "{n} waiting": "{n} khách đang chờ",
    "{agent} is answering": "{agent} đang trả lời",
    "A person is answering": "Nhân viên đang trả lời",
    "The assistant is answering": "Trợ lý đang trả lời",
    "{n} waiting, newest request first; then the conversations a person holds.": "{n} khách đang chờ, yêu cầu mới nhất ở trên cùng; tiếp theo là các hội thoại nhân viên đang giữ.",
    "Showing {from}–{to} of {total}.": "Đang hiện {from}–{to} trên tổng số {total}.",
    "Newer": "Mới hơn",
    "Older": "Cũ hơn",
    "unverified label": "nhãn chưa xác minh",
    "A label the visitor's browser sent; no signed token proved it.": "Nhãn do trình duyệt của khách gửi; không có mã ký nào chứng minh.",
    "Nobody is waiting for a person.": "Không có khách nào đang chờ nhân viên.",
    "Nobody is waiting; the conversations a person holds:": "Không có khách nào đang chờ; các hội thoại nhân viên đang giữ:",
    "(no message)": "(chưa có tin nhắn)",
    "since {time}": "từ {time}",
    "waiting": "đang chờ",
    "waiting {time}": "đã chờ {time}",
    "under a minute": "chưa tới 1 phút",
    "{n} min": "{n} phút",
    "{n} s": "{n} giây",
    "{h} h {m} min": "{h} giờ {m} phút",
    "Anonymous visitor": "Khách ẩn danh",
    "verified": "đã xác minh",
    "Proved by a signed user token or stated with the secret key.": "Đã được chứng thực bằng mã người dùng có chữ ký, hoặc do khóa bí mật khai báo.",
    "(no question written)": "(khách chưa viết câu hỏi)",
    "on {page}": "đang ở trang {page}",
    "Follow-ups": "Cần gọi lại",
    "Visitors who left a phone number or e-mail when nobody was free: call them back, then mark them contacted.":
      "Khách đã để lại số điện thoại hoặc email khi không có nhân viên rảnh: hãy liên hệ lại, rồi đánh dấu đã liên hệ.",
    "{n} to call back, who waited longest first.": "{n} khách cần gọi lại, ai chờ lâu nhất ở trên cùng.",
    "Nobody to call back.": "Không có khách nào cần gọi lại.",
    "contacted {time}": "đã liên hệ lúc {time}",
    "left {time}": "để lại lúc {time}",
    "Open the conversation": "Mở hội thoại",
    "Contacted": "Đã liên hệ",
    "Conversation with {who}": "Hội thoại với {who}",
    "A visitor is waiting for a person": "Có khách đang chờ nhân viên",
    "{n} new visitors are waiting.": "{n} khách mới đang chờ.",
    "Desktop notifications are on: you are told when a visitor starts waiting.": "Đã bật thông báo trên máy tính: bạn sẽ được báo khi có khách bắt đầu chờ.",
    "Desktop notifications are blocked in this browser's site settings.": "Thông báo trên máy tính đang bị chặn trong cài đặt trang của trình duyệt này.",
    "Notify me on this computer when a visitor starts waiting": "Báo cho tôi trên máy tính này khi có khách bắt đầu chờ",
    "Visitors who asked for a person, newest request first: what they want, who they are and how long they have waited. Take one over, reply here (the visitor sees it at once, marked as from a person), then hand it back to the assistant.":
      "Khách đã yêu cầu gặp nhân viên, yêu cầu mới nhất trước: khách cần gì, khách là ai và đã chờ bao lâu. Tiếp nhận một cuộc, trả lời tại đây (khách thấy ngay, được đánh dấu là từ nhân viên), rồi trả lại cho trợ lý.",
    "Visitors who asked for a person": "Khách yêu cầu gặp nhân viên",
    "Asked for a person": "Yêu cầu gặp nhân viên",
    "Taken by a person": "Nhân viên đã tiếp nhận",
    "Nobody took it in time": "Hết thời gian chờ, không ai tiếp nhận",
    "Median time before a person took over: {time}.": "Thời gian chờ trung vị trước khi nhân viên tiếp nhận: {time}.",
    "Staff": "Nhân viên",
    "Send": "Gửi",
    "Talk to a person": "Gặp nhân viên",
    "Visitors can ask for a person (the panel's \"Gặp nhân viên\" button, or in their own words)":
      "Khách có thể yêu cầu gặp nhân viên (nút \"Gặp nhân viên\" trong khung chat, hoặc bằng lời của họ)",
    "Wait for a person (seconds, 10 to 3600)": "Thời gian chờ nhân viên (giây, từ 10 đến 3600)",
    "Time zone": "Múi giờ",
    "Office hours, one a line: days (1 = Monday … 7 = Sunday) and hours, like 1-5 08:00-17:30":
      "Giờ làm việc, mỗi dòng một khung: các ngày (1 = thứ Hai … 7 = Chủ nhật) và giờ, ví dụ 1-5 08:00-17:30",
    "Empty: always": "Để trống: luôn luôn",
    "Nobody takes the conversation within the wait, or it is outside office hours: the assistant says so and carries on.":
      "Nếu không có nhân viên tiếp nhận trong thời gian chờ, hoặc ngoài giờ làm việc, trợ lý sẽ báo cho khách và tiếp tục hỗ trợ.",
    "A whole number of seconds, 10 to 3600.": "Một số giây nguyên, từ 10 đến 3600.",
    "Not office hours: “{line}”. Write days and hours, like 1-5 08:00-17:30.": "Không phải giờ làm việc: “{line}”. Hãy ghi các ngày và giờ, ví dụ 1-5 08:00-17:30.",
    "Enter your name: the visitor sees it.": "Hãy nhập tên của bạn: khách sẽ thấy tên này.",
    "Take the conversation over before replying.": "Hãy tiếp nhận hội thoại trước khi trả lời.",
    "Visitor": "Khách",
    "no answer (the turn failed or is still running)": "chưa trả lời (lượt lỗi hoặc vẫn đang chạy)",
    "incomplete answer": "câu trả lời chưa trọn vẹn",
    "Voted up by {voter}": "{voter} đánh giá tốt",
    "Voted down by {voter}": "{voter} đánh giá chưa tốt",
    "Delete this conversation and its messages?": "Xóa hội thoại này cùng các tin nhắn?",
    "The start date is after the end date.": "Ngày bắt đầu sau ngày kết thúc.",
    "Downloaded {file}.": "Đã tải {file}.",
    "Select the tag and copy it.": "Hãy chọn thẻ và sao chép.",
    "Not a web page URL (https://…).": "Không phải URL của trang web (https://…).",
    "Allowed: the widget works on pages of {origin}.": "Được phép: widget chạy trên các trang của {origin}.",
    "Not allowed: add {origin} to the allowed origins (Assistant tab), or the widget refuses to run there.":
      "Chưa được phép: hãy thêm {origin} vào nguồn được phép (mục Trợ lý), nếu không widget sẽ không chạy ở đó.",
    "Visitor messages": "Tin nhắn của khách",
    "Answered": "Đã trả lời",
    "Unanswered": "Chưa trả lời",
    "Down-votes": "Chưa tốt",
    "Up-votes": "Tốt",
    "Nothing yet in this period.": "Chưa có dữ liệu trong khoảng thời gian này.",
    "{conversations} conversations and {messages} visitor messages in the last {days} days.":
      "{conversations} hội thoại và {messages} tin nhắn của khách trong {days} ngày qua.",
    "{label}: {value}": "{label}: {value}",
    "Asked {n} times": "Được hỏi {n} lần",
    "Could not load the figures: {message}": "Không tải được số liệu: {message}",
  };

  var lang = "vi";
  var originals = new WeakMap(); // text node or element → its English text / attributes

  function t(text, values) {
    var out = lang === "vi" && Object.prototype.hasOwnProperty.call(VI, text) ? VI[text] : text;
    if (values) {
      out = out.replace(/\{(\w+)\}/g, function (whole, name) {
        return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole;
      });
    }
    return out;
  }

  /** The language to start in: the stored choice, else the browser's, else Vietnamese. */
  function initial() {
    var stored = null;
    try { stored = localStorage.getItem(STORE); } catch (e) { stored = null; }
    if (stored === "vi" || stored === "en") return stored;
    var wanted = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || ""];
    for (var i = 0; i < wanted.length; i++) {
      var code = String(wanted[i]).toLowerCase().split("-")[0];
      if (code === "vi" || code === "en") return code;
    }
    return "vi";
  }

  var ATTRIBUTES = ["placeholder", "aria-label", "title"];
  /** Translate the page's own text (not `[data-no-i18n]` subtrees, table bodies or lists of data). */
  function translatePage() {
    document.documentElement.lang = lang;
    document.title = t("Concierge console");
    (function walk(node) {
      if (node.nodeType === 1) {
        if (node.hasAttribute("data-no-i18n") || node.tagName === "TBODY" || node.tagName === "CODE" ||
          node.tagName === "SCRIPT" || node.tagName === "STYLE") return;
        var saved = originals.get(node);
        if (!saved) {
          saved = {};
          ATTRIBUTES.forEach(function (a) { if (node.hasAttribute(a)) saved[a] = node.getAttribute(a); });
          originals.set(node, saved);
        }
        Object.keys(saved).forEach(function (a) { node.setAttribute(a, t(saved[a])); });
        for (var child = node.firstChild; child; child = child.nextSibling) walk(child);
      } else if (node.nodeType === 3) {
        var english = originals.get(node);
        if (english === undefined) {
          english = node.nodeValue;
          originals.set(node, english);
        }
        var trimmed = english.trim();
        if (!trimmed) return;
        var translated = t(trimmed.replace(/\s+/g, " "));
        node.nodeValue = english.replace(trimmed, translated);
      }
    })(document.body);
  }

  function setLanguage(next) {
    lang = next === "en" ? "en" : "vi";
    try { localStorage.setItem(STORE, lang); } catch (e) { /* private mode: not remembered */ }
    translatePage();
    var select = document.getElementById("lang");
    if (select) select.value = lang;
    document.dispatchEvent(new CustomEvent("console:language", { detail: lang }));
  }

  window.ConsoleI18n = {
    t: t,
    lang: function () { return lang; },
    locale: function () { return lang === "vi" ? "vi-VN" : "en-GB"; },
    set: setLanguage,
  };
  lang = initial();
  document.addEventListener("DOMContentLoaded", function () {
    translatePage();
    var select = document.getElementById("lang");
    select.value = lang;
    select.addEventListener("change", function () { setLanguage(select.value); });
  });
})();
