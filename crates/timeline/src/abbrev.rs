//! Hayabusa's abbreviations of channel and provider names, from the rules config's
//! `channel_abbreviations.txt`, `provider_abbreviations.txt` and
//! `generic_abbreviations.txt` (output policy: the rules crate only reads the tables).

use scanner_rules::Config;

/// The abbreviation of a provider name: its entry in `provider_abbreviations.txt`,
/// else the name with the generic abbreviations replaced (case-insensitively,
/// longest word first).
pub fn provider(config: &Config, provider: &str) -> String {
    if let Some(a) = config.provider_abbrev.get(provider.to_lowercase().as_str()) {
        return a.clone();
    }
    let mut out = String::with_capacity(provider.len());
    let lower = provider.to_ascii_lowercase();
    let mut i = 0;
    'scan: while i < provider.len() {
        let mut best: Option<&(String, String)> = None;
        for g in &config.generic_abbrev {
            if lower[i..].starts_with(&g.0.to_ascii_lowercase())
                && best.is_none_or(|b| g.0.len() > b.0.len())
            {
                best = Some(g);
            }
        }
        if let Some((w, a)) = best {
            out.push_str(a);
            i += w.len();
            continue 'scan;
        }
        let ch = provider[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The abbreviation of a channel name, or the name itself.
pub fn channel<'a>(config: &'a Config, channel: &'a str) -> &'a str {
    if config.channel_abbrev.is_empty() {
        return channel;
    }
    config
        .channel_abbrev
        .get(channel.to_lowercase().as_str())
        .map_or(channel, String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_then_generic_words() {
        let mut c = Config::default();
        c.add_file(
            "channel_abbreviations.txt",
            "Channel,Abbreviation\nSecurity,Sec\n",
        );
        c.add_file(
            "generic_abbreviations.txt",
            "Word,Abbreviation\nMicrosoft-Windows-,\nAuditing,Aud\n",
        );
        assert_eq!(channel(&c, "security"), "Sec");
        assert_eq!(channel(&c, "Other"), "Other");
        assert_eq!(
            provider(&c, "Microsoft-Windows-Security-Auditing"),
            "Security-Aud"
        );
        c.add_file(
            "provider_abbreviations.txt",
            "Provider,Abbreviation\nMicrosoft-Windows-Security-Auditing,Sec\n",
        );
        assert_eq!(provider(&c, "microsoft-windows-security-auditing"), "Sec");
        assert_eq!(
            provider(&Config::default(), "Ünïcode-Provider"),
            "Ünïcode-Provider"
        );
    }
}
