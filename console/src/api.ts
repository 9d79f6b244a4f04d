/**
 * The admin API as the console uses it: every request carries the operator's token in the
 * Authorization header (never in a URL), and every failure becomes an ApiError with the API's
 * own message. Free of DOM globals so it is unit-tested in Node.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The gateway could not be reached (or its answer was cut). */
export class NetworkError extends Error {
  override name = 'NetworkError';
}

export type Query = Record<string, string | number | null | undefined>;

export interface AdminApi {
  get<T>(path: string, query?: Query): Promise<T>;
  send<T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, query?: Query): Promise<T>;
}

export interface AdminApiOptions {
  token: string;
  /** Origin of the admin API; '' = the page's own (the console is served by the admin server). */
  base?: string;
  fetch?: typeof fetch;
  /** Called on every 401, before the request's promise rejects. */
  onUnauthorized?: () => void;
}

/** `/admin/providers/a%2Fb` from ['admin', 'providers', 'a/b']. */
export function apiPath(...segments: string[]): string {
  return `/${segments.map(encodeURIComponent).join('/')}`;
}

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== null && value !== undefined && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: unknown; field?: unknown; requestId?: unknown };
    if (typeof body.error === 'string') {
      return new ApiError(
        res.status,
        body.error,
        typeof body.field === 'string' ? body.field : undefined,
        typeof body.requestId === 'string' ? body.requestId : undefined,
      );
    }
  } catch {
    // Not the API's JSON (a proxy's page, say): fall through to the status line.
  }
  return new ApiError(res.status, text.trim().slice(0, 200) || res.statusText || `HTTP ${res.status}`);
}

export function createAdminApi(options: AdminApiOptions): AdminApi {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const base = options.base ?? '';

  async function call<T>(method: string, path: string, body: unknown, query: Query | undefined): Promise<T> {
    const headers: Record<string, string> = { Authorization: `Bearer ${options.token}`, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await doFetch(`${base}${withQuery(path, query)}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new NetworkError(err instanceof Error ? err.message : String(err));
    }
    if (res.status === 401) options.onUnauthorized?.();
    if (!res.ok) throw await errorOf(res);
    if (res.status === 204) return undefined as T;
    try {
      return (await res.json()) as T;
    } catch (err) {
      throw new NetworkError(`unreadable answer to ${method} ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  return {
    get: (path, query) => call('GET', path, undefined, query),
    send: (method, path, body, query) => call(method, path, body, query),
  };
}
