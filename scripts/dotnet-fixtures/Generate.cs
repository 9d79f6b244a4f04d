// Prints the expected results of ASMX's value conversions, computed by a real .NET implementation
// (Mono), as JSON fixtures for the gateway's tests. See README.md in this folder.
//
//   http-values.json  Convert.ChangeType(text, T, CultureInfo.InvariantCulture) for Int32, Double,
//                     Boolean and DateTime: what ASMX's HTTP GET/POST bindings run on every parameter
//                     (System.Web.Services.Protocols.ScalarFormatter.FromString).
//   xml-datetime.json XmlConvert.ToDateTime(text, XmlDateTimeSerializationMode.RoundtripKind): what
//                     XmlSerializer runs on a SOAP dateTime element.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text;
using System.Web;
using System.Xml;

static class Generate
{
    static int Main(string[] args)
    {
        if (args.Length != 1) {
            Console.Error.WriteLine("usage: mono Generate.exe <output directory>");
            return 2;
        }
        // Everything below must see the same "today" (time-only and year-less texts take it).
        DateTime before = DateTime.Now;
        string http = HttpValues();
        string xml = XmlDateTimes();
        if (DateTime.Now.Date != before.Date) {
            Console.Error.WriteLine("The date changed while generating; run again.");
            return 1;
        }
        Write(Path.Combine(args[0], "http-values.json"), http);
        Write(Path.Combine(args[0], "xml-datetime.json"), xml);
        return 0;
    }

    static void Write(string path, string json)
    {
        File.WriteAllText(path, json, new UTF8Encoding(false));
        Console.WriteLine("wrote " + path);
    }

    static string Header(string description)
    {
        var sb = new StringBuilder();
        sb.Append("{\n");
        Field(sb, "description", description);
        Field(sb, "generator", "scripts/dotnet-fixtures/generate.sh");
        Field(sb, "runtime", RuntimeName());
        Field(sb, "timeZone", TimeZoneInfo.Local.Id);
        Field(sb, "today", DateTime.Now.ToString("yyyy-MM-dd", CultureInfo.InvariantCulture));
        return sb.ToString();
    }

    internal static string RuntimeName()
    {
        Type mono = Type.GetType("Mono.Runtime");
        if (mono == null) return ".NET " + Environment.Version;
        var display = mono.GetMethod("GetDisplayName", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
        return "Mono " + (display == null ? Environment.Version.ToString() : (string)display.Invoke(null, null));
    }

    static readonly Type[] HttpTypes = { typeof(int), typeof(double), typeof(bool), typeof(DateTime) };

    static string HttpValues()
    {
        var sb = new StringBuilder(Header(
            "Convert.ChangeType(text, type, CultureInfo.InvariantCulture) as ASMX's HTTP GET/POST bindings run it. " +
            "DateTime: ticks and Kind; utcTicks when the text carried a zone (Kind Local/Utc). " +
            "Failures: the exception and, for Int32 and Boolean, asmxBody = the HTTP 500 text/plain body ASMX writes " +
            "(customErrors on: HTML-encoded messages of the exception chain joined by ' ---> ', then CRLF)."));
        sb.Append("  \"cases\": [\n");
        bool first = true;
        var seen = new HashSet<string>();
        foreach (string text in Inputs.Http) {
            if (!seen.Add(text)) throw new InvalidOperationException("duplicate input: " + text);
            foreach (Type type in HttpTypes) {
                if (!first) sb.Append(",\n");
                first = false;
                sb.Append("    {");
                Prop(sb, "type", type.FullName);
                sb.Append(", ");
                Prop(sb, "text", text);
                try {
                    object value = Convert.ChangeType(text, type, CultureInfo.InvariantCulture);
                    sb.Append(", \"ok\": true, ");
                    AppendValue(sb, value);
                }
                catch (Exception e) {
                    sb.Append(", \"ok\": false, ");
                    AppendError(sb, e);
                    if (type == typeof(int) || type == typeof(bool)) {
                        sb.Append(", ");
                        Prop(sb, "asmxBody", AsmxFaultBody(text, type, e));
                    }
                }
                sb.Append("}");
            }
        }
        sb.Append("\n  ]\n}\n");
        return sb.ToString();
    }

    static string XmlDateTimes()
    {
        var sb = new StringBuilder(Header(
            "XmlConvert.ToDateTime(text, XmlDateTimeSerializationMode.RoundtripKind) as XmlSerializer reads a SOAP dateTime. " +
            "ticks and Kind; utcTicks when the text carried a zone (Kind Local/Utc)."));
        sb.Append("  \"cases\": [\n");
        bool first = true;
        var seen = new HashSet<string>();
        foreach (string text in Inputs.Xml) {
            if (!seen.Add(text)) throw new InvalidOperationException("duplicate input: " + text);
            if (!first) sb.Append(",\n");
            first = false;
            sb.Append("    {");
            Prop(sb, "text", text);
            try {
                DateTime value = XmlConvert.ToDateTime(text, XmlDateTimeSerializationMode.RoundtripKind);
                sb.Append(", \"ok\": true, ");
                AppendValue(sb, value);
            }
            catch (Exception e) {
                sb.Append(", \"ok\": false, ");
                AppendError(sb, e);
            }
            sb.Append("}");
        }
        sb.Append("\n  ]\n}\n");
        return sb.ToString();
    }

    static void AppendValue(StringBuilder sb, object value)
    {
        if (value is double) {
            double d = (double)value;
            Prop(sb, "value", d.ToString("R", CultureInfo.InvariantCulture));
            sb.Append(", ");
            // The bits tell -0 from 0 and pin the exact double.
            Prop(sb, "bits", BitConverter.DoubleToInt64Bits(d).ToString("x16", CultureInfo.InvariantCulture));
        }
        else if (value is DateTime) {
            DateTime dt = (DateTime)value;
            Prop(sb, "ticks", dt.Ticks.ToString(CultureInfo.InvariantCulture));
            sb.Append(", ");
            Prop(sb, "kind", dt.Kind.ToString());
            sb.Append(", ");
            Prop(sb, "iso", dt.ToString("yyyy-MM-ddTHH:mm:ss.fffffff", CultureInfo.InvariantCulture));
            if (dt.Kind != DateTimeKind.Unspecified) {
                sb.Append(", ");
                Prop(sb, "utcTicks", dt.ToUniversalTime().Ticks.ToString(CultureInfo.InvariantCulture));
            }
        }
        else if (value is bool) {
            Prop(sb, "value", (bool)value ? "true" : "false");
        }
        else {
            Prop(sb, "value", Convert.ToString(value, CultureInfo.InvariantCulture));
        }
    }

    static void AppendError(StringBuilder sb, Exception e)
    {
        Prop(sb, "exception", e.GetType().FullName);
        sb.Append(", ");
        Prop(sb, "message", WindowsMessage(e));
    }

    // ScalarFormatter.FromString wraps every conversion failure as
    //   new ArgumentException(Res.GetString(Res.WebChangeTypeFailed, value, type.FullName), "type", e)
    // with WebChangeTypeFailed = "Cannot convert {0} to {1}.", and HttpServerProtocol.WriteException
    // writes GenerateFaultString(e, htmlEscapeMessage: true) with WriteLine. With customErrors on
    // (remote clients, the production default) that is every message of the chain, HTML-encoded,
    // joined by " ---> ". ASMX runs on Windows: Environment.NewLine (before "Parameter name" in
    // ArgumentException.Message, and after WriteLine) is CRLF there, where Mono writes LF.
    static string AsmxFaultBody(string value, Type type, Exception inner)
    {
        var wrapped = new ArgumentException(string.Format("Cannot convert {0} to {1}.", value, type.FullName), "type", inner);
        var sb = new StringBuilder();
        for (Exception e = wrapped; e != null; e = e.InnerException) {
            string text = HttpUtility.HtmlEncode(WindowsMessage(e));
            if (text.Length == 0) text = wrapped.GetType().Name;
            sb.Append(text);
            if (e.InnerException != null) sb.Append(" ---> ");
        }
        sb.Append("\r\n");
        return sb.ToString();
    }

    // The message as .NET on Windows words it: only the line break ArgumentException inserts is
    // rewritten, never one that came with the input text.
    static string WindowsMessage(Exception e)
    {
        string message = e.Message;
        var argument = e as ArgumentException;
        if (argument == null || argument.ParamName == null) return message;
        string suffix = Environment.NewLine + "Parameter name: " + argument.ParamName;
        if (!message.EndsWith(suffix, StringComparison.Ordinal)) return message;
        return message.Substring(0, message.Length - suffix.Length) + "\r\nParameter name: " + argument.ParamName;
    }

    static void Field(StringBuilder sb, string name, string value)
    {
        sb.Append("  ");
        Prop(sb, name, value);
        sb.Append(",\n");
    }

    static void Prop(StringBuilder sb, string name, string value)
    {
        sb.Append(Json(name)).Append(": ").Append(Json(value));
    }

    internal static string Json(string s)
    {
        var sb = new StringBuilder("\"");
        foreach (char c in s) {
            if (c == '"') sb.Append("\\\"");
            else if (c == '\\') sb.Append("\\\\");
            else if (c < 0x20 || c == 0x7f || c == 0x85 || c == 0xa0 || (c >= 0x2000 && c <= 0x200f) || c == 0x2028 || c == 0x2029 || c == 0x3000 || c == 0xfeff) {
                // Escaped so invisible characters stay visible in the committed file.
                sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
            }
            else sb.Append(c);
        }
        return sb.Append('"').ToString();
    }
}
