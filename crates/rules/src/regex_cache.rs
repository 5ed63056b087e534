//! One compiled `Regex` per distinct pattern, shared by every rule that uses it.

use regex::{Regex, RegexBuilder};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Most memory one compiled pattern may take; a rule whose regex needs more is rejected.
pub const REGEX_SIZE_LIMIT: usize = 10 << 20;

/// The load-time cache of compiled patterns. Compiled once per distinct source, never
/// per record.
#[derive(Default)]
pub struct RegexCache {
    map: Mutex<HashMap<String, Arc<Regex>>>,
}

impl RegexCache {
    /// The compiled regex for `source`, compiling it on first use.
    pub fn get(&self, source: &str) -> Result<Arc<Regex>, String> {
        if let Some(r) = self.lock().get(source) {
            return Ok(Arc::clone(r));
        }
        let re = RegexBuilder::new(source)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| format!("regex '{source}' does not compile: {e}"))?;
        let re = Arc::new(re);
        Ok(Arc::clone(
            self.lock().entry(source.to_string()).or_insert(re),
        ))
    }

    /// Number of distinct compiled patterns.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no pattern has been compiled.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Regex>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_regex_per_pattern() {
        let c = RegexCache::default();
        let a = c.get("a+b").unwrap();
        let b = c.get("a+b").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(c.len(), 1);
        assert!(c.get("(unclosed").is_err());
        assert!(
            c.get(r"\w{1000}{1000}").is_err(),
            "size limit rejects huge patterns"
        );
    }
}
