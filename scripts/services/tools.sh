#!/usr/bin/env bash
# Install, when missing, the Debian programs some test layers run for real:
#   nginx     nginx + libnginx-mod-http-js   (the edge in deploy/nginx; scale-out layer)
#   promtool  prometheus                     (checks deploy/observability/alerts.yml; scale-out layer)
#   chromium  chromium                       (the console in a real browser; browser layer)
#   zeep      python3-venv, then zeep from PyPI (pinned) into <state>/zeep-venv (a generated SOAP
#             client; secure layer)
#   openssl   openssl                        (the private CA of the secure profile)
#
#   bash scripts/services/tools.sh nginx promtool chromium
#
# apt-get as up.sh does: root or passwordless sudo, and a temporary policy-rc.d so the packages
# do not start their own services (nginx on port 80, prometheus on 9090). Nothing to do, and no
# apt-get run, when every tool asked for is present.

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

help_if_asked 11 "$@"

# Prints the packages a tool still needs, nothing when it is installed.
tool_packages() {
  case "$1" in
    nginx) [[ -x /usr/sbin/nginx && -e /usr/lib/nginx/modules/ngx_http_js_module.so ]] || printf '%s\n' nginx libnginx-mod-http-js ;;
    promtool) command -v promtool >/dev/null 2>&1 || printf '%s\n' prometheus ;;
    chromium) [[ -x /usr/bin/chromium ]] || printf '%s\n' chromium ;;
    zeep) python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || printf '%s\n' python3-venv ;;
    openssl) command -v openssl >/dev/null 2>&1 || printf '%s\n' openssl ;;
  esac
}

pkgs=()
for tool in "$@"; do
  case "$tool" in nginx | promtool | chromium | zeep | openssl) ;; *) die "unknown tool '$tool' (known: nginx promtool chromium zeep openssl)" ;; esac
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

# zeep: a virtual environment of its own (Debian's Python is externally managed), zeep pinned.
ZEEP_VERSION=4.3.1
for tool in "$@"; do
  [[ "$tool" == zeep ]] || continue
  venv="$STATE/zeep-venv"
  if ! "$venv/bin/python" -c "import zeep, sys; sys.exit(zeep.__version__ != '$ZEEP_VERSION')" >/dev/null 2>&1; then
    t0="$(now)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "zeep==$ZEEP_VERSION" >"$STATE/zeep-pip.log" 2>&1 ||
      { show_tail "$STATE/zeep-pip.log"; die "pip install zeep==$ZEEP_VERSION failed"; }
    log "installed zeep $ZEEP_VERSION into $venv in $(elapsed "$t0")"
  fi
done
