//! Embeds the project's own rule set (`rules/`) and its config folder into the crate.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../../rules");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    let mut rules = String::from("/// Built-in rule files: (path under rules/, content).\npub static RULES: &[(&str, &str)] = &[\n");
    let mut config = String::from("/// Built-in config files: (file name, content).\npub static CONFIG: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f
            .strip_prefix(&root)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        let abs = f.canonicalize().unwrap_or_else(|_| f.clone());
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
        if rel.starts_with("config/") && (ext == "txt" || ext == "yaml") {
            let name = f.file_name().unwrap_or_default().to_string_lossy();
            let _ = writeln!(
                config,
                "    ({name:?}, include_str!({:?})),",
                abs.display().to_string()
            );
        } else if !rel.starts_with("config/") && (ext == "yml" || ext == "yaml") {
            let _ = writeln!(
                rules,
                "    ({rel:?}, include_str!({:?})),",
                abs.display().to_string()
            );
        }
    }
    rules.push_str("];\n");
    config.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("builtin.rs");
    std::fs::write(out, rules + &config).expect("write builtin.rs");
}
