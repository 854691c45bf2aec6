// The forecast's charts, drawn with uPlot from the JSON the page carries (#forecast-data, the same
// service call as the tables beside them). Loaded as a file: the Content-Security-Policy allows no inline script.
(function () {
  'use strict';

  const COLORS = { open: '#a9c1f5', weighted: '#2456d3', won: '#16803c', rate: '#2456d3', days: '#b54708', total: '#101828' };

  function data() {
    const holder = document.getElementById('forecast-data');
    if (!holder || typeof uPlot === 'undefined') return null;
    try {
      return JSON.parse(holder.dataset.forecast || 'null');
    } catch {
      return null;
    }
  }

  const monthLabel = (month) =>
    new Date(month + '-01T00:00:00Z').toLocaleDateString('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' });

  function moneyFormat(currency, compact) {
    try {
      return new Intl.NumberFormat('en-US', { style: 'currency', currency, notation: compact ? 'compact' : 'standard', maximumFractionDigits: compact ? 1 : 2 });
    } catch {
      return new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
    }
  }

  // A category axis: one tick per label at 0, 1, 2, …
  // Long names are shortened on the axis (the legend and the tables show them whole).
  const short = (label, room) => (label.length > room ? label.slice(0, Math.max(1, room - 1)) + '…' : label);

  function categoryAxis(labels) {
    return {
      stroke: '#667085',
      grid: { show: false },
      ticks: { show: false },
      splits: () => labels.map((_, i) => i),
      values: (u, splits) => {
        // About 7 px a character at the axis's font: what fits under each bar.
        const room = Math.max(3, Math.floor((u.bbox.width / devicePixelRatio || u.width) / Math.max(1, labels.length) / 7));
        return splits.map((i) => short(labels[i] ?? '', room));
      },
    };
  }

  function valueAxis(format, size, incrs) {
    const axis = { stroke: '#667085', size: size || 70, grid: { stroke: '#eef0f4' }, ticks: { show: false }, values: (_u, splits) => splits.map(format) };
    if (incrs) axis.incrs = incrs;
    return axis;
  }
  // Whole-number steps for counts of days and percentages.
  const WHOLE = [1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000];

  const bars = (size, align) => uPlot.paths.bars({ size: [size, 64], align: align || 0, gap: 2 });

  function size(el) {
    return { width: Math.max(260, Math.floor(el.clientWidth)), height: 240 };
  }

  function monthsChart(el, forecast, figures) {
    const labels = forecast.months.map(monthLabel);
    const x = labels.map((_, i) => i);
    const full = moneyFormat(figures.currency, false);
    const compact = moneyFormat(figures.currency, true);
    const money = (value) => (value == null ? '—' : full.format(value));
    return new uPlot(
      {
        ...size(el),
        scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [categoryAxis(labels), valueAxis((v) => compact.format(v))],
        legend: { live: true },
        cursor: { points: { show: false }, drag: { x: false, y: false } },
        series: [
          { label: 'Month', value: (_u, i) => (i == null ? '—' : labels[i] ?? '') },
          { label: 'Open', stroke: COLORS.open, fill: COLORS.open, width: 0, paths: bars(0.7), points: { show: false }, value: (_u, v) => money(v) },
          { label: 'Weighted', stroke: COLORS.weighted, fill: COLORS.weighted, width: 0, paths: bars(0.35), points: { show: false }, value: (_u, v) => money(v) },
          { label: 'Won', stroke: COLORS.won, width: 2.5, points: { show: true, size: 8, fill: COLORS.won }, value: (_u, v) => money(v) },
        ],
      },
      [x, figures.months.map((m) => m.open.amount), figures.months.map((m) => m.open.weighted), figures.months.map((m) => m.won.amount)],
      el,
    );
  }

  // Per owner plus "All owners": one bar each, the total in a darker colour.
  function ownersChart(el, forecast, figures, pick, format, color, range) {
    const rows = [];
    for (const entry of forecast.owners) {
      const mine = entry.currencies.find((c) => c.currency === figures.currency);
      if (mine) rows.push({ name: entry.owner ? entry.owner.name : 'No owner', value: pick(mine) });
    }
    rows.push({ name: 'All owners', value: pick(figures) });
    const labels = rows.map((r) => r.name);
    const x = labels.map((_, i) => i);
    const last = rows.length - 1;
    const show = (v) => (v == null ? 'none closed' : format(v));
    if (rows.every((r) => r.value == null)) {
      const note = document.createElement('p');
      note.className = 'muted chart-empty';
      note.textContent = el.dataset.chart === 'winRate' ? 'No deal was won or lost in this period.' : 'No deal was won in this period.';
      el.replaceChildren(note);
      return null;
    }
    return new uPlot(
      {
        ...size(el),
        scales: { x: { time: false, range: [-0.5, rows.length - 0.5] }, y: { range: range || ((_u, _min, max) => [0, Math.max(5, Math.ceil(max * 1.15))]) } },
        axes: [categoryAxis(labels), valueAxis(format, 60, WHOLE)],
        legend: { live: true },
        cursor: { points: { show: false }, drag: { x: false, y: false } },
        series: [
          { label: 'Owner', value: (_u, i) => (i == null ? '—' : labels[i] ?? '') },
          {
            label: el.dataset.chart === 'winRate' ? 'Win rate' : 'Average days to win',
            stroke: color,
            fill: color,
            width: 0,
            points: { show: false },
            value: (_u, v, _s, idx) => (idx == null ? '—' : show(v)),
            paths: uPlot.paths.bars({
              size: [0.55, 56],
              gap: 2,
              // The total stands out from the owners.
              disp: { fill: { unit: 3, values: () => x.map((i) => (i === last ? COLORS.total : color)) } },
            }),
          },
        ],
      },
      [x, rows.map((r) => r.value)],
      el,
    );
  }

  function draw() {
    const forecast = data();
    if (!forecast) return;
    const charts = [];
    document.querySelectorAll('.chart[data-chart]').forEach((el) => {
      const figures = forecast.totals.find((c) => c.currency === el.dataset.currency);
      if (!figures) return;
      let chart;
      if (el.dataset.chart === 'months') chart = monthsChart(el, forecast, figures);
      else if (el.dataset.chart === 'winRate')
        chart = ownersChart(el, forecast, figures, (c) => (c.winRate == null ? null : c.winRate * 100), (v) => v.toFixed(0) + '%', COLORS.rate, [0, 100]);
      else if (el.dataset.chart === 'days') chart = ownersChart(el, forecast, figures, (c) => c.averageDaysToWin, (v) => v.toFixed(0) + ' d', COLORS.days);
      if (chart) charts.push({ el, chart });
    });
    // Charts follow their box's width.
    if (typeof ResizeObserver !== 'undefined') {
      const observer = new ResizeObserver(() => charts.forEach(({ el, chart }) => chart.setSize(size(el))));
      charts.forEach(({ el }) => observer.observe(el));
    }
  }

  document.addEventListener('DOMContentLoaded', draw);
})();
