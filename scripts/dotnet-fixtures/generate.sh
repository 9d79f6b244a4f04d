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
# The time-zone oracle reads the same IANA release as the gateway: the one Node.js's ICU carries
# (process.versions.tz, e.g. 2026e), from PyPI's tzdata package (2026e is tzdata 2026.5), rather
# than Debian's older /usr/share/zoneinfo. Rules do change between releases, history included
# (Asia/Tehran 1979 between 2025b and 2026e).
node_bin="${NODE:-node}"
tz_release="$("$node_bin" -p 'process.versions.tz')"
pypi_version="${tz_release:0:4}.$(( $(printf '%d' "'${tz_release:4:1}") - 96 ))"
python3 -m pip download --quiet --no-deps --dest "$build/tzdata" "tzdata==$pypi_version"
python3 -m zipfile -e "$build"/tzdata/tzdata-*.whl "$build/tzdata/x"
source_zi="$build/tzdata/x/tzdata/zoneinfo/tzdata.zi"
grep -q "^# version $tz_release\$" "$source_zi" || { echo "PyPI tzdata $pypi_version is not IANA $tz_release" >&2; exit 1; }
# Compiled again by Debian's zic in the "fat" form, every transition written out to 2037: the
# package's files are "slim" (later years left to a POSIX rule), and Mono 6.8 reads a rule's 24:00
# ("M9.1.6/24", Chile) as the start of that day, a day early.
zoneinfo="$build/tzdata/fat"
mkdir -p "$zoneinfo"
zic -b fat -d "$zoneinfo" "$source_zi"
cp "$source_zi" "$zoneinfo/tzdata.zi"
TZDIR="$zoneinfo" LANG=C.UTF-8 LC_ALL=C.UTF-8 mono "$build/TimeZones.exe" "$out/time-zones.json"
