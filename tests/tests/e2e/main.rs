//! The end-to-end suite: one test binary, so every test shares one `wrangler dev` (started
//! on first use, stopped when the binary exits) and the suite pays its start-up once.
//! Each test creates its own site, so tests stay independent while running in parallel.

mod ai_sdk;
mod analyst;
mod browser;
mod browser_console;
mod browser_console_ux;
mod browser_rich;
mod browser_ux_flow;
mod browser_ux_render;
mod console_api;
mod conversations;
mod dev_command;
mod faults;
mod feedback;
mod guarded;
mod guarded_rpc;
mod guarded_wire;
mod hardening_data;
mod hardening_keys;
mod hardening_learned;
mod hardening_origins;
mod hardening_outbound;
mod hardening_sessions;
mod hardening_turns;
mod identity;
mod isolation;
mod knowledge;
mod mcp;
mod mcp_transport;
mod openai_api;
mod platform;
mod real_model;
mod regenerate;
mod rental;
mod rental_sql_check;
mod retrieval_backends;
mod scripted_turns;
mod shop_understanding;
mod sites;
mod template_settings;
mod workers_ai;
