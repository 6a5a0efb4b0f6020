import { describe, expect, it } from 'vitest';
import { formatLogRecord, textLogLines } from './log-format.js';

describe('formatLogRecord', () => {
  it('writes time, level, message and the fields', () => {
    const line = JSON.stringify({
      level: 40,
      time: '2026-11-24T07:03:42.932Z',
      workload: 'fetch',
      err: 'no answer within 1000 ms',
      attempt: 2,
      msg: 'webhook failed',
    });
    expect(formatLogRecord(line)).toBe(
      '2026-11-24 07:03:42.932Z WARN  webhook failed workload=fetch err="no answer within 1000 ms" attempt=2',
    );
  });

  it('keeps lines that are not JSON records as they are', () => {
    for (const line of ['plain text', '[1,2]', '"x"', '{broken']) expect(formatLogRecord(line)).toBe(line);
  });
});

describe('textLogLines', () => {
  it('formats records split across chunks, and a last line without its newline', async () => {
    const out = textLogLines();
    let text = '';
    out.on('data', (d: Buffer) => (text += String(d)));
    const a = JSON.stringify({ level: 30, time: 't1', msg: 'one' });
    const b = JSON.stringify({ level: 50, time: 't2', msg: 'two', code: 1 });
    out.write(a.slice(0, 10));
    out.write(`${a.slice(10)}\n${b.slice(0, 5)}`);
    out.end(b.slice(5));
    await new Promise((resolve) => out.on('end', resolve));
    expect(text).toBe('t1 INFO  one\nt2 ERROR two code=1\n');
  });
});
