/**
 * The answers uWebSockets.js (the build in package.json) writes by itself, before any handler of
 * ours runs, to a request it cannot parse, and then closes the connection: a status line, one
 * `Connection: close` header and a small HTML body, framed by the close (docs/running.md §The
 * edge in front). The fuzz oracle and the framing tests know them by these exact bytes.
 */
export const UWS_REFUSALS = {
  400: { statusLine: '400 Bad Request', body: '<h1>Bad Request</h1><hr><i>uWebSockets/20 Server</i>' },
  431: { statusLine: '431 Request Header Fields Too Large', body: '<h1>Request Header Fields Too Large</h1><hr><i>uWebSockets/20 Server</i>' },
  505: {
    statusLine: '505 HTTP Version Not Supported',
    body: '<h1>HTTP Version Not Supported</h1><p>This server does not support HTTP/1.0.</p><hr><i>uWebSockets/20 Server</i>',
  },
} as const;
