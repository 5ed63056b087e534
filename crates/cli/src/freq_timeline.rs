//! `-T`: a detection-frequency timeline drawn in the terminal: the span from the
//! first to the last detection cut into equal slices, each a column of block
//! characters as tall as its count (scaled to the busiest slice).

use crate::histogram::Histogram;
use scanner_timeline::TimeFormat;

/// Slices (terminal columns) of the chart.
pub const WIDTH: usize = 100;

const BLOCKS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Columns of `height` rows for `counts`, top row first.
pub fn chart(counts: &[usize], height: usize) -> Vec<String> {
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let eighths: Vec<usize> = counts
        .iter()
        .map(|&c| {
            let e = (c * height * 8).div_ceil(max);
            if c > 0 {
                e.max(1)
            } else {
                0
            }
        })
        .collect();
    (0..height)
        .rev()
        .map(|row| {
            eighths
                .iter()
                .map(|&e| BLOCKS[e.saturating_sub(row * 8).min(8)])
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

fn duration(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..=119 => format!("{s}s"),
        120..=7199 => format!("{}m", s / 60),
        7200..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// The whole `-T` display of `detections` counted in `histogram` (of [`WIDTH`] slices),
/// or a note when there are too few detections to draw.
pub fn render(histogram: Option<&Histogram>, detections: usize, time: &TimeFormat) -> String {
    if detections < 2 {
        return "Detection frequency timeline: fewer than 2 detections, nothing to draw.\n".into();
    }
    let Some(Histogram {
        first,
        last,
        width: w,
        counts,
    }) = histogram
    else {
        return String::new();
    };
    let (first, last, w) = (*first, *last, *w);
    let totals: Vec<usize> = counts.iter().map(|c| c.iter().sum()).collect();
    let max = totals.iter().copied().max().unwrap_or(0);
    let mut o = format!(
        "Detection frequency timeline ({} slices of {} each; tallest = {max} {}):\n",
        counts.len(),
        duration(w),
        crate::summary::noun(max as u64, "detection", "detections")
    );
    for line in chart(&totals, 6) {
        o.push('|');
        o.push_str(&line);
        o.push('\n');
    }
    o.push('+');
    o.push_str(&"-".repeat(counts.len()));
    o.push('\n');
    let (a, b) = (time.format(first), time.format(last));
    let gap = (counts.len() + 1).saturating_sub(a.len() + b.len()).max(1);
    o.push_str(&format!("{a}{}{b}\n", " ".repeat(gap)));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_scale_to_the_busiest_slice() {
        assert_eq!(chart(&[0, 1, 8], 1), vec![" ▁█".to_string()]);
        assert_eq!(
            chart(&[16, 8, 1, 0], 2),
            vec!["█".to_string(), "██▁".to_string()]
        );
        assert_eq!(duration(90.0), "90s");
        assert_eq!(duration(3.0 * 86400.0), "3d");
    }
}
