/** The client's calls to its server: same-origin JSON, changes as POST with a JSON body. */
import type { ActionResult } from '../shared.js';

export async function post(path: string, body: unknown = {}): Promise<ActionResult> {
  try {
    const response = await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    });
    const result = (await response.json()) as Partial<ActionResult>;
    return { ok: response.ok && result.ok === true, message: String(result.message ?? response.statusText) };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}
