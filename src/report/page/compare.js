// The page script of `dltune compare --html` and `dltune bench --html` (report/compare_html.cpp):
// draws the runs and the ratios from the JSON in #dltune-compare with Chart.js.
(function () {
  'use strict';
  const body = document.body;
  let drawn = 0;
  const COLORS = {A: '#1f77b4', B: '#ff7f0e'};
  const VERDICT_COLORS = {better: '#1a7f37', worse: '#cf222e'};
  function num(v) { return typeof v === 'number' && isFinite(v); }
  function trim(v, d) { return Number(v.toFixed(d)).toString(); }
  function short(v) { const a = Math.abs(v); return trim(v, a >= 100 ? 0 : a >= 10 ? 1 : 2); }
  function withUnit(v, unit) {
    if (!num(v)) return 'no value';
    if (unit === 'B') {
      const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
      let x = Math.abs(v), u = 0;
      while (x >= 1024 && u < units.length - 1) { x /= 1024; u++; }
      return (v < 0 ? '-' : '') + short(x) + ' ' + units[u];
    }
    if (unit === '%') return short(v) + '%';
    return unit ? short(v) + ' ' + unit : short(v);
  }
  function fail(what, err) {
    body.dataset.error = what + ': ' + (err && err.message ? err.message : String(err));
  }
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
  Chart.defaults.animation = false;

  // The primary metric per run: x is the round (bench's pairs), else the run's place among its
  // side's runs. Left-out runs are crosses, with why in the tooltip.
  function drawRuns(data, canvas) {
    const metric = data.metrics.find((m) => m.id === data.primary) || {label: data.primary, unit: ''};
    const sides = {A: {used: [], out: [], count: 0}, B: {used: [], out: [], count: 0}};
    let rounds = false, last = 1;
    for (const r of data.runs) {
      const side = sides[r.side];
      if (!side || r.warmup) continue;
      side.count++;
      if (r.pair > 0) rounds = true;
      const x = r.pair > 0 ? r.pair : side.count;
      const v = r.metrics ? r.metrics[data.primary] : undefined;
      if (!num(v)) continue;
      last = Math.max(last, x);
      const p = {x: x, y: v, recording: r.recording || '', why: r.excluded || 'not read'};
      (r.used ? side.used : side.out).push(p);
    }
    const datasets = [];
    for (const s of ['A', 'B']) {
      datasets.push({label: s, data: sides[s].used.sort((p, q) => p.x - q.x), borderColor: COLORS[s],
                     backgroundColor: COLORS[s], borderWidth: 2, pointRadius: 4, tension: 0});
    }
    for (const s of ['A', 'B']) {
      if (!sides[s].out.length) continue;
      datasets.push({label: s + ' left out', data: sides[s].out, leftOut: true, showLine: false,
                     pointStyle: 'crossRot', pointRadius: 8, pointHoverRadius: 9, borderWidth: 2,
                     borderColor: COLORS[s], backgroundColor: COLORS[s]});
    }
    const axis = rounds ? 'round' : data.paired ? 'pair' : 'run';
    new Chart(canvas, {
      type: 'line',
      data: {datasets: datasets},
      options: {
        responsive: true, maintainAspectRatio: false,
        interaction: {mode: 'nearest', axis: 'x', intersect: false},
        scales: {
          x: {type: 'linear', min: 0.5, max: last + 0.5, title: {display: true, text: axis},
              afterBuildTicks: (a) => {
                a.ticks = [];
                for (let i = 1; i <= last; i++) a.ticks.push({value: i});
              },
              ticks: {callback: (v) => String(v)}},
          y: {grace: '10%', title: {display: true, text: metric.label},
              ticks: {callback: (v) => withUnit(v, metric.unit)}}
        },
        plugins: {
          legend: {position: 'top', align: 'start',
                   labels: {usePointStyle: true, boxWidth: 10, boxHeight: 8}},
          tooltip: {callbacks: {
            title: (items) => items.length ? axis + ' ' + items[0].raw.x : '',
            label: (item) => ' ' + item.dataset.label + ': ' + withUnit(item.raw.y, metric.unit) +
                (item.raw.recording ? ' (' + item.raw.recording + ')' : ''),
            afterLabel: (item) => item.dataset.leftOut ? '   left out: ' + item.raw.why : ''
          }}
        }
      }
    });
  }

  // B/A per metric: the interval as a floating bar, the estimate as a point, a dashed line at 1.
  const lineAtOne = {
    id: 'dltuneLineAtOne',
    beforeDatasetsDraw(chart) {
      const x = chart.scales.x, area = chart.chartArea, ctx = chart.ctx;
      const px = Math.round(x.getPixelForValue(1)) + 0.5;
      ctx.save();
      ctx.strokeStyle = '#57606a';
      ctx.fillStyle = '#57606a';
      ctx.lineWidth = 1;
      ctx.setLineDash([5, 4]);
      ctx.beginPath();
      ctx.moveTo(px, area.top);
      ctx.lineTo(px, area.bottom);
      ctx.stroke();
      ctx.font = '11px ' + Chart.defaults.font.family;
      ctx.fillText('1: no change', px + 4, area.top + 11);
      ctx.restore();
    }
  };
  function drawRatios(data, canvas) {
    const rated = data.metrics.filter((m) => num(m.ratio) && num(m.low) && num(m.high));
    let lo = 1, hi = 1;
    for (const m of rated) { lo = Math.min(lo, m.low, m.ratio); hi = Math.max(hi, m.high, m.ratio); }
    const pad = (hi - lo) * 0.1 || 0.05;
    const color = (m) => VERDICT_COLORS[m.verdict] || '#8c959f';
    const pct = trim((num(data.confidence) ? data.confidence : 0.95) * 100, 1) + '%';
    new Chart(canvas, {
      type: 'bar',
      data: {
        labels: rated.map((m) => m.id === data.primary ? m.label + ' (verdict)' : m.label),
        datasets: [
          {type: 'bar', indexAxis: 'y', label: pct + ' interval', data: rated.map((m) => [m.low, m.high]),
           backgroundColor: rated.map((m) => color(m) + '55'), borderColor: rated.map(color),
           borderWidth: 1, borderSkipped: false, barPercentage: 0.6, order: 2},
          {type: 'line', indexAxis: 'y', label: 'B/A', data: rated.map((m) => m.ratio), showLine: false,
           pointRadius: 5, pointHoverRadius: 6, borderColor: '#24292f', backgroundColor: '#24292f',
           order: 1}
        ]
      },
      plugins: [lineAtOne],
      options: {
        indexAxis: 'y', responsive: true, maintainAspectRatio: false,
        interaction: {mode: 'index', axis: 'y', intersect: false},
        scales: {x: {type: 'linear', min: lo - pad, max: hi + pad,
                     title: {display: true, text: 'B / A'}}},
        plugins: {
          legend: {position: 'top', align: 'start'},
          tooltip: {
            filter: (item) => item.datasetIndex === 1,
            callbacks: {label: (item) => {
              const m = rated[item.dataIndex];
              let s = ' B/A ' + m.ratio.toFixed(3) + ', ' + pct + ' interval ' + m.low.toFixed(3) +
                  '\u2013' + m.high.toFixed(3);
              if (num(m.achieved_confidence)) s += ' (achieved ' + trim(m.achieved_confidence * 100, 1) + '%)';
              return s;
            }}
          }
        }
      }
    });
  }

  try {
    const data = JSON.parse(document.getElementById('dltune-compare').textContent);
    data.metrics = Array.isArray(data.metrics) ? data.metrics : [];
    data.runs = Array.isArray(data.runs) ? data.runs : [];
    for (const [id, draw] of [['chart-runs', drawRuns], ['chart-ratios', drawRatios]]) {
      const canvas = document.getElementById(id);
      if (!canvas) continue;
      try {
        draw(data, canvas);
        drawn++;
      } catch (err) {
        fail(id, err);
      }
    }
  } catch (err) {
    fail('the data', err);
  }
  body.dataset.charts = String(drawn);
})();
