#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Headless Chromium loads the pages web_demo serves (hostile node, key, job
# and user names included), once with PNG and once with SVG graphs: every page's
# DOM has no <script> element and no injected element, every <img> of every
# page decodes in Chromium (checked from a test-only page), and every
# <img src> and <a href> of every page, as the browser parsed it, answers
# 200 with the right content type; the node page shows user 1000's name
# as text. Needs: chromium, curl (Debian
# packages). Exit 77 (skipped) when one is missing.
set -u
demo=$1
for tool in chromium curl; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done

work=$(mktemp -d /tmp/erg-chromium-XXXXXX)
DEMO_PID=
stop_demo() {
  if [ -n "$DEMO_PID" ]; then exec {DEMO[1]}>&-; wait "$DEMO_PID" 2>/dev/null; DEMO_PID=; fi
}
cleanup() { stop_demo; rm -rf "$work"; }
trap cleanup EXIT

browse() { # URL: the DOM as Chromium built it, on stdout
  timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage \
    --user-data-dir="$work/profile" "$@" 2>>"$work/chromium.log"
}

# Pages: overview, per data node 5 ranges + model page, the empty node, 2 jobs.
want_pages=$((1 + 1 + 2 * 6 + 1 + 2))
fail=0
for fmt in png svg; do
  # web_demo runs until its stdin closes.
  coproc DEMO { "$demo" "$work/d-$fmt" "$fmt"; }
  read -r -t 60 word port <&"${DEMO[0]}" || { echo "FAIL: web_demo did not start"; exit 1; }
  [ "$word" = PORT ] || { echo "FAIL: web_demo said '$word $port'"; exit 1; }
  base="http://127.0.0.1:$port"
  declare -A seen=()
  pages=(/)
  while [ ${#pages[@]} -gt 0 ]; do
    page=${pages[0]}
    pages=("${pages[@]:1}")
    [ -n "${seen[$page]:-}" ] && continue
    seen[$page]=1
    browse --dump-dom "$base$page" >"$work/dom.html"
    if ! grep -q '<h1>' "$work/dom.html"; then
      echo "FAIL: $fmt $page: no DOM (see chromium log below)"; tail -5 "$work/chromium.log"; fail=1; continue
    fi
    if grep -qi '<script' "$work/dom.html"; then
      echo "FAIL: $fmt $page: DOM holds a <script> element"; fail=1
    fi
    if grep -qiE '<img src="?x[" >]|<[a-z]+ [^>]*onerror=' "$work/dom.html"; then
      echo "FAIL: $fmt $page: DOM holds an injected element"; fail=1
    fi
    nref=0
    while read -r ref; do
      nref=$((nref + 1))
      case $ref in
        *.html) want=text/html; pages+=("/$ref") ;;
        *.png) want=image/png ;;
        *.svg) want=image/svg+xml ;;
        *) echo "FAIL: $fmt $page: unexpected reference '$ref'"; fail=1; continue ;;
      esac
      [ "$want" = text/html ] || [ "${ref##*.}" = "$fmt" ] ||
        { echo "FAIL: $fmt $page: image of the other format: $ref"; fail=1; }
      got=$(curl -s -o "$work/body" -w '%{http_code} %{content_type}' "$base/$ref")
      case $got in
        "200 $want"*) ;;
        *) echo "FAIL: $fmt $page -> $ref: $got"; fail=1; continue ;;
      esac
      if [ "$want" = image/png ] && ! head -c 8 "$work/body" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'; then
        echo "FAIL: $ref is not a PNG"; fail=1
      fi
      if [ "$want" = image/svg+xml ] && ! grep -q '<svg' "$work/body"; then
        echo "FAIL: $ref is not an SVG"; fail=1
      fi
    done < <(grep -oE '(src|href)="[^"]*"' "$work/dom.html" | sed -E 's/^[a-z]+="//; s/"$//')
    echo "ok: $fmt $page ($nref references)"
    [ "$nref" -gt 0 ] || { echo "FAIL: $fmt $page has no references"; fail=1; }
  done
  # User keys are uids: the node page names them as text, escaped (the
  # fixture's name for uid 1000 is markup), next to the uid.
  browse --dump-dom "$base/node-day-n1.html" >"$work/dom.html"
  grep -qF '&lt;img src=x onerror=alert(1)&gt;mallory (1000)' "$work/dom.html" ||
    { echo "FAIL: $fmt: node page does not name user 1000"; grep -i users "$work/dom.html"; fail=1; }
  [ "${#seen[@]}" -eq "$want_pages" ] ||
    { echo "FAIL: $fmt: expected $want_pages pages (/ and index.html count apart), saw ${#seen[@]}"; fail=1; }

  # Did Chromium decode every image? A test-only page (not linked, put next
  # to the pages by this script) opens each page in a same-origin iframe
  # and reports every <img> that is not complete with a natural width.
  list=$(for p in "${!seen[@]}"; do [ "$p" = / ] || printf '"%s",' "${p#/}"; done)
  cat >"$work/d-$fmt/www/check-images.html" <<HTML
<!doctype html><html><body><h1>check</h1><pre id="out">running</pre><script>
async function run() {
  let n = 0, bad = [];
  for (const p of [$list]) {
    const f = document.createElement('iframe');
    const loaded = new Promise(r => f.onload = r);
    f.src = p; document.body.appendChild(f); await loaded;
    for (const i of f.contentDocument.images) {
      if (!i.complete) await new Promise(r => { i.onload = r; i.onerror = r; });
      n++;
      if (!i.naturalWidth) bad.push(p + ':' + i.getAttribute('src'));
    }
    f.remove();
  }
  document.getElementById('out').textContent = 'RESULT ' + n + ' images; broken: [' + bad.join(' ') + ']';
}
run();
</script></body></html>
HTML
  browse --virtual-time-budget=60000 --dump-dom "$base/check-images.html" >"$work/check.html"
  result=$(grep -o 'RESULT [0-9][^<]*' "$work/check.html")
  echo "$fmt: $result"
  case $result in
    "RESULT "*" images; broken: []") n=${result#RESULT }; n=${n%% *}
       [ "$n" -ge 60 ] || { echo "FAIL: $fmt: only $n images checked"; fail=1; } ;;
    *) echo "FAIL: $fmt: images did not load in Chromium: ${result:-no result}"; fail=1 ;;
  esac
  browse --screenshot="$work/shot.png" --window-size=1280,1600 "$base/" >/dev/null
  [ -s "$work/shot.png" ] || { echo "FAIL: $fmt: no screenshot"; fail=1; }
  [ -n "${ERG_KEEP_SHOT:-}" ] && cp "$work/shot.png" "$ERG_KEEP_SHOT-$fmt.png"
  stop_demo
done
[ $fail -eq 0 ] && echo "chromium: all pages and references load (PNG and SVG)"
exit $fail
