// Prints, for each zone of Zones.All, the UTC instant .NET gives a dateTime sent without an offset
// when it is read as local time of that zone: DateTime.ToUniversalTime() on an Unspecified
// DateTime in a process whose local zone is that zone. ToUniversalTime is
// TimeZoneInfo.ConvertTimeToUtc(this, TimeZoneInfoOptions.NoThrowOnInvalidTime): a local time a
// clock change skipped is not an error, and an ambiguous one is not refused (docs/protocol.md
// §Value conversion says what comes out). See README.md in this folder.
//
//   mono TimeZones.exe <output file>   runs itself once per zone with TZ set (TimeZoneInfo.Local
//                                      is read once per process) and writes the fixture.
//   mono TimeZones.exe --zone <id>     (TZ=<id>) prints that zone's entry as one JSON line.
//
// Per zone the fixture holds:
//   transitions  [utcMinute, offsetBefore, offsetAfter] for each change of the zone's UTC offset
//                (GetUtcOffset of a UTC instant) from 1970-01-01 to 2037-12-31 UTC;
//   runs         [localMinute, offset]: from each local minute on, until the next entry, .NET
//                resolved local time t to t - offset. They cover every local minute of
//                FirstLocal..EndLocal as ToUniversalTime answered it: every minute of each
//                transition's window (its wall-clock span +- 2 h) was converted, and between
//                windows one time every 30 minutes, every minute of a step whose two ends differ.
// Minutes are counted from 1970-01-01T00:00 (local minutes: of the wall clock read as UTC);
// offsets are minutes east of UTC.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Text;

static class TimeZones
{
    static readonly DateTime Epoch = new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Unspecified);
    static readonly DateTime FirstUtc = new DateTime(1970, 1, 1, 0, 0, 0, DateTimeKind.Utc);
    static readonly DateTime EndUtc = new DateTime(2038, 1, 1, 0, 0, 0, DateTimeKind.Utc);
    // The local range the runs cover: a day beyond the UTC range each way, so every window fits.
    static readonly DateTime FirstLocal = new DateTime(1969, 12, 30, 0, 0, 0, DateTimeKind.Unspecified);
    static readonly DateTime EndLocal = new DateTime(2038, 1, 3, 0, 0, 0, DateTimeKind.Unspecified);
    const int WindowMinutes = 120;
    const int StepMinutes = 30;

    static int Main(string[] args)
    {
        if (args.Length == 2 && args[0] == "--zone") return PrintZone(args[1]);
        if (args.Length != 1) {
            Console.Error.WriteLine("usage: mono TimeZones.exe <output file> | TZ=<id> mono TimeZones.exe --zone <id>");
            return 2;
        }
        var sb = new StringBuilder();
        sb.Append("{\n");
        Field(sb, "description",
            "DateTime.ToUniversalTime() of an Unspecified DateTime in a process whose local zone is the zone " +
            "(TimeZoneInfo.ConvertTimeToUtc with NoThrowOnInvalidTime), for every local minute of each transition " +
            "+- 2 h and every 30 minutes between, 1970-2037. Minutes since 1970-01-01T00:00, offsets in minutes east of UTC. " +
            "transitions: [utcMinute, offsetBefore, offsetAfter]; runs: [localMinute, offset], each until the next.");
        Field(sb, "generator", "scripts/dotnet-fixtures/generate.sh");
        Field(sb, "runtime", Generate.RuntimeName());
        Field(sb, "tzdata", TzdataVersion());
        sb.Append("  \"firstLocalMinute\": ").Append(Minutes(FirstLocal).ToString(CultureInfo.InvariantCulture)).Append(",\n");
        sb.Append("  \"endLocalMinute\": ").Append(Minutes(EndLocal).ToString(CultureInfo.InvariantCulture)).Append(",\n");
        sb.Append("  \"zones\": [\n");
        string exe = typeof(TimeZones).Assembly.Location;
        for (int i = 0; i < Zones.All.Length; i++) {
            string zone = Zones.All[i];
            var start = new ProcessStartInfo("mono", "\"" + exe + "\" --zone " + zone) {
                UseShellExecute = false, RedirectStandardOutput = true,
            };
            start.EnvironmentVariables["TZ"] = zone;
            using (Process child = Process.Start(start)) {
                string line = child.StandardOutput.ReadToEnd().Trim();
                child.WaitForExit();
                if (child.ExitCode != 0) throw new InvalidOperationException(zone + ": exit code " + child.ExitCode);
                sb.Append("    ").Append(line).Append(i + 1 < Zones.All.Length ? ",\n" : "\n");
            }
            Console.Error.WriteLine("  " + zone);
        }
        sb.Append("  ]\n}\n");
        File.WriteAllText(args[0], sb.ToString(), new UTF8Encoding(false));
        Console.WriteLine("wrote " + args[0]);
        return 0;
    }

    static void Field(StringBuilder sb, string name, string value)
    {
        sb.Append("  ").Append(Generate.Json(name)).Append(": ").Append(Generate.Json(value)).Append(",\n");
    }

    static string TzdataVersion()
    {
        // Mono reads $TZDIR (generate.sh points it at the release Node's ICU carries), else
        // /usr/share/zoneinfo; tzdata.zi's first line names the release ("# version 2026e").
        string dir = Environment.GetEnvironmentVariable("TZDIR") ?? "/usr/share/zoneinfo";
        string path = Path.Combine(dir, "tzdata.zi");
        if (!File.Exists(path)) return "unknown";
        string first = File.ReadAllLines(path)[0];
        return first.StartsWith("# version ") ? first.Substring("# version ".Length) : "unknown";
    }

    static long Minutes(DateTime t)
    {
        return (t.Ticks - Epoch.Ticks) / TimeSpan.TicksPerMinute;
    }

    /// <summary>What .NET makes of local time `local` (Unspecified): its offset in minutes.</summary>
    static int ResolvedOffset(DateTime local)
    {
        DateTime utc = local.ToUniversalTime();
        long ticks = local.Ticks - utc.Ticks;
        if (ticks % TimeSpan.TicksPerMinute != 0) throw new InvalidOperationException("offset not in whole minutes at " + local.ToString("o"));
        // The same offset a second before the next minute: the answer changes on minute boundaries only.
        DateTime late = local.AddTicks(TimeSpan.TicksPerMinute - 1);
        if (late.Ticks - late.ToUniversalTime().Ticks != ticks) throw new InvalidOperationException("offset changes within the minute " + local.ToString("o"));
        return (int)(ticks / TimeSpan.TicksPerMinute);
    }

    static int OffsetAt(TimeZoneInfo tz, DateTime utc)
    {
        TimeSpan offset = tz.GetUtcOffset(utc);
        if (offset.Ticks % TimeSpan.TicksPerMinute != 0) throw new InvalidOperationException("offset not in whole minutes at " + utc.ToString("o"));
        return (int)offset.TotalMinutes;
    }

    static int PrintZone(string zone)
    {
        TimeZoneInfo tz = TimeZoneInfo.Local;
        if (tz.Id != zone) {
            Console.Error.WriteLine("TimeZoneInfo.Local is " + tz.Id + ", not " + zone + ": run with TZ=" + zone);
            return 1;
        }
        // Transitions: hourly over UTC, then the exact second by bisection (it must be a whole minute).
        var transitions = new List<long[]>();
        DateTime t = FirstUtc;
        int offset = OffsetAt(tz, t);
        while (t < EndUtc) {
            DateTime next = t.AddHours(1);
            int nextOffset = OffsetAt(tz, next);
            if (nextOffset != offset) {
                DateTime lo = t, hi = next; // offset at lo, nextOffset at hi
                while ((hi - lo).Ticks > TimeSpan.TicksPerSecond) {
                    DateTime mid = lo.AddTicks((hi - lo).Ticks / 2 / TimeSpan.TicksPerSecond * TimeSpan.TicksPerSecond);
                    if (mid == lo) mid = lo.AddSeconds(1);
                    if (OffsetAt(tz, mid) == offset) lo = mid; else hi = mid;
                }
                if (hi.Second != 0) throw new InvalidOperationException(zone + ": transition off the minute at " + hi.ToString("o"));
                transitions.Add(new long[] { Minutes(DateTime.SpecifyKind(hi, DateTimeKind.Unspecified)), offset, nextOffset });
                offset = nextOffset;
            }
            t = next;
        }
        // Local minutes to convert one by one: each transition's window.
        var windows = new List<long[]>();
        foreach (long[] tr in transitions) {
            long a = tr[0] + tr[1], b = tr[0] + tr[2];
            windows.Add(new long[] { Math.Min(a, b) - WindowMinutes, Math.Max(a, b) + WindowMinutes });
        }
        // Runs: minute m - 1 has been converted (its offset is `current`), m has not.
        var runs = new List<long[]>();
        long first = Minutes(FirstLocal), end = Minutes(EndLocal);
        int current = ResolvedOffset(FirstLocal);
        runs.Add(new long[] { first, current });
        Action<long> visit = minute => {
            int o = ResolvedOffset(Epoch.AddMinutes(minute));
            if (o != current) {
                runs.Add(new long[] { minute, o });
                current = o;
            }
        };
        int w = 0;
        for (long m = first + 1; m < end; ) {
            while (w < windows.Count && windows[w][1] < m) w++;
            if (w < windows.Count && windows[w][0] <= m) {
                for (long stop = Math.Min(windows[w][1], end - 1); m <= stop; m++) visit(m);
                continue;
            }
            long target = Math.Min(m - 1 + StepMinutes, end - 1);
            if (w < windows.Count) target = Math.Min(target, windows[w][0] - 1);
            if (ResolvedOffset(Epoch.AddMinutes(target)) != current) {
                for (long k = m; k <= target; k++) visit(k);
            }
            m = target + 1;
        }
        var sb = new StringBuilder();
        sb.Append("{\"zone\": ").Append(Generate.Json(zone)).Append(", \"transitions\": ");
        AppendRows(sb, transitions);
        sb.Append(", \"runs\": ");
        AppendRows(sb, runs);
        sb.Append("}");
        Console.WriteLine(sb.ToString());
        return 0;
    }

    static void AppendRows(StringBuilder sb, List<long[]> rows)
    {
        sb.Append("[");
        for (int i = 0; i < rows.Count; i++) {
            if (i > 0) sb.Append(",");
            sb.Append("[");
            for (int j = 0; j < rows[i].Length; j++) {
                if (j > 0) sb.Append(",");
                sb.Append(rows[i][j].ToString(CultureInfo.InvariantCulture));
            }
            sb.Append("]");
        }
        sb.Append("]");
    }
}
