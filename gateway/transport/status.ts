/** The status lines the gateway answers with. */
export const Status = {
  ok: '200 OK',
  badRequest: '400 Bad Request',
  notFound: '404 Not Found',
  methodNotAllowed: '405 Method Not Allowed',
  tooLarge: '413 Payload Too Large',
  unsupportedMediaType: '415 Unsupported Media Type',
  serverError: '500 Internal Server Error',
  unavailable: '503 Service Unavailable',
} as const;

const STATUS_LINES: ReadonlyMap<number, string> = new Map(Object.values(Status).map((line) => [Number(line.slice(0, 3)), line]));

/** `413` → `413 Payload Too Large`: the status line of a code in `Status`. */
export function statusLine(code: number): string {
  const line = STATUS_LINES.get(code);
  if (line === undefined) throw new Error(`No status line for ${code}.`);
  return line;
}
