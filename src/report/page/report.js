// dltune report: draws the charts of a report page from its inlined JSON document (schema
// dltune.report/1, docs/report.md) with Chart.js 3, which the page inlines before this script.
// Compiled into dltune (cmake/embed_file.cmake); it must never contain a closing script tag.
(function () {
  'use strict';
  const t0 = performance.now();
  const data = JSON.parse(document.getElementById('dltune-data').textContent);
  const byId = new Map(data.series.map((s) => [s.id, s]));
  const startMs = data.recording.start_ms;
  const AXIS_WIDTH = 78;  // both y axes, fixed, so that every chart's time axis lines up

  // ---- numbers -------------------------------------------------------------------------------
  function trim(v, digits) {
    return Number(v.toFixed(digits)).toString();
  }
  function binary(v) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let u = 0;
    let x = Math.abs(v);
    while (x >= 1024 && u < units.length - 1) {
      x /= 1024;
      u++;
    }
    return (v < 0 ? '-' : '') + trim(x, x >= 100 ? 0 : x >= 10 ? 1 : 2) + ' ' + units[u];
  }
  function compact(v) {
    const a = Math.abs(v);
    if (a >= 1e9) return trim(v / 1e9, 2) + 'G';
    if (a >= 1e6) return trim(v / 1e6, 2) + 'M';
    if (a >= 1e3) return trim(v / 1e3, 2) + 'k';
    return trim(v, a >= 10 ? 1 : 2);
  }
  function withUnit(v, unit) {
    if (v === null || v === undefined || Number.isNaN(v)) return 'no value';
    switch (unit) {
      case 'percent': return trim(v, Math.abs(v) >= 10 ? 1 : 2) + ' %';
      case 'bytes': return binary(v);
      case 'bytes/s': return binary(v) + '/s';
      case '1/s': return compact(v) + '/s';
      case 'watts': return trim(v, 1) + ' W';
      case 'celsius': return trim(v, 0) + ' °C';
      case 'MHz': return trim(v, 0) + ' MHz';
      case 'count': return trim(v, 0);
      default: return compact(v) + ' ' + unit;
    }
  }

  // ---- time ----------------------------------------------------------------------------------
  const STEPS = [100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5,
    36e5, 72e5, 108e5, 216e5, 432e5, 864e5, 1728e5, 6048e5];
  function pad(n, w) {
    return String(n).padStart(w || 2, '0');
  }
  function clock(ms, step) {
    const d = new Date(ms);
    let s = pad(d.getHours()) + ':' + pad(d.getMinutes());
    if (step < 6e4) s += ':' + pad(d.getSeconds());
    if (step < 1e3) s += '.' + Math.floor(d.getMilliseconds() / 100);
    if (step >= 864e5 || data.window.to_ms - data.window.from_ms > 864e5)
      s = pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + s;
    return s;
  }
  // "+1h05m", "+2m30s", "+45s"; with `tenths`, seconds to a tenth ("+1.0s", "+1.2s").
  function elapsed(ms, tenths) {
    const neg = ms < 0;
    let s = Math.abs(ms) / 1000;
    let out;
    if (s < 60) {
      out = (tenths ? s.toFixed(1) : trim(s, s < 10 ? 1 : 0)) + 's';
    } else {
      s = Math.round(s);
      const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
      out = h > 0 ? h + 'h' + pad(m) + 'm' : m + 'm' + (r ? pad(r) + 's' : '');
    }
    return (neg ? '-' : '+') + out;
  }
  // Ticks on round clock times (local time) at a step that leaves room for the labels.
  function timeTicks(min, max, room) {
    const span = Math.max(1, max - min);
    const wanted = Math.max(2, Math.floor(room / 96));
    let step = STEPS[STEPS.length - 1];
    for (const s of STEPS) {
      if (span / s <= wanted) {
        step = s;
        break;
      }
    }
    const offset = new Date(min).getTimezoneOffset() * 6e4;
    const ticks = [];
    for (let t = Math.ceil((min - offset) / step) * step + offset; t <= max; t += step)
      ticks.push({value: t});
    return {ticks: ticks, step: step};
  }

  // ---- styles --------------------------------------------------------------------------------
  const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
    '#7f7f7f', '#bcbd22', '#17becf'];
  const FIXED = {
    'cpu.user_pct': '#1f77b4', 'cpu.system_pct': '#ff7f0e', 'cpu.iowait_pct': '#d62728',
    'cpu.steal_pct': '#9467bd', 'memory.used_bytes': '#1f77b4', 'memory.cache_bytes': '#2ca02c',
    'memory.available_bytes': '#7f7f7f', 'swap.used_bytes': '#d62728',
    'swap.in_bytes_s': '#d62728', 'swap.out_bytes_s': '#ff7f0e',
    'memory.major_faults_s': '#9467bd', 'job.main.cpu_pct': '#1f77b4',
    'job.workers.cpu_pct': '#ff7f0e', 'job.children.cpu_pct': '#2ca02c',
    'job.main.rss_bytes': '#1f77b4', 'job.workers.rss_bytes': '#ff7f0e',
    'job.workers.count': '#7f7f7f', 'cgroup.cpu_pct': '#1f77b4', 'cgroup.quota_pct': '#d62728',
    'cgroup.throttled_pct': '#ff7f0e', 'cgroup.memory_bytes': '#1f77b4',
    'cgroup.memory_limit_bytes': '#d62728', 'cgroup.failcnt': '#ff7f0e',
    'cgroup.oom_kills': '#8c564b'
  };
  // Dashed: limits and totals (a ceiling, not a measurement), the second of a pair (write, sent,
  // memory clock), and the "full" pressure lines.
  function dashed(id) {
    return /(limit_bytes|quota_pct|memory_total_bytes|memory_clock_mhz|write_bytes_s|tx_bytes_s|full_pct)$/.test(id);
  }
  function style(id, order, devices) {
    let color = FIXED[id];
    let width = 1.5;
    const parts = id.split('.');
    if (!color && parts[0] === 'gpu') color = PALETTE[Number(parts[1]) % PALETTE.length];
    if (!color && parts[0] === 'pressure')
      color = {cpu: '#1f77b4', memory: '#d62728', io: '#ff7f0e'}[parts[1]];
    if (!color && (parts[0] === 'disk' || parts[0] === 'net')) {
      if (parts.length === 2) {
        color = '#24292f';
        width = 2;
      } else {
        color = PALETTE[(devices.indexOf(parts.slice(1, -1).join('.')) + 1) % PALETTE.length];
        width = 1.2;
      }
    }
    if (!color) color = PALETTE[order % PALETTE.length];
    return {color: color, dash: dashed(id) ? [6, 3] : [], width: width};
  }

  // ---- Chart.js plugins ----------------------------------------------------------------------
  // Tooltips: for each line, its point nearest to the pointer in time (the series are decimated
  // separately, so they do not share x values).
  Chart.Interaction.modes.dltuneNearestX = function (chart, e) {
    const items = [];
    for (const meta of chart.getSortedVisibleDatasetMetas()) {
      const els = meta.data;
      if (!els.length) continue;
      let lo = 0, hi = els.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (els[mid].x < e.x) lo = mid + 1;
        else hi = mid;
      }
      if (lo > 0 && Math.abs(els[lo - 1].x - e.x) < Math.abs(els[lo].x - e.x)) lo--;
      const el = els[lo];
      if (!el || el.skip || Math.abs(el.x - e.x) > 24) continue;
      items.push({element: el, datasetIndex: meta.index, index: lo});
    }
    return items;
  };
  const MARKER_COLORS = {
    oom_kill: '#cf222e', cgroup_oom_kill: '#cf222e', job_start: '#57606a', job_end: '#57606a',
    xid: '#8250df'
  };
  const markerPlugin = {
    id: 'dltuneMarkers',
    afterDatasetsDraw(chart) {
      const x = chart.scales.x, area = chart.chartArea, ctx = chart.ctx;
      ctx.save();
      for (const m of data.markers) {
        if (m.time_ms < x.min || m.time_ms > x.max) continue;
        const px = Math.round(x.getPixelForValue(m.time_ms)) + 0.5;
        ctx.strokeStyle = MARKER_COLORS[m.kind] || '#bf8700';
        ctx.fillStyle = ctx.strokeStyle;
        ctx.lineWidth = 1;
        ctx.setLineDash([4, 3]);
        ctx.beginPath();
        ctx.moveTo(px, area.top);
        ctx.lineTo(px, area.bottom);
        ctx.stroke();
        ctx.setLineDash([]);
        ctx.beginPath();
        ctx.moveTo(px - 4, area.top);
        ctx.lineTo(px + 4, area.top);
        ctx.lineTo(px, area.top + 6);
        ctx.fill();
      }
      ctx.restore();
    }
  };

  // GPU clocks held down (power cap, heat, the board's slowdown): shaded bands behind the lines,
  // from the chart's "bands" (computed by dltune, docs/report.md). Each reason has a legend entry
  // (an empty dataset with its colour); hiding it in the legend hides its bands.
  const BAND_COLORS = {
    'gpu.held.power_cap': 'rgba(255, 127, 14, 0.16)', 'gpu.held.thermal': 'rgba(214, 39, 40, 0.16)',
    'gpu.held.hw_slowdown': 'rgba(130, 80, 223, 0.18)'
  };
  function bandColor(series) {
    return BAND_COLORS[series] || 'rgba(191, 135, 0, 0.16)';
  }
  function bandPlugin(bands) {
    return {
      id: 'dltuneBands',
      beforeDatasetsDraw(chart) {
        if (!bands.length) return;
        const x = chart.scales.x, area = chart.chartArea, ctx = chart.ctx;
        const shown = new Set();
        chart.data.datasets.forEach((d, i) => {
          if (d.dltuneBand && chart.isDatasetVisible(i)) shown.add(d.dltuneBand);
        });
        ctx.save();
        ctx.beginPath();
        ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top);
        ctx.clip();
        for (const b of bands) {
          if (!shown.has(b.series) || b.to_ms < x.min || b.from_ms > x.max) continue;
          const left = x.getPixelForValue(Math.max(b.from_ms, x.min));
          const right = x.getPixelForValue(Math.min(b.to_ms, x.max));
          ctx.fillStyle = bandColor(b.series);
          ctx.fillRect(left, area.top, Math.max(right - left, 2), area.bottom - area.top);
        }
        ctx.restore();
      }
    };
  }

  // ---- charts --------------------------------------------------------------------------------
  function points(s) {
    const t = s.time_ms || data.time_ms;
    const v = s.values;
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = {x: t[i], y: v[i]};
    return out;
  }
  // Ticks at round binary multiples (0, 4 GiB, 8 GiB ... rather than 9.31 GiB) for bytes.
  const NICE = [1, 2, 2.5, 4, 5, 10, 20, 25, 40, 50, 100, 200, 250, 400, 500, 1024];
  function binaryTicks(min, max, count) {
    const span = Math.max(max - min, 1);
    const rough = span / Math.max(count - 1, 1);
    const base = Math.pow(1024, Math.max(0, Math.floor(Math.log(rough) / Math.log(1024))));
    let step = 1024 * base;
    for (const n of NICE) {
      if (n * base >= rough) {
        step = n * base;
        break;
      }
    }
    const ticks = [];
    for (let v = Math.floor(min / step) * step; v < max + step; v += step) {
      ticks.push(v);
      if (v >= max) break;
    }
    return ticks;
  }
  function yAxis(unit, position, percentOfAll, title) {
    const bytes = unit === 'bytes' || unit === 'bytes/s';
    return {
      title: {display: !!title, text: title || '', color: '#57606a', font: {size: 11}},
      type: 'linear',
      position: position,
      beginAtZero: true,
      max: percentOfAll ? 100 : undefined,
      grace: percentOfAll ? 0 : '5%',
      grid: {drawOnChartArea: position === 'left', color: '#eaeef2'},
      ticks: {
        color: '#57606a', font: {size: 11}, maxTicksLimit: 6, precision: unit === 'count' ? 0 : undefined,
        callback: (v) => withUnit(v, unit).replace(' %', '%')
      },
      afterBuildTicks: (axis) => {
        if (!bytes || !(axis.max > axis.min)) return;
        const t = binaryTicks(axis.min, axis.max, 5);
        axis.ticks = t.map((v) => ({value: v}));
        axis.min = t[0];
        axis.max = t[t.length - 1];
      },
      afterFit: (scale) => {
        scale.width = AXIS_WIDTH;
      }
    };
  }
  function makeChart(spec, canvas, devices) {
    const units = [];
    const datasets = spec.series.map((id, i) => {
      const s = byId.get(id);
      if (units.indexOf(s.unit) < 0) units.push(s.unit);
      const st = style(id, i, devices);
      return {
        label: s.label, data: points(s), unit: s.unit,
        yAxisID: units.indexOf(s.unit) === 0 ? 'y' : 'y1',
        borderColor: st.color, backgroundColor: st.color, borderDash: st.dash,
        borderWidth: st.width, pointRadius: 0, pointHitRadius: 4, tension: 0, spanGaps: false
      };
    });
    // Host-wide CPU and GPU busy percentages end at 100; a process's or a cgroup's are of one
    // CPU and may pass it, and pressure is usually small: its axis follows the data.
    const ofAll = /^(cpu|gpu_util)$/.test(spec.id);
    const axes = spec.axes || {};
    const bands = spec.bands || [];
    for (const b of bands) {
      if (datasets.some((d) => d.dltuneBand === b.series)) continue;
      datasets.push({
        label: 'clocks held: ' + b.label, data: [], dltuneBand: b.series, yAxisID: 'y',
        // No points: only its legend entry is drawn, in the band's colour made opaque enough to see.
        borderColor: bandColor(b.series).replace(/[\d.]+\)$/, '0.8)'),
        backgroundColor: bandColor(b.series).replace(/[\d.]+\)$/, '0.8)'), borderWidth: 2,
        pointRadius: 0
      });
    }
    const scales = {
      x: {
        type: 'linear', min: data.window.from_ms, max: data.window.to_ms,
        grid: {color: '#eaeef2'},
        title: {
          display: true, text: (axes.x || 'time') + ' (local clock, and since the start)',
          color: '#57606a', font: {size: 11}
        },
        afterBuildTicks: (axis) => {
          const r = timeTicks(axis.min, axis.max, axis.width || axis.chart.width);
          axis.ticks = r.ticks;
          axis._dltuneStep = r.step;
        },
        ticks: {
          autoSkip: false, maxRotation: 0, color: '#57606a', font: {size: 11},
          callback: function (v) {
            const step = this._dltuneStep || 6e4;
            return [clock(v, step), elapsed(v - startMs, step < 1e3)];
          }
        }
      },
      y: yAxis(units[0], 'left', ofAll, axes.y)
    };
    if (units.length > 1) scales.y1 = yAxis(units[1], 'right', false, axes.y1);
    return new Chart(canvas, {
      type: 'line',
      data: {datasets: datasets},
      plugins: [bandPlugin(bands), markerPlugin],
      options: {
        animation: false, parsing: false, normalized: true, responsive: true,
        maintainAspectRatio: false,
        layout: {padding: {right: units.length > 1 ? 0 : AXIS_WIDTH, top: 4}},
        interaction: {mode: 'dltuneNearestX', intersect: false},
        plugins: {
          decimation: {enabled: true, algorithm: 'min-max'},
          legend: {
            position: 'top', align: 'start',
            labels: {boxWidth: 18, boxHeight: 2, color: '#24292f', font: {size: 12}}
          },
          tooltip: {
            callbacks: {
              title: (items) => items.length ?
                clock(items[0].parsed.x, 1e3) + '  (' + elapsed(items[0].parsed.x - startMs, true) + ')' : '',
              label: (item) => ' ' + item.dataset.label + ': ' + withUnit(item.parsed.y, item.dataset.unit)
            }
          }
        },
        scales: scales
      }
    });
  }

  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
  let drawn = 0;
  const failures = [];
  for (const section of data.sections) {
    const devices = [];
    for (const s of data.series) {
      const p = s.id.split('.');
      if ((p[0] === 'disk' || p[0] === 'net') && p.length > 2) {
        const name = p.slice(1, -1).join('.');
        if (devices.indexOf(name) < 0) devices.push(name);
      }
    }
    for (const spec of section.charts) {
      if (spec.empty) continue;  // said in one line of the page instead
      const canvas = document.getElementById('chart-' + spec.id);
      if (!canvas) continue;
      try {
        makeChart(spec, canvas, devices);
        drawn++;
      } catch (err) {
        failures.push(spec.id + ': ' + err);
        console.error('dltune report: chart ' + spec.id + ' failed:', err);
      }
    }
  }
  // For tests and benchmarks (tests/integration/report_chromium_test.cpp, bench/run-report-bench):
  // what was drawn, how long this script took (parsing the data, building and drawing every
  // chart), and when it was done since the page started loading.
  const done = performance.now();
  window.dltuneReport = {charts: drawn, failures: failures, draw_ms: done - t0, ready_ms: done};
})();
