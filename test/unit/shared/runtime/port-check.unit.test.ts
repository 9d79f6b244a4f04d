import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ensurePortFree, LISTENERS } from '../../../../shared/runtime/port-check.js';
import { listenFailure, StartError } from '../../../../shared/runtime/start-error.js';

async function listening(): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as net.AddressInfo).port };
}

describe('ensurePortFree', () => {
  it('refuses a port another listener holds, naming the setting and what to do', async () => {
    const { server, port } = await listening();
    try {
      const err = await ensurePortFree('127.0.0.1', port, LISTENERS.admin).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StartError);
      expect((err as StartError).setting).toBe('ADMIN_PORT');
      expect((err as StartError).message).toBe(`ADMIN_PORT ${port} is already in use (127.0.0.1:${port}; another gateway, or another program): stop it, or set ADMIN_PORT to a free port`);
    } finally {
      server.close();
    }
  });

  it('lets a free port be, and leaves it free for the listener that follows', async () => {
    const { server, port } = await listening();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await ensurePortFree('127.0.0.1', port, LISTENERS.service);
    const again = net.createServer();
    await new Promise<void>((resolve) => again.listen(port, '127.0.0.1', resolve));
    again.close();
    // Port 0 (a free one, for tests) is nobody's.
    await ensurePortFree('127.0.0.1', 0, LISTENERS.service);
  });
});

describe('listenFailure', () => {
  const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code });
  it('names the host setting for an address that is not this machine\'s, the port setting for privileges; anything else is not about binding', () => {
    expect(listenFailure(errno('EADDRNOTAVAIL'), LISTENERS.service, '10.9.9.9', 8080)?.message).toBe('HOST 10.9.9.9 is not an address of this machine: set HOST to one of its addresses (0.0.0.0: all of them)');
    expect(listenFailure(errno('EACCES'), LISTENERS.plain, '0.0.0.0', 80)).toMatchObject({ setting: 'HTTP_PORT', message: 'HTTP_PORT 80 needs privileges this process does not have: set HTTP_PORT above 1023' });
    expect(listenFailure(errno('EMFILE'), LISTENERS.service, '0.0.0.0', 8080)).toBeNull();
  });
});
