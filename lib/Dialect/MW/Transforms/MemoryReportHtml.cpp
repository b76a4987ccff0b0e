//===- MemoryReportHtml.cpp - The picture of --mw-memory-report -----------===//
//
// Writes the self-contained page of MemoryReportHtml.h. The tables and
// figures are static HTML; the charts are drawn on <canvas> by a small inline
// script from one embedded JSON object (a compact array per buffer), so a
// step with thousands of buffers stays a few MB and draws in milliseconds.
// The script records what it drew in the DOM (`data-rects` and the peak
// label of each section, `data-status` and `data-errors` on <body>), which
// is what the headless-browser test reads. Nothing depends on the time or
// the environment: the same module gives the same bytes.
//
//===----------------------------------------------------------------------===//

#include "MemoryReportHtml.h"

#include "memwall/Analysis/Units.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::mw;

namespace {

/// Text for HTML content and attribute values.
std::string escapeHtml(StringRef s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

constexpr StringLiteral kStyle = R"css(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:16px 20px;color:#1d1d1f;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:20px 0 6px}
.sub{color:#666;margin:0 0 10px}
section.fn{border-top:1px solid #ddd;padding-top:6px}
.layout{display:flex;gap:18px;align-items:flex-start}
.charts{flex:1 1 auto;min-width:420px}
aside{flex:0 0 390px}
td:first-child{white-space:nowrap}
canvas{display:block;border:1px solid #e3e3e3;margin-bottom:8px}
table{border-collapse:collapse;margin-bottom:12px;width:100%}
th,td{padding:2px 6px;text-align:left;border-bottom:1px solid #eee;font-size:12.5px;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.sw{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px;border-radius:2px}
.note{background:#fff7e0;border:1px solid #f0d890;padding:6px 10px;margin:6px 0 10px}
.peak-label{font-weight:600;margin:0 0 8px}
pre.verdict{background:#f6f8fa;padding:10px;overflow-x:auto;font-size:12px}
#tip{position:fixed;display:none;pointer-events:none;background:rgba(20,20,20,.92);color:#fff;padding:6px 8px;border-radius:4px;font:12px/1.35 ui-monospace,monospace;white-space:pre;z-index:10;max-width:640px;overflow:hidden}
)css";

/// Draws every section from the embedded data; see the file comment for
/// what it records in the DOM.
constexpr StringLiteral kScript = R"js(
(function () {
  function scaled(b, base, units) {
    if (Math.abs(b) < base) return b + ' B';
    var v = b, u = -1;
    while (u < 3 && Math.abs(v) >= base) { v /= base; ++u; }
    return v.toFixed(2) + ' ' + units[u];
  }
  function dec(b) { return scaled(b, 1000, ['KB', 'MB', 'GB', 'TB']); }
  function bin(b) { return scaled(b, 1024, ['KiB', 'MiB', 'GiB', 'TiB']); }
  function both(b) { return Math.abs(b) < 1000 ? dec(b) : dec(b) + ' = ' + bin(b); }
  var data = JSON.parse(document.getElementById('mw-data').textContent);
  var tip = document.getElementById('tip');
  function showTip(e, text) {
    tip.textContent = text;
    tip.style.display = 'block';
    var x = e.clientX + 14, y = e.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, e.clientX - tip.offsetWidth - 14);
    if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, e.clientY - tip.offsetHeight - 14);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTip() { tip.style.display = 'none'; }
  function setup(canvas, height) {
    var w = Math.max(420, Math.floor(canvas.parentNode.clientWidth || 900) - 2);
    var dpr = window.devicePixelRatio || 1;
    canvas.style.width = w + 'px';
    canvas.style.height = height + 'px';
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(height * dpr);
    var ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return {ctx: ctx, w: w, h: height};
  }
  var M = {l: 84, r: 12, t: 12, b: 26};
  // Axes with round ticks: positions along x, bytes (binary units) along y.
  function axes(c, T, top, xTitle, yTitle) {
    var ctx = c.ctx, pw = c.w - M.l - M.r, ph = c.h - M.t - M.b;
    ctx.strokeStyle = '#999'; ctx.fillStyle = '#555'; ctx.lineWidth = 1;
    ctx.font = '11px system-ui, sans-serif';
    ctx.beginPath(); ctx.moveTo(M.l, M.t); ctx.lineTo(M.l, M.t + ph); ctx.lineTo(M.l + pw, M.t + ph); ctx.stroke();
    var step = Math.pow(1024, Math.floor(Math.log(Math.max(top, 1)) / Math.log(1024)));
    while (top / step > 8) step *= 2;
    while (top / step < 3 && step >= 2) step /= 2;
    ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
    for (var v = 0; v <= top * 1.0001; v += step) {
      var y = M.t + ph - v / top * ph;
      ctx.strokeStyle = '#eee'; ctx.beginPath(); ctx.moveTo(M.l + 1, y); ctx.lineTo(M.l + pw, y); ctx.stroke();
      ctx.fillText(bin(Math.round(v)), M.l - 4, y);
    }
    var xs = Math.pow(10, Math.floor(Math.log(Math.max(T, 1)) / Math.LN10));
    while (T / xs > 10) xs *= 2;
    while (T / xs < 4 && xs >= 2) xs /= 2;
    ctx.textAlign = 'center'; ctx.textBaseline = 'top';
    for (var t = 0; t <= T; t += xs) ctx.fillText(String(Math.round(t)), M.l + t / T * pw, M.t + ph + 4);
    ctx.save(); ctx.translate(9, M.t + ph / 2); ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'center'; ctx.fillText(yTitle, 0, 0); ctx.restore();
    ctx.textAlign = 'right'; ctx.fillText(xTitle, M.l + pw, M.t + ph + 14);
    return {pw: pw, ph: ph};
  }
  function hline(ctx, y, x0, x1, color, dash) {
    ctx.save(); ctx.strokeStyle = color; ctx.setLineDash(dash); ctx.lineWidth = 1.2;
    ctx.beginPath(); ctx.moveTo(x0, y); ctx.lineTo(x1, y); ctx.stroke(); ctx.restore();
  }
  data.functions.forEach(function (f, fi) {
    var sec = document.getElementById('fn-' + fi);
    if (!sec || !f.bufferized) return;
    var T = Math.max(f.positions, 1);
    var drawn = 0;
    var arenaCanvas = sec.querySelector('canvas.arena');
    if (arenaCanvas) {
      var a = setup(arenaCanvas, 380), ctx = a.ctx;
      var top = Math.max(f.arena, 1);
      var g = axes(a, T, top, 'op position', 'arena offset');
      var X = function (t) { return M.l + t / T * g.pw; };
      var Y = function (o) { return M.t + g.ph - o / top * g.ph; };
      var rects = [];
      for (var i = 0; i < f.buffers.length; ++i) {
        var b = f.buffers[i];
        if (b[2] < 0) continue;
        var x0 = X(b[0]), x1 = X(b[1]), y0 = Y(b[2] + b[3]), y1 = Y(b[2]);
        var r = [x0, y0, Math.max(x1 - x0, 1), Math.max(y1 - y0, 1), i];
        ctx.fillStyle = data.colors[b[4]];
        ctx.fillRect(r[0], r[1], r[2], r[3]);
        rects.push(r);
        ++drawn;
      }
      if (f.peak.position >= 0) {
        ctx.save(); ctx.strokeStyle = '#d62728'; ctx.setLineDash([4, 3]);
        ctx.beginPath(); ctx.moveTo(X(f.peak.position), M.t); ctx.lineTo(X(f.peak.position), M.t + g.ph); ctx.stroke();
        ctx.restore();
      }
      arenaCanvas.addEventListener('mousemove', function (e) {
        var box = arenaCanvas.getBoundingClientRect(), px = e.clientX - box.left, py = e.clientY - box.top;
        // The last drawn rectangle under the pointer, with a pixel of slack
        // for the thin ones.
        for (var k = rects.length - 1; k >= 0; --k) {
          var q = rects[k];
          if (px >= q[0] - 1 && px <= q[0] + q[2] + 1 && py >= q[1] - 1 && py <= q[1] + q[3] + 1) {
            var b = f.buffers[q[4]];
            showTip(e, b[5] + '\n' + both(b[3]) + ' (' + b[3] + ' B), ' + data.labels[b[4]] +
              '\noffset ' + b[2] + ', live over ops [' + b[0] + ', ' + b[1] + ')' +
              '\nproduced by ' + (b[6] || '?') + '\nat ' + (b[7] || '?'));
            return;
          }
        }
        hideTip();
      });
      arenaCanvas.addEventListener('mouseleave', hideTip);
      arenaCanvas.mwRects = rects;
    }
    sec.setAttribute('data-rects', String(drawn));
    // The live transient bytes over the op order.
    var liveCanvas = sec.querySelector('canvas.live');
    var c = setup(liveCanvas, 230), lctx = c.ctx;
    var peak = 0, peakAt = -1;
    f.live.forEach(function (p) { if (p[1] > peak) { peak = p[1]; peakAt = p[0]; } });
    var ltop = Math.max(f.arena, f.lower_bound, peak, 1) * 1.12;
    var lg = axes(c, T, ltop, 'op position', 'live bytes');
    var LX = function (t) { return M.l + t / T * lg.pw; };
    var LY = function (v) { return M.t + lg.ph - v / ltop * lg.ph; };
    lctx.beginPath(); lctx.moveTo(LX(0), LY(0));
    for (var j = 0; j < f.live.length; ++j) {
      var p = f.live[j], next = j + 1 < f.live.length ? f.live[j + 1][0] : T;
      lctx.lineTo(LX(p[0]), LY(p[1])); lctx.lineTo(LX(next), LY(p[1]));
    }
    lctx.lineTo(LX(T), LY(0)); lctx.closePath();
    lctx.fillStyle = 'rgba(78,121,167,0.25)'; lctx.fill();
    lctx.strokeStyle = '#4e79a7'; lctx.lineWidth = 1.2; lctx.stroke();
    // The lines' labels sit below them, the peak's above it.
    lctx.font = '11px system-ui, sans-serif'; lctx.textBaseline = 'top'; lctx.textAlign = 'left';
    hline(lctx, LY(f.lower_bound), M.l, M.l + lg.pw, '#2ca02c', [6, 3]);
    lctx.fillStyle = '#2ca02c';
    lctx.fillText('lower bound ' + both(f.lower_bound), M.l + 6, LY(f.lower_bound) + 3);
    if (f.planned) {
      hline(lctx, LY(f.arena), M.l, M.l + lg.pw, '#7f7f7f', [2, 2]);
      lctx.fillStyle = '#555'; lctx.textAlign = 'right';
      lctx.fillText('arena ' + both(f.arena), M.l + lg.pw - 4, LY(f.arena) + 3);
    }
    lctx.textBaseline = 'bottom';
    var label = 'no transient bytes';
    if (peakAt >= 0) {
      var op = peakAt === f.peak.position ? f.peak.op : '';
      label = 'peak ' + both(peak) + ' at op ' + peakAt + (op ? ' (' + op + ')' : '');
      lctx.fillStyle = '#d62728';
      lctx.beginPath(); lctx.arc(LX(peakAt), LY(peak), 4, 0, 2 * Math.PI); lctx.fill();
      lctx.textAlign = LX(peakAt) > M.l + lg.pw * 0.6 ? 'right' : 'left';
      lctx.fillText(label, LX(peakAt) + (lctx.textAlign === 'left' ? 7 : -7), LY(peak) - 4);
    }
    sec.querySelector('.peak-label').textContent = label;
    liveCanvas.addEventListener('mousemove', function (e) {
      var box = liveCanvas.getBoundingClientRect();
      var t = Math.floor((e.clientX - box.left - M.l) / lg.pw * T);
      if (t < 0 || t >= T) { hideTip(); return; }
      var lo = 0, hi = f.live.length - 1;
      while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (f.live[mid][0] <= t) lo = mid; else hi = mid - 1; }
      var v = f.live.length && f.live[lo][0] <= t ? f.live[lo][1] : 0;
      showTip(e, 'op ' + t + ': ' + both(v) + ' live (' + v + ' B)');
    });
    liveCanvas.addEventListener('mouseleave', hideTip);
  });
  // file://...plan.html#hover-probe: hover the centre of each section's
  // largest buffer and record the tooltip in data-hover, so that a headless
  // browser can check what a reader sees.
  if (location.hash === '#hover-probe') {
    data.functions.forEach(function (f, fi) {
      var sec = document.getElementById('fn-' + fi);
      var canvas = sec && sec.querySelector('canvas.arena');
      if (!canvas || !canvas.mwRects || !canvas.mwRects.length) return;
      var best = canvas.mwRects[0];
      canvas.mwRects.forEach(function (q) { if (f.buffers[q[4]][3] > f.buffers[best[4]][3]) best = q; });
      var box = canvas.getBoundingClientRect();
      canvas.dispatchEvent(new MouseEvent('mousemove', {clientX: box.left + best[0] + best[2] / 2,
        clientY: box.top + best[1] + best[3] / 2}));
      sec.setAttribute('data-hover', tip.style.display === 'block' ? tip.textContent.replace(/\n/g, ' | ') : '');
      hideTip();
    });
  }
  document.body.setAttribute('data-status', 'drawn');
})();
)js";

void printKindTable(llvm::raw_ostream &os, const MemoryPicture &p) {
  constexpr size_t numKinds = std::size(kPictureKinds);
  int64_t count[numKinds] = {}, bytes[numKinds] = {}, atPeak[numKinds] = {};
  for (const PictureBuffer &b : p.buffers) {
    ++count[b.kind];
    bytes[b.kind] += b.bytes;
    if (b.start <= p.peakPosition && p.peakPosition < b.end)
      atPeak[b.kind] += b.bytes;
  }
  os << "<table class=\"kinds\"><tr><th>kind</th><th>buffers</th>"
        "<th>bytes (no reuse)</th><th>live at the peak</th></tr>\n";
  for (size_t k = 0; k < numKinds; ++k) {
    if (!count[k])
      continue;
    os << llvm::formatv("<tr data-kind=\"{0}\"><td><span class=\"sw sw-{0}\">"
                        "</span>{1}</td><td class=\"n\">{2}</td><td "
                        "class=\"n\">{3}</td><td class=\"n\">{4}</td></tr>\n",
                        kPictureKinds[k].name, kPictureKinds[k].label,
                        count[k], formatBothBytes(bytes[k]),
                        formatBothBytes(atPeak[k]));
  }
  os << "</table>\n";
}

void printRankTable(llvm::raw_ostream &os, const MemoryPicture &p) {
  const PictureRanks &r = p.ranks;
  os << "<table class=\"ranks\"><tr><th colspan=\"2\">";
  if (r.zeroStage)
    os << llvm::formatv("per rank: ZeRO stage {0} on {1} ranks (each rank "
                        "holds this)",
                        *r.zeroStage, r.ranks);
  else
    os << "per rank: one rank (no ZeRO collectives)";
  os << "</th></tr>\n";
  auto row = [&](StringRef label, int64_t bytes) {
    os << "<tr><td>" << label << "</td><td class=\"n\">"
       << formatBothBytes(bytes) << "</td></tr>\n";
  };
  row("parameters", r.paramBytes);
  row("gradients", r.gradBytes);
  row("optimizer state", r.optimizerStateBytes);
  if (p.bufferized) {
    row("arena", p.arenaBytes);
    row("persistent", p.persistentBytes);
    row("arena + persistent", p.arenaBytes + p.persistentBytes);
  }
  if (r.ranks > 1 && p.bufferized)
    row(("all " + llvm::Twine(r.ranks) + " ranks").str(),
        r.ranks * (p.arenaBytes + p.persistentBytes));
  os << "</table>\n";
}

void printSection(llvm::raw_ostream &os, const MemoryPicture &p,
                  size_t index) {
  os << llvm::formatv("<section class=\"fn\" id=\"fn-{0}\" data-function=\"{1}"
                      "\" data-buffers=\"{2}\" data-rects=\"0\">\n",
                      index, escapeHtml(p.function), p.buffers.size());
  os << "<h2>@" << escapeHtml(p.function) << "</h2>\n";
  if (!p.bufferized) {
    os << "<p class=\"note\">Not bufferized: nothing to draw. The arena "
          "picture needs a planned step; run --mw-train-pipeline (or "
          "bufferize and run --mw-static-arena) before "
          "--mw-memory-report.</p>\n";
    printRankTable(os, p);
    os << "</section>\n";
    return;
  }
  os << llvm::formatv("<p class=\"sub\">{0} transient buffers over {1} op "
                      "positions; arena {2}, lower bound {3}, no reuse {4}, "
                      "persistent {5}</p>\n",
                      p.buffers.size(), p.numPositions,
                      p.planned ? formatBothBytes(p.arenaBytes)
                                : std::string("not planned"),
                      formatBothBytes(p.lowerBoundBytes),
                      formatBothBytes(p.naiveBytes),
                      formatBothBytes(p.persistentBytes));
  if (!p.planned)
    os << "<p class=\"note\">Not planned: the buffers have no offsets yet, "
          "so only the live bytes are drawn. The arena chart needs a planned "
          "step; run --mw-static-arena (or --mw-train-pipeline) before "
          "--mw-memory-report.</p>\n";
  os << "<div class=\"layout\"><div class=\"charts\">\n";
  if (p.planned)
    os << "<canvas class=\"arena\" aria-label=\"arena: op position by "
          "offset, a rectangle per buffer\"></canvas>\n";
  os << "<canvas class=\"live\" aria-label=\"live transient bytes by op "
        "position\"></canvas>\n<p class=\"peak-label\"></p>\n</div>\n<aside>\n";
  printKindTable(os, p);
  printRankTable(os, p);
  os << "</aside></div>\n</section>\n";
}

void printData(llvm::raw_ostream &os, ArrayRef<MemoryPicture> pictures) {
  std::string text;
  llvm::raw_string_ostream s(text);
  llvm::json::OStream j(s);
  j.object([&] {
    j.attributeArray("labels", [&] {
      for (const PictureKind &k : kPictureKinds)
        j.value(k.label);
    });
    j.attributeArray("colors", [&] {
      for (const PictureKind &k : kPictureKinds)
        j.value(k.color);
    });
    j.attributeArray("functions", [&] {
      for (const MemoryPicture &p : pictures)
        j.object([&] {
          j.attribute("function", p.function);
          j.attribute("bufferized", p.bufferized);
          j.attribute("planned", p.planned);
          j.attribute("positions", p.numPositions);
          j.attribute("arena", p.arenaBytes);
          j.attribute("lower_bound", p.lowerBoundBytes);
          j.attributeObject("peak", [&] {
            j.attribute("position", p.peakPosition);
            j.attribute("bytes", p.peakBytes);
            j.attribute("op", p.peakOp);
          });
          // [start, end, offset, bytes, kind, name, op, loc]
          j.attributeArray("buffers", [&] {
            for (const PictureBuffer &b : p.buffers)
              j.array([&] {
                j.value(b.start);
                j.value(b.end);
                j.value(b.offset);
                j.value(b.bytes);
                j.value(int64_t(b.kind));
                j.value(b.name);
                j.value(b.op);
                j.value(b.loc);
              });
          });
          j.attributeArray("live", [&] {
            for (auto [position, bytes] : p.liveCurve)
              j.array([&] {
                j.value(position);
                j.value(bytes);
              });
          });
        });
    });
  });
  // '<' only occurs inside JSON strings, where \u003c means the same: no
  // "</script>" can end the element early.
  for (char c : text) {
    if (c == '<')
      os << "\\u003c";
    else
      os << c;
  }
}

} // namespace

void mlir::mw::printMemoryReportHtml(llvm::raw_ostream &os,
                                     ArrayRef<MemoryPicture> pictures,
                                     StringRef verdictText) {
  std::string title = "Memwall memory plan";
  if (pictures.size() == 1)
    title += ": @" + pictures.front().function;
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"
        "\n<meta name=\"generator\" content=\"mw-opt --mw-memory-report\">\n"
        "<title>"
     << escapeHtml(title) << "</title>\n<style>" << kStyle;
  for (const PictureKind &k : kPictureKinds)
    os << ".sw-" << k.name << "{background:" << k.color << "}";
  os << "\n</style>\n</head>\n";
  // The first script records every later error, so that a headless browser
  // can tell a page that drew from one that threw.
  os << "<body data-status=\"loading\" data-errors=\"\">\n<script>"
        "window.onerror=function(m,s,l){var b=document.body;var e=b.getAttribute"
        "('data-errors');b.setAttribute('data-errors',(e?e+'; ':'')+m+' (line '"
        "+l+')');};</script>\n";
  os << "<h1>" << escapeHtml(title) << "</h1>\n<p class=\"sub\">A rectangle "
        "per transient buffer over [first use, last use] x [offset, offset + "
        "size); the live transient bytes below, with the lower bound (the "
        "most bytes live at once) and the peak. Hover for names, sizes, "
        "producing ops and locations. GB = 10<sup>9</sup> bytes, GiB = "
        "2<sup>30</sup>.</p>\n<p class=\"sub\">";
  for (const PictureKind &k : kPictureKinds)
    os << "<span class=\"sw sw-" << k.name << "\"></span>" << k.label
       << " &nbsp; ";
  os << "</p>\n";
  for (auto [i, p] : llvm::enumerate(pictures))
    printSection(os, p, i);
  if (!verdictText.empty())
    os << "<h2>Verdict</h2>\n<pre class=\"verdict\">" << escapeHtml(verdictText)
       << "</pre>\n";
  os << "<div id=\"tip\"></div>\n<script type=\"application/json\" "
        "id=\"mw-data\">";
  printData(os, pictures);
  os << "</script>\n<script>" << kScript << "</script>\n</body>\n</html>\n";
}
