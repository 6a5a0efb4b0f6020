/** A minimal, fast stdio MCP backend for the benchmark: one JSON-RPC message per line, echo tool. */
import { createInterface } from 'node:readline';
import { answer } from './echo-server.js';

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() === '') return;
  const reply = answer(line);
  if (reply !== undefined) process.stdout.write(`${reply.body}\n`);
});
lines.on('close', () => process.exit(0));
