import { installTools } from './debian-tools.js';

/**
 * What reads the event topic the way another team would (test/event-protobuf-*.scale-out.test.ts):
 * Debian's protoc, and a venv with Python's protobuf and kafka-python at the versions of
 * scripts/services/python-requirements.txt.
 */
export default function setup(): void {
  installTools('protoc', 'python');
}
