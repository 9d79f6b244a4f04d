/**
 * The call core both bindings share (gateway/bindings/core.ts), with a codec of this test: what it
 * hands the service, what it answers for each outcome, and that it never leaves a call unanswered.
 * The bindings' own answers are proven end to end by golden, asmx-fidelity and wire-variations.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { BindingCore, INTERNAL_ERROR, type BindingCodec } from '../../../../gateway/bindings/core.js';
import type { Exchange } from '../../../../gateway/transport/exchange.js';
import { ClientError, clientText } from '../../../../gateway/errors/registry.js';
import type { CallContext } from '../../../../gateway/service/context.js';
import type { OperationService } from '../../../../gateway/service/service.js';
import { findOperation, type ArgumentBag, type OperationDef } from '../../../../shared/catalogue/index.js';
import { loadConfig } from '../../../../shared/config/index.js';

const LOGIN = findOperation('Login')!;
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

interface Sent {
  status: string;
  contentType: string | null;
  body: string;
  headers: readonly [string, string][] | undefined;
}

/** The part of an Exchange the core touches. */
function exchange(cookie = ''): { ex: Exchange; sent: Sent[]; answered: Promise<Sent> } {
  const sent: Sent[] = [];
  let resolve: (s: Sent) => void = () => undefined;
  const answered = new Promise<Sent>((r) => (resolve = r));
  const fake = {
    operation: '-',
    header: (name: string) => (name === 'cookie' ? cookie : ''),
    clientAddress: () => '203.0.113.9',
    send(status: string, contentType: string | null, body: string, headers?: readonly [string, string][]) {
      const s = { status, contentType, body, headers };
      sent.push(s);
      resolve(s);
    },
  };
  return { ex: fake as unknown as Exchange, sent, answered };
}

/** Frame: a tag the answers carry, to show it reaches every one of them. */
class TestCodec implements BindingCodec<string, Record<string, string>, { op: string }> {
  readonly name = 'TEST';
  writersBuilt = 0;
  encodeFails = false;

  decode(op: OperationDef, input: Record<string, string>): { args: ArgumentBag; extras: ReadonlyMap<string, string> } {
    if (input.bad !== undefined) throw new RangeError(`bad ${input.bad}`);
    if (input.boom !== undefined) throw new Error('decoder bug');
    return { args: { SystemUser: input.SystemUser ?? '' }, extras: new Map([['Rumbo', '90']]) };
  }

  refuse(ex: Exchange, frame: string, err: unknown): boolean {
    if (!(err instanceof RangeError)) return false;
    ex.send('400 Refused', null, `${frame}:${err.message}`);
    return true;
  }

  writer(op: OperationDef): { op: string } {
    this.writersBuilt++;
    return { op: op.name };
  }

  contentType(frame: string): string {
    return `test/${frame}`;
  }

  encode(writer: { op: string }, frame: string, result: unknown): string {
    if (this.encodeFails) throw new Error('writer bug');
    return `${frame}:${writer.op}=${JSON.stringify(result)}`;
  }

  fault(ex: Exchange, frame: string, error: ClientError): void {
    ex.send('500 Fault', null, `${frame}:${error.fault}:${error.message}`);
  }
}

function setup(invoke: (op: OperationDef, args: ArgumentBag, ctx: CallContext) => Promise<unknown>) {
  const codec = new TestCodec();
  const logs: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void logs.push(line) });
  // BindingCore calls `start`, the callback form of `invoke`.
  const service = {
    start: (op: OperationDef, args: ArgumentBag, ctx: CallContext, done: (r: unknown) => void, failed: (e: unknown) => void) => void invoke(op, args, ctx).then(done, failed),
  } as unknown as OperationService;
  const config = loadConfig({ SESSION_COOKIE_NAME: 'SID' });
  const core = new BindingCore(codec, { service, config, logger, clock: () => NOW, cookieHeader: (id) => `SID=${id}; path=/`, rejected: () => undefined });
  return { core, codec, logs };
}

describe('BindingCore', () => {
  it('hands the service the decoded arguments and a context (clock, session cookie, extras, client address)', async () => {
    let seen: { args: ArgumentBag; ctx: CallContext } | null = null;
    const { core } = setup(async (_op, args, ctx) => {
      seen = { args, ctx };
      return true;
    });
    const { ex, answered } = exchange('a=1; SID=abc');
    core.call(ex, 'v1', LOGIN, { SystemUser: 'acme' });
    const answer = await answered;
    expect(answer).toEqual({ status: '200 OK', contentType: 'test/v1', body: 'v1:Login=true', headers: undefined });
    expect(ex.operation).toBe('Login');
    const { args, ctx } = seen!;
    expect(args).toEqual({ SystemUser: 'acme' });
    expect(ctx.operation).toBe('Login');
    expect(ctx.now).toBe(NOW);
    expect(ctx.sessionId).toBe('abc');
    expect([...ctx.extras]).toEqual([['Rumbo', '90']]);
    expect(ctx.clientAddress()).toBe('203.0.113.9');
  });

  it('sends the session cookie a Login set', async () => {
    const { core } = setup(async (_op, _args, ctx) => {
      ctx.newSessionId = 'new-session';
      return true;
    });
    const { ex, answered } = exchange();
    core.call(ex, 'v1', LOGIN, {});
    expect((await answered).headers).toEqual([['Set-Cookie', 'SID=new-session; path=/']]);
  });

  it('builds one result writer per operation and reuses it', async () => {
    const { core, codec } = setup(async () => 1);
    for (let i = 0; i < 3; i++) {
      const { ex, answered } = exchange();
      core.call(ex, 'v1', LOGIN, {});
      await answered;
    }
    expect(codec.writersBuilt).toBe(1);
  });

  it("a ClientError the service throws becomes the codec's fault with the registry's code and text", async () => {
    const { core, logs } = setup(async () => {
      throw ClientError.of('noSession');
    });
    const { ex, answered } = exchange();
    core.call(ex, 'v2', LOGIN, {});
    expect((await answered).body).toBe(`v2:Client:${clientText('noSession')}`);
    expect(logs).toEqual([]);
  });

  it('any other failure of the service is logged and answered with the Server fault, never its text', async () => {
    const { core, logs } = setup(async () => {
      throw new Error('secret internals');
    });
    const { ex, answered } = exchange();
    core.call(ex, 'v1', LOGIN, {});
    expect((await answered).body).toBe(`v1:Server:${INTERNAL_ERROR.message}`);
    expect(logs.join('')).toContain('TEST request failed');
    expect(logs.join('')).toContain('secret internals');
  });

  it('a result that cannot be written is answered with the Server fault too', async () => {
    const { core, codec, logs } = setup(async () => 1);
    codec.encodeFails = true;
    const { ex, answered } = exchange();
    core.call(ex, 'v1', LOGIN, {});
    expect((await answered).body).toBe(`v1:Server:${INTERNAL_ERROR.message}`);
    expect(logs.join('')).toContain('writer bug');
  });

  it("the client's undecodable input is refused by the codec and never reaches the service", () => {
    let invoked = false;
    const { core } = setup(async () => {
      invoked = true;
      return 1;
    });
    const { ex, sent } = exchange();
    core.call(ex, 'v1', LOGIN, { bad: 'Codigo' });
    expect(sent).toEqual([{ status: '400 Refused', contentType: null, body: 'v1:bad Codigo', headers: undefined }]);
    expect(invoked).toBe(false);
  });

  it('a decoder failure of ours is the Server fault, logged', () => {
    const { core, logs } = setup(async () => 1);
    const { ex, sent } = exchange();
    core.call(ex, 'v1', LOGIN, { boom: '1' });
    expect(sent.map((s) => s.body)).toEqual([`v1:Server:${INTERNAL_ERROR.message}`]);
    expect(logs.join('')).toContain('decoder bug');
  });

  it('413 names the body limit', () => {
    const { core } = setup(async () => 1);
    const { ex, sent } = exchange();
    core.tooLarge(ex);
    expect(sent).toEqual([
      { status: '413 Payload Too Large', contentType: 'text/plain; charset=utf-8', body: 'Request body exceeds the limit of 1048576 bytes.\r\n', headers: undefined },
    ]);
  });
});
