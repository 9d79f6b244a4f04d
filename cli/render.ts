/**
 * What the CLI prints for a person (the default; `--json` prints the API's answer as it is): a
 * table for a list, `name  value` lines for one object, and a few answers in their own short form
 * (the overview, events). Free of I/O, so it is unit-tested.
 */

type Row = Record<string, unknown>;

/** A cell longer than this is cut (with …): a table stays readable; --json has everything. */
const MAX_CELL = 48;

const isRow = (v: unknown): v is Row => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A value as one cell: '-' for nothing, yes/no, lists joined, objects as compact JSON. */
export function cell(value: unknown, max = MAX_CELL): string {
  let text: string;
  if (value === null || value === undefined) text = '-';
  else if (typeof value === 'boolean') text = value ? 'yes' : 'no';
  else if (typeof value === 'string') text = value === '' ? '""' : value;
  else if (typeof value === 'number' || typeof value === 'bigint') text = String(value);
  else if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) text = value.length === 0 ? '-' : value.map((v) => cell(v, max)).join(', ');
  else text = JSON.stringify(value);
  text = text.replace(/[\r\n\t]+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Rows as a table under a header, columns as wide as their widest cell. `columns` defaults to every key in order of appearance. */
export function table(rows: readonly Row[], columns?: readonly string[]): string {
  if (rows.length === 0) return '(none)';
  const keys = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = rows.map((r) => keys.map((k) => cell(r[k])));
  const widths = keys.map((k, i) => Math.max(k.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: readonly string[]): string => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(keys), ...cells.map(line)].join('\n');
}

/** One object as `name  value` lines. */
export function fields(object: Row): string {
  const keys = Object.keys(object);
  const width = Math.max(...keys.map((k) => k.length));
  return keys.map((k) => `${k.padEnd(width)}  ${cell(object[k], 200)}`).join('\n');
}

/**
 * Any answer: a list is a table; an object holding one list (a page: `{ providers: [...],
 * nextAfter }`) is that table with the object's other fields under it; another object is
 * `name  value` lines.
 */
export function human(value: unknown): string {
  if (Array.isArray(value)) return value.every(isRow) ? table(value) : value.map((v) => cell(v, 200)).join('\n');
  if (!isRow(value)) return cell(value, Infinity);
  const lists = Object.entries(value).filter(([, v]) => Array.isArray(v) && v.every(isRow) && v.length > 0);
  if (lists.length !== 1) return fields(value);
  const [listKey, list] = lists[0]!;
  const rest = Object.fromEntries(Object.entries(value).filter(([k, v]) => k !== listKey && v !== null && v !== undefined));
  return [table(list as Row[]), ...(Object.keys(rest).length > 0 ? ['', fields(rest)] : [])].join('\n');
}

/** The columns of an event a person reads first; --json has all of them. */
const EVENT_COLUMNS = ['id', 'receivedAt', 'systemUser', 'dominio', 'nroSerie', 'codigo', 'latitud', 'longitud', 'velocidad', 'eventTime'];

/** A page of events as a table of their main columns. */
export function eventsTable(page: unknown): string {
  if (!isRow(page) || !Array.isArray(page.events)) return human(page);
  const events = page.events.filter(isRow);
  const next = page.nextBeforeId;
  return [table(events, EVENT_COLUMNS), ...(typeof next === 'string' ? ['', `more: --before-id ${next}`] : [])].join('\n');
}

/** One live event as one line (events --follow). */
export function eventLine(event: unknown): string {
  if (!isRow(event)) return cell(event, Infinity);
  return EVENT_COLUMNS.map((k) => cell(event[k])).join('  ');
}

interface OverviewCheck {
  name: string;
  ok: boolean;
  detail?: string;
}

/** GET /admin/overview in a dozen lines: its ten-second buckets summed up, the active providers named. */
export function overviewText(overview: unknown): string {
  if (!isRow(overview)) return human(overview);
  const checks = (Array.isArray(overview.backends) ? overview.backends : []) as OverviewCheck[];
  const buckets = (Array.isArray(overview.eventsPerSecond) ? overview.eventsPerSecond : []) as { events: number }[];
  const rate = (n: number): string => {
    const last = buckets.slice(-n);
    const mean = last.length === 0 ? 0 : last.reduce((sum, b) => sum + b.events, 0) / last.length;
    return mean.toFixed(mean < 10 ? 1 : 0);
  };
  const peak = buckets.reduce((max, b) => Math.max(max, b.events), 0);
  const providers = (Array.isArray(overview.providers) ? overview.providers : []) as { systemUser: string; events15m: number; lastEventAt: string | null }[];
  const active = providers.filter((p) => p.events15m > 0).sort((a, b) => b.events15m - a.events15m);
  const lag = overview.workerLag;
  const lines: [string, string][] = [
    ['mode', `${cell(overview.mode)}, ${overview.ready === true ? 'ready' : 'NOT READY'}`],
    ['backends', checks.map((c) => `${c.name} ${c.ok ? 'ok' : `FAILING${c.detail === undefined ? '' : ` (${c.detail})`}`}`).join('; ') || '-'],
    ['events/s', `${rate(6)} last minute, ${rate(buckets.length)} last 15 min (peak ${peak.toFixed(peak < 10 ? 1 : 0)})`],
    [
      'providers',
      `${providers.length}, ${active.length} sending in the last 15 min${active.length === 0 ? '' : `: ${active.slice(0, 5).map((p) => `${p.systemUser} ${p.events15m}`).join(', ')}${active.length > 5 ? ', …' : ''}`}`,
    ],
    ['worker lag', lag === null || lag === undefined ? '- (embedded)' : cell(lag, 200)],
    ['poison', overview.poisonMessages === null ? '- (embedded)' : cell(overview.poisonMessages)],
    ['lockouts', cell(overview.lockouts)],
  ];
  if (typeof overview.refusals === 'number') lines.push(['refusals', `${overview.refusals} in memory (admin refusals)`]);
  const width = Math.max(...lines.map(([k]) => k.length));
  return lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/** GET /admin/refusals: one line per refusal (time, SystemUser, operation, answer, address), its reason whole on the next. */
export function refusalsText(answer: unknown): string {
  if (!isRow(answer) || !Array.isArray(answer.refusals)) return human(answer);
  const refusals = answer.refusals.filter(isRow);
  if (refusals.length === 0) return '(none since the gateway started)';
  return refusals
    .map((r) => `${cell(r.at)}  ${r.systemUser === null ? '(no SystemUser)' : cell(r.systemUser)}  ${cell(r.operation)}  ${cell(r.answer)}  from ${cell(r.address)}\n    ${cell(r.reason, 500)}`)
    .join('\n');
}
