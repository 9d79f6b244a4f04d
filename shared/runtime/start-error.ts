/**
 * A start that cannot go on for a reason the operator can fix: what failed, the setting to look
 * at, and what to do, in one sentence. runProcess (process.ts) logs it as one line and exits 1;
 * the error it came from (its `cause`) is logged only at LOG_LEVEL=debug.
 */
export class StartError extends Error {
  constructor(
    /** The environment variable to change (PORT, DATA_DIR, …). */
    readonly setting: string,
    /** What failed, then what to do: "PORT 8080 is in use …: stop it, or set PORT to a free port". */
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StartError';
  }
}

/** Which settings name a listener: the port's and the bind address's. */
export interface ListenerSettings {
  port: string;
  host: string;
}

/**
 * A listener that could not bind, as a StartError naming the setting to change; null for an
 * error that is not about binding (passed on as it is).
 */
export function listenFailure(err: unknown, settings: ListenerSettings, host: string, port: number): StartError | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new StartError(
        settings.port,
        `${settings.port} ${port} is already in use (${where}; another gateway, or another program): stop it, or set ${settings.port} to a free port`,
        { cause: err },
      );
    case 'EACCES':
      return new StartError(settings.port, `${settings.port} ${port} needs privileges this process does not have: set ${settings.port} above 1023`, { cause: err });
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new StartError(settings.host, `${settings.host} ${host} is not an address of this machine: set ${settings.host} to one of its addresses (0.0.0.0: all of them)`, {
        cause: err,
      });
    default:
      return null;
  }
}
