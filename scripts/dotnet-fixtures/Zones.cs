// The zones time-zones.json is generated for (TimeZones.cs). Both hemispheres, offsets of whole,
// half and three-quarter hours, DST of an hour, half an hour and two hours, zones whose rules
// changed (DST started, stopped, moved; standard offset changed; a whole day skipped), and the
// zones providers of this service are in. Add a zone here and regenerate.
static class Zones
{
    public static readonly string[] All = {
        "Europe/Madrid",                  // the EU rule: last Sunday of March / October, at 01:00 UTC
        "America/New_York",               // US rules, moved in 1974-75, 1987 and 2007
        "America/Argentina/Buenos_Aires", // DST in some years only (1974, 1988-93, 1999-2000 change, 2007-09)
        "America/Sao_Paulo",              // southern hemisphere; DST abolished in 2019
        "America/Santiago",               // southern hemisphere; rules moved many times, DST at 24:00
        "America/St_Johns",               // -03:30; a two-hour DST in 1988
        "America/Mexico_City",            // DST from 1996, abolished in 2022
        "Australia/Sydney",               // southern hemisphere
        "Australia/Adelaide",             // +09:30, southern DST
        "Australia/Lord_Howe",            // +10:30 with a half-hour DST
        "Asia/Kathmandu",                 // +05:30 to +05:45 in 1986: a 15-minute gap
        "Asia/Tehran",                    // +03:30; standard offset +04 in 1978-79; DST abolished in 2022
        "Pacific/Chatham",                // +12:45 / +13:45
        "Europe/Moscow",                  // DST to 2010, permanent +04 from 2011, +03 from 2014
        "Pacific/Apia",                   // skipped 2011-12-30 (crossed the date line): a 24-hour gap
        "Europe/Dublin",                  // winter is "negative DST" in the tz source since 2018
    };
}
