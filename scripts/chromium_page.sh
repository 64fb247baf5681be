#!/usr/bin/env bash
# Loads an HTML report in headless Chromium at a given width, inside an <iframe> of exactly that
# width (headless Chromium will not make its window narrower than 500 px).
#   chromium_page.sh check WIDTH REPORT.html   prints the <body> attributes the report's script and
#                                               this page's exercise of it left (data-ready, ...)
#   chromium_page.sh shot WIDTH HEIGHT REPORT.html OUT.png [ID]   a screenshot of the top of the
#                                               page, or from the element with that id down
# "check" clicks like a user: sorts the site table by bytes, searches the flame graph for a frame
# and zooms into one, and reports each outcome as data-sorted, data-searched, data-zoomed ("1" or
# "0"); data-error carries any script error. It also measures what a reader sees: data-min-font,
# the smallest text drawn in an SVG in px (its font size times the drawing's scale);
# data-where-rows and data-where-hidden, the rows of tables with a where column and how many of
# them have their where cell cut or outside the window (or in a box that scrolls sideways);
# data-row-max, the tallest such row in px. And what the first screen holds: data-sites-next,
# "1" when the element right after the "What to look at first" banner (#summary, or the run's
# lines under the title without one) is the top sites' heading; data-sites-top and data-flame-top, where the site table
# and the flame graph start (px from the top of the page, -1 when absent); data-timelines, the
# memory-over-time charts drawn, and data-empty-charts, the charts drawn with nothing to show (a
# timeline whose line has fewer than 3 points or spans less than a quarter of its time axis, a
# bar chart without a bar). Exit 2 when chromium is missing.
set -euo pipefail
mode=$1
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "chromium_page.sh: chromium is not installed (scripts/deps.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(--headless --disable-gpu --no-first-run --hide-scrollbars --allow-file-access-from-files
       --user-data-dir="$work/profile" --disable-dev-shm-usage)
[ "$(id -u)" -eq 0 ] && flags+=(--no-sandbox) # root: Chromium's sandbox refuses to start

# wrapper WIDTH HEIGHT EXERCISE FRAGMENT: the page holding the report in an iframe.
wrapper() {
  cat <<EOF
<!DOCTYPE html><html><head><meta charset="utf-8"/>
<style>html,body{margin:0}iframe{border:0;display:block}</style></head><body>
<iframe id="r" src="report.html$4" style="width:$1px;height:$2px"></iframe>
<script>
var frame = document.getElementById('r');
frame.addEventListener('load', function () {
  var doc = frame.contentDocument, out = document.body;
  function copy() {
    var a = doc.body.attributes;
    for (var i = 0; i < a.length; i++)
      if (a[i].name.indexOf('data-') === 0) out.setAttribute(a[i].name, a[i].value);
  }
  function verdict(name, ok) { out.setAttribute(name, ok ? '1' : '0'); }
  copy();
  if ($3) {
    try { measure(doc, out); } catch (e) { out.setAttribute('data-measure-error', String(e)); }
    try { exercise(doc, verdict); } catch (e) { out.setAttribute('data-exercise-error', String(e)); }
    copy();
  }
});
function measure(doc, out) {
  var win = doc.defaultView, width = doc.documentElement.clientWidth, smallest = Infinity;
  Array.prototype.forEach.call(doc.querySelectorAll('svg text'), function (t) {
    var box = t.getBoundingClientRect(), ctm = t.getScreenCTM();
    if (box.width === 0 || !ctm) return;
    var px = parseFloat(win.getComputedStyle(t).fontSize) * Math.sqrt(ctm.a * ctm.a + ctm.b * ctm.b);
    smallest = Math.min(smallest, px);
  });
  out.setAttribute('data-min-font', smallest === Infinity ? 'none' : smallest.toFixed(1));
  var rows = 0, hidden = 0, tallest = 0;
  Array.prototype.forEach.call(doc.querySelectorAll('td.where'), function (cell) {
    var box = cell.getBoundingClientRect(), scroller = cell.closest('.scroll');
    rows++;
    tallest = Math.max(tallest, cell.parentNode.getBoundingClientRect().height);
    if (box.left < 0 || box.right > width + 0.5 || cell.scrollWidth > cell.clientWidth + 1 ||
        (scroller && scroller.scrollWidth > scroller.clientWidth + 1)) hidden++;
  });
  out.setAttribute('data-where-rows', String(rows));
  out.setAttribute('data-where-hidden', String(hidden));
  out.setAttribute('data-row-max', String(Math.round(tallest)));
  measure_first_screen(doc, out);
  measure_charts(doc, out);
}
function page_top(doc, id) {
  var e = doc.getElementById(id);
  return e ? Math.round(e.getBoundingClientRect().top + doc.defaultView.scrollY) : -1;
}
function measure_first_screen(doc, out) {
  var banner = doc.getElementById('summary') || doc.querySelector('dl.meta');
  var next = banner ? banner.nextElementSibling : null;
  out.setAttribute('data-sites-next', next && next.id === 'top-allocation-sites' ? '1' : '0');
  out.setAttribute('data-sites-top', String(page_top(doc, 'sites')));
  out.setAttribute('data-flame-top', String(page_top(doc, 'flame-canvas')));
}
function measure_charts(doc, out) {
  var timelines = 0, empty = 0;
  Array.prototype.forEach.call(doc.querySelectorAll('svg.chart'), function (svg) {
    if (!svg.classList.contains('timeline')) {
      if (svg.querySelectorAll('rect.bar, rect.line').length === 0) empty++;
      return;
    }
    timelines++;
    var line = svg.querySelector('polyline.live'), axis = svg.querySelector('line.axis');
    var xs = line ? line.getAttribute('points').trim().split(/\s+/).map(function (p) {
      return parseFloat(p.split(',')[0]);
    }) : [];
    var span = xs.length ? Math.max.apply(null, xs) - Math.min.apply(null, xs) : 0;
    var width = axis ? Math.abs(axis.x2.baseVal.value - axis.x1.baseVal.value) : 1;
    if (xs.length < 3 || span < width / 4) empty++;
  });
  out.setAttribute('data-timelines', String(timelines));
  out.setAttribute('data-empty-charts', String(empty));
}
function exercise(doc, verdict) {
  if (!doc.getElementById('flame-data')) return; /* a page without sites (qaudit diff's) */
  var table = doc.getElementById('sites'), th = null;
  var heads = table ? table.tHead.rows[0].cells : [];
  for (var i = 0; i < heads.length; i++) if (heads[i].textContent === 'bytes') th = heads[i];
  if (th) {
    th.click();
    var rows = table.tBodies[0].rows, sorted = true;
    for (var r = 1; r < rows.length; r++)
      sorted = sorted && Number(rows[r - 1].cells[th.cellIndex].getAttribute('data-v')) >=
                         Number(rows[r].cells[th.cellIndex].getAttribute('data-v'));
    verdict('data-sorted', sorted && th.getAttribute('aria-sort') === 'descending');
  }
  var data = JSON.parse(doc.getElementById('flame-data').textContent);
  var status = doc.getElementById('flame-status'), search = doc.getElementById('flame-search');
  var canvas = doc.getElementById('flame-canvas'), box = canvas.getBoundingClientRect();
  var checked = doc.querySelector('input[name=flame-weight]:checked'), w = Number(checked.value);
  var scale = box.width / data.nodes[4 + w], x = 0, name = null; /* the frame under the root at 2 px */
  for (var k = 7; k < data.nodes.length && name === null; k += 7) {
    if (data.nodes[k] !== 1) continue;
    x += data.nodes[k + 4 + w] * scale;
    if (x > 2) name = data.names[data.nodes[k + 1]];
  }
  search.value = name;
  search.dispatchEvent(new Event('input'));
  var found = status.textContent.match(/([0-9]+) frames? match/);
  verdict('data-searched', found !== null && Number(found[1]) > 0);
  search.value = '';
  search.dispatchEvent(new Event('input'));
  canvas.dispatchEvent(new MouseEvent('click', {clientX: box.left + 2, clientY: box.top + 18 + 9,
                                                bubbles: true}));
  verdict('data-zoomed', status.textContent.indexOf(name + ':') >= 0);
}
</script></body></html>
EOF
}

case "$mode" in
check)
  width=$2
  cp "$3" "$work/report.html"
  wrapper "$width" 900 true "" >"$work/page.html"
  window=$((width < 500 ? 500 : width))
  "$chromium" "${flags[@]}" --window-size="$window,900" --virtual-time-budget=5000 \
    --dump-dom "file://$work/page.html" 2>"$work/log" | grep -o '<body[^>]*>' | tail -n 1
  ;;
shot)
  width=$2 height=$3
  cp "$4" "$work/report.html"
  wrapper "$width" "$height" false "${6:+#$6}" >"$work/page.html"
  "$chromium" "${flags[@]}" --window-size="$width,$height" --virtual-time-budget=5000 \
    --screenshot="$5" "file://$work/page.html" >"$work/log" 2>&1
  [ -s "$5" ] || { cat "$work/log" >&2; exit 1; }
  ;;
*)
  echo "usage: chromium_page.sh check WIDTH REPORT | shot WIDTH HEIGHT REPORT OUT.png" >&2
  exit 2
  ;;
esac
