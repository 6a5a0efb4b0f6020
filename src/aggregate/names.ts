/**
 * The names clients see through an aggregate: pure functions from the members' own tool, prompt and
 * resource names to the exposed ones, per the `naming` section (src/config/aggregate.ts). Nothing is
 * shadowed silently: every entry left out or renamed because of a conflict is in `shadowed`.
 */
import { DEFAULT_NAME_SEPARATOR, type AggregateNaming } from '../config/aggregate.js';

/** What is named: tools and prompts have names, resources and templates keep their URIs. */
export type EntryKind = 'tool' | 'prompt' | 'resource' | 'resourceTemplate';

/** One member's entry, by the member's own name (or URI). */
export interface MemberEntry {
  member: string;
  name: string;
}

export interface ExposedEntry extends MemberEntry {
  /** What clients see and call. */
  exposed: string;
}

/** An entry a conflict left out (`exposedAs` absent) or renamed (`exposedAs` its prefixed name). */
export interface ShadowedEntry extends MemberEntry {
  kind: EntryKind;
  /** The member whose entry keeps the contested name. */
  by: string;
  exposedAs?: string;
}

export interface NameResolution {
  exposed: ExposedEntry[];
  shadowed: ShadowedEntry[];
}

/**
 * Which exposed name each member last held under `manual`: a conflict keeps the name with its
 * holder, so a member that joins never renames a name already exposed. Owned by the aggregator.
 */
export type NameClaims = Map<string, string>;

/** Compares members: those in `order` first, in its order; the others after, by name. */
export function memberRank(order: readonly string[] = []): (a: string, b: string) => number {
  const position = (m: string) => {
    const i = order.indexOf(m);
    return i < 0 ? order.length : i;
  };
  return (a, b) => position(a) - position(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** Entries in member rank, each member's in its own order (a stable sort keeps that). */
function ranked<T extends MemberEntry>(entries: readonly T[], order?: readonly string[]): T[] {
  const compare = memberRank(order);
  return [...entries].sort((a, b) => compare(a.member, b.member));
}

/**
 * Keeps the first entry (in rank) of every exposed name, reporting the others as shadowed by it.
 * `holder` names a member that keeps a contested name whatever its rank (a claim).
 */
function firstWins(
  kind: EntryKind,
  entries: readonly ExposedEntry[],
  holder: (exposed: string) => string | undefined = () => undefined,
): NameResolution {
  const groups = new Map<string, ExposedEntry[]>();
  for (const e of entries) groups.set(e.exposed, [...(groups.get(e.exposed) ?? []), e]);
  const winners = new Map<string, ExposedEntry>();
  for (const [exposed, group] of groups) {
    const claimed = holder(exposed);
    winners.set(exposed, group.find((e) => e.member === claimed) ?? group[0]!);
  }
  const exposed: ExposedEntry[] = [];
  const shadowed: ShadowedEntry[] = [];
  for (const e of entries) {
    const winner = winners.get(e.exposed)!;
    if (winner === e) exposed.push(e);
    else shadowed.push({ kind, member: e.member, name: e.name, by: winner.member });
  }
  return { exposed, shadowed };
}

/** Resources and templates keep their URIs; the same URI from two members goes to the first in rank. */
export function resolveUris(
  kind: EntryKind,
  entries: readonly MemberEntry[],
  naming?: AggregateNaming,
): NameResolution {
  return firstWins(
    kind,
    ranked(entries, naming?.order).map((e) => ({ ...e, exposed: e.name })),
  );
}

/**
 * Tools and prompts: `prefix` (the default) names each `<member><separator><name>`; `priority`
 * keeps names, the first member in rank wins a conflict; `manual` applies `overrides` (rename,
 * hide), then a conflict keeps the name with its claim holder (else the first in rank) and
 * prefixes the others. `claims` is read and updated (manual only).
 */
export function resolveNames(
  kind: 'tool' | 'prompt',
  entries: readonly MemberEntry[],
  naming: AggregateNaming | undefined,
  claims: NameClaims = new Map(),
): NameResolution {
  const separator = naming?.separator ?? DEFAULT_NAME_SEPARATOR;
  const prefixed = (e: MemberEntry) => `${e.member}${separator}${e.name}`;
  const inRank = ranked(entries, naming?.order);
  const strategy = naming?.strategy ?? 'prefix';
  if (strategy === 'prefix')
    return firstWins(
      kind,
      inRank.map((e) => ({ ...e, exposed: prefixed(e) })),
    );
  if (strategy === 'priority')
    return firstWins(
      kind,
      inRank.map((e) => ({ ...e, exposed: e.name })),
    );

  const section = kind === 'tool' ? 'tools' : 'prompts';
  const visible: ExposedEntry[] = [];
  for (const e of inRank) {
    const override = naming?.overrides?.[e.member]?.[section]?.[e.name];
    if (override?.hidden) continue;
    visible.push({ ...e, exposed: override?.name ?? e.name });
  }
  const first = firstWins(kind, visible, (name) => claims.get(name));
  // The losers are prefixed; a prefixed name that is taken as well is left out, reported.
  const renamed = first.shadowed.map((s) => ({ member: s.member, name: s.name, exposed: prefixed(s) }));
  const second = firstWins(kind, [...first.exposed, ...renamed]);
  const survivors = new Set(second.exposed);
  const shadowed = first.shadowed.map((s, i) =>
    survivors.has(renamed[i]!) ? { ...s, exposedAs: renamed[i]!.exposed } : s,
  );
  for (const e of first.exposed) claims.set(e.exposed, e.member);
  return { exposed: second.exposed, shadowed };
}
