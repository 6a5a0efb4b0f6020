/**
 * Which member an exposed name belongs to, from the newest merged view of the lists: the front
 * proxy asks it so Cedar (`context.backend`), audit (`target.backend`) and spans (`moat.backend`)
 * name the member behind a tool, prompt or resource of the aggregate.
 */
import type { MemberKind, MemberResolver } from '../mcp/members.js';
import type { Catalog } from './catalog.js';

export class MemberIndex {
  #catalog: Catalog | undefined;
  #tools = new Map<string, string>();
  #prompts = new Map<string, string>();

  /** Every session merges under the same claims, so the newest catalog names every member's entries. */
  update(catalog: Catalog): void {
    if (catalog === this.#catalog) return;
    this.#catalog = catalog;
    this.#tools = new Map(catalog.tools.map((t) => [t.item.name, t.member]));
    this.#prompts = new Map(catalog.prompts.map((p) => [p.item.name, p.member]));
  }

  readonly memberOf: MemberResolver = (kind: MemberKind, name: string) => {
    if (kind === 'tool') return this.#tools.get(name);
    if (kind === 'prompt') return this.#prompts.get(name);
    try {
      // A listed URI, a template (by itself) or a URI a template matches.
      return this.#catalog?.templateOwner(name);
    } catch {
      return undefined;
    }
  };
}
