#!/usr/bin/env bash
# Regenerates test/fixtures/dotnet/*.json with Mono (Debian: apt-get install -y mono-devel).
# Fixed TZ (UTC) for the value fixtures so Kind=Local results equal their UTC instant; the time-zone
# fixture runs once per zone with that zone as TZ (TimeZones.cs). See README.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/test/fixtures/dotnet"
for tool in mcs mono; do
  command -v "$tool" >/dev/null || { echo "$tool not found: apt-get install -y mono-devel" >&2; exit 1; }
done
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
mcs -nologo -warnaserror -r:System.Web.dll -out:"$build/Generate.exe" "$here/Generate.cs" "$here/Inputs.cs"
mcs -nologo -warnaserror -r:System.Web.dll -main:TimeZones -out:"$build/TimeZones.exe" \
  "$here/TimeZones.cs" "$here/Zones.cs" "$here/Generate.cs" "$here/Inputs.cs"
mkdir -p "$out"
TZ=UTC LANG=C.UTF-8 LC_ALL=C.UTF-8 mono "$build/Generate.exe" "$out"
LANG=C.UTF-8 LC_ALL=C.UTF-8 mono "$build/TimeZones.exe" "$out/time-zones.json"
