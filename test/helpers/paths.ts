import path from 'node:path';

/** The repository's root, whatever folder a test file sits in. */
export const REPO = path.resolve(import.meta.dirname, '..', '..');

/** test/fixtures/: captured, .NET-generated and snapshot bytes (each folder's README says which). */
export const FIXTURES = path.join(REPO, 'test', 'fixtures');
