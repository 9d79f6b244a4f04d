/** /metrics on the admin port counts requests by operation, binding and status, and event results. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';

describe('metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  const scrape = async (): Promise<string> => {
    const res = await fetch(`${t.app.admin.url}/metrics`, { headers: { Authorization: `Bearer ${t.app.adminToken}` } });
    expect(res.status).toBe(200);
    return res.text();
  };
  const value = (text: string, series: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  };

  it('counts each answered request and each event result', async () => {
    await t.soap11('Login', xmlParams(credentials()));
    await t.soap12('Login', xmlParams(credentials('acme', 'bad')));
    await t.get('Login', credentials());
    await t.post('LoginYInsertarEvento', { ...credentials(), ...event() });
    await t.post('LoginYInsertarEvento', { ...credentials(), ...event({ FechaHoraEvento: 'x' }) });
    await t.request('POST', '/service.asmx', '<broken', { 'Content-Type': 'text/xml' });
    await t.request('GET', '/service.asmx?wsdl');

    const text = await scrape();
    expect(value(text, 'gateway_requests_total{operation="Login",binding="soap11",status="200"}')).toBe(1);
    expect(value(text, 'gateway_requests_total{operation="Login",binding="soap12",status="200"}')).toBe(1);
    expect(value(text, 'gateway_requests_total{operation="Login",binding="get",status="200"}')).toBe(1);
    expect(value(text, 'gateway_requests_total{operation="LoginYInsertarEvento",binding="post",status="200"}')).toBe(2);
    expect(value(text, 'gateway_requests_total{operation="-",binding="soap11",status="400"}')).toBe(1);
    expect(value(text, 'gateway_requests_total{operation="-",binding="metadata",status="200"}')).toBe(1);
    expect(value(text, 'gateway_event_results_total{operation="LoginYInsertarEvento",result="id"}')).toBe(1);
    expect(value(text, 'gateway_event_results_total{operation="LoginYInsertarEvento",result="-3"}')).toBe(1);
    expect(value(text, 'gateway_request_duration_seconds_count{binding="post",operation="LoginYInsertarEvento"}')).toBe(2);
    expect(value(text, 'gateway_event_publish_seconds_count')).toBe(1);
    expect(text).toContain('process_resident_memory_bytes');
    expect(text).not.toContain('secret-1');
  });

  it('counts every event of a batch, ids and refusals apart', async () => {
    const before = await scrape();
    const items = [event({ Codigo: 'm1' }), event({ Codigo: 'm2' }), event({ FechaHoraEvento: 'x' }), event({ Codigo: 'm3' }), event({ Latitud: 'abc' })];
    const reply = await t.soap11('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos>${items.map((e) => `<pEvento>${xmlParams(e)}</pEvento>`).join('')}</Eventos>`);
    expect(reply.status).toBe(200);
    const after = await scrape();
    const delta = (series: string): number => value(after, series) - value(before, series);
    expect(delta('gateway_event_results_total{operation="LoginYInsertarEventos",result="id"}')).toBe(3);
    expect(delta('gateway_event_results_total{operation="LoginYInsertarEventos",result="-3"}')).toBe(2);
    // The embedded log's commits are sized too: this batch's three stored events in one group.
    expect(delta('gateway_event_publish_batch_size_count')).toBe(1);
    expect(delta('gateway_event_publish_batch_size_sum')).toBe(3);
  });

  it('requires the admin token', async () => {
    const res = await fetch(`${t.app.admin.url}/metrics`);
    expect(res.status).toBe(401);
  });
});
