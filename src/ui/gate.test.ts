import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { Gate, dashboardHostNames } from './gate.js';

function request(headers: Record<string, string>, method = 'GET'): IncomingMessage {
  return { headers, method } as unknown as IncomingMessage;
}

const PORT = 4321;
const gate = () => new Gate(dashboardHostNames('127.0.0.1'), PORT);

describe('the dashboard gate', () => {
  it('accepts its own Host names only, with the port', () => {
    const g = gate();
    for (const host of ['127.0.0.1:4321', 'localhost:4321', '[::1]:4321', 'LOCALHOST:4321'])
      expect(g.checkOrigin(request({ host })), host).toEqual({ ok: true });
    for (const host of ['evil.example:4321', '127.0.0.1:80', '127.0.0.1', ''])
      expect(g.checkOrigin(request({ host })), host).toMatchObject({ ok: false, status: 403 });
  });

  it('refuses a foreign Origin and requests other sites started', () => {
    const g = gate();
    const host = '127.0.0.1:4321';
    expect(g.checkOrigin(request({ host, origin: 'http://127.0.0.1:4321' }))).toEqual({ ok: true });
    expect(g.checkOrigin(request({ host, origin: 'http://127.0.0.1:9999' }))).toMatchObject({ status: 403 });
    expect(g.checkOrigin(request({ host, origin: 'null' }))).toMatchObject({ status: 403 });
    expect(g.checkOrigin(request({ host, 'sec-fetch-site': 'same-site' }))).toMatchObject({ status: 403 });
    expect(g.checkOrigin(request({ host, 'sec-fetch-site': 'same-origin' }))).toEqual({ ok: true });
  });

  it('exchanges the login token once for the session cookie', () => {
    const g = gate();
    const token = g.token!;
    expect(g.login('wrong')).toBeUndefined();
    const session = g.login(token);
    expect(session).toMatch(/^[\w-]{43}$/);
    expect(session).not.toBe(token);
    expect(g.token).toBeUndefined();
    expect(g.login(token)).toBeUndefined();
    expect(g.cookie()).toBe(`moat_ui_session=${session}; HttpOnly; SameSite=Strict; Path=/`);
    expect(g.checkSession(request({ cookie: `a=b; moat_ui_session=${session}` }))).toEqual({ ok: true });
    expect(g.checkSession(request({ cookie: 'moat_ui_session=guess' }))).toMatchObject({ status: 401 });
    expect(g.checkSession(request({}))).toMatchObject({ status: 401 });
  });

  it('lets a change through only as a JSON POST carrying an Origin', () => {
    const g = gate();
    const json = { 'content-type': 'application/json; charset=utf-8', origin: 'http://127.0.0.1:4321' };
    expect(g.checkChange(request(json, 'POST'))).toEqual({ ok: true });
    expect(g.checkChange(request(json, 'PUT'))).toMatchObject({ status: 405 });
    expect(g.checkChange(request({ 'content-type': 'application/json' }, 'POST'))).toMatchObject({
      status: 403,
    });
    expect(g.checkChange(request({ ...json, 'content-type': 'text/plain' }, 'POST'))).toMatchObject({
      status: 415,
    });
  });

  it('answers to the bound address too when it is not loopback', () => {
    expect(dashboardHostNames('192.0.2.7')).toContain('192.0.2.7');
    expect(dashboardHostNames('2001:db8::1')).toContain('[2001:db8::1]');
    expect(dashboardHostNames('127.0.0.1')).toEqual(['127.0.0.1', 'localhost', '[::1]']);
  });
});
