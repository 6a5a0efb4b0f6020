/**
 * One front session's merged view of its members' lists: what each list shows (exposed names,
 * definitions unchanged otherwise), where a name or URI routes, and pages with cursors.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/server';
import type { AggregateNaming } from '../config/aggregate.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import {
  memberRank,
  resolveNames,
  resolveUris,
  type EntryKind,
  type NameClaims,
  type NameResolution,
  type ShadowedEntry,
} from './names.js';

/** What one member listed. */
export interface MemberLists {
  member: string;
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
}

export type ListName = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** An exposed entry: the member serving it, its name there, and the definition clients see. */
export interface Routed<T> {
  member: string;
  name: string;
  item: T;
}

export const INVALID_PARAMS = -32602;

/** The literal start of a URI template (before its first expression): what a URI it matches begins with. */
export function templatePrefix(uriTemplate: string): string {
  const brace = uriTemplate.indexOf('{');
  return brace < 0 ? uriTemplate : uriTemplate.slice(0, brace);
}

export class Catalog {
  readonly tools: Routed<Tool>[];
  readonly prompts: Routed<Prompt>[];
  readonly resources: Routed<Resource>[];
  readonly resourceTemplates: Routed<ResourceTemplate>[];
  readonly shadowed: ShadowedEntry[];
  private readonly compare: (a: string, b: string) => number;

  constructor(lists: MemberLists[], naming: AggregateNaming | undefined, claims: NameClaims) {
    this.compare = memberRank(naming?.order);
    const sorted = [...lists].sort((a, b) => this.compare(a.member, b.member));
    const entries = <T>(pick: (l: MemberLists) => T[], key: (item: T) => string) =>
      sorted.flatMap((l) => pick(l).map((item) => ({ member: l.member, name: key(item), item })));
    const tools = entries(
      (l) => l.tools,
      (t) => t.name,
    );
    const prompts = entries(
      (l) => l.prompts,
      (p) => p.name,
    );
    const resources = entries(
      (l) => l.resources,
      (r) => r.uri,
    );
    const templates = entries(
      (l) => l.resourceTemplates,
      (t) => t.uriTemplate,
    );

    const toolNames = resolveNames('tool', tools, naming, claims);
    const promptNames = resolveNames('prompt', prompts, naming, claims);
    const resourceUris = resolveUris('resource', resources, naming);
    const templateUris = resolveUris('resourceTemplate', templates, naming);
    this.tools = apply(tools, toolNames, (item, exposed) => ({ ...item, name: exposed }));
    this.prompts = apply(prompts, promptNames, (item, exposed) => ({ ...item, name: exposed }));
    this.resources = apply(resources, resourceUris, (item) => item);
    this.resourceTemplates = apply(templates, templateUris, (item) => item);
    this.shadowed = [toolNames, promptNames, resourceUris, templateUris].flatMap((r) => r.shadowed);
  }

  tool(name: string): Routed<Tool> {
    return find(this.tools, (t) => t.item.name === name, 'tool', name);
  }

  prompt(name: string): Routed<Prompt> {
    return find(this.prompts, (p) => p.item.name === name, 'prompt', name);
  }

  /** The member serving a URI: the one that listed it, else the template with the longest matching prefix. */
  resourceOwner(uri: string): string {
    const listed = this.resources.find((r) => r.item.uri === uri);
    if (listed) return listed.member;
    let best: Routed<ResourceTemplate> | undefined;
    for (const t of this.resourceTemplates) {
      const prefix = templatePrefix(t.item.uriTemplate);
      if (!uri.startsWith(prefix)) continue;
      if (!best || prefix.length > templatePrefix(best.item.uriTemplate).length) best = t;
    }
    if (best) return best.member;
    throw new ProtocolError(INVALID_PARAMS, `no member of the aggregate serves the resource ${uri}`, { uri });
  }

  /** The member owning a template (by its exact URI template), else the resource owner of that URI. */
  templateOwner(uriTemplate: string): string {
    return (
      this.resourceTemplates.find((t) => t.item.uriTemplate === uriTemplate)?.member ??
      this.resourceOwner(uriTemplate)
    );
  }

  /** One page of a list from `cursor` on, and the cursor of the next page if there is one. */
  page<T>(list: ListName, cursor: string | undefined, size: number): { items: T[]; nextCursor?: string } {
    const entries = this[list] as Routed<unknown>[];
    let start = 0;
    if (cursor !== undefined) {
      const at = decodeCursor(cursor, list);
      const perMember = new Map<string, number>();
      start = entries.findIndex((e) => {
        const i = perMember.get(e.member) ?? 0;
        perMember.set(e.member, i + 1);
        const order = this.compare(e.member, at.member);
        return order > 0 || (order === 0 && i >= at.index);
      });
      if (start < 0) start = entries.length;
    }
    const slice = entries.slice(start, start + size);
    const next = entries[start + size];
    if (!next) return { items: slice.map((e) => e.item as T) };
    const index = entries.slice(0, start + size).filter((e) => e.member === next.member).length;
    return {
      items: slice.map((e) => e.item as T),
      nextCursor: encodeCursor({ list, member: next.member, index }),
    };
  }
}

function apply<T>(
  entries: Array<{ member: string; name: string; item: T }>,
  resolution: NameResolution,
  rename: (item: T, exposed: string) => T,
): Routed<T>[] {
  const exposed = new Map(resolution.exposed.map((e) => [`${e.member}\u0000${e.name}`, e.exposed]));
  const out: Routed<T>[] = [];
  for (const e of entries) {
    const name = exposed.get(`${e.member}\u0000${e.name}`);
    if (name !== undefined) out.push({ member: e.member, name: e.name, item: rename(e.item, name) });
  }
  return out;
}

function find<T>(
  entries: Routed<T>[],
  match: (e: Routed<T>) => boolean,
  kind: EntryKind,
  name: string,
): Routed<T> {
  const found = entries.find(match);
  if (!found) throw new ProtocolError(INVALID_PARAMS, `unknown ${kind}: ${name}`);
  return found;
}
