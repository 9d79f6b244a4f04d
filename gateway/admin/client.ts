/**
 * A thin HTTP client of the admin API (used by the operators' CLI). Only `fetch`: no server code.
 */
import { createParser } from 'eventsource-parser';
import { Agent, fetch, type Response } from 'undici';

/** The API answered with an error status; `message` is the API's own error text. */
export class AdminApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'AdminApiError';
  }
}

/** The API could not be reached at all (refused, DNS, timeout). */
export class AdminUnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(
      /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(reason)
        ? `Cannot reach the admin API at ${url}: its certificate is not trusted (${reason}). Pass the CA that signed it with --ca or ADMIN_CA_FILE.`
        : `Cannot reach the admin API at ${url} (${reason}). Is the gateway running, and are --url / ADMIN_URL right?`,
    );
    this.name = 'AdminUnreachableError';
  }
}

interface AdminClientOptions {
  baseUrl: string;
  /** Needed by every route but /healthz and /readyz. */
  token: string | null;
  timeoutMs?: number;
  /** PEM of the CA that signed an https:// admin API's certificate (else the system's). */
  ca?: string;
}

type AdminResponse = { status: number; body: unknown };

const seg = (value: string): string => encodeURIComponent(value);

/** `?a=1&b=2` from the defined values, or '' when there are none. */
function queryOf(values: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined) q.set(k, String(v));
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

export interface ImportResult {
  line: number;
  outcome: 'created' | 'updated' | 'unchanged' | 'failed';
  reason?: string;
}

/**
 * Whether fetch failed on the way to the server (refused, DNS, TLS, timeout, reset) rather than on
 * the request it was given: undici says "fetch failed" with the network error as the cause.
 */
function isNetworkFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return err.name === 'TimeoutError' || err.name === 'AbortError' || (err instanceof TypeError && err.message === 'fetch failed');
}

function reasonOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
  const cause: unknown = (err as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code ?? cause.message;
  }
  return err.message;
}

export class AdminClient {
  private readonly baseUrl: string;
  /** Trusts `ca` for this client's connections only (undici's fetch: Node's takes no CA). */
  private readonly dispatcher: Agent | undefined;

  constructor(private readonly options: AdminClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.dispatcher = options.ca === undefined ? undefined : new Agent({ connect: { ca: options.ca, minVersion: 'TLSv1.2' } });
  }

  private headers(auth: boolean, accept = 'application/json'): Record<string, string> {
    const headers: Record<string, string> = { Accept: accept };
    if (auth) {
      if (this.options.token === null) {
        throw new Error('No admin token: pass --token, set ADMIN_TOKEN, or run where DATA_DIR/admin-token is readable.');
      }
      headers.Authorization = `Bearer ${this.options.token}`;
    }
    return headers;
  }

  /** Sends one request; throws AdminApiError for 4xx/5xx (except `okStatuses`), AdminUnreachableError when down. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    { auth = true, okStatuses = [] as number[], timeoutMs = this.options.timeoutMs ?? 30_000 } = {},
  ): Promise<AdminResponse> {
    const headers = this.headers(auth);
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        dispatcher: this.dispatcher,
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      if (!isNetworkFailure(err)) throw new Error(`The request to the admin API could not be made: ${reasonOf(err)}`, { cause: err });
      throw new AdminUnreachableError(this.baseUrl, reasonOf(err));
    }
    return this.answer(res, okStatuses);
  }

  private async answer(res: Response, okStatuses: readonly number[] = []): Promise<AdminResponse> {
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (res.status >= 400 && !okStatuses.includes(res.status)) {
      const apiMessage =
        parsed !== null && typeof parsed === 'object' && typeof (parsed as { error?: unknown }).error === 'string'
          ? (parsed as { error: string }).error
          : text.trim() || res.statusText;
      throw new AdminApiError(res.status, apiMessage, parsed);
    }
    return { status: res.status, body: parsed };
  }

  private async json(method: string, path: string, body?: unknown): Promise<unknown> {
    return (await this.request(method, path, body)).body;
  }

  createProvider(input: {
    systemUser: string;
    password: string;
    timeZone?: string;
    requireRegisteredVehicles?: boolean;
  }): Promise<unknown> {
    return this.json('POST', '/admin/providers', input);
  }

  listProviders(): Promise<unknown> {
    return this.json('GET', '/admin/providers');
  }

  getProvider(systemUser: string): Promise<unknown> {
    return this.json('GET', `/admin/providers/${seg(systemUser)}`);
  }

  updateProvider(
    systemUser: string,
    patch: { password?: string; enabled?: boolean; timeZone?: string | null; requireRegisteredVehicles?: boolean },
  ): Promise<unknown> {
    return this.json('PATCH', `/admin/providers/${seg(systemUser)}`, patch);
  }

  queueCommand(systemUser: string, command: { cmd: string; unidad: string; equipo: string }): Promise<unknown> {
    return this.json('POST', `/admin/providers/${seg(systemUser)}/commands`, command);
  }

  listCommands(systemUser: string): Promise<unknown> {
    return this.json('GET', `/admin/providers/${seg(systemUser)}/commands`);
  }

  addVehicle(systemUser: string, dominio: string, nroSerie: string): Promise<unknown> {
    return this.json('PUT', `/admin/providers/${seg(systemUser)}/trip/vehicles/${seg(dominio)}`, { nroSerie });
  }

  async removeVehicle(systemUser: string, dominio: string): Promise<void> {
    await this.request('DELETE', `/admin/providers/${seg(systemUser)}/trip/vehicles/${seg(dominio)}`);
  }

  listVehicles(systemUser: string, page: { limit?: number | undefined; after?: string | undefined } = {}): Promise<unknown> {
    return this.json('GET', `/admin/providers/${seg(systemUser)}/trip/vehicles${queryOf(page)}`);
  }

  async deleteProvider(systemUser: string, confirm: string): Promise<unknown> {
    return this.json('DELETE', `/admin/providers/${seg(systemUser)}${queryOf({ confirm })}`);
  }

  cancelCommand(systemUser: string, numero: number): Promise<unknown> {
    return this.json('POST', `/admin/providers/${seg(systemUser)}/commands/${numero}/cancel`);
  }

  commandsPage(filter: { provider?: string; state?: string; limit?: number; beforeNumero?: number }): Promise<unknown> {
    return this.json('GET', `/admin/commands${queryOf(filter)}`);
  }

  lockouts(): Promise<unknown> {
    return this.json('GET', '/admin/lockouts');
  }

  async liftLockouts(systemUser: string): Promise<void> {
    await this.request('DELETE', `/admin/providers/${seg(systemUser)}/lockouts`);
  }

  events(filter: { provider?: string; dominio?: string; limit?: number; beforeId?: string }): Promise<unknown> {
    return this.json('GET', `/admin/events${queryOf(filter)}`);
  }

  /**
   * Follows GET /admin/events/stream: calls `onEvent` with each event's JSON until `signal` aborts
   * (resolves) or the server ends the stream (rejects, so the caller can say so).
   */
  /** `onSkipped`: how many events the server left out of the stream (its rate cap, ADMIN_STREAM_EVENTS_PER_SECOND). */
  async followEvents(
    filter: { provider?: string; dominio?: string },
    onEvent: (event: unknown) => void,
    signal: AbortSignal,
    onSkipped?: (events: number) => void,
  ): Promise<void> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}/admin/events/stream${queryOf(filter)}`, { dispatcher: this.dispatcher, headers: this.headers(true, 'text/event-stream'), signal });
    } catch (err) {
      if (signal.aborted) return;
      if (!isNetworkFailure(err)) throw new Error(`The request to the admin API could not be made: ${reasonOf(err)}`, { cause: err });
      throw new AdminUnreachableError(this.baseUrl, reasonOf(err));
    }
    if (res.status !== 200 || res.body === null) {
      await this.answer(res);
      throw new AdminApiError(res.status, `Unexpected answer ${res.status} to the event stream.`, null);
    }
    const parser = createParser({
      onEvent: (message) => {
        if (message.event === 'event') onEvent(JSON.parse(message.data) as unknown);
        else if (message.event === 'skipped') onSkipped?.((JSON.parse(message.data) as { events: number }).events);
      },
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch (err) {
      if (signal.aborted) return;
      throw new AdminUnreachableError(this.baseUrl, reasonOf(err));
    }
    if (!signal.aborted) throw new AdminUnreachableError(this.baseUrl, 'the server ended the event stream');
  }

  poison(limit?: number): Promise<unknown> {
    return this.json('GET', `/admin/poison${queryOf({ limit })}`);
  }

  redrivePoison(id: string): Promise<unknown> {
    return this.json('POST', `/admin/poison/${seg(id)}/redrive`);
  }

  async discardPoison(id: string): Promise<void> {
    await this.request('DELETE', `/admin/poison/${seg(id)}`);
  }

  overview(): Promise<unknown> {
    return this.json('GET', '/admin/overview');
  }

  refusals(filter: { provider?: string; limit?: number }): Promise<unknown> {
    return this.json('GET', `/admin/refusals${queryOf(filter)}`);
  }

  whoami(): Promise<unknown> {
    return this.json('GET', '/admin/whoami');
  }

  listTokens(): Promise<unknown> {
    return this.json('GET', '/admin/tokens');
  }

  /** The answer holds the new token: the only time it is ever shown. */
  createToken(input: { name: string; role: string; expiresAt?: string }): Promise<unknown> {
    return this.json('POST', '/admin/tokens', input);
  }

  async revokeToken(name: string): Promise<void> {
    await this.request('DELETE', `/admin/tokens/${seg(name)}`);
  }

  audit(query: { since?: string; identity?: string; target?: string; limit?: number; before?: number }): Promise<unknown> {
    return this.json('GET', `/admin/audit${queryOf(query)}`);
  }

  /** One bulk call; password hashing makes provider chunks slow, hence the long timeout. */
  async importChunk(kind: 'providers' | 'trips', lines: readonly Record<string, unknown>[]): Promise<ImportResult[]> {
    const { body } = await this.request('POST', `/admin/import/${kind}`, { [kind]: lines }, { timeoutMs: 600_000 });
    const results = (body as { results?: unknown }).results;
    if (!Array.isArray(results)) throw new Error(`The import answer has no results: ${JSON.stringify(body).slice(0, 200)}`);
    return results as ImportResult[];
  }

  /** Liveness and readiness; never throws for a 503 from /readyz. */
  async health(): Promise<{ alive: boolean; ready: boolean; readiness: unknown }> {
    const live = await this.request('GET', '/healthz', undefined, { auth: false });
    const ready = await this.request('GET', '/readyz', undefined, { auth: false, okStatuses: [503] });
    return { alive: live.status === 200, ready: ready.status === 200, readiness: ready.body };
  }

  async metrics(): Promise<string> {
    const { body } = await this.request('GET', '/metrics');
    return typeof body === 'string' ? body : JSON.stringify(body);
  }
}
