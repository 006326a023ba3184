//! The demo merchant page in real headless Chromium: the one-tag embed puts a labelled
//! launcher on the page, and the chat panel (Leptos, wasm) boots inside its iframe.

use std::process::Command;

use concierge_e2e::{Worker, repo_root, scratch_dir};

#[test]
fn demo_page_boots_the_widget_in_chromium() {
    let worker = Worker::shared();
    let artifacts = repo_root().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifact dir");
    let profile = scratch_dir("chromium-profile");
    let output = Command::new("sh")
        .arg("-c")
        .arg(". \"$CONCIERGE_ROOT/scripts/env.sh\"; exec node tests/browser/demo_page.mjs \"$@\"")
        .arg("node")
        .arg(&worker.base_url)
        .arg(&artifacts)
        .arg(&profile)
        .current_dir(repo_root())
        .env("CONCIERGE_ROOT", repo_root())
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(
        output.status.success(),
        "browser check failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("widget ready"), "{stdout}");
}
