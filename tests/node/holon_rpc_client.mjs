// A browser-style holon-rpc client (spec/002) on Node's `ws` package, for the e2e tests:
// the handshake a browser page makes (the page's Origin, the token in the query, the
// `holon-rpc` subprotocol), then requests, a heartbeat, a subscription and one event
// answered as a server request. Every message is checked as HolonClient checks it; a
// violation ends the run with `closed` set. Prints one JSON report on stdout.
//
//   WS_PACKAGE_DIR=<dir holding node_modules/ws> node holon_rpc_client.mjs URL ORIGIN WORKING_DIR

import { createRequire } from 'node:module';

const require = createRequire(`${process.env.WS_PACKAGE_DIR}/`);
const WebSocket = require('ws');

const [url, origin, workingDir] = process.argv.slice(2);
const report = { closed: null };
const done = () => {
  console.log(JSON.stringify(report));
  process.exit(0);
};
setTimeout(() => {
  report.closed = report.closed ?? 'timed out';
  done();
}, 20000);

const ws = new WebSocket(url, 'holon-rpc', { origin });

ws.on('unexpected-response', (_request, response) => {
  let body = '';
  response.on('data', (chunk) => (body += chunk));
  response.on('end', () => {
    report.refused = { status: response.statusCode, body };
    done();
  });
});
ws.on('error', (error) => {
  report.closed = report.closed ?? `error: ${error.message}`;
  if (!report.refused) done();
});

// HolonClient's inbound checks: only the six members, jsonrpc "2.0", a non-empty string id,
// not both result and error, an integer error code.
const ALLOWED = new Set(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);
function violation(message) {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return 'not an object';
  for (const key of Object.keys(message)) if (!ALLOWED.has(key)) return `member ${key}`;
  if (message.jsonrpc !== '2.0') return 'jsonrpc';
  if (typeof message.id !== 'string' || message.id === '') return 'id';
  if ('result' in message && 'error' in message) return 'result and error';
  if ('error' in message && !Number.isInteger(message.error?.code)) return 'error code';
  if ('method' in message && !message.id.startsWith('s')) return 'server request id';
  return null;
}

const pending = new Map();
let last = 0;
function call(method, params, id = String(++last)) {
  return new Promise((resolve) => {
    pending.set(id, resolve);
    ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  });
}
let onEvent = null;

ws.on('message', (data, isBinary) => {
  let message;
  try {
    message = JSON.parse(data.toString());
  } catch {
    message = undefined;
  }
  const problem = isBinary ? 'binary' : violation(message);
  if (problem) {
    report.closed = `malformed message (${problem}): ${data}`;
    ws.close(1002);
    done();
    return;
  }
  if ('method' in message) {
    // A server request: answered at once, as HolonClient answers with its handler's result.
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }));
    if (message.method === 'event' && onEvent) onEvent(message);
    return;
  }
  const resolve = pending.get(message.id);
  pending.delete(message.id);
  if (resolve) resolve(message);
});

ws.on('open', async () => {
  report.protocol = ws.protocol;
  report.health = (await call('health', {})).result;
  report.heartbeat = (await call('rpc.heartbeat', {}, 'h1')).result;
  report.unknown = (await call('nope', {})).error;
  const event = new Promise((resolve) => (onEvent = resolve));
  await call('Subscribe', { event_types: ['session_status_changed'] });
  await call('launchSession', { query: 'hello', working_dir: workingDir });
  report.event = await event;
  ws.close(1000);
  done();
});
