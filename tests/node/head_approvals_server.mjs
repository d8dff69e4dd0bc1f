// HumanLayer HEAD's approvals MCP server (`hlyr mcp claude_approvals`, hlyr/src/mcp.ts and
// daemonClient.ts at HEAD; hld-anchor.md §4.6), without its packages, for the e2e tests: an
// MCP server on stdio offering `request_permission`; each call connects to the daemon at
// HUMANLAYER_DAEMON_SOCKET, sends `createApproval` with HUMANLAYER_SESSION_ID in `run_id`
// and the call's `tool_use_id`, polls `getApproval` every second until it is decided, and
// answers allow or deny as HEAD does. A daemon error becomes the MCP error HEAD raises.
//
//   node head_approvals_server.mjs   (started by Claude from the session's MCP config)

import net from 'node:net';
import readline from 'node:readline';

const INTERNAL_ERROR = -32603;
const INVALID_REQUEST = -32600;

function reply(id, result) {
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\n');
}

function fail(id, code, message) {
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }) + '\n');
}

// HEAD's DaemonClient: newline-delimited JSON-RPC over the daemon's Unix socket; an error
// reply is thrown with its message.
class DaemonClient {
  constructor(socketPath) {
    this.socketPath = socketPath;
    this.nextId = 1;
    this.waiting = new Map();
  }

  connect() {
    return new Promise((resolve, reject) => {
      this.socket = net.createConnection(this.socketPath, resolve);
      this.socket.on('error', reject);
      readline.createInterface({ input: this.socket }).on('line', (line) => {
        const message = JSON.parse(line);
        const pending = this.waiting.get(message.id);
        if (!pending) return;
        this.waiting.delete(message.id);
        if (message.error) pending.reject(new Error(message.error.message));
        else pending.resolve(message.result);
      });
    });
  }

  call(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.write(JSON.stringify({ jsonrpc: '2.0', method, params, id }) + '\n');
    });
  }

  createApproval(runId, toolName, toolInput, toolUseId) {
    return this.call('createApproval', {
      run_id: runId,
      tool_name: toolName,
      tool_input: toolInput,
      tool_use_id: toolUseId,
    });
  }

  async getApproval(approvalId) {
    return (await this.call('getApproval', { approval_id: approvalId })).approval;
  }

  close() {
    this.socket?.end();
  }
}

async function requestPermission(id, args) {
  const toolName = args?.tool_name;
  if (!toolName) {
    fail(id, INVALID_REQUEST, 'Invalid tool name requesting permissions');
    return;
  }
  const input = args?.input || {};
  const sessionId = process.env.HUMANLAYER_SESSION_ID;
  if (!sessionId) {
    fail(id, INTERNAL_ERROR, 'HUMANLAYER_SESSION_ID not set');
    return;
  }
  const daemon = new DaemonClient(process.env.HUMANLAYER_DAEMON_SOCKET);
  try {
    await daemon.connect();
    const created = await daemon.createApproval(sessionId, toolName, input, args?.tool_use_id);
    let approval = await daemon.getApproval(created.approval_id);
    while (approval.status === 'pending') {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      approval = await daemon.getApproval(created.approval_id);
    }
    const text =
      approval.status === 'approved'
        ? { behavior: 'allow', updatedInput: input }
        : { behavior: 'deny', message: approval.comment || 'Request denied by human reviewer' };
    reply(id, { content: [{ type: 'text', text: JSON.stringify(text) }] });
  } catch (error) {
    fail(id, INTERNAL_ERROR, `Failed to process approval: ${error.message}`);
  } finally {
    daemon.close();
  }
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  switch (message.method) {
    case 'initialize':
      reply(message.id, {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'humanlayer-claude-local-approvals', version: '1.0.0' },
      });
      break;
    case 'tools/list':
      reply(message.id, {
        tools: [
          {
            name: 'request_permission',
            description: 'Request permission to perform an action',
            inputSchema: {
              type: 'object',
              properties: {
                tool_name: { type: 'string' },
                input: { type: 'object' },
                tool_use_id: { type: 'string' },
              },
              required: ['tool_name', 'input', 'tool_use_id'],
            },
          },
        ],
      });
      break;
    case 'tools/call':
      if (message.params.name === 'request_permission') {
        requestPermission(message.id, message.params.arguments);
      } else {
        fail(message.id, INVALID_REQUEST, 'Invalid tool name');
      }
      break;
    default:
      // Notifications need no answer; other requests are not offered.
      if (message.id !== undefined) fail(message.id, -32601, 'Method not found');
  }
});
