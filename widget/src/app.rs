//! The root component.

use leptos::prelude::*;
use serde::Deserialize;

/// What the panel needs from `GET /health`.
#[derive(Debug, Clone, Deserialize)]
struct Health {
    version: String,
}

/// The chat panel. For now it shows the service's status, fetched from `/health`.
#[component]
pub(crate) fn App() -> impl IntoView {
    let health = LocalResource::new(fetch_health);
    view! {
        <section class="cw-panel" aria-label="Concierge chat">
            <header class="cw-header"><h1>"Concierge"</h1></header>
            <p class="cw-status" role="status">
                <Suspense fallback=|| "…">
                    {move || health.get().map(|result| match result {
                        Ok(h) => view! { <span data-concierge-ready=h.version.clone()>{format!("Online · v{}", h.version)}</span> }.into_any(),
                        Err(message) => view! { <span data-concierge-error="">{message}</span> }.into_any(),
                    })}
                </Suspense>
            </p>
        </section>
    }
}

async fn fetch_health() -> Result<Health, String> {
    let response = gloo_net::http::Request::get("/health")
        .send()
        .await
        .map_err(|e| e.to_string())?;
    response.json::<Health>().await.map_err(|e| e.to_string())
}
