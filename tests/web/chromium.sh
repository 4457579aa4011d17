#!/usr/bin/env bash
# Headless Chromium loads the pages web_demo serves (hostile node and key
# names included): every page's DOM has no <script> element, and every
# <img src> and <a href> of every page, as the browser parsed it, answers
# 200 with the right content type. Needs: chromium, curl (Debian packages).
# Exit 77 (skipped) when one is missing.
set -u
demo=$1
for tool in chromium curl; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done

work=$(mktemp -d /tmp/erg-chromium-XXXXXX)
cleanup() {
  [ -n "${DEMO_PID:-}" ] && { exec {DEMO[1]}>&- ; wait "$DEMO_PID" 2>/dev/null; }
  rm -rf "$work"
}
trap cleanup EXIT

# web_demo runs until its stdin closes.
coproc DEMO { "$demo" "$work/d"; }
read -r -t 60 word port <&"${DEMO[0]}" || { echo "FAIL: web_demo did not start"; exit 1; }
[ "$word" = PORT ] || { echo "FAIL: web_demo said '$word $port'"; exit 1; }
base="http://127.0.0.1:$port"

browse() { # URL OUT: the DOM as Chromium built it
  timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage \
    --user-data-dir="$work/profile" "$@" 2>>"$work/chromium.log"
}

fail=0
declare -A seen
pages=(/)
while [ ${#pages[@]} -gt 0 ]; do
  page=${pages[0]}
  pages=("${pages[@]:1}")
  [ -n "${seen[$page]:-}" ] && continue
  seen[$page]=1
  browse --dump-dom "$base$page" >"$work/dom.html"
  if ! grep -q '<h1>' "$work/dom.html"; then
    echo "FAIL: $page: no DOM (see chromium log below)"; tail -5 "$work/chromium.log"; fail=1; continue
  fi
  if grep -qi '<script' "$work/dom.html"; then
    echo "FAIL: $page: DOM holds a <script> element"; fail=1
  fi
  nref=0
  while read -r ref; do
    nref=$((nref + 1))
    case $ref in
      *.html) want=text/html; pages+=("/$ref") ;;
      *.png) want=image/png ;;
      *) echo "FAIL: $page: unexpected reference '$ref'"; fail=1; continue ;;
    esac
    got=$(curl -s -o "$work/body" -w '%{http_code} %{content_type}' "$base/$ref")
    case $got in
      "200 $want"*) ;;
      *) echo "FAIL: $page -> $ref: $got"; fail=1; continue ;;
    esac
    if [ "$want" = image/png ] && ! head -c 8 "$work/body" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'; then
      echo "FAIL: $ref is not a PNG"; fail=1
    fi
  done < <(grep -oE '(src|href)="[^"]*"' "$work/dom.html" | sed -E 's/^[a-z]+="//; s/"$//')
  echo "ok: $page ($nref references)"
  [ "$nref" -gt 0 ] || { echo "FAIL: $page has no references"; fail=1; }
done
[ "${#seen[@]}" -eq 5 ] || { echo "FAIL: expected 5 pages (/, index.html, 3 nodes), saw ${#seen[@]}"; fail=1; }

# The browser paints the overview with its images.
browse --screenshot="$work/shot.png" --window-size=1280,1600 "$base/" >/dev/null
if [ ! -s "$work/shot.png" ]; then
  echo "FAIL: no screenshot"; fail=1
fi
[ -n "${ERG_KEEP_SHOT:-}" ] && cp "$work/shot.png" "$ERG_KEEP_SHOT"
[ $fail -eq 0 ] && echo "chromium: all pages and references load"
exit $fail
