//! Issue 30: the deployment's Vectorize commands (scripts/vectorize-setup.sh, quoted by
//! the README) against the code. Every field a `MetadataFilter` is built on (in the core
//! and the Worker) has a `create-metadata-index` command, every metadata index is one the
//! code filters on, and the index is the one wrangler.toml binds, with the embedding
//! model's dimensions. The Worker and the local Vectorize double read the same file, so
//! a filter the script does not cover is also refused at run time, on both backends.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::Path;

use concierge_e2e::repo_root;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `(property, type)` of every `create-metadata-index` command.
fn metadata_indexes(setup: &str) -> Vec<(String, String)> {
    setup
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && l.contains("create-metadata-index"))
        .map(|l| {
            let value = |flag: &str| {
                l.split(flag)
                    .nth(1)
                    .and_then(|rest| rest.split_whitespace().next())
                    .unwrap_or_else(|| panic!("{flag} in {l}"))
                    .to_string()
            };
            (value("--property-name="), value("--type="))
        })
        .collect()
}

/// The string literal at the start of `text` (after `("`), if any.
fn leading_literal(text: &str) -> Option<&str> {
    text.split_once('"').map(|(key, _)| key)
}

/// The keys of every `MetadataFilter` condition built in the Rust files under `dir`
/// (outside `#[cfg(test)]` modules): `.eq("key"`, `.ne("key"`, `.any_of("key"`.
fn filtered_fields(dir: &Path, found: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            filtered_fields(&path, found);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = read(&path);
        if !text.contains("MetadataFilter") {
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        // Builder calls, possibly one per line after `MetadataFilter::new()`.
        for builder in [".eq(\"", ".ne(\"", ".any_of(\""] {
            for (at, _) in code.match_indices(builder) {
                let before = &code[..at];
                // Only chains that start from a `MetadataFilter` (not `Option::eq`, …).
                let statement = before.rsplit(';').next().unwrap_or_default();
                if !statement.contains("MetadataFilter") {
                    continue;
                }
                if let Some(key) = leading_literal(&code[at + builder.len()..]) {
                    found.insert(key.to_string());
                }
            }
        }
    }
}

#[test]
fn every_filtered_field_has_a_metadata_index_and_every_index_is_used() {
    let root = repo_root();
    let setup = read(&root.join("scripts/vectorize-setup.sh"));
    let indexes = metadata_indexes(&setup);
    assert!(indexes.len() <= 10, "Vectorize allows 10 metadata indexes");
    for (property, kind) in &indexes {
        assert_eq!(kind, "string", "{property}: the code filters on strings");
    }
    let indexed: BTreeSet<String> = indexes.into_iter().map(|(p, _)| p).collect();

    let mut filtered = BTreeSet::new();
    filtered_fields(&root.join("shared/src"), &mut filtered);
    filtered_fields(&root.join("edge/src"), &mut filtered);
    // The scan finds the filters it must (a broken scan would pass anything).
    for known in [
        "site_id",
        "source",
        "conversation_id",
        "scope",
        "department",
    ] {
        assert!(filtered.contains(known), "{known} among {filtered:?}");
    }
    let missing: Vec<&String> = filtered.difference(&indexed).collect();
    assert!(
        missing.is_empty(),
        "filters on fields without a metadata index in scripts/vectorize-setup.sh: {missing:?}"
    );
    let unused: Vec<&String> = indexed.difference(&filtered).collect();
    assert!(
        unused.is_empty(),
        "metadata indexes no filter uses: {unused:?}"
    );
}

#[test]
fn the_setup_creates_the_index_wrangler_binds_with_the_models_dimensions() {
    let root = repo_root();
    let setup = read(&root.join("scripts/vectorize-setup.sh"));
    let wrangler = read(&root.join("wrangler.toml"));
    let bound = wrangler
        .split("[[vectorize]]")
        .nth(1)
        .and_then(|block| block.split("index_name = \"").nth(1))
        .and_then(leading_literal)
        .expect("[[vectorize]] index_name in wrangler.toml");
    assert!(
        setup.contains(&format!("VECTORIZE_INDEX:-{bound}}}")),
        "the setup's default index is wrangler.toml's {bound}"
    );
    // bge-m3 (wrangler.toml's EMBED_MODEL) embeds in 1024 dimensions, compared by cosine.
    assert!(wrangler.contains("EMBED_MODEL = \"bge-m3\""));
    assert!(setup.contains("VECTORIZE_DIMENSIONS:-1024}"));
    assert!(
        setup.contains("vectorize create \"$INDEX\" --dimensions=\"$DIMENSIONS\" --metric=cosine")
    );
    let printed = std::process::Command::new("sh")
        .arg(root.join("scripts/vectorize-setup.sh"))
        .arg("--print")
        .output()
        .expect("sh scripts/vectorize-setup.sh --print");
    assert!(printed.status.success());
    let printed = String::from_utf8_lossy(&printed.stdout);
    assert!(
        printed.starts_with(&format!(
            "npx wrangler vectorize create {bound} --dimensions=1024 --metric=cosine\n"
        )),
        "{printed}"
    );
    assert_eq!(
        printed.matches("create-metadata-index").count(),
        metadata_indexes(&setup).len()
    );
}
