/** The client's calls to its server: same-origin JSON, changes as POST with a JSON body. */
import type { ActionResult } from '../shared.js';

export type Answer<T> = { ok: true; value: T } | { ok: false; message: string };

async function answer<T>(request: Promise<Response>): Promise<Answer<T>> {
  try {
    const response = await request;
    const body = (await response.json()) as unknown;
    if (response.ok) return { ok: true, value: body as T };
    return { ok: false, message: String((body as Partial<ActionResult>).message ?? response.statusText) };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}

export function getJson<T>(path: string): Promise<Answer<T>> {
  return answer(fetch(path, { credentials: 'same-origin' }));
}

export function post<T>(path: string, body: unknown = {}): Promise<Answer<T>> {
  return answer(
    fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    }),
  );
}
