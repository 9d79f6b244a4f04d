/**
 * A thin HTTP client of the admin API (used by the operators' CLI). Only `fetch`: no server code.
 */

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
    super(`Cannot reach the admin API at ${url} (${reason}). Is the gateway running, and are --url / ADMIN_URL right?`);
    this.name = 'AdminUnreachableError';
  }
}

export interface AdminClientOptions {
  baseUrl: string;
  /** Needed by every route but /healthz and /readyz. */
  token: string | null;
  timeoutMs?: number;
}

export type AdminResponse = { status: number; body: unknown };

const seg = (value: string): string => encodeURIComponent(value);

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

  constructor(private readonly options: AdminClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** Sends one request; throws AdminApiError for 4xx/5xx (except `okStatuses`), AdminUnreachableError when down. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    { auth = true, okStatuses = [] as number[] } = {},
  ): Promise<AdminResponse> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (auth) {
      if (this.options.token === null) {
        throw new Error('No admin token: pass --token, set ADMIN_TOKEN, or run where DATA_DIR/admin-token is readable.');
      }
      headers.Authorization = `Bearer ${this.options.token}`;
    }
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new AdminUnreachableError(this.baseUrl, reasonOf(err));
    }
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

  listVehicles(systemUser: string): Promise<unknown> {
    return this.json('GET', `/admin/providers/${seg(systemUser)}/trip/vehicles`);
  }

  events(filter: { provider?: string; dominio?: string; limit?: number }): Promise<unknown> {
    const q = new URLSearchParams();
    if (filter.provider !== undefined) q.set('provider', filter.provider);
    if (filter.dominio !== undefined) q.set('dominio', filter.dominio);
    if (filter.limit !== undefined) q.set('limit', String(filter.limit));
    const qs = q.toString();
    return this.json('GET', `/admin/events${qs === '' ? '' : `?${qs}`}`);
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
