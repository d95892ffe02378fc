//! `--plot <file.svg>`: a bench's figures drawn as grouped bar charts, each measurement of Baton
//! beside the baseline of the same run, so docs/performance.md can show what a run measured.
//! Plain SVG written by hand: no plotting dependency for a few rectangles.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;

/// A chart: panels side by side, sharing the series (and so the legend and colours).
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    /// What each bar of a group measured: Baton first, then what it is measured against.
    pub series: Vec<String>,
    pub panels: Vec<Panel>,
}

/// One quantity, in one unit, over a few measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub title: String,
    pub unit: String,
    pub groups: Vec<Group>,
}

/// One measurement: a value per series, `None` where that series was not measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

impl Group {
    pub fn new(label: impl Into<String>, values: Vec<Option<f64>>) -> Group {
        Group {
            label: label.into(),
            values,
        }
    }
}

const COLOURS: [&str; 4] = ["#2b6cb0", "#a0aec0", "#dd6b20", "#38a169"];
const PANEL_WIDTH: f64 = 340.0;
const PANEL_HEIGHT: f64 = 220.0;
const MARGIN: f64 = 40.0;
const TOP: f64 = 70.0;
const BOTTOM: f64 = 60.0;

/// Writes `chart` to `path` as SVG.
pub fn write(path: &Path, chart: &Chart) -> anyhow::Result<()> {
    std::fs::write(path, svg(chart)).with_context(|| format!("writing {}", path.display()))
}

/// The chart as an SVG document.
pub fn svg(chart: &Chart) -> String {
    let width = MARGIN + chart.panels.len() as f64 * (PANEL_WIDTH + MARGIN);
    let height = TOP + PANEL_HEIGHT + BOTTOM + 20.0 * chart.series.len() as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{width}" height="{height}" fill="white"/><text x="{MARGIN}" y="24" font-size="15" font-weight="bold">{}</text>"#,
        escape(&chart.title)
    );
    for (i, panel) in chart.panels.iter().enumerate() {
        let left = MARGIN + i as f64 * (PANEL_WIDTH + MARGIN);
        draw_panel(&mut out, panel, left, chart.series.len());
    }
    let legend_top = TOP + PANEL_HEIGHT + BOTTOM;
    for (i, name) in chart.series.iter().enumerate() {
        let y = legend_top + 20.0 * i as f64;
        let _ = writeln!(
            out,
            r#"<rect x="{MARGIN}" y="{}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            y - 10.0,
            COLOURS[i % COLOURS.len()],
            MARGIN + 18.0,
            y,
            escape(name)
        );
    }
    out.push_str("</svg>\n");
    out
}

fn draw_panel(out: &mut String, panel: &Panel, left: f64, series: usize) {
    let largest = panel
        .groups
        .iter()
        .flat_map(|g| g.values.iter().flatten())
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let top_value = nice_ceiling(largest);
    let baseline_y = TOP + PANEL_HEIGHT;
    let _ = writeln!(
        out,
        r#"<text x="{left}" y="{}" font-weight="bold">{} ({})</text>"#,
        TOP - 16.0,
        escape(&panel.title),
        escape(&panel.unit)
    );
    for step in 0..=4 {
        let value = top_value * f64::from(step) / 4.0;
        let y = baseline_y - PANEL_HEIGHT * f64::from(step) / 4.0;
        let _ = writeln!(
            out,
            r##"<line x1="{left}" y1="{y}" x2="{}" y2="{y}" stroke="#e2e8f0"/><text x="{}" y="{}" text-anchor="end" fill="#4a5568">{}</text>"##,
            left + PANEL_WIDTH,
            left - 4.0,
            y + 4.0,
            tick(value)
        );
    }
    let group_width = PANEL_WIDTH / panel.groups.len().max(1) as f64;
    let bar_width = (group_width * 0.8) / series.max(1) as f64;
    for (g, group) in panel.groups.iter().enumerate() {
        let group_left = left + g as f64 * group_width + group_width * 0.1;
        for (s, value) in group.values.iter().enumerate() {
            let Some(value) = value.filter(|v| v.is_finite()) else {
                continue;
            };
            let bar_height = if top_value > 0.0 {
                PANEL_HEIGHT * value / top_value
            } else {
                0.0
            };
            let x = group_left + s as f64 * bar_width;
            let _ = writeln!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{bar_height:.1}" fill="{}"/><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
                baseline_y - bar_height,
                bar_width - 2.0,
                COLOURS[s % COLOURS.len()],
                x + bar_width / 2.0 - 1.0,
                baseline_y - bar_height - 3.0,
                figure(value)
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            group_left + group_width * 0.4,
            baseline_y + 16.0,
            escape(&group.label)
        );
    }
    let _ = writeln!(
        out,
        r##"<line x1="{left}" y1="{baseline_y}" x2="{}" y2="{baseline_y}" stroke="#2d3748"/>"##,
        left + PANEL_WIDTH
    );
}

/// The smallest of 1, 2 or 5 times a power of ten at or above `value` (1 for nothing).
fn nice_ceiling(value: f64) -> f64 {
    if value <= 0.0 {
        return 1.0;
    }
    let power = 10f64.powf(value.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&ceiling| ceiling >= value)
        .unwrap_or(10.0 * power)
}

/// A figure as a label: whole numbers from 10 up, else up to two decimals.
fn figure(value: f64) -> String {
    if value >= 10.0 || value == value.trunc() {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').to_string()
    }
}

/// An axis tick: whole numbers as they are, else up to two decimals (a quarter of 50 is 12.5).
fn tick(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> Chart {
        Chart {
            title: "Baton <against> the baseline".into(),
            series: vec!["Baton".into(), "baseline".into()],
            panels: vec![
                Panel {
                    title: "latency p50".into(),
                    unit: "ms".into(),
                    groups: vec![
                        Group::new("C = 10", vec![Some(50.0), Some(100.0)]),
                        Group::new("one at a time", vec![Some(25.0), None]),
                    ],
                },
                Panel {
                    title: "throughput".into(),
                    unit: "tasks/s".into(),
                    groups: vec![Group::new("C = 10", vec![Some(0.0), Some(f64::NAN)])],
                },
            ],
        }
    }

    fn bar_heights(svg: &str) -> Vec<f64> {
        svg.lines()
            .filter(|line| line.starts_with("<rect x=") && line.contains(r#"font-size="10""#))
            .map(|line| {
                let at = line.find("height=\"").unwrap() + 8;
                line[at..line[at..].find('"').unwrap() + at]
                    .parse()
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn bars_are_drawn_to_one_scale_per_panel_and_unmeasured_values_are_left_out() {
        let svg = svg(&chart());
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        // 50 and 100 ms on a 0–100 axis; 25 ms; the missing and the NaN bar are not drawn; the
        // zero throughput is a bar of no height.
        assert_eq!(bar_heights(&svg), [110.0, 220.0, 55.0, 0.0]);
        assert!(svg.contains(">latency p50 (ms)<") && svg.contains(">throughput (tasks/s)<"));
        assert!(svg.contains(">one at a time<"));
    }

    #[test]
    fn text_is_escaped_so_a_label_cannot_break_the_document() {
        let svg = svg(&chart());
        assert!(svg.contains("Baton &lt;against&gt; the baseline"));
        assert!(!svg.contains("<against>"));
    }

    #[test]
    fn axes_end_on_a_round_figure_above_the_largest_value() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(0.7), 1.0);
        assert_eq!(nice_ceiling(1.3), 2.0);
        assert_eq!(nice_ceiling(37.0), 50.0);
        assert_eq!(nice_ceiling(100.0), 100.0);
        assert_eq!(nice_ceiling(101.0), 200.0);
        assert_eq!(figure(0.25), "0.25");
        assert_eq!(figure(0.5), "0.5");
        assert_eq!(figure(12.6), "13");
        assert_eq!(figure(3.0), "3");
        assert_eq!(tick(12.5), "12.5");
        assert_eq!(tick(37.5), "37.5");
        assert_eq!(tick(100.0), "100");
        assert_eq!(tick(0.25), "0.25");
    }
}
