/**
 * Opens N live event streams on an admin port and reads (and drops) what they carry, in its own
 * process so their reading does not share the bench's event loop. Prints one JSON line when all
 * have answered ({"open", "refused"}), and one when told to stop (SIGTERM): how many were still
 * open, and how many the server cut.
 * Run: tsx bench/lib/stream-readers.ts <admin url> <token> <count>
 */
import net from 'node:net';

const [adminUrl = '', token = '', countText = '0'] = process.argv.slice(2);
const count = Number(countText);
const url = new URL(adminUrl);
let open = 0;
let refused = 0;
let cut = 0;
let answered = 0;
let bytes = 0;
const sockets: net.Socket[] = [];

function report(): void {
  if (answered === count) process.stdout.write(`${JSON.stringify({ open, refused })}\n`);
}

for (let i = 0; i < count; i++) {
  const socket = net.connect(Number(url.port), url.hostname);
  sockets.push(socket);
  let head = true;
  let ok = false;
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (!head) return;
    head = false;
    answered++;
    ok = chunk.subarray(0, 12).toString('latin1') === 'HTTP/1.1 200';
    if (ok) open++;
    else refused++;
    report();
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    if (ok) {
      open--;
      cut++;
    }
  });
  socket.write(`GET /admin/events/stream HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer ${token}\r\n\r\n`);
}
if (count === 0) report();

process.on('SIGTERM', () => {
  process.stdout.write(`${JSON.stringify({ stillOpen: open, cut, megabytesRead: Math.round(bytes / 1e6) })}\n`);
  for (const s of sockets) s.destroy();
  process.exit(0);
});
// Stays until told to stop, even with no stream open.
setInterval(() => undefined, 60_000);
