import { describe, expect, it } from 'vitest';
import { formatEvent, SseParser, withData } from './sse.js';

describe('SseParser', () => {
  it('splits events across chunk boundaries and multi-byte characters, LF or CRLF', () => {
    const parser = new SseParser();
    const bytes = Buffer.from(
      'id: 1\nevent: message\ndata: {"a":"é"}\n\n: comment\n\ndata: x\r\ndata: y\r\n\r\ndata: tail',
    );
    const events = [];
    for (let i = 0; i < bytes.length; i += 3) events.push(...parser.push(bytes.subarray(i, i + 3)));
    expect(events.map((e) => [e.event, e.data])).toEqual([
      ['message', '{"a":"é"}'],
      [undefined, undefined],
      [undefined, 'x\ny'],
    ]);
    expect(events[0]?.raw).toBe('id: 1\nevent: message\ndata: {"a":"é"}\n\n');
    expect(parser.flush()).toMatchObject({ raw: 'data: tail', data: 'tail' });
  });

  it("reads an event's id and a numeric retry hint (where a client resumes, and after how long)", () => {
    const [priming, message, odd] = new SseParser().push(
      'id: s::1\nretry: 500\ndata: \n\nid: s::2\ndata: {}\n\nretry: soon\n\n',
    );
    expect(priming).toMatchObject({ id: 's::1', retry: 500, data: '' });
    expect(message).toMatchObject({ id: 's::2', data: '{}' });
    expect(message?.retry).toBeUndefined();
    expect(odd?.retry).toBeUndefined();
  });

  it('reads bare-CR line ends and a leading byte order mark, split anywhere', () => {
    const text = '\uFEFFdata: a\r\rid: 2\rdata: b\r\n\rdata: c\r\n\r\ndata: d\n\r: x\r\r';
    const bytes = Buffer.from(text);
    for (let size = 1; size <= bytes.length; size++) {
      const parser = new SseParser();
      const events = [];
      for (let i = 0; i < bytes.length; i += size) events.push(...parser.push(bytes.subarray(i, i + size)));
      events.push(parser.flush());
      expect(events.map((e) => e.data).filter((d) => d !== undefined)).toEqual(['a', 'b', 'c', 'd']);
      expect(events.map((e) => e.raw).join('')).toBe(text.slice(1));
    }
  });

  it('holds an event whose last line end is a CR until the next character is known', () => {
    const parser = new SseParser();
    expect(parser.push('data: a\r\r')).toEqual([]);
    expect(parser.push('\ndata: b\n\n').map((e) => e.raw)).toEqual(['data: a\r\r\n', 'data: b\n\n']);
  });

  it('knows when no partial event or character is held', () => {
    const parser = new SseParser();
    expect(parser.atBoundary).toBe(true);
    parser.push(Buffer.from('data: a\n\ndata: b'));
    expect(parser.atBoundary).toBe(false);
    parser.push(Buffer.from('\n\n'));
    expect(parser.atBoundary).toBe(true);
    // A chunk whose events all end but whose last byte starts a character: not a boundary.
    const e = Buffer.from('é');
    parser.push(Buffer.concat([Buffer.from('data: c\n\n'), e.subarray(0, 1)]));
    expect(parser.atBoundary).toBe(false);
    expect(parser.push(Buffer.concat([e.subarray(1), Buffer.from('\n\n')])).map((x) => x.raw)).toEqual([
      'é\n\n',
    ]);
    expect(parser.atBoundary).toBe(true);
  });

  it('replaces data and keeps the other fields', () => {
    const [event] = new SseParser().push('id: 7\nevent: message\ndata: old\nretry: 5\n\n');
    expect(withData(event as never, 'new\nlines')).toBe(
      'id: 7\nevent: message\nretry: 5\ndata: new\ndata: lines\n\n',
    );
    expect(formatEvent('endpoint', '/m')).toBe('event: endpoint\ndata: /m\n\n');
  });
});
