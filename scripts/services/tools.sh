#!/usr/bin/env bash
# Install, when missing, the Debian programs some test layers run for real:
#   nginx     nginx + libnginx-mod-http-js   (the edge in deploy/nginx; scale-out layer)
#   promtool  prometheus                     (checks deploy/observability/alerts.yml; scale-out layer)
#   chromium  chromium                       (the console in a real browser; browser layer)
#   protoc    protobuf-compiler              (reads the shipped events.proto; scale-out layer)
#   python    python3-venv, then a venv at <state>/python-venv with the exact packages of
#             scripts/services/python-requirements.txt from PyPI (foreign consumers: scale-out
#             layer; zeep, a generated SOAP client: secure layer)
#   openssl   openssl                        (the private CA of the secure profile)
#   sqlite3   sqlite3                        (the analysts' queries of docs/analytics.md; embedded layer)
#   curl      curl                           (the docs' walkthrough, run as written; embedded layer)
#
#   bash scripts/services/tools.sh nginx promtool chromium protoc python
#
# apt-get as up.sh does: root or passwordless sudo, and a temporary policy-rc.d so the packages
# do not start their own services (nginx on port 80, prometheus on 9090). Nothing to do, and no
# apt-get run, when every tool asked for is present.

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

help_if_asked 16 "$@"

# Prints the packages a tool still needs, nothing when it is installed.
tool_packages() {
  case "$1" in
    nginx) [[ -x /usr/sbin/nginx && -e /usr/lib/nginx/modules/ngx_http_js_module.so ]] || printf '%s\n' nginx libnginx-mod-http-js ;;
    promtool) command -v promtool >/dev/null 2>&1 || printf '%s\n' prometheus ;;
    chromium) [[ -x /usr/bin/chromium ]] || printf '%s\n' chromium ;;
    protoc) command -v protoc >/dev/null 2>&1 || printf '%s\n' protobuf-compiler ;;
    python) /usr/bin/python3 -m venv --help >/dev/null 2>&1 && /usr/bin/python3 -c 'import ensurepip' 2>/dev/null || printf '%s\n' python3-venv ;;
    openssl) command -v openssl >/dev/null 2>&1 || printf '%s\n' openssl ;;
    sqlite3) command -v sqlite3 >/dev/null 2>&1 || printf '%s\n' sqlite3 ;;
    curl) command -v curl >/dev/null 2>&1 || printf '%s\n' curl ;;
  esac
}

# The venv of the python tool: rebuilt when the requirements file changed (its copy inside says
# what the venv holds), so a pin moved in git takes effect on the next run.
python_venv() {
  local venv="$STATE/python-venv" req="$SERVICES_SCRIPT_DIR/python-requirements.txt"
  if [[ -x "$venv/bin/python" ]] && cmp -s "$req" "$venv/requirements.txt"; then return 0; fi
  local t0
  t0="$(now)"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv" || die "python3 -m venv $venv failed"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$req" >"$STATE/pip.log" 2>&1 || {
    show_tail "$STATE/pip.log"
    rm -rf "$venv"
    die "pip install -r $req failed"
  }
  cp "$req" "$venv/requirements.txt"
  log "python venv $venv ready in $(elapsed "$t0")"
}

pkgs=()
for tool in "$@"; do
  case "$tool" in nginx | promtool | chromium | protoc | python | openssl | sqlite3 | curl) ;; *) die "unknown tool '$tool' (known: nginx promtool chromium protoc python openssl sqlite3 curl)" ;; esac
  mapfile -t -O "${#pkgs[@]}" pkgs < <(tool_packages "$tool")
done
mkdir -p "$STATE"
if ((${#pkgs[@]})); then
  t0="$(now)"
  # Chromium's recommended packages bring the fonts its pages are drawn with.
  if [[ " ${pkgs[*]} " == *" chromium "* ]]; then APT_RECOMMENDS=1; fi
  apt_install "${pkgs[@]}"
  log "installed ${pkgs[*]} in $(elapsed "$t0")"
fi
if [[ " $* " == *" python "* ]]; then python_venv; fi
