//! `--report DIR`: one self-contained HTML page with SVG charts (no scripts, no external
//! files) built from the `--json` figures.

use std::fmt::Write;

use super::figures::{SampleFigures, SimReport};

const COLORS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];

struct Series {
    name: String,
    color: &'static str,
    dashed: bool,
    points: Vec<(f64, f64)>,
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn nice_max(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if v <= m * p {
            return m * p;
        }
    }
    10.0 * p
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v.abs() >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// A line chart: x in seconds, y from 0 to a rounded maximum.
fn line_chart(title: &str, y_label: &str, series: &[Series], y_max: Option<f64>, bars: bool) -> String {
    let (w, h, left, right, top, bottom) = (760.0, 300.0, 70.0, 20.0, 50.0, 45.0);
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let x_max = xs.fold(0.0f64, f64::max).max(1.0);
    let y_top =
        y_max.unwrap_or_else(|| nice_max(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max)));
    let sx = |x: f64| left + (x / x_max) * (w - left - right);
    let sy = |y: f64| top + (1.0 - (y / y_top).clamp(0.0, 1.0)) * (h - top - bottom);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="sans-serif" font-size="12"><rect width="{w}" height="{h}" fill="white"/><text x="{left}" y="18" font-size="14" font-weight="bold">{}</text>"##,
        escape(title)
    );
    for i in 0..=4 {
        let y = y_top * i as f64 / 4.0;
        let _ = write!(
            svg,
            r##"<line x1="{left}" x2="{}" y1="{py:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end" fill="#555">{}</text>"##,
            w - right,
            left - 6.0,
            sy(y) + 4.0,
            fmt_num(y),
            py = sy(y)
        );
    }
    for i in 0..=5 {
        let x = x_max * i as f64 / 5.0;
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{}" text-anchor="middle" fill="#555">{}</text>"##,
            sx(x),
            h - bottom + 16.0,
            fmt_num(x)
        );
    }
    let _ = write!(
        svg,
        r##"<text x="{}" y="{}" text-anchor="middle" fill="#333">simulated seconds</text>"##,
        (left + w - right) / 2.0,
        h - 8.0
    );
    let _ = write!(
        svg,
        r##"<text transform="translate(16 {}) rotate(-90)" text-anchor="middle" fill="#333">{}</text>"##,
        (top + h - bottom) / 2.0,
        escape(y_label)
    );
    for s in series {
        if bars {
            let bw = ((w - left - right) / s.points.len().max(1) as f64 * 0.7).max(2.0);
            for &(x, y) in &s.points {
                let _ = write!(
                    svg,
                    r##"<rect x="{:.1}" y="{:.1}" width="{bw:.1}" height="{:.1}" fill="{}"/>"##,
                    sx(x) - bw / 2.0,
                    sy(y),
                    sy(0.0) - sy(y),
                    s.color
                );
            }
            continue;
        }
        let path: Vec<String> = s.points.iter().map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y))).collect();
        let dash = if s.dashed { r#" stroke-dasharray="6 4""# } else { "" };
        let _ = write!(
            svg,
            r##"<polyline fill="none" stroke="{}" stroke-width="2"{dash} points="{}"/>"##,
            s.color,
            path.join(" ")
        );
    }
    let mut lx = left + 10.0;
    for s in series.iter().filter(|s| !s.name.is_empty()) {
        let dash = if s.dashed { r#" stroke-dasharray="6 4""# } else { "" };
        let _ = write!(
            svg,
            r##"<line x1="{lx}" x2="{}" y1="{}" y2="{}" stroke="{}" stroke-width="2"{dash}/><text x="{}" y="{}">{}</text>"##,
            lx + 18.0,
            top - 18.0,
            top - 18.0,
            s.color,
            lx + 22.0,
            top - 14.0,
            escape(&s.name)
        );
        lx += 30.0 + 7.0 * s.name.len() as f64;
    }
    svg.push_str("</svg>");
    svg
}

fn samples(report: &SimReport, f: impl Fn(&SampleFigures) -> f64) -> Vec<(f64, f64)> {
    report.samples.iter().map(|s| (s.t_ms as f64 / 1000.0, f(s))).collect()
}

/// One top-level queue's (usage, share) in a sample, in MB; 0 where the sample lacks it.
fn queue_at(s: &SampleFigures, q: usize) -> (f64, f64) {
    s.queues.get(q).map_or((0.0, 0.0), |&(usage, share)| (usage as f64, share as f64))
}

/// The charts of a report, in page order (also written as separate .svg files).
pub fn charts(report: &SimReport) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let util = vec![
        Series {
            name: "memory".into(),
            color: COLORS[0],
            dashed: false,
            points: samples(report, |s| s.utilization_memory * 100.0),
        },
        Series {
            name: "vcores".into(),
            color: COLORS[1],
            dashed: true,
            points: samples(report, |s| s.utilization_vcores * 100.0),
        },
    ];
    out.push(("utilization", line_chart("Cluster utilization", "% allocated", &util, Some(100.0), false)));
    let pending = vec![Series {
        name: String::new(),
        color: COLORS[3],
        dashed: false,
        points: samples(report, |s| s.pending_memory_mb as f64 / 1024.0),
    }];
    out.push(("pending", line_chart("Pending demand (outstanding asks)", "GiB", &pending, None, false)));
    let minutes: Vec<(f64, f64)> = report.per_minute.iter().map(|m| (m.minute as f64 * 60.0 + 30.0, m.cps)).collect();
    let cps = vec![Series { name: String::new(), color: COLORS[2], dashed: false, points: minutes }];
    out.push((
        "cps",
        line_chart("Containers scheduled per second of scheduler time, per simulated minute", "CPS", &cps, None, true),
    ));
    // The two busiest and the two least busy top-level queues: usage solid, instantaneous
    // fair share dashed.
    let names = &report.queue_names;
    let mut ranked: Vec<(usize, f64)> =
        (0..names.len()).map(|q| (q, samples(report, |s| queue_at(s, q).0).iter().map(|p| p.1).sum::<f64>())).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut picked: Vec<(usize, f64)> = ranked.iter().take(2).copied().collect();
    let quiet: Vec<(usize, f64)> = ranked.iter().rev().take(2).filter(|r| !picked.contains(r)).copied().collect();
    picked.extend(quiet);
    let mut qs = Vec::new();
    for (k, &(q, _)) in picked.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        qs.push(Series {
            name: format!("{} usage", names[q]),
            color,
            dashed: false,
            points: samples(report, |s| queue_at(s, q).0 / 1024.0),
        });
        qs.push(Series {
            name: String::new(),
            color,
            dashed: true,
            points: samples(report, |s| queue_at(s, q).1 / 1024.0),
        });
    }
    out.push((
        "queues",
        line_chart(
            "Top-level queues: usage (solid) against instantaneous fair share (dashed)",
            "GiB of memory",
            &qs,
            None,
            false,
        ),
    ));
    out
}

/// The HTML page.
pub fn html(report: &SimReport) -> String {
    let mut rows = vec![
        ("workload", report.workload.clone()),
        ("description", report.description.clone()),
        ("seed", report.seed.to_string()),
        ("simulated", format!("{:.0} s", report.simulated_seconds)),
        ("allocations", report.allocations.to_string()),
        ("time inside the scheduler", format!("{:.3} s", report.scheduler_seconds)),
        ("CPS (containers scheduled per second of scheduler time)", format!("{:.0}", report.cps)),
        (
            "validSchedule per minute",
            report.valid_schedule_per_min.map_or("-".into(), |v| format!("{v:.2} ({:.0} per day)", v * 1440.0)),
        ),
        ("mean utilization", format!("{:.1}%", report.utilization_mean * 100.0)),
        ("auditor", format!("{} runs, {} mismatches", report.audit_runs, report.audit_mismatches)),
    ];
    if let Some(rss) = report.peak_rss_bytes {
        rows.push(("peak memory", format!("{:.1} MiB", rss as f64 / 1048576.0)));
    }
    if let Some(lat) = &report.ask_to_allocation_ms {
        rows.push((
            "ask → allocation",
            format!("p50 {} ms, p90 {} ms, p99 {} ms, max {} ms", lat.p50, lat.p90, lat.p99, lat.max),
        ));
    }
    let mut page = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>fairloom simulation</title><style>\
         body{font-family:sans-serif;max-width:820px;margin:24px auto;color:#222}\
         table{border-collapse:collapse;margin-bottom:20px}td{padding:4px 12px;border-bottom:1px solid #eee}\
         td:first-child{color:#555}h1{font-size:22px}</style></head><body>",
    );
    let _ = write!(page, "<h1>fairloom simulation: {}</h1><table>", escape(&report.workload));
    for (k, v) in rows {
        let _ = write!(page, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(&v));
    }
    page.push_str("</table><h2>Time inside the scheduler by phase</h2><table>");
    for (name, p) in &report.phases {
        let _ = write!(page, "<tr><td>{}</td><td>{:.3} s</td><td>{} calls</td></tr>", escape(name), p.seconds, p.calls);
    }
    page.push_str("</table>");
    for (_, svg) in charts(report) {
        let _ = write!(page, "<div>{svg}</div>");
    }
    page.push_str("</body></html>\n");
    page
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::figures::{MinuteFigures, PhaseFigures};

    #[test]
    fn page_has_every_chart_and_is_self_contained() {
        let sample = |t_ms, m, v, pending, queue| SampleFigures {
            t_ms,
            utilization_memory: m,
            utilization_vcores: v,
            pending_memory_mb: pending,
            running_containers: 0,
            queues: vec![queue],
        };
        let minute = |minute, cps| MinuteFigures { minute, allocations: 0, cps, valid: None };
        let report = SimReport {
            workload: "w<1>".into(),
            simulated_seconds: 120.0,
            allocations: 10,
            cps: 5.0,
            scheduler_seconds: 2.0,
            samples: vec![sample(0, 0.5, 0.25, 2048, (1024, 2048)), sample(60_000, 0.9, 0.5, 0, (2048, 2048))],
            per_minute: vec![minute(0, 5.0), minute(1, 7.0)],
            queue_names: vec!["root.a".into()],
            phases: [("heartbeat".to_string(), PhaseFigures { seconds: 1.0, calls: 3 })].into(),
            audit_runs: 1,
            ..SimReport::default()
        };
        let page = html(&report);
        assert_eq!(page.matches("<svg").count(), 4);
        assert!(page.contains("w&lt;1&gt;"));
        assert!(!page.contains("<script") && !page.contains("src=\"http"));
        assert!(page.contains("root.a usage"));
    }
}
