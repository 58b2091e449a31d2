//! `andon report`: one self-contained HTML page, with its CSS, SVG and script inline (no network,
//! works from `file://`): the stream as a layered picture (stages as boxes with their ecosystem
//! and file count, wires as arrows with their import counts, cycles red), the contracts kept and
//! broken, and each finding with its witness hop by hop; clicking a finding highlights the stage
//! edges its witness crosses. Every repository string goes through `text::html`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use super::layout;
use super::summary::stage_of;
use crate::check::CheckReport;
use crate::ops::StreamReport;
use crate::text::html;

const BOX_W: usize = 180;
const BOX_H: usize = 52;
const GAP_X: usize = 90;
const GAP_Y: usize = 28;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1f2328}\
h1{font-size:20px}h2{font-size:16px;margin-top:28px}\
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left}\
.stage rect{fill:#f6f8fa;stroke:#57606a}.stage.cyclic rect{stroke:#cf222e;stroke-width:2}\
.stage text{font-size:12px}.stage .meta{fill:#57606a;font-size:11px}\
.wire{stroke:#57606a;fill:none;marker-end:url(#arrow)}.wire.heuristic{stroke-dasharray:5 3}\
.wire.cyclic{stroke:#cf222e}.wire.hot{stroke:#bf8700;stroke-width:4}\
.count{font-size:11px;fill:#57606a}.broken{color:#cf222e}.kept{color:#1a7f37}\
li.finding{cursor:pointer;margin-bottom:6px}li.finding.on{background:#fff8c5}\
.hops{font-family:ui-monospace,monospace;font-size:12px;color:#57606a}";

const SCRIPT: &str = "document.querySelectorAll('li.finding').forEach(function(li){\
li.addEventListener('click',function(){\
var on=!li.classList.contains('on');\
document.querySelectorAll('li.finding.on').forEach(function(x){x.classList.remove('on')});\
document.querySelectorAll('.wire.hot').forEach(function(x){x.classList.remove('hot')});\
if(!on)return;li.classList.add('on');\
(li.dataset.edges||'').split(' ').forEach(function(id){var e=document.getElementById(id);if(e)e.classList.add('hot')});\
});});\
document.body.dataset.readyMs=Math.round(performance.now());";

/// Writes the page for `stream`, with the gate's report when there are contracts.
pub fn html_page(w: &mut dyn Write, name: &str, stream: &StreamReport, check: Option<&CheckReport>) -> io::Result<()> {
    let index: BTreeMap<&str, usize> = stream.order.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>andon report: {}</title><style>{STYLE}</style></head><body>\n<h1>andon report: {}</h1>\n",
        html(name),
        html(name)
    );
    out.push_str(&format!(
        "<p>{} stages, {} wires, {} cycles.</p>\n<h2>The stream</h2>\n",
        stream.stages.len(),
        stream.wires.len(),
        stream.cycles.len()
    ));
    out.push_str(&picture(stream, &index));
    if let Some(r) = check {
        out.push_str(&contracts(r));
        out.push_str(&findings(r, stream, &index));
    }
    out.push_str(&format!("<script>{SCRIPT}</script>\n</body></html>\n"));
    w.write_all(out.as_bytes())
}

/// The id of the drawn edge from stage `p` to stage `c`.
fn edge_id(p: usize, c: usize) -> String {
    format!("e{p}-{c}")
}

fn picture(stream: &StreamReport, index: &BTreeMap<&str, usize>) -> String {
    let edges: Vec<(usize, usize)> = stream
        .wires
        .iter()
        .filter_map(|w| Some((*index.get(w.producer.as_str())?, *index.get(w.consumer.as_str())?)))
        .collect();
    let l = layout::layered(stream.order.len(), &edges);
    let (width, height) = (l.layers.max(1) * (BOX_W + GAP_X), l.rows.max(1) * (BOX_H + GAP_Y) + GAP_Y);
    let pos = |v: usize| (l.at[v].0 * (BOX_W + GAP_X) + 10, l.at[v].1 * (BOX_H + GAP_Y) + GAP_Y);
    let cyclic: BTreeSet<&str> = stream.cycles.iter().flatten().map(String::as_str).collect();
    let same_cycle =
        |a: &str, b: &str| stream.cycles.iter().any(|c| c.iter().any(|x| x == a) && c.iter().any(|x| x == b));
    let mut s = format!(
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\">\
<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#57606a\"/></marker></defs>\n"
    );
    for (w, &(p, c)) in stream.wires.iter().zip(&edges) {
        let ((px, py), (cx, cy)) = (pos(p), pos(c));
        let (x1, y1, x2, y2) = if cx > px {
            (px + BOX_W, py + BOX_H / 2, cx, cy + BOX_H / 2)
        } else {
            (px + BOX_W / 2, py + BOX_H, cx + BOX_W / 2, cy + BOX_H)
        };
        let bend = if cx > px { (x1 + x2) / 2 } else { x1.max(x2) };
        let mut class = String::from("wire");
        if w.confidence != "exact" {
            class.push_str(" heuristic");
        }
        if same_cycle(&w.producer, &w.consumer) {
            class.push_str(" cyclic");
        }
        s.push_str(&format!(
            "<path id=\"{}\" class=\"{class}\" d=\"M{x1},{y1} C{bend},{y1} {bend},{y2} {x2},{y2}\"><title>{} → {}: {} imports</title></path>\
<text class=\"count\" x=\"{}\" y=\"{}\">{}</text>\n",
            edge_id(p, c),
            html(&w.producer),
            html(&w.consumer),
            w.imports,
            (x1 + x2) / 2,
            (y1 + y2) / 2 - 4,
            w.imports
        ));
    }
    let info: BTreeMap<&str, &crate::ops::StageRow> = stream.stages.iter().map(|s| (s.name.as_str(), s)).collect();
    for (v, name) in stream.order.iter().enumerate() {
        let (x, y) = pos(v);
        let (eco, files) = info.get(name.as_str()).map_or(("", 0), |s| (s.ecosystem.as_str(), s.files));
        let class = if cyclic.contains(name.as_str()) { "stage cyclic" } else { "stage" };
        s.push_str(&format!(
            "<g class=\"{class}\"><rect x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"6\"/>\
<text x=\"{}\" y=\"{}\">{}</text><text class=\"meta\" x=\"{}\" y=\"{}\">{} · {files} files</text></g>\n",
            x + 8,
            y + 20,
            html(&crate::text::short(name)),
            x + 8,
            y + 40,
            html(eco)
        ));
    }
    s.push_str("</svg>\n");
    s
}

fn contracts(r: &CheckReport) -> String {
    let mut s = String::from(
        "<h2>Contracts</h2>\n<table><tr><th>contract</th><th>kind</th><th>status</th><th>findings</th><th>blocking</th><th>excused</th></tr>\n",
    );
    for c in &r.contracts {
        let status = super::contract_status(c);
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td class=\"{status}\">{status}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            html(&c.name),
            c.kind.name(),
            c.findings,
            c.blocking,
            c.excused
        ));
    }
    s.push_str("</table>\n");
    s
}

fn findings(r: &CheckReport, stream: &StreamReport, index: &BTreeMap<&str, usize>) -> String {
    let shown: Vec<_> = r.findings.iter().filter(|f| f.excused.is_none()).collect();
    let mut s = format!("<h2>Findings ({})</h2>\n<ol>\n", shown.len());
    for (i, f) in shown.iter().enumerate() {
        if i == 500 {
            s.push_str(&format!("<li>… and {} more (`andon check` lists them all)</li>\n", shown.len() - i));
            break;
        }
        let edges: BTreeSet<String> = f
            .witness
            .iter()
            .filter_map(|h| {
                let (c, p) = (stage_of(stream, &h.path)?, stage_of(stream, &h.target)?);
                Some(edge_id(*index.get(p)?, *index.get(c)?)).filter(|_| c != p)
            })
            .collect();
        let hops: Vec<String> =
            f.witness.iter().map(|h| format!("{}:{} → {}", html(&h.path), h.line, html(&h.target))).collect();
        s.push_str(&format!(
            "<li class=\"finding\" data-edges=\"{}\"><b>{}:{}</b> {} — {} <span class=\"{}\">[tier {}]</span><div class=\"hops\">{}</div></li>\n",
            edges.into_iter().collect::<Vec<_>>().join(" "),
            html(&f.path),
            f.line,
            html(&f.contract),
            html(&f.message),
            if f.blocking() { "broken" } else { "kept" },
            f.tier,
            hops.join("<br>")
        ));
    }
    s.push_str("</ol>\n");
    s
}
