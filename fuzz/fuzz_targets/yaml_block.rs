//! The YAML crate's direct reader of block YAML (`crates/yaml/src/block.rs`,
//! compiled here from its source) against `yaml_serde`: whatever text it reads, it must
//! read to the value `yaml_serde` parses from it, key order included. Giving up is
//! always allowed (the loader then parses with `yaml_serde`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use yaml_serde::Value;

#[path = "../../crates/yaml/src/block.rs"]
mod block;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some(read) = block::read(text) else {
        return;
    };
    let theirs = Value::deserialize(yaml_serde::Deserializer::from_str(text));
    match theirs {
        Ok(v) => assert!(
            v == read.value && format!("{v:?}") == format!("{:?}", read.value),
            "{text:?}\n  ours:  {:?}\n  serde: {v:?}",
            read.value
        ),
        Err(e) => panic!("{text:?}\n  ours: {:?}\n  serde: error {e}", read.value),
    }
});
