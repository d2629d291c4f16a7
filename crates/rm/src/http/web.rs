//! The RM's web UI, server-rendered in YARN's layout (docs/operators.md, "Web UI"): every page
//! opens with the cluster, node and scheduler metrics tables; `/cluster/scheduler` draws the
//! queue tree with share bars and each queue's status block; `/cluster/apps`, `/cluster/app/ID`
//! (with why it waits) and `/cluster/nodes`. No external assets: the pages work offline and
//! reload themselves every few seconds.

use std::collections::HashMap;
use std::fmt::Write;

use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use fairloom_model::ApplicationId;
use fairloom_serve::html_escape as esc;

use super::auth::Reader;
use super::Ctx;
use crate::core::AppState;
use crate::queues::QueueRow;
use crate::service::{AppSnap, Snapshot};

pub fn routes() -> Router<Ctx> {
    Router::new()
        .route("/", get(overview))
        .route("/cluster", get(overview))
        .route("/cluster/cluster", get(overview))
        .route("/cluster/scheduler", get(scheduler))
        .route("/cluster/apps", get(apps))
        .route("/cluster/apps/{state}", get(apps_in_state))
        .route("/cluster/app/{id}", get(app))
        .route("/cluster/nodes", get(nodes))
}

/// Seconds between a page's reloads.
const REFRESH_S: u32 = 5;

const STYLE: &str = "
body{font:13px/1.4 -apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:0;color:#222}
header{background:#1f3a5f;color:#fff;padding:8px 16px;display:flex;gap:24px;align-items:baseline}
header h1{font-size:18px;margin:0}header a{color:#cfe0f5;text-decoration:none;margin-right:14px}
main{padding:8px 16px}h2{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin-bottom:8px}#apps{font-size:12px}th,td{border:1px solid #ccd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef1f6;font-weight:600}tr:nth-child(even) td{background:#fafbfc}
.metrics td,.metrics th{text-align:center}
.legend span{display:inline-block;margin-right:16px}.sw{display:inline-block;width:28px;height:11px;vertical-align:middle;margin-right:4px}
.tree{list-style:none;padding-left:0;margin:0}.tree li{margin:3px 0}
.q{display:flex;align-items:center;gap:10px}.qname{width:220px;font-family:monospace}
.track{width:600px;position:relative;height:16px}
.bar{position:relative;height:16px;background:#f6f6f6;border:1px solid #999;box-sizing:border-box;overflow:hidden}
.bar>div{position:absolute;top:0;bottom:0;left:0;box-sizing:border-box}
.used{background:#5cb85c}.over{background:#f0ad4e}.steady{border:2px solid #1f3a5f}.fair{border:2px dashed #c0392b}
.pct{font-size:12px;color:#555;width:90px}
details.status{margin:2px 0 8px 230px}details.status table{font-size:12px}
.wait{border:1px solid #e0b252;background:#fff8e6;padding:8px 12px;margin:8px 0;max-width:900px}
.wait b{color:#8a5a00}.muted{color:#777}
.cut{max-width:10em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}
select{max-width:24em}
.qname a{display:block;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#app-overview td,#attempts td,details.status summary{word-break:break-all;max-width:900px}
";

/// Local times from epoch milliseconds, and the reload.
const SCRIPT: &str = "
document.querySelectorAll('time[data-ms]').forEach(function(t){var ms=+t.dataset.ms;t.textContent=ms>0?new Date(ms).toLocaleString():'N/A';});
setTimeout(function(){location.reload();}," ;

fn page(title: &str, snap: &Snapshot, body: &str) -> Response {
    let mut out = String::with_capacity(body.len() + 4096);
    let _ = write!(
        out,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{t} · fairloom</title><style>{STYLE}</style></head><body>\
         <header><h1>fairloom · {t}</h1><nav><a href=\"/cluster\">Cluster</a><a href=\"/cluster/scheduler\">Scheduler</a>\
         <a href=\"/cluster/apps\">Applications</a><a href=\"/cluster/nodes\">Nodes</a><a href=\"/ws/v1/cluster/info\">REST</a>\
         <a href=\"/metrics\">Metrics</a></nav></header><main>",
        t = esc(title)
    );
    out.push_str(&metrics_tables(snap));
    out.push_str(body);
    let _ = write!(out, "</main><script>{SCRIPT}{}000);</script></body></html>", REFRESH_S);
    Html(out).into_response()
}

fn mb(m: i64) -> String {
    if m >= 1024 * 1024 {
        format!("{:.1} TB", m as f64 / (1024.0 * 1024.0))
    } else if m >= 1024 {
        format!("{:.1} GB", m as f64 / 1024.0)
    } else {
        format!("{m} MB")
    }
}

/// YARN's Cluster Metrics, Cluster Nodes Metrics and Scheduler Metrics tables.
fn metrics_tables(snap: &Snapshot) -> String {
    let m = &snap.metrics;
    let mut out = String::new();
    let _ = write!(
        out,
        "<h2>Cluster Metrics</h2><table class=\"metrics\" id=\"cluster-metrics\"><tr><th>Apps Submitted</th><th>Apps Pending</th>\
         <th>Apps Running</th><th>Apps Completed</th><th>Containers Running</th><th>Used Resources</th><th>Total Resources</th>\
         <th>Reserved Resources</th></tr><tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
         <td>&lt;memory:{}, vCores:{}&gt;</td><td>&lt;memory:{}, vCores:{}&gt;</td><td>&lt;memory:{}, vCores:{}&gt;</td></tr></table>",
        m.apps_submitted,
        m.apps_pending,
        m.apps_running,
        m.apps_completed,
        m.containers_allocated,
        mb(m.allocated_mb),
        m.allocated_virtual_cores,
        mb(m.total_mb),
        m.total_virtual_cores,
        mb(m.reserved_mb),
        m.reserved_virtual_cores,
    );
    out.push_str("<h2>Cluster Nodes Metrics</h2><table class=\"metrics\" id=\"node-metrics\"><tr>");
    let states = [
        ("Active Nodes", m.active_nodes, "RUNNING"),
        ("Decommissioning Nodes", m.decommissioning_nodes, "DECOMMISSIONING"),
        ("Decommissioned Nodes", m.decommissioned_nodes, "DECOMMISSIONED"),
        ("Lost Nodes", m.lost_nodes, "LOST"),
        ("Unhealthy Nodes", m.unhealthy_nodes, "UNHEALTHY"),
        ("Rebooted Nodes", m.rebooted_nodes, "REBOOTED"),
        ("Shutdown Nodes", m.shutdown_nodes, "SHUTDOWN"),
    ];
    for (label, _, _) in states {
        let _ = write!(out, "<th>{label}</th>");
    }
    out.push_str("</tr><tr>");
    for (_, count, state) in states {
        let _ = write!(out, "<td><a href=\"/cluster/nodes?state={state}\">{count}</a></td>");
    }
    out.push_str("</tr></table>");
    let kind = if snap.scheduler_kind == "fair" { "Fair Scheduler" } else { "Capacity Scheduler" };
    let info = &snap.cluster_info;
    let _ = write!(
        out,
        "<h2>Scheduler Metrics</h2><table class=\"metrics\" id=\"scheduler-metrics\"><tr><th>Scheduler Type</th>\
         <th>Scheduling Resource Type</th><th>Maximum Allocation</th><th>Resource Manager</th></tr>\
         <tr><td>{kind}</td><td>[memory-mb (unit=Mi), vcores]</td><td>&lt;memory:{}, vCores:{}&gt;</td><td>{}</td></tr></table>",
        snap.max_allocation.memory,
        snap.max_allocation.vcores,
        esc(info.resource_manager_version),
    );
    out
}

/// The applications this reader may not view (VIEW_APP): none with ACLs off. If the loop
/// cannot answer, none is shown whole.
async fn hidden(ctx: &Ctx, snap: &Snapshot, reader: &Reader) -> Vec<ApplicationId> {
    ctx.rm.hidden_from(snap, reader.0.as_deref()).await.unwrap_or_else(|_| snap.apps.iter().map(|a| a.key).collect())
}

async fn overview(State(ctx): State<Ctx>, reader: Reader) -> Response {
    let snap = ctx.rm.snapshot();
    let hidden = hidden(&ctx, &snap, &reader).await;
    let apps: Vec<&AppSnap> = snap.apps.iter().rev().take(100).map(|a| &**a).collect();
    let body = format!("<h2>Applications (latest {})</h2>{}", apps.len(), apps_table(&apps, &hidden));
    page("Cluster", &snap, &body)
}

/// One row per application; one the reader may not view shows no times or resources, as
/// YARN's restricted application report.
fn apps_table(apps: &[&AppSnap], hidden: &[ApplicationId]) -> String {
    let mut out = String::from(
        "<div class=\"scroll\"><table id=\"apps\"><tr><th>ID</th><th>User</th><th>Name</th><th>Application Type</th><th>Queue</th>\
         <th>Priority</th><th>StartTime</th><th>FinishTime</th><th>State</th><th>FinalStatus</th>\
         <th>Running Containers</th><th>Allocated Memory MB</th><th>Allocated CPU VCores</th><th>Progress</th><th>Waiting for</th></tr>",
    );
    for a in apps {
        let i = a.info_for(hidden);
        let _ = write!(
            out,
            "<tr data-app=\"{id}\"><td><a href=\"/cluster/app/{id}\">{id}</a></td><td class=\"cut\" title=\"{user}\">{user}</td>\
             <td class=\"cut\" title=\"{name}\">{name}</td><td class=\"cut\" title=\"{kind}\">{kind}</td><td class=\"cut\" title=\"{queue}\">{queue}</td>\
             <td>{}</td><td><time data-ms=\"{}\"></time></td><td><time data-ms=\"{}\"></time></td><td class=\"state\">{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{:.0}%</td><td class=\"waitkind\">{}</td></tr>",
            i.priority,
            i.started_time,
            i.finished_time,
            a.state.name(),
            a.final_status,
            i.running_containers,
            i.allocated_mb,
            i.allocated_vcores,
            i.progress,
            a.wait.as_ref().map(|w| w.kind).unwrap_or(""),
            user = esc(&a.user),
            name = esc(&a.name),
            kind = esc(&a.app_type),
            queue = esc(&a.queue),
            id = esc(&a.id),
        );
    }
    out.push_str("</table></div>");
    out
}

async fn apps(State(ctx): State<Ctx>, Query(q): Query<HashMap<String, String>>, reader: Reader) -> Response {
    let snap = ctx.rm.snapshot();
    let hidden = hidden(&ctx, &snap, &reader).await;
    render_apps(&snap, &hidden, q.get("state").cloned(), q.get("queue").cloned())
}

async fn apps_in_state(
    State(ctx): State<Ctx>,
    Path(state): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    reader: Reader,
) -> Response {
    let snap = ctx.rm.snapshot();
    let hidden = hidden(&ctx, &snap, &reader).await;
    render_apps(&snap, &hidden, Some(state), q.get("queue").cloned())
}

fn render_apps(snap: &Snapshot, hidden: &[ApplicationId], state: Option<String>, queue: Option<String>) -> Response {
    let state = state.filter(|s| !s.is_empty()).map(|s| s.to_ascii_uppercase());
    let wanted: Option<AppState> = state.as_deref().and_then(AppState::parse);
    let chosen: Vec<&AppSnap> = snap
        .apps
        .iter()
        .rev()
        .map(|a| &**a)
        .filter(|a| wanted.is_none_or(|s| a.state == s))
        .filter(|a| queue.as_deref().is_none_or(|q| q.is_empty() || a.queue == q || a.queue == format!("root.{q}")))
        .collect();
    let mut body = String::from("<h2>Applications</h2><p id=\"filters\">State: <a href=\"/cluster/apps\">ALL</a>");
    for s in AppState::ALL {
        let _ = write!(body, " · <a href=\"/cluster/apps?state={0}\">{0}</a>", s.name());
    }
    body.push_str("</p><form method=\"get\" action=\"/cluster/apps\">Queue: <select name=\"queue\"><option value=\"\">all</option>");
    for r in snap.queues.iter().filter(|r| r.leaf) {
        let sel = if queue.as_deref() == Some(r.name.as_str()) { " selected" } else { "" };
        let _ = write!(body, "<option{sel}>{}</option>", esc(&r.name));
    }
    let _ = write!(
        body,
        "</select><input type=\"hidden\" name=\"state\" value=\"{}\"> <button>Filter</button></form>\
         <p class=\"muted\" id=\"shown\">{} application(s){}{}</p>",
        esc(state.as_deref().unwrap_or("")),
        chosen.len(),
        state.as_deref().map(|s| format!(" in state {}", esc(s))).unwrap_or_default(),
        queue.as_deref().filter(|q| !q.is_empty()).map(|q| format!(" in queue {}", esc(q))).unwrap_or_default(),
    );
    body.push_str(&apps_table(&chosen, hidden));
    page("Applications", snap, &body)
}

async fn app(State(ctx): State<Ctx>, Path(id): Path<String>, reader: Reader) -> Response {
    let snap = ctx.rm.snapshot();
    let Some(a) = snap.apps.iter().find(|a| a.id == id) else {
        let body = format!("<h2>Application {}</h2><p>No such application on this ResourceManager.</p>", esc(&id));
        let mut r = page("Application", &snap, &body);
        *r.status_mut() = axum::http::StatusCode::NOT_FOUND;
        return r;
    };
    // If the loop cannot answer, the page is not shown.
    if !ctx.rm.may_view(&snap, reader.0.as_deref(), a.key).await.unwrap_or(false) {
        // YARN's AppBlock says no in these words, on an otherwise ordinary page.
        let body = format!(
            "<h2>Application {id}</h2><p id=\"not-authorized\">You (User {}) are not authorized to view application {id}</p>",
            esc(reader.0.as_deref().unwrap_or(crate::access::ANONYMOUS)),
            id = esc(&a.id)
        );
        return page("Application", &snap, &body);
    }
    // A failed call (the RM stopping) shows no containers rather than no page.
    let containers = ctx.rm.containers(a.key).await.unwrap_or_default();
    let i = a.info();
    // The containers below are read from the loop now, the rest of the page from the last
    // publish: a live app's allocation is summed from the same list, so the two agree.
    let (memory, vcores) = if a.state.is_final() {
        (i.allocated_mb.to_string(), i.allocated_vcores.to_string())
    } else {
        let (m, v) = containers.iter().fold((0, 0), |(m, v), c| (m + c.resource.memory, v + c.resource.vcores));
        (m.to_string(), v.to_string())
    };
    let allocated = format!("&lt;memory:{memory}, vCores:{vcores}&gt;");
    let mut body = format!("<h2>Application {}</h2>", esc(&a.id));
    if let Some(w) = &a.wait {
        let _ = write!(
            body,
            "<div class=\"wait\" id=\"wait\" data-kind=\"{}\"><b>Why is this application waiting?</b>\
             <p id=\"wait-reason\">{}</p><table>",
            w.kind,
            esc(&w.reason)
        );
        for (label, value) in &w.numbers {
            let _ = write!(body, "<tr><th>{}</th><td>{}</td></tr>", esc(label), esc(value));
        }
        let _ = write!(body, "</table><p>What would end it: {}</p></div>", esc(w.remedy));
    }
    let rows: [(&str, String); 12] = [
        ("User", esc(&a.user)),
        ("Name", esc(&a.name)),
        ("Application Type", esc(&a.app_type)),
        ("Queue", format!("<a href=\"/cluster/scheduler?queue={0}\">{0}</a>", esc(&a.queue))),
        ("Application Priority", i.priority.to_string()),
        ("YarnApplicationState", a.state.name().to_string()),
        ("FinalStatus Reported by AM", a.final_status.to_string()),
        ("Started", format!("<time data-ms=\"{}\"></time>", a.started)),
        ("Elapsed", format!("{} s", i.elapsed_time / 1000)),
        ("Allocated Resources", allocated),
        (
            "Aggregate Resource Allocation",
            format!("{} MB-seconds, {} vcore-seconds", i.memory_seconds, i.vcore_seconds),
        ),
        ("Diagnostics", format!("<span id=\"diagnostics\">{}</span>", esc(&i.diagnostics))),
    ];
    body.push_str("<table id=\"app-overview\">");
    for (k, v) in rows {
        let _ = write!(body, "<tr><th>{k}</th><td>{v}</td></tr>");
    }
    body.push_str("</table><h2>Application Attempts</h2><table id=\"attempts\"><tr><th>Attempt ID</th><th>Started</th><th>State</th><th>Node</th><th>Logs</th><th>Diagnostics</th></tr>");
    for at in a.attempts() {
        let _ = write!(
            body,
            "<tr><td>{}</td><td><time data-ms=\"{}\"></time></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&at.app_attempt_id),
            at.start_time,
            esc(at.app_attempt_state),
            esc(&at.node_http_address),
            esc(&at.logs_link),
            esc(&at.diagnostics_info),
        );
    }
    body.push_str("</table><h2>Containers</h2><table id=\"containers\"><tr><th>Container ID</th><th>Node</th><th>Allocated</th><th>Priority</th><th>State</th></tr>");
    for c in &containers {
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td>&lt;memory:{}, vCores:{}&gt;</td><td>{}</td><td>{}</td></tr>",
            esc(&c.id),
            esc(&c.node),
            c.resource.memory,
            c.resource.vcores,
            c.priority,
            if c.running { "RUNNING" } else { "ALLOCATED" },
        );
    }
    body.push_str("</table>");
    page(&format!("Application {}", a.id), &snap, &body)
}

async fn nodes(State(ctx): State<Ctx>, Query(q): Query<HashMap<String, String>>) -> Response {
    let snap = ctx.rm.snapshot();
    let wanted = q.get("state").map(|s| s.to_ascii_uppercase()).filter(|s| !s.is_empty());
    let mut body = String::from(
        "<h2>Nodes</h2><table id=\"nodes\"><tr><th>Rack</th><th>Node State</th><th>Node Address</th><th>Node HTTP Address</th>\
         <th>Last health-update</th><th>Containers</th><th>Mem Used</th><th>Mem Avail</th><th>VCores Used</th><th>VCores Avail</th><th>Version</th></tr>",
    );
    for n in snap.nodes.iter().filter(|n| wanted.as_ref().is_none_or(|w| w == n.state)) {
        let _ = write!(
            body,
            "<tr data-node=\"{id}\"><td>{}</td><td>{state}</td><td>{id}</td><td><a href=\"http://{http}/ws/v1/node/info\">{http}</a></td>\
             <td><time data-ms=\"{}\"></time></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&n.names.rack),
            n.last_health_update,
            n.containers,
            mb(n.used.memory()),
            mb(n.avail_memory()),
            n.used.vcores(),
            n.avail_vcores(),
            esc(&n.names.version),
            state = n.state,
            id = esc(&n.names.id),
            http = esc(&n.names.http),
        );
    }
    body.push_str("</table>");
    page("Nodes", &snap, &body)
}

/// A width in percent, rounded to 0.01 (the tests compare these with the REST numbers).
fn pct(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        return 0.0;
    }
    ((part as f64 * 100.0 / whole as f64).clamp(0.0, 100.0) * 100.0).round() / 100.0
}

async fn scheduler(State(ctx): State<Ctx>, Query(q): Query<HashMap<String, String>>, reader: Reader) -> Response {
    let snap = ctx.rm.snapshot();
    let selected = q.get("queue").filter(|q| !q.is_empty()).cloned();
    let fair = snap.scheduler_kind == "fair";
    let cluster = snap.metrics.total_mb;
    let (steady, share, over) = if fair {
        ("Steady Fair Share", "Instantaneous Fair Share", "Used (over fair share)")
    } else {
        ("Capacity", "Guaranteed", "Used (over capacity)")
    };
    let mut body = format!(
        "<h2>Application Queues</h2><p class=\"legend\"><span><i class=\"sw\" style=\"border:2px solid #1f3a5f\"></i>{steady}</span>\
         <span><i class=\"sw\" style=\"border:2px dashed #c0392b\"></i>{share}</span><span><i class=\"sw used\"></i>Used</span>\
         <span><i class=\"sw over\"></i>{over}</span><span><i class=\"sw\" style=\"border:1px solid #999;background:#f6f6f6\"></i>Max Capacity</span></p>\
         <p class=\"muted\">Each bar is as wide as the queue's maximum is of the cluster ({} MB); inside it, memory relative to that maximum.</p><ul class=\"tree\" id=\"queues\">",
        cluster
    );
    for r in snap.queues.iter() {
        body.push_str(&queue_line(r, cluster, fair, selected.as_deref() == Some(r.name.as_str())));
    }
    body.push_str("</ul>");
    if let Some(q) = &selected {
        let apps: Vec<&AppSnap> = snap.apps.iter().rev().map(|a| &**a).filter(|a| &a.queue == q).collect();
        let hidden = hidden(&ctx, &snap, &reader).await;
        let _ = write!(body, "<h2>Applications in {}</h2>{}", esc(q), apps_table(&apps, &hidden));
    }
    page("Scheduler", &snap, &body)
}

fn queue_line(r: &QueueRow, cluster: i64, fair: bool, open: bool) -> String {
    let max = r.max.memory();
    let used_in = r.used.memory().min(r.share.memory());
    let over = (r.used.memory() - r.share.memory()).max(0);
    let show = |x: fairloom_model::Resource| format!("&lt;memory:{}, vCores:{}&gt;", x.memory(), x.vcores());
    let mut out = format!(
        "<li data-queue=\"{name}\" style=\"margin-left:{indent}px\"><div class=\"q\"><span class=\"qname\"><a href=\"/cluster/scheduler?queue={name}\" title=\"{name}\">{short}</a></span>\
         <div class=\"track\"><div class=\"bar\" data-bar=\"max\" style=\"width:{w_max}%\">\
         <div class=\"used\" data-bar=\"used\" style=\"width:{w_used}%\"></div>\
         <div class=\"over\" data-bar=\"over\" style=\"left:{w_used}%;width:{w_over}%\"></div>\
         <div class=\"steady\" data-bar=\"steady\" style=\"width:{w_steady}%\"></div>\
         <div class=\"fair\" data-bar=\"fair\" style=\"width:{w_fair}%\"></div></div></div>\
         <span class=\"pct\">{used_pct:.1}% used</span></div>",
        name = esc(&r.name),
        short = esc(r.name.rsplit('.').next().unwrap_or(&r.name)),
        indent = r.depth * 18,
        w_max = pct(max, cluster),
        w_used = pct(used_in, max),
        w_over = pct(over, max).min(100.0 - pct(used_in, max)),
        w_steady = pct(r.steady.memory(), max),
        w_fair = pct(r.share.memory(), max),
        used_pct = pct(r.used.memory(), cluster),
    );
    let (steady, share) = if fair {
        ("Steady Fair Share", "Instantaneous Fair Share")
    } else {
        ("Configured Capacity", "Guaranteed Capacity")
    };
    let _ = write!(
        out,
        "<details class=\"status\"{}><summary>'{}' Queue Status</summary><table>\
         <tr><th>Used Resources</th><td>{}</td></tr><tr><th>Num Active Applications</th><td>{}</td></tr>\
         <tr><th>Num Pending Applications</th><td>{}</td></tr><tr><th>Min Resources</th><td>{}</td></tr>\
         <tr><th>Max Resources</th><td>{}</td></tr>{}<tr><th>{steady}</th><td>{}</td></tr><tr><th>{share}</th><td>{}</td></tr>\
         <tr><th>Demand</th><td>{}</td></tr><tr><th>AM Used Resources</th><td>{}</td></tr><tr><th>AM Max Resources</th><td>{}</td></tr>\
         <tr><th>Policy</th><td>{}</td></tr></table></details></li>",
        if open { " open" } else { "" },
        esc(&r.name),
        show(r.used),
        r.active_apps,
        r.pending_apps,
        show(r.min),
        show(r.max),
        r.max_apps.map(|m| format!("<tr><th>Max Running Applications</th><td>{m}</td></tr>")).unwrap_or_default(),
        show(r.steady),
        show(r.share),
        show(r.demand),
        show(r.am_used),
        show(r.am_limit),
        esc(&r.policy),
    );
    out
}
