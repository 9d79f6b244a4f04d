/**
 * EVENT_WIRE_VERSION: version 3 (protobuf) unless set; 1, 2 and 3 accepted (a deployment keeps 2
 * while its workers are upgraded, and sets it again to roll back); anything else refused at start
 * with the values it takes.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../shared/config/index.js';

describe('EVENT_WIRE_VERSION', () => {
  it('is 3 unless set, and takes 1, 2 and 3', () => {
    expect(loadConfig({}).kafka.wireVersion).toBe(3);
    for (const v of [1, 2, 3] as const) expect(loadConfig({ EVENT_WIRE_VERSION: String(v) }).kafka.wireVersion).toBe(v);
  });

  it('refuses any other value, naming the ones it takes', () => {
    for (const bad of ['4', '0', 'protobuf', '3.0']) {
      expect(() => loadConfig({ EVENT_WIRE_VERSION: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ EVENT_WIRE_VERSION: bad }), bad).toThrow(`EVENT_WIRE_VERSION must be 1, 2 or 3, got "${bad}".`);
    }
  });
});
