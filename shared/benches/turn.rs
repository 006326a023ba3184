//! One full `shop` turn without a real LLM: store the visitor's message, rebuild the state
//! from the store, classify, route, retrieve (in-memory index), build the prompt, stream a
//! scripted answer, store it. Prints µs per turn at the end.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use concierge_core::engine::{self, NewConversation};
use concierge_core::flows::shop::ShopConfig;
use concierge_core::graph::block_on;
use concierge_core::memory::MemoryBackend;
use concierge_core::retrieval::index_document;
use concierge_core::turn::{TurnEvent, TurnInput};
use criterion::{BatchSize, Criterion};

const SITE: &str = "site-1";

const HISTORY: &[&str] = &[
    "Xin chào",
    "Mình muốn build PC chơi game",
    "Tầm 25 triệu",
    "Ưu tiên card đồ họa mạnh",
];

const KNOWLEDGE: &[(&str, &str)] = &[
    (
        "Chính sách đổi trả",
        "Quý khách được đổi trả trong 7 ngày nếu sản phẩm còn nguyên hộp và hóa đơn.",
    ),
    (
        "Bảo hành",
        "Linh kiện được bảo hành 36 tháng tại trung tâm bảo hành của hãng.",
    ),
    (
        "RTX 4060",
        "Card đồ họa RTX 4060 8GB, giá 8.490.000 VND, còn hàng tại cửa hàng.",
    ),
    (
        "RTX 4070",
        "Card đồ họa RTX 4070 12GB, giá 15.990.000 VND, còn hàng.",
    ),
    (
        "Core i5-14400F",
        "CPU Intel Core i5-14400F 10 nhân, giá 4.590.000 VND.",
    ),
    (
        "Giao hàng",
        "Giao hàng miễn phí nội thành cho đơn từ 2 triệu, thanh toán khi nhận hàng.",
    ),
    (
        "Nguồn",
        "Nguồn 650W 80 Plus Bronze phù hợp cấu hình tầm trung, giá 1.290.000 VND.",
    ),
    (
        "Mainboard B760M",
        "Mainboard B760M DDR5 micro-atx, tương thích CPU Intel thế hệ 12-14.",
    ),
];

/// A backend with a conversation, four turns of history, the site's knowledge indexed, and
/// one scripted answer queued.
fn prepared(config: &ShopConfig) -> (MemoryBackend, TurnInput) {
    let backend = MemoryBackend::demo(SITE);
    for (i, (title, text)) in KNOWLEDGE.iter().enumerate() {
        block_on(index_document(
            &backend.embedder,
            &backend.index,
            SITE,
            &format!("doc-{i}"),
            title,
            text,
        ))
        .unwrap();
    }
    let services = &backend;
    let new = NewConversation {
        site_id: SITE.into(),
        ..Default::default()
    };
    let id = block_on(engine::create_conversation(
        services,
        &shop(&backend, config),
        new,
    ))
    .unwrap()
    .conversation
    .id;
    for text in HISTORY {
        backend.model.reply(&["Dạ, ", "em ghi nhận ạ."]);
        let input = TurnInput {
            site_id: SITE.into(),
            conversation_id: id.clone(),
            text: (*text).into(),
            idempotency_key: None,
        };
        block_on(engine::run_turn(
            services,
            &shop(&backend, config),
            &input,
            &mut Vec::new(),
        ))
        .unwrap();
    }
    block_on(backend.index_queued()).unwrap();
    backend
        .model
        .reply(&["Dạ, ", "với 25 triệu ", "em gợi ý i5-14400F + RTX 4060 ạ."]);
    let input = TurnInput {
        site_id: SITE.into(),
        conversation_id: id,
        text: "Giá RTX 4060 với mainboard B760M bao nhiêu vậy em?".into(),
        idempotency_key: None,
    };
    (backend, input)
}

fn turn(backend: &MemoryBackend, config: &ShopConfig, input: &TurnInput) -> usize {
    let mut events: Vec<TurnEvent> = Vec::with_capacity(8);
    let outcome = block_on(engine::run_turn(
        &backend,
        &shop(backend, config),
        input,
        &mut events,
    ))
    .unwrap();
    debug_assert_eq!(outcome.route, ["classify", "retrieve", "respond_stream"]);
    events.len()
}

/// Each turn is timed on its own, right after its backend was prepared — as a Worker
/// request runs a turn right after loading its conversation.
fn benches(c: &mut Criterion) {
    let config = ShopConfig::default();
    c.bench_function("shop turn (retrieve + respond, scripted model)", |b| {
        b.iter_batched_ref(
            || prepared(&config),
            |(backend, input)| black_box(turn(backend, &config, input)),
            BatchSize::PerIteration,
        )
    });
}

/// Times `runs` turns directly (setup excluded) and prints the mean.
fn report(runs: u32) {
    let config = ShopConfig::default();
    let mut total = Duration::ZERO;
    for _ in 0..runs {
        let (backend, input) = prepared(&config);
        let start = Instant::now();
        black_box(turn(&backend, &config, &input));
        total += start.elapsed();
    }
    let micros = total.as_secs_f64() * 1e6 / f64::from(runs);
    let _ = writeln!(
        std::io::stdout(),
        "shop turn without LLM: {micros:.1} µs per turn (mean of {runs})"
    );
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    benches(&mut criterion);
    criterion.final_summary();
    report(2000);
}

/// `config` as the engine runs it, over the in-memory backend's parts it depends on.
fn shop<'b>(
    backend: &'b concierge_core::memory::MemoryBackend,
    config: &concierge_core::flows::shop::ShopConfig,
) -> concierge_core::flows::shop::ShopAssistant<&'b concierge_core::memory::MemoryWarrantyRecords> {
    concierge_core::flows::shop::ShopAssistant::new(config.clone(), &backend.warranty)
}
