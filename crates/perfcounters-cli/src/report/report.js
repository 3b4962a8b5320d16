// Draws each analysis's chart with the embedded uPlot: one series per counter instance (at most
// 2,000 points: every value, or each span's min and max), the thresholds as horizontal lines.
// Times are the log's local wall clock, drawn in UTC so the axis shows them as the log does (as
// relog writes them, whatever the browser's zone); the axis names the log's zone (c.zone).
// A comparison's chart (c.starts) overlays the baseline and the candidate on one axis of seconds
// since each side's start; its tooltip shows each side's absolute time.
(function () {
  "use strict";
  var charts = JSON.parse(document.getElementById("charts").textContent);
  // A fleet report carries each machine's charts in its section, numbered from data-charts-from.
  document.querySelectorAll("script[data-charts-from]").forEach(function (s) {
    var from = Number(s.getAttribute("data-charts-from"));
    JSON.parse(s.textContent).forEach(function (c, i) { charts[from + i] = c; });
  });
  var palette = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#ff7f0e", "#393b79"];
  var drawn = 0;
  function elapsed(s) {
    var sign = s < 0 ? "-" : "+";
    s = Math.abs(Math.round(s));
    var h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
    return sign + h + ":" + (m < 10 ? "0" : "") + m + ":" + (r < 10 ? "0" : "") + r;
  }
  function absolute(start, s) {
    return new Date((start + s) * 1e3).toISOString().replace("Z", "").replace(/\.\d+$/, "");
  }
  // The y axis as wide as its longest label (1,000,000,000 is not clipped), measured as uPlot draws it.
  function axisSize(u, values, axisIdx, cycleNum) {
    var axis = u.axes[axisIdx];
    if (cycleNum > 1) return axis._size;
    var size = axis.ticks.size + axis.gap;
    var longest = (values || []).reduce(function (a, v) { return String(v).length > a.length ? String(v) : a; }, "");
    if (longest !== "") {
      u.ctx.font = axis.font[0];
      size += u.ctx.measureText(longest).width / (window.devicePixelRatio || 1);
    }
    return Math.ceil(size) + 4;
  }
  document.querySelectorAll("div.chart").forEach(function (div) {
    var c = charts[Number(div.dataset.chart)];
    if (!c || c.series.length === 0) return;
    var tables = c.series.map(function (s) { return [s.t, s.v]; });
    var data = tables.length > 1 ? uPlot.join(tables) : [tables[0][0], tables[0][1]];
    var xs = data[0];
    var relative = Array.isArray(c.starts);
    var series = [relative ? { label: "since start", value: function (u, v) { return v == null ? "" : elapsed(v); } } : {}];
    c.series.forEach(function (s, i) {
      // In a comparison the baseline is drawn first and wider, so that it shows where both agree.
      var one = relative
        ? { label: s.name, stroke: i === 0 ? "#1f77b4" : "#cf222e", width: i === 0 ? 3.5 : 1.25, spanGaps: true }
        : { label: s.name, stroke: palette[i % palette.length], width: 1.5, spanGaps: true };
      if (relative) {
        one.value = function (u, v, si, idx) {
          if (v == null || idx == null) return "";
          return v.toPrecision(6) + " at " + absolute(c.starts[i], u.data[0][idx]);
        };
      }
      series.push(one);
    });
    c.thresholds.forEach(function (t) {
      data.push(xs.map(function () { return t.value; }));
      series.push({ label: t.name, stroke: t.condition === "critical" ? "#cf222e" : "#d4a000", width: 1, dash: [6, 4], points: { show: false } });
    });
    var width = Math.max(320, Math.min(1150, div.clientWidth || 1000));
    var tzDate = function (ts) { return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"); };
    var opts = {
      width: width,
      height: 280,
      tzDate: tzDate,
      series: series,
      axes: [{ label: "local time of the log" + (c.zone ? ": " + c.zone : "") }, { size: axisSize }],
      legend: { live: true },
    };
    if (relative) {
      opts.scales = { x: { time: false } };
      opts.axes = [{ label: "time since each log's start", values: function (u, vals) { return vals.map(elapsed); } }, { size: axisSize }];
    }
    new uPlot(opts, data, div);
    // For tests and scripts: the first time as the axis shows it.
    if (!relative && xs.length) div.dataset.first = uPlot.fmtDate("{YYYY}-{MM}-{DD} {HH}:{mm}:{ss}")(tzDate(xs[0]));
    drawn += 1;
  });
  document.body.dataset.charts = String(drawn);
})();
