import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** The Kafka ACLs docs/operations.md tells operators to create are the ones the secure profile applies and the tests run on. */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const commands = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('kafka-acls'));

describe('Kafka ACLs', () => {
  const doc = commands(readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8'));
  const applied = commands(readFileSync(path.join(ROOT, 'scripts/services/secure/kafka-acls.txt'), 'utf8'));

  it('docs/operations.md lists exactly the lines scripts/services/secure/kafka-acls.txt applies', () => {
    expect(applied.length).toBeGreaterThanOrEqual(5);
    expect(doc).toEqual(applied);
  });

  it('every name they authorise comes from configuration, and only the gateway and worker principals get rights', () => {
    for (const line of applied) {
      expect(line).toMatch(/--allow-principal User:(gateway|worker) /);
      expect(line).toMatch(/--(topic \$KAFKA_TOPIC|group \$KAFKA_CLIENT_ID|group \$KAFKA_GROUP_ID)\b/);
      expect(line).not.toMatch(/--cluster|--operation (All|Alter|AlterConfigs|ClusterAction)\b/);
    }
    // The worker never writes, creates or deletes.
    for (const line of applied.filter((l) => l.includes('User:worker'))) expect(line).not.toMatch(/--operation (Write|Create|Delete)\b/);
  });
});
