//! Key rotation and `PATCH /admin/site`: run together they never revive a retired key nor
//! lose an accepted change; a rotated key stops working at once on this Worker.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use concierge_e2e::{Worker, agent, into_parts};
use serde_json::json;

use concierge_e2e::api::error_code;

use super::{get_site, parse, patch_site};

/// Keys of a site as the race test tracks them.
#[derive(Debug, Clone)]
struct Keys {
    public: String,
    secret: String,
}

#[test]
fn patch_and_rotation_run_together_and_keep_every_accepted_change() {
    const ROUNDS: usize = 25;
    let worker = Worker::shared();
    let origin = "https://race.example";
    let site = worker.create_site(json!({"name": "Race shop", "allowed_origins": [origin]}));
    let current = Arc::new(Mutex::new(Keys {
        public: site.public_key.clone(),
        secret: site.secret_key.clone(),
    }));
    let retired = Arc::new(Mutex::new(Vec::<Keys>::new()));
    let now = |keys: &Arc<Mutex<Keys>>| keys.lock().expect("keys").clone();

    let rotator = {
        let (current, retired) = (Arc::clone(&current), Arc::clone(&retired));
        thread::spawn(move || {
            let worker = Worker::shared();
            for round in 0..ROUNDS {
                let keys = now(&current);
                let (status, body) = into_parts(
                    agent()
                        .post(&worker.url("/admin/site/rotate-keys"))
                        .set("x-api-key", &keys.secret)
                        .call(),
                );
                assert_eq!(
                    status, 200,
                    "round {round}: rotating with the current secret key: {body}"
                );
                let json = parse(&body);
                *current.lock().expect("keys") = Keys {
                    public: json["public_key"].as_str().expect("public").to_string(),
                    secret: json["secret_key"].as_str().expect("secret").to_string(),
                };
                retired.lock().expect("retired").push(keys);
                thread::sleep(Duration::from_millis(15));
            }
        })
    };
    // Two writers of different fields: each accepted PATCH must survive the other's.
    let patcher = |field: &'static str| {
        let current = Arc::clone(&current);
        thread::spawn(move || {
            let worker = Worker::shared();
            let (mut last_accepted, mut accepted, mut refused) = (None, 0, 0);
            for round in 0..ROUNDS {
                let value = format!("{field} {round}");
                let body = match field {
                    "title" => json!({"title": value}),
                    _ => json!({"starter_prompts": [value]}),
                };
                // A PATCH that meets a rotated key is retried with the newest key.
                for _ in 0..4 {
                    let (status, text) = patch_site(worker, &now(&current).secret, body.clone());
                    match status {
                        200 => {
                            last_accepted = Some(value.clone());
                            accepted += 1;
                            break;
                        }
                        // The key was rotated under this request: nothing was written.
                        401 => refused += 1,
                        _ => panic!("{field} round {round}: {status} {text}"),
                    }
                }
            }
            eprintln!("{field}: {accepted} PATCHes accepted, {refused} met a rotated key");
            last_accepted
        })
    };
    let titles = patcher("title");
    let prompts = patcher("prompt");
    rotator.join().expect("rotator");
    let title = titles.join().expect("title writer");
    let prompt = prompts.join().expect("prompt writer");

    let keys = now(&current);
    let (status, body) = get_site(worker, &keys.secret);
    assert_eq!(status, 200, "the newest secret key works: {body}");
    let config = &parse(&body)["site"]["config"];
    let title = title.expect("some title PATCH was accepted");
    let prompt = prompt.expect("some starter_prompts PATCH was accepted");
    assert_eq!(config["title"], title.as_str(), "{config}");
    assert_eq!(config["starter_prompts"], json!([prompt]), "{config}");

    let widget = |public: &str| {
        into_parts(
            agent()
                .get(&worker.url("/widget/config"))
                .set("x-api-key", public)
                .set("origin", origin)
                .set("cf-connecting-ip", "198.51.100.40")
                .call(),
        )
        .0
    };
    assert_eq!(widget(&keys.public), 200, "the newest public key works");
    let retired = retired.lock().expect("retired").clone();
    assert_eq!(retired.len(), ROUNDS);
    for (i, old) in retired.iter().enumerate() {
        assert_eq!(
            get_site(worker, &old.secret).0,
            401,
            "retired secret key {i} still works"
        );
        assert_eq!(
            widget(&old.public),
            401,
            "retired public key {i} still works"
        );
    }
}

#[test]
fn a_rotated_key_stops_working_at_once_here() {
    let worker = Worker::shared();
    let origin = "https://rotate.example";
    let site = worker.create_site(json!({"name": "Rotate shop", "allowed_origins": [origin]}));
    let widget = |public: &str| {
        into_parts(
            agent()
                .get(&worker.url("/widget/config"))
                .set("x-api-key", public)
                .set("origin", origin)
                .call(),
        )
    };
    // Both keys cached (KV and this isolate) before the rotation.
    assert_eq!(widget(&site.public_key).0, 200);
    assert_eq!(get_site(worker, &site.secret_key).0, 200);
    let (status, body) = into_parts(
        agent()
            .post(&worker.url("/admin/site/rotate-keys"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 200, "{body}");
    let keys = parse(&body);
    let (status, body) = widget(&site.public_key);
    assert_eq!((status, error_code(&body).as_str()), (401, "unauthorized"));
    let (status, body) = get_site(worker, &site.secret_key);
    assert_eq!((status, error_code(&body).as_str()), (401, "unauthorized"));
    // A second rotation with the retired key is refused and changes nothing.
    let (status, _) = into_parts(
        agent()
            .post(&worker.url("/admin/site/rotate-keys"))
            .set("x-api-key", &site.secret_key)
            .call(),
    );
    assert_eq!(status, 401);
    assert_eq!(widget(keys["public_key"].as_str().expect("public")).0, 200);
    assert_eq!(
        get_site(worker, keys["secret_key"].as_str().expect("secret")).0,
        200
    );
}
