//! `andon report`: one self-contained HTML page, with its CSS, SVG and script inline (no network,
//! works from `file://`): the stream as a layered picture that scales to the page (across it or
//! down it, whichever is narrower; stages as boxes with their ecosystem and file count and a label
//! no other stage shows, wires as arrows with their import counts, drawn by what the consumer
//! needs them for, cycles red), the table of stages by their whole names, the contracts kept and
//! broken, and each finding with its witness hop by hop; clicking a finding highlights the stage
//! edges its witness crosses. When the loop has a ledger, stages and wires are coloured by their
//! proof status, the constraint is marked, and the loop board follows; the suspected injections are
//! quoted as data. Every repository string goes through `text::html`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use super::layout;
use super::summary::stage_of;
use crate::api::work::Status;
use crate::check::CheckReport;
use crate::ops::{StreamReport, WireUse};
use crate::status::{Board, BoardStatus, Injections};
use crate::text::html;

/// What one page shows.
pub struct Page<'a> {
    /// The repository's directory name.
    pub name: &'a str,
    pub stream: &'a StreamReport,
    /// The gate's report, when there are contracts.
    pub check: Option<&'a CheckReport>,
    /// The loop board and the suspected injections (`andon status`), or why they cannot be read.
    pub status: Result<&'a Status, &'a crate::api::Error>,
    /// The modules inside each stage, each opened from its own line under the picture.
    pub modules: &'a [crate::ops::WithinView],
}

const BOX_W: usize = 180;
const BOX_H: usize = 60;
const GAP_X: usize = 110;
const GAP_Y: usize = 24;
/// The left and top margin of the picture.
const MARGIN: usize = 10;
/// Drawn down the page: the gap between two bands of boxes (layers), between two boxes of a band,
/// and the width of a wire's slot where it passes through a band.
const GAP_DOWN: usize = 56;
const GAP_SIDE: usize = 20;
const BEND_W: usize = 14;
/// The most characters a line of a box's label holds: at 12 px a monospace character is about
/// 7.2 px wide, so 22 fill a box's 164 px inside its padding.
const LINE_CHARS: usize = 22;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1f2328}\
h1,h2,h3,p,li,td,th{overflow-wrap:anywhere}.stages th,.stages td:nth-child(n+3){white-space:nowrap;overflow-wrap:normal}\
h1{font-size:20px}h2{font-size:16px;margin-top:28px}\
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left}\
.stage rect{fill:#f6f8fa;stroke:#57606a}.stage.cyclic rect{stroke:#cf222e;stroke-width:2}\
.picture svg.stream{display:block;max-width:100%;height:auto}.picture.full{overflow-x:auto}.picture.full svg.stream{max-width:none}\
.stage text{font-size:12px}.stage .name{font-family:ui-monospace,monospace}.stage .meta{fill:#57606a;font-size:11px}\
.wire{stroke:#57606a;stroke-width:1.5;fill:none;marker-end:url(#arrow)}.wire.heuristic{stroke-dasharray:6 3}\
.wire.for-type,.wire.for-test,.wire.for-dev{stroke:#8c959f;stroke-width:1.25}\
.wire.for-type{stroke-dasharray:9 3 2 3}.wire.for-test{stroke-dasharray:2 3}.wire.for-dev{stroke-dasharray:2 3 2 3 9 3}\
.key{color:#57606a}.key .sample{display:inline-block;width:40px;height:2px;vertical-align:middle;margin:0 4px 0 10px;background:#57606a}\
.sample.heuristic{background:repeating-linear-gradient(90deg,#57606a 0 6px,transparent 6px 9px)}\
.sample.for-type{background:repeating-linear-gradient(90deg,#8c959f 0 9px,transparent 9px 12px,#8c959f 12px 14px,transparent 14px 17px)}\
.sample.for-test{background:repeating-linear-gradient(90deg,#8c959f 0 2px,transparent 2px 5px)}\
.sample.for-dev{background:repeating-linear-gradient(90deg,#8c959f 0 2px,transparent 2px 5px,#8c959f 5px 7px,transparent 7px 10px,#8c959f 10px 19px,transparent 19px 22px)}\
.sample.cyclic{background:#cf222e;height:3px}\
.wire.cyclic{stroke:#cf222e;stroke-width:2.5}\
.stage.proven rect{fill:#dafbe1}.stage.broken rect{fill:#ffebe9}.stage.unproven rect{fill:#fff8c5}.stage.unknown rect{fill:#fbefff}\
.wire.proven{stroke:#1a7f37}.wire.broken{stroke:#cf222e}.wire.unproven{stroke:#bf8700}.wire.unknown{stroke:#8250df}\
.wire.constraint{stroke-width:4}.wire.hot{stroke:#0969da;stroke-width:5}.mark{font-size:11px;font-weight:600;fill:#cf222e}\
.legend span{display:inline-block;padding:0 6px;margin-right:6px;border:1px solid #d0d7de}\
.holds{border:2px solid #cf222e;padding:4px 12px}q{font-family:ui-monospace,monospace;font-size:12px;background:#f6f8fa}\
.count{font-size:11px;fill:#57606a}.broken{color:#cf222e}.kept{color:#1a7f37}\
li.finding{cursor:pointer;margin-bottom:6px}li.finding.on{background:#fff8c5}\
.hops{font-family:ui-monospace,monospace;font-size:12px;color:#57606a}";

const SCRIPT: &str = "var zoom=document.getElementById('zoom');if(zoom)zoom.addEventListener('click',function(){\
var p=document.getElementById('picture');var full=p.classList.toggle('full');\
zoom.textContent=full?'fit to the page':'actual size';});\
document.querySelectorAll('li.finding').forEach(function(li){\
li.addEventListener('click',function(){\
var on=!li.classList.contains('on');\
document.querySelectorAll('li.finding.on').forEach(function(x){x.classList.remove('on')});\
document.querySelectorAll('.wire.hot').forEach(function(x){x.classList.remove('hot')});\
if(!on)return;li.classList.add('on');\
(li.dataset.edges||'').split(' ').forEach(function(id){var e=document.getElementById(id);if(e)e.classList.add('hot')});\
});});\
document.body.dataset.readyMs=Math.round(performance.now());";

/// Writes the page.
pub fn html_page(w: &mut dyn Write, page: &Page) -> io::Result<()> {
    let (name, stream) = (page.name, page.stream);
    let index: BTreeMap<&str, usize> = stream.order.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
    let board = page.status.as_ref().ok().and_then(|s| s.board.as_ref());
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>andon report: {}</title><style>{STYLE}</style></head><body>\n<h1>andon report: {}</h1>\n",
        html(name),
        html(name)
    );
    out.push_str(&format!(
        "<p>{} stages, {} wires, {} cycles.</p>\n<h2>The stream</h2>\n",
        stream.stages.len(),
        stream.wires.len(),
        stream.cycles.len()
    ));
    out.push_str(&picture(stream, &index, board.map(Proof::of)));
    out.push_str(&inside(page.modules));
    if let Some(r) = page.check {
        out.push_str(&contracts(r));
        out.push_str(&findings(r, stream, &index));
    }
    out.push_str(&loop_board(&page.status));
    out.push_str(&format!("<script>{SCRIPT}</script>\n</body></html>\n"));
    w.write_all(out.as_bytes())
}

/// The proof status of each recorded wire and stage, and the constraint, from the loop's board.
struct Proof<'a> {
    wires: BTreeMap<(&'a str, &'a str), BoardStatus>,
    stages: BTreeMap<&'a str, BoardStatus>,
    constraint: Option<(&'a str, &'a str)>,
}

impl<'a> Proof<'a> {
    fn of(b: &'a Board) -> Proof<'a> {
        let mut wires = BTreeMap::new();
        let mut stages: BTreeMap<&str, BoardStatus> = BTreeMap::new();
        for w in b.stages.iter().flat_map(|s| &s.wires) {
            wires.insert((w.wire.producer.as_str(), w.wire.consumer.as_str()), w.status);
            for end in [&w.wire.producer, &w.wire.consumer] {
                let worst = stages.entry(end.as_str()).or_insert(w.status);
                *worst = (*worst).max(w.status);
            }
        }
        let constraint = b.constraint.as_ref().map(|c| (c.wire.producer.as_str(), c.wire.consumer.as_str()));
        Proof { wires, stages, constraint }
    }
}

/// The id of the drawn edge from stage `p` to stage `c`.
fn edge_id(p: usize, c: usize) -> String {
    format!("e{p}-{c}")
}

/// The SVG path of an edge from the box at `from` to the box at `to` (top-left corners) through
/// the virtual slots `bends`: out of the side facing the consumer, straight through each slot,
/// and into the side facing the producer, one straight run along a row however many slots it
/// crosses; an edge within one layer leaves and enters by the column's right side and arcs in
/// the gap beside it, clear of the boxes between. Returns the path and where its label goes.
fn route(from: (usize, usize), to: (usize, usize), bends: &[(usize, usize)]) -> (String, (usize, usize)) {
    let forward = to.0 > from.0;
    // a wire back against the stream runs lower, so a pair of stages that feed each other shows two
    let mid = |p: (usize, usize)| p.1 + if forward { BOX_H / 2 } else { BOX_H * 3 / 4 };
    if from.0 == to.0 {
        let (x, y1, y2) = (from.0 + BOX_W, from.1 + BOX_H / 4, to.1 + BOX_H / 4);
        let bend = x + GAP_X / 3;
        return (format!("M{x},{y1} C{bend},{y1} {bend},{y2} {x},{y2}"), (bend, (y1 + y2) / 2));
    }
    let out_x = |b: (usize, usize)| if forward { b.0 + BOX_W } else { b.0 };
    let in_x = |b: (usize, usize)| if forward { b.0 } else { b.0 + BOX_W };
    let mut points = vec![(out_x(from), mid(from))];
    for &b in bends {
        points.push((in_x(b), mid(b)));
        points.push((out_x(b), mid(b)));
    }
    points.push((in_x(to), mid(to)));
    let mut d = format!("M{},{}", points[0].0, points[0].1);
    let mut i = 1;
    while i < points.len() {
        let ((x1, y1), (x2, y2)) = (points[i - 1], points[i]);
        if y1 == y2 {
            // along one row: through every slot on it in one run (the slots hold no box)
            while i + 1 < points.len() && points[i + 1].1 == y1 {
                i += 1;
            }
            d.push_str(&format!(" H{}", points[i].0));
        } else {
            // between two layers, in the gap that holds no box
            let bend = (x1 + x2) / 2;
            d.push_str(&format!(" C{bend},{y1} {bend},{y2} {x2},{y2}"));
        }
        i += 1;
    }
    let ((x1, y1), (x2, y2)) = (points[0], points[1]);
    (d, ((x1 + x2) / 2, (y1 + y2) / 2))
}

/// Where the picture puts each slot of the layout ([`layout::Layout`]): layers as columns left to
/// right, every row the same height (`across`), or layers as bands down the page with each band's
/// boxes side by side and the wires passing through it thin (`down`): whichever is narrower, so
/// the picture shrinks least to fit the page.
struct Frame {
    down: bool,
    /// Down the page: each slot's left edge, and whether it holds a box.
    left: BTreeMap<(usize, usize), (usize, bool)>,
    width: usize,
    height: usize,
}

impl Frame {
    fn new(l: &layout::Layout) -> Frame {
        let across = (MARGIN + l.layers.max(1) * (BOX_W + GAP_X) - GAP_X / 2, l.rows.max(1) * (BOX_H + GAP_Y) + GAP_Y);
        let boxes: BTreeSet<(usize, usize)> = l.at.iter().copied().collect();
        let slots: BTreeSet<(usize, usize)> = l.at.iter().chain(l.bends.iter().flatten()).copied().collect();
        let mut left = BTreeMap::new();
        let (mut layer, mut x, mut widest) = (usize::MAX, MARGIN, MARGIN + BOX_W);
        for slot in slots {
            if slot.0 != layer {
                (layer, x) = (slot.0, MARGIN);
            }
            let is_box = boxes.contains(&slot);
            left.insert(slot, (x, is_box));
            x += if is_box { BOX_W + GAP_SIDE } else { BEND_W };
            widest = widest.max(x);
        }
        let down = (widest + MARGIN, GAP_Y + l.layers.max(1) * (BOX_H + GAP_DOWN) - GAP_DOWN / 2);
        if down.0 < across.0 {
            Frame { down: true, left, width: down.0, height: down.1 }
        } else {
            Frame { down: false, left: BTreeMap::new(), width: across.0, height: across.1 }
        }
    }

    /// The top-left corner of the box (or wire slot) at `slot`.
    fn corner(&self, slot: (usize, usize)) -> (usize, usize) {
        let (layer, row) = slot;
        if self.down {
            (self.left.get(&slot).map_or(MARGIN, |l| l.0), layer * (BOX_H + GAP_DOWN) + GAP_Y)
        } else {
            (layer * (BOX_W + GAP_X) + MARGIN, row * (BOX_H + GAP_Y) + GAP_Y)
        }
    }

    /// The path of an edge, where its count goes, and how that text is anchored.
    fn route(
        &self,
        from: (usize, usize),
        to: (usize, usize),
        bends: &[(usize, usize)],
    ) -> (String, (usize, usize), &'static str) {
        if !self.down {
            let bends: Vec<(usize, usize)> = bends.iter().map(|&b| self.corner(b)).collect();
            let (d, (x, y)) = route(self.corner(from), self.corner(to), &bends);
            return (d, (x, y.saturating_sub(4)), "middle");
        }
        // (centre, top) of each slot
        let at = |slot: (usize, usize)| {
            let (x, y) = self.corner(slot);
            let w = if self.left.get(&slot).is_some_and(|l| l.1) { BOX_W } else { BEND_W };
            (x + w / 2, y)
        };
        let (d, (x, y)) = route_down(at(from), at(to), &bends.iter().map(|&b| at(b)).collect::<Vec<_>>());
        (d, (x + 4, y + 4), "start")
    }
}

/// [`route`] down the page: `from`, `to` and the `bends` are (centre, top) of their slots; an edge
/// leaves by the bottom and enters by the top (the other way against the stream, a quarter of a
/// box to the right so a pair that feeds each other shows two), straight down through each band
/// it crosses, curving in the gaps between; an edge within one band arcs in the gap below it.
fn route_down(from: (usize, usize), to: (usize, usize), bends: &[(usize, usize)]) -> (String, (usize, usize)) {
    let forward = to.1 > from.1;
    let shift = |x: usize| if forward { x } else { x + BOX_W / 4 };
    if from.1 == to.1 {
        let (y, x1, x2) = (from.1 + BOX_H, from.0 - BOX_W / 4, to.0 - BOX_W / 4);
        let bend = y + GAP_DOWN / 3;
        return (format!("M{x1},{y} C{x1},{bend} {x2},{bend} {x2},{y}"), ((x1 + x2) / 2, bend));
    }
    let out_y = |b: (usize, usize)| if forward { b.1 + BOX_H } else { b.1 };
    let in_y = |b: (usize, usize)| if forward { b.1 } else { b.1 + BOX_H };
    let mut points = vec![(shift(from.0), out_y(from))];
    for &b in bends {
        points.push((b.0, in_y(b)));
        points.push((b.0, out_y(b)));
    }
    points.push((shift(to.0), in_y(to)));
    let mut d = format!("M{},{}", points[0].0, points[0].1);
    let mut i = 1;
    while i < points.len() {
        let ((x1, y1), (x2, y2)) = (points[i - 1], points[i]);
        if x1 == x2 {
            while i + 1 < points.len() && points[i + 1].0 == x1 {
                i += 1;
            }
            d.push_str(&format!(" V{}", points[i].1));
        } else {
            let bend = (y1 + y2) / 2;
            d.push_str(&format!(" C{x1},{bend} {x2},{bend} {x2},{y2}"));
        }
        i += 1;
    }
    let ((x1, y1), (x2, y2)) = (points[0], points[1]);
    (d, ((x1 + x2) / 2, (y1 + y2) / 2))
}

/// The wire classes for what the consumer needs it for (run-time wires take none), and how the
/// key under the picture names them.
const USES: [(WireUse, &str, &str); 3] = [
    (WireUse::Type, "for-type", "type checking only"),
    (WireUse::Test, "for-test", "tests only"),
    (WireUse::Dev, "for-dev", "a dev or build dependency"),
];

fn use_class(u: WireUse) -> &'static str {
    USES.iter().find(|x| x.0 == u).map_or("", |x| x.1)
}

/// The lines of each stage's label, in stream order ([`layout::labels`]), as repository text:
/// each goes through `text::html` when drawn.
fn stage_labels(order: &[String]) -> Vec<Vec<String>> {
    let units: Vec<Vec<String>> = order.iter().map(|n| n.chars().map(String::from).collect()).collect();
    layout::labels(&units, LINE_CHARS)
}

fn picture(stream: &StreamReport, index: &BTreeMap<&str, usize>, proof: Option<Proof>) -> String {
    let edges: Vec<(usize, usize)> = stream
        .wires
        .iter()
        .filter_map(|w| Some((*index.get(w.producer.as_str())?, *index.get(w.consumer.as_str())?)))
        .collect();
    let l = layout::layered(stream.order.len(), &edges);
    let frame = Frame::new(&l);
    let (width, height) = (frame.width, frame.height);
    let cyclic: BTreeSet<&str> = stream.cycles.iter().flatten().map(String::as_str).collect();
    let same_cycle =
        |a: &str, b: &str| stream.cycles.iter().any(|c| c.iter().any(|x| x == a) && c.iter().any(|x| x == b));
    let mut s = String::new();
    if proof.is_some() {
        s.push_str("<p class=\"legend\">proof status from the loop's ledger: <span class=\"kept\">proven</span><span class=\"broken\">broken</span><span>unproven</span><span>unknown</span><span>grey: not in the ledger</span><span>a stage: the worst of its wires</span> <b class=\"broken\">◆ constraint</b></p>\n");
    }
    s.push_str(&format!(
        "<p><button type=\"button\" id=\"zoom\">actual size</button> the picture fits the page; hover over a box or a wire for its whole name.</p>\n\
<div class=\"picture\" id=\"picture\"><svg class=\"stream\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" preserveAspectRatio=\"xMinYMin meet\" role=\"img\" aria-label=\"the stream: {} stages, {} wires\">\
<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"9\" markerHeight=\"9\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#57606a\"/></marker></defs>\n",
        stream.stages.len(),
        stream.wires.len()
    ));
    for ((w, &(p, c)), bends) in stream.wires.iter().zip(&edges).zip(&l.bends) {
        let (d, (lx, ly), anchor) = frame.route(l.at[p], l.at[c], bends);
        let key = (w.producer.as_str(), w.consumer.as_str());
        let mut class = String::from("wire");
        class.push_str(w.confidence.svg_class());
        if w.used_for != WireUse::RunTime {
            class.push(' ');
            class.push_str(use_class(w.used_for));
        }
        if same_cycle(&w.producer, &w.consumer) {
            class.push_str(" cyclic");
        }
        let status = proof.as_ref().and_then(|pr| pr.wires.get(&key)).copied();
        if let Some(st) = status {
            class.push(' ');
            class.push_str(st.css_class());
        }
        let constraint = proof.as_ref().is_some_and(|pr| pr.constraint == Some(key));
        if constraint {
            class.push_str(" constraint");
        }
        s.push_str(&format!(
            "<path id=\"{}\" class=\"{class}\" d=\"{d}\"><title>{} → {}: {} imports, {}, {}{}</title></path>\
<text class=\"count\" text-anchor=\"{anchor}\" x=\"{lx}\" y=\"{ly}\">{}</text>\n",
            edge_id(p, c),
            html(&w.producer),
            html(&w.consumer),
            w.imports,
            w.used_for,
            w.confidence,
            status.map(|st| format!(", {st}")).unwrap_or_default(),
            w.imports
        ));
        if constraint {
            s.push_str(&format!(
                "<text class=\"mark\" text-anchor=\"{anchor}\" x=\"{lx}\" y=\"{}\">◆ constraint</text>\n",
                // above a wire with the stream, below one against it (below its count, down the page)
                if l.at[c].0 > l.at[p].0 && !frame.down { ly.saturating_sub(12) } else { ly + 14 }
            ));
        }
    }
    let info: BTreeMap<&str, &crate::ops::StageRow> = stream.stages.iter().map(|s| (s.name.as_str(), s)).collect();
    for ((v, name), label) in stream.order.iter().enumerate().zip(stage_labels(&stream.order)) {
        let (x, y) = frame.corner(l.at[v]);
        let (eco, files) = info.get(name.as_str()).map_or(("", 0), |s| (s.ecosystem.as_str(), s.files));
        let mut class = String::from("stage");
        if cyclic.contains(name.as_str()) {
            class.push_str(" cyclic");
        }
        if let Some(st) = proof.as_ref().and_then(|pr| pr.stages.get(name.as_str())) {
            class.push(' ');
            class.push_str(st.css_class());
        }
        // one line centred in the name's room, two filling it
        let name_text = match label.as_slice() {
            [one] => format!("<text class=\"name\" x=\"{}\" y=\"{}\">{}</text>", x + 8, y + 24, crate::text::html(one)),
            lines => {
                let spans: String = lines
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        format!("<tspan x=\"{}\" y=\"{}\">{}</tspan>", x + 8, y + 17 + 15 * i, crate::text::html(t))
                    })
                    .collect();
                format!("<text class=\"name\">{spans}</text>")
            }
        };
        s.push_str(&format!(
            "<g class=\"{class}\" data-name=\"{}\"><title>{}</title><rect x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"6\"/>\
{name_text}<text class=\"meta\" x=\"{}\" y=\"{}\">{} · {files} files</text></g>\n",
            html(name),
            html(name),
            x + 8,
            y + BOX_H - 9,
            html(eco)
        ));
    }
    s.push_str("</svg></div>\n");
    s.push_str(&wire_key(stream));
    s.push_str(&stage_table(stream));
    s
}

/// The key to the wires' lines, under the picture.
fn wire_key(stream: &StreamReport) -> String {
    let count = |u: WireUse| stream.wires.iter().filter(|w| w.used_for == u).count();
    let mut s = format!(
        "<p class=\"key\">wires, producer → consumer, with their import counts:<span class=\"sample\"></span>needed at run time ({})",
        count(WireUse::RunTime)
    );
    for (u, class, what) in USES {
        s.push_str(&format!("<span class=\"sample {class}\"></span>{what} ({})", count(u)));
    }
    s.push_str("<span class=\"sample heuristic\"></span>resolved by heuristic<span class=\"sample cyclic\"></span>on a cycle</p>\n");
    s
}

/// Every stage with its whole name, in stream order: what the picture shows, readable at any width.
fn stage_table(stream: &StreamReport) -> String {
    let info: BTreeMap<&str, &crate::ops::StageRow> = stream.stages.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut s = String::from(
        "<table class=\"stages\"><tr><th>stage</th><th>root</th><th>ecosystem</th><th>files</th><th>feeds</th><th>fed by</th></tr>\n",
    );
    for name in &stream.order {
        let (root, eco, files) =
            info.get(name.as_str()).map_or(("", "", 0), |s| (s.root.as_str(), s.ecosystem.as_str(), s.files));
        let feeds = stream.wires.iter().filter(|w| w.producer == *name).count();
        let fed = stream.wires.iter().filter(|w| w.consumer == *name).count();
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{files}</td><td>{feeds}</td><td>{fed}</td></tr>\n",
            html(name),
            html(root),
            html(eco)
        ));
    }
    s.push_str("</table>\n");
    s
}

/// Each stage opened: its modules by layer, top first, and the imports between them
/// (`andon stream --within`), one `<details>` a stage.
fn inside(views: &[crate::ops::WithinView]) -> String {
    if views.is_empty() {
        return String::new();
    }
    let mut s = String::from("<h2>Inside the stages</h2>\n");
    for v in views {
        let at = if v.base.is_empty() { "." } else { v.base.as_str() };
        s.push_str(&format!(
            "<details class=\"within\" data-stage=\"{}\"><summary>{} ({}): {} modules, {} layers</summary>\n<ol>",
            html(&v.stage),
            html(&v.stage),
            html(at),
            v.modules.len(),
            v.layers.len()
        ));
        for layer in &v.layers {
            let names: Vec<String> = layer.iter().map(|m| html(m)).collect();
            s.push_str(&format!("<li>{}</li>", names.join(", ")));
        }
        s.push_str("</ol>\n");
        let alone: Vec<String> = v.modules.iter().filter(|m| m.layer.is_none()).map(|m| html(&m.name)).collect();
        if !alone.is_empty() {
            s.push_str(&format!("<p>In no layer (no import in or out): {}</p>\n", alone.join(", ")));
        }
        let imports: Vec<String> =
            v.imports.iter().map(|(a, b, n)| format!("{} → {} ({n})", html(a), html(b))).collect();
        s.push_str(&format!("<p class=\"hops\">{}</p>\n</details>\n", imports.join(", ")));
    }
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

/// The loop board (R114–R116) when the loop has a ledger, and the suspected injections (R123)
/// whenever the index has any, each quoted as data.
fn loop_board(status: &Result<&Status, &crate::api::Error>) -> String {
    let mut s = String::from("<h2>The loop board</h2>\n");
    let st = match status {
        Ok(st) => st,
        Err(why) => {
            s.push_str(&format!("<p class=\"broken\">The ledger cannot be read: {}</p>\n", html(&why.to_string())));
            return s;
        }
    };
    match &st.board {
        None => s.push_str(&format!("<p>The loop has never run here (no ledger at {}).</p>\n", html(&st.ledger))),
        Some(b) => s.push_str(&board(b)),
    }
    s.push_str(&injections(&st.injections));
    s
}

fn board(b: &Board) -> String {
    let mut s = String::new();
    if !b.holds.is_empty() {
        s.push_str(&format!("<div class=\"holds\"><p class=\"broken\"><b>Standing tier-1 holds ({})</b>: no flag, override or adjudication clears them.</p><ul>\n", b.holds.len()));
        for h in &b.holds {
            s.push_str(&format!(
                "<li>{}: {} (evidence {})</li>\n",
                html(&h.wire.to_string()),
                html(&h.claim),
                html(&h.evidence)
            ));
        }
        s.push_str("</ul></div>\n");
    }
    s.push_str(&format!(
        "<table><tr><th>passes</th><th>cycles</th><th>sub-cycles</th></tr><tr><td>{}</td><td>{}</td><td>{}</td></tr></table>\n",
        b.passes, b.cycles, b.sub_cycles
    ));
    s.push_str(&match &b.constraint {
        Some(c) => {
            format!("<p><b>Constraint:</b> {} ({}; rule: {})</p>\n", html(&c.wire.to_string()), html(&c.detail), c.rule)
        }
        None => "<p><b>Constraint:</b> none: every wire is proven.</p>\n".into(),
    });
    s.push_str(&format!(
        "<p><b>Next:</b> {}{} — {}</p>\n",
        b.next.action.token(),
        b.next.gap.as_deref().map(|g| format!(" {}", html(g))).unwrap_or_default(),
        html(&b.next.detail)
    ));
    for (title, counts) in [
        ("gaps by status", &b.gaps_by_status),
        ("open gaps by kind", &b.open_by_kind),
        ("open gaps by blast radius", &b.open_by_radius),
    ] {
        s.push_str(&format!("<h3>{title}</h3>\n"));
        if counts.is_empty() {
            s.push_str("<p>none</p>\n");
            continue;
        }
        s.push_str("<table><tr>");
        for k in counts.keys() {
            s.push_str(&format!("<th>{}</th>", html(k)));
        }
        s.push_str("</tr><tr>");
        for v in counts.values() {
            s.push_str(&format!("<td>{v}</td>"));
        }
        s.push_str("</tr></table>\n");
    }
    s
}

/// The suspected injections, each quoted as data, at most 200 of them.
fn injections(inj: &Injections) -> String {
    const SHOWN: usize = 200;
    let list = match inj {
        Injections::Listed(l) => l,
        Injections::NoIndex => return String::new(),
        Injections::Unreadable(why) => {
            return format!(
                "<p>{}: unknown (the stored index cannot be read: {})</p>\n",
                super::INJECTIONS_HEADING,
                html(why)
            );
        }
    };
    let mut s = format!("<h2>{} ({})</h2>\n<ul>\n", html(super::INJECTIONS_HEADING), list.len());
    for i in list.iter().take(SHOWN) {
        let words: Vec<String> = i.words.iter().map(|x| format!("<b>{}</b>", html(x))).collect();
        s.push_str(&format!(
            "<li><code>{}:{}</code> <q>{}</q> <span class=\"why\">suspect for {}</span></li>\n",
            html(&i.path),
            i.line,
            html(&i.text),
            words.join(", ")
        ));
    }
    if list.len() > SHOWN {
        s.push_str(&format!("<li>… and {} more (`andon status` lists them all)</li>\n", list.len() - SHOWN));
    }
    s.push_str("</ul>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The points a path's commands name (`M`, `L`, `C` pairs; `H` keeps the last y).
    fn points(d: &str) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for word in d.split(|c: char| c == ' ' || c.is_ascii_alphabetic()).filter(|w| !w.is_empty()) {
            match word.split_once(',') {
                Some((x, y)) => out.push((x.parse().unwrap(), y.parse().unwrap())),
                None => {
                    let y = out.last().unwrap().1;
                    out.push((word.parse().unwrap(), y));
                }
            }
        }
        out
    }

    #[test]
    fn an_edge_within_one_layer_arcs_beside_the_column_never_across_its_boxes() {
        // two boxes of one column, four rows apart: the boxes between them span x in [10, 10 + BOX_W]
        let (from, to) = ((10, 28), (10, 28 + 4 * (BOX_H + GAP_Y)));
        for (a, b) in [(from, to), (to, from)] {
            let (d, _) = route(a, b, &[]);
            // a cubic stays within its control points' hull: all of them right of the column
            for (x, _) in points(&d) {
                assert!(x >= 10 + BOX_W, "{d}");
            }
        }
    }

    #[test]
    fn a_long_chain_is_drawn_down_the_page_and_a_wide_layer_across_it() {
        // 30 stages in a chain, each also fed by the first: down the page, one box and thin wires a band
        let chain: Vec<(usize, usize)> = (1..30).flat_map(|i| [(i - 1, i), (0, i)]).collect();
        let f = Frame::new(&layout::layered(30, &chain));
        assert!(f.down && f.width < 2 * BOX_W + 30 * BEND_W, "{}", f.width);
        // one producer feeding 20 consumers: two columns across
        let fan: Vec<(usize, usize)> = (1..21).map(|i| (0, i)).collect();
        let f = Frame::new(&layout::layered(21, &fan));
        assert!(!f.down && f.width < 2 * (BOX_W + GAP_X), "{}", f.width);
    }

    #[test]
    fn down_the_page_a_wire_runs_straight_through_the_bands_it_crosses() {
        let band = BOX_H + GAP_DOWN;
        let bends: Vec<(usize, usize)> = (1..10).map(|l| (300, GAP_Y + l * band)).collect();
        let (d, _) = route_down((100, GAP_Y), (100, GAP_Y + 10 * band), &bends);
        assert_eq!(d.matches('C').count(), 2, "off to the slot and back: {d}");
        assert_eq!(d.matches('V').count(), 1, "{d}");
    }

    #[test]
    fn a_long_edge_along_one_row_is_one_straight_run() {
        let row = 28;
        let step = BOX_W + GAP_X;
        let bends: Vec<(usize, usize)> = (1..40).map(|l| (10 + l * step, row)).collect();
        let (d, _) = route((10, row), (10 + 40 * step, row), &bends);
        assert!(d.len() < 40, "{} bytes: {d}", d.len());
        // bending off the row and back costs a curve each way, not one per layer
        let mut bends = bends;
        for b in &mut bends[10..20] {
            b.1 = row + BOX_H + GAP_Y;
        }
        let (d, _) = route((10, row), (10 + 40 * step, row), &bends);
        assert_eq!(d.matches('C').count(), 2, "{d}");
    }
}
