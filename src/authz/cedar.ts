/**
 * Cedar decisions for MCP requests, by the official engine (@cedar-policy/cedar-wasm).
 *
 *   principal  Client::"<sub>"        attrs claim_<name>; parents <GroupType>::"<group>" per group/role
 *   action     Action::"call_tool" | "get_prompt" | "read_resource"
 *   resource   Tool::"<name>" | Prompt::"<name>" | Resource::"<uri>"
 *              attrs name, operation, feature, tool annotations (readOnlyHint, ...), arg_<key>;
 *              parent MCP::"<server>"
 *   context    claim_<name> and arg_<key>; `backend` (the member workload) behind an aggregate endpoint
 *
 * Static entities (entities_json) are merged in, so `principal in MoatGroup::"staff"` holds when
 * the token says `eng` and the store says eng ∈ staff. Default deny; forbid wins.
 *
 * Decisions are remembered per authorizer (bounded LRU) under a key that holds every input the
 * engine sees: the principal (subject, groups, all claims), the action, the resource (kind, name,
 * server, tool annotations), the member workload (`backend`) and the call arguments the policies
 * can read. The static entities and
 * policies are fixed for the authorizer's life, so the same key always yields the same decision.
 * Arguments reach Cedar only as attributes named `arg_<key>` (of `context` and of the resource);
 * Cedar reads attributes only by literal name, so an argument no policy names cannot change the
 * outcome and is left out of the key. A policy that uses `context` as a whole value puts every
 * argument in the key. The principal enters the key as a number given to the JSON of its
 * subject, groups and claims; a number is never given twice, so it stands for exactly one.
 *
 * Fail closed on arguments (the `strict` mapping, the default): an argument the policies read that
 * Cedar cannot hold as it is (see `toCedarValue`) refuses the call, naming the argument, and a
 * forbid policy that cannot be evaluated on a call (a type error: `"5000"` or `5000.5` where it
 * compares with `>`; an attribute it reads without `has`) refuses it too, since Cedar itself would
 * skip that forbid and let the call through. The `lossy` mapping drops what cannot be held instead.
 */
import { randomUUID } from 'node:crypto';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import type {
  CedarValueJson,
  DetailedError,
  EntityJson,
  EntityUidJson,
} from '@cedar-policy/cedar-wasm/nodejs';
import { usageError } from '../util/errors.js';
import { DEFAULT_GROUP_ENTITY_TYPE, type AuthzConfig, type PolicyLocations } from './config.js';
import type { Identity } from '../mcp/identity.js';
import { LruMap } from '../util/lru.js';
import { log } from '../util/log.js';

export type Feature = 'tool' | 'prompt' | 'resource';

const FEATURES: Record<Feature, { action: string; entityType: string; operation: string }> = {
  tool: { action: 'call_tool', entityType: 'Tool', operation: 'call' },
  prompt: { action: 'get_prompt', entityType: 'Prompt', operation: 'get' },
  resource: { action: 'read_resource', entityType: 'Resource', operation: 'read' },
};

export interface AuthzRequest {
  identity: Identity;
  feature: Feature;
  /** Tool or prompt name, or resource URI. */
  id: string;
  arguments?: Record<string, unknown>;
  /** Tool annotations (readOnlyHint, destructiveHint, ...) as the server listed them, when known. */
  annotations?: Record<string, unknown>;
  serverName: string;
  /**
   * The member workload the name belongs to, behind an aggregate endpoint (`moat group serve`):
   * `context.backend`. Absent when unknown: `context has backend` is then false.
   */
  backend?: string;
}

export interface Decision {
  allowed: boolean;
  /** Ids of the policies that determined the decision (policy0, policy1, ... in file order). */
  reasons: string[];
  /**
   * Why a call was refused without Cedar's say: an argument Cedar cannot hold as it is (named), or
   * a forbid policy that could not be evaluated on it.
   */
  refusal?: { argument?: string; reason: string };
}

/**
 * What happens to an argument Cedar cannot hold as it is: `strict` refuses the call (the default),
 * `lossy` leaves the value out (a policy then sees the argument as absent).
 */
export type ArgumentMapping = 'strict' | 'lossy';

const DECISION_CACHE_ENTRIES = 10_000;

export class CedarAuthorizer {
  private readonly policySetId = `moat-${randomUUID()}`;
  private readonly staticEntities: Map<string, EntityJson>;
  private readonly groupType: string;
  private readonly argumentsRead: ArgumentsRead;
  /** Ids of the forbid policies: one that cannot be evaluated on a call refuses it. */
  private readonly forbidIds: ReadonlySet<string>;
  private readonly strict: boolean;
  /** The policies as the engine read them (its error locations are offsets into this text). */
  private readonly policyText: string;
  private readonly decisions = new LruMap<string, Decision>(DECISION_CACHE_ENTRIES);
  /**
   * A short number per distinct principal (its subject, groups and claims as JSON), so decision
   * keys are short to hash; numbers are never reused, so one always stands for one principal.
   */
  private readonly principalNumbers = new Map<string, number>();
  private nextPrincipalNumber = 0;
  /** The number per frozen identity (immutable, reused per token by authentication). */
  private readonly identityNumbers = new WeakMap<Identity, number>();
  /**
   * The previous request's inputs and key: a request with equal inputs (the usual repeated call)
   * gets the same key string, whose hash the map has already computed, instead of a new one.
   */
  private lastKey:
    | {
        principal: number;
        feature: Feature;
        id: string;
        serverName: string;
        backend: string | undefined;
        annotationsJson: string;
        args: string;
        key: string;
      }
    | undefined;

  constructor(config: AuthzConfig, locations?: PolicyLocations, argumentMapping: ArgumentMapping = 'strict') {
    const policies = config.cedar.policies;
    policies.forEach((text, i) => checkPolicy(text, i, locations));
    const answer = cedar.preparsePolicySet(this.policySetId, { staticPolicies: policies.join('\n') });
    if (answer.type === 'failure') {
      throw usageError(`authorization policies do not parse: ${formatErrors(answer.errors)}`);
    }
    this.staticEntities = parseStaticEntities(
      config.cedar.entities_json,
      locations?.source ?? 'authz config',
    );
    this.groupType = config.cedar.group_entity_type ?? DEFAULT_GROUP_ENTITY_TYPE;
    this.argumentsRead = argumentsRead(policies);
    this.forbidIds = forbidPolicyIds(policies);
    this.policyText = policies.join('\n');
    this.strict = argumentMapping === 'strict';
  }

  /** The decision for a request: remembered when an identical one was decided (see above). */
  authorize(request: AuthzRequest): Decision {
    const key = this.decisionKey(request);
    const remembered = this.decisions.get(key);
    if (remembered) return remembered;
    const decision = Object.freeze(this.evaluate(request));
    this.decisions.set(key, decision);
    return decision;
  }

  /**
   * The text of a JSON array of every input (so no two different inputs share a key), written
   * piece by piece: the principal as its number, the fixed parts as literals, so a request costs
   * the JSON of its name, server, annotations and read arguments.
   */
  private decisionKey(request: AuthzRequest): string {
    const { annotations, backend, feature, id, serverName } = request;
    const principal = this.principalNumber(request.identity);
    const annotationsJson = annotations === undefined ? 'null' : JSON.stringify(annotations);
    const args = this.argumentsKey(request.arguments);
    const last = this.lastKey;
    if (
      last !== undefined &&
      last.principal === principal &&
      last.feature === feature &&
      last.id === id &&
      last.serverName === serverName &&
      last.backend === backend &&
      last.annotationsJson === annotationsJson &&
      last.args === args
    ) {
      return last.key;
    }
    const member = backend === undefined ? '' : `,${JSON.stringify(backend)}`;
    const key = `[${principal},"${feature}",${JSON.stringify(id)},${JSON.stringify(serverName)},${annotationsJson},${args}${member}]`;
    this.lastKey = { principal, feature, id, serverName, backend, annotationsJson, args, key };
    return key;
  }

  private principalNumber(identity: Identity): number {
    const known = this.identityNumbers.get(identity);
    if (known !== undefined) return known;
    const principal = JSON.stringify([identity.subject, identity.groups, identity.claims]);
    let number = this.principalNumbers.get(principal);
    if (number === undefined) {
      // Bounded: forgetting a principal's number only costs a new one (and cache misses) later.
      if (this.principalNumbers.size >= DECISION_CACHE_ENTRIES) this.principalNumbers.clear();
      number = this.nextPrincipalNumber++;
      this.principalNumbers.set(principal, number);
    }
    if (Object.isFrozen(identity)) this.identityNumbers.set(identity, number);
    return number;
  }

  /** The JSON of the arguments the policies read (all of them when they may read any). */
  private argumentsKey(args: Record<string, unknown> | undefined): string {
    const read = this.argumentsRead;
    // No arguments (a list item) is not a call with none: only a call fails on a forbid's error.
    if (args === undefined) return 'null';
    if (read === 'all') return JSON.stringify(args);
    let key = '[';
    for (const name of read) {
      if (!Object.hasOwn(args, name)) continue;
      key += `${key.length > 1 ? ',' : ''}[${JSON.stringify(name)},${JSON.stringify(args[name])}]`;
    }
    return `${key}]`;
  }

  private evaluate(request: AuthzRequest): Decision {
    const feature = FEATURES[request.feature];
    const mapped = this.cedarArguments(request.arguments);
    if ('refusal' in mapped) return { allowed: false, reasons: [], refusal: mapped.refusal };
    const args = mapped.attributes;
    const claims = cedarRecord(request.identity.claims, 'claim_');
    const principal = uid('Client', request.identity.subject);
    const action = uid('Action', feature.action);
    const resource = uid(feature.entityType, request.id);
    const generated: EntityJson[] = [
      {
        uid: principal,
        attrs: claims,
        parents: request.identity.groups.map((g) => uid(this.groupType, g)),
      },
      { uid: action, attrs: { operation: feature.action }, parents: [] },
      {
        uid: resource,
        attrs: {
          ...cedarRecord(request.annotations ?? {}, ''),
          name: request.id,
          operation: feature.operation,
          feature: request.feature,
          ...args,
        },
        parents: [uid('MCP', request.serverName)],
      },
    ];
    const answer = cedar.statefulIsAuthorized({
      principal,
      action,
      resource,
      context:
        request.backend === undefined
          ? { ...claims, ...args }
          : { ...claims, ...args, backend: request.backend },
      preparsedPolicySetId: this.policySetId,
      entities: this.withStaticEntities(generated),
    });
    if (answer.type === 'failure') {
      // An entity or context the engine refuses (should not happen: values are sanitised). Deny.
      throw new Error(`authorization could not be evaluated: ${formatErrors(answer.errors)}`);
    }
    const { decision, diagnostics } = answer.response;
    // Cedar skips a policy it cannot evaluate; for a forbid on a call that would let the call in.
    const callArguments = request.arguments;
    const failedForbid =
      callArguments === undefined
        ? undefined
        : diagnostics.errors.find((e) => this.forbidIds.has(e.policyId));
    if (callArguments !== undefined && failedForbid !== undefined) {
      log().warn(
        {
          policy: failedForbid.policyId,
          error: failedForbid.error.message,
          feature: request.feature,
          id: request.id,
        },
        'a forbid policy could not be evaluated on a call; denying it',
      );
      const reason = `forbid policy ${failedForbid.policyId} cannot be evaluated with the value given (${failedForbid.error.message})`;
      const argument = this.argumentAt(failedForbid.error, callArguments);
      return {
        allowed: false,
        reasons: [failedForbid.policyId],
        refusal: argument === undefined ? { reason } : { argument, reason },
      };
    }
    return { allowed: decision === 'allow', reasons: diagnostics.reason };
  }

  /** The argument of the call that the failed expression reads, when it reads one (named, not shown). */
  private argumentAt(error: DetailedError, args: Record<string, unknown>): string | undefined {
    const location = error.sourceLocations?.[0];
    if (location === undefined) return undefined;
    const expression = this.policyText.slice(location.start, location.end);
    for (const match of expression.matchAll(/arg_([A-Za-z0-9_]+)/g)) {
      const name = match[1] as string;
      if (Object.hasOwn(args, name)) return name;
    }
    return undefined;
  }

  /**
   * The `arg_<key>` attributes of the arguments the policies can read (the others cannot change
   * the decision), or the refusal for the first one Cedar cannot hold as it is (strict mapping).
   */
  private cedarArguments(
    args: Record<string, unknown> | undefined,
  ): { attributes: Record<string, CedarValueJson> } | { refusal: { argument: string; reason: string } } {
    const out: Record<string, CedarValueJson> = {};
    if (args === undefined) return { attributes: out };
    const names = this.argumentsRead === 'all' ? Object.keys(args) : this.argumentsRead;
    for (const name of names) {
      if (!Object.hasOwn(args, name)) continue;
      const value = toCedarValue(args[name], 0, !this.strict);
      if (!(value instanceof Unrepresentable)) out[`arg_${name}`] = value;
      else if (this.strict) {
        const where = value.path.length === 0 ? '' : ` at ${value.path.join('.')}`;
        const reason = `the authorization policy cannot be given it as it is: ${value.what}${where}`;
        return { refusal: { argument: name, reason } };
      }
    }
    return { attributes: out };
  }

  /** Generated entities merged with static ones of the same uid (attributes and parents combined). */
  private withStaticEntities(generated: EntityJson[]): EntityJson[] {
    if (this.staticEntities.size === 0) return generated;
    const merged = new Map(this.staticEntities);
    for (const entity of generated) {
      const key = entityKey(entity.uid);
      const existing = merged.get(key);
      merged.set(
        key,
        existing
          ? {
              uid: entity.uid,
              attrs: { ...existing.attrs, ...entity.attrs },
              parents: [...existing.parents, ...entity.parents],
            }
          : entity,
      );
    }
    return [...merged.values()];
  }
}

/** Argument keys the policies read (as `arg_<key>`), or 'all' when they may read any. */
type ArgumentsRead = ReadonlySet<string> | 'all';

/**
 * Walks each policy's JSON form for attribute accesses (`.attr`, `["attr"]`, `has attr`) and
 * collects the `arg_` names. Any other use of `context` (e.g. `context == {...}`) reads every
 * argument.
 */
function argumentsRead(policyTexts: string[]): ArgumentsRead {
  const names = new Set<string>();
  let all = false;
  const visit = (node: unknown): void => {
    if (all || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const record = node as Record<string, unknown>;
    if (record.Var === 'context') {
      all = true;
      return;
    }
    for (const [op, operand] of Object.entries(record)) {
      const access = op === '.' || op === 'has' ? (operand as { left?: unknown; attr?: unknown }) : undefined;
      if (!access || access.attr === undefined) {
        visit(operand);
        continue;
      }
      for (const attr of [access.attr].flat())
        if (typeof attr === 'string' && attr.startsWith('arg_')) names.add(attr.slice('arg_'.length));
      const left = access.left as { Var?: unknown } | undefined;
      if (left?.Var !== 'context') visit(left);
    }
  };
  for (const text of policyTexts) {
    const parts = cedar.policySetTextToParts(text);
    if (parts.type === 'failure' || parts.policy_templates.length > 0) return 'all';
    for (const policy of parts.policies) {
      const json = cedar.policyToJson(policy);
      if (json.type === 'failure') return 'all';
      visit(json.json);
    }
  }
  return all ? 'all' : names;
}

/** The ids the engine gives the forbid policies (policy0, policy1, ... in the order of the text). */
function forbidPolicyIds(policyTexts: string[]): ReadonlySet<string> {
  const ids = new Set<string>();
  const parts = cedar.policySetTextToParts(policyTexts.join('\n'));
  if (parts.type === 'failure') return ids;
  parts.policies.forEach((policy, index) => {
    const json = cedar.policyToJson(policy);
    // A policy whose form cannot be read is treated as a forbid: its failures then refuse.
    if (json.type === 'failure' || json.json.effect === 'forbid') ids.add(`policy${index}`);
  });
  return ids;
}

function uid(type: string, id: string): { type: string; id: string } {
  return { type, id };
}

function entityKey(u: EntityUidJson): string {
  const { type, id } = '__entity' in u ? u.__entity : u;
  return `${type}::${JSON.stringify(id)}`;
}

/** A policy that does not parse: name it, its line in the file, and where in the policy. */
function checkPolicy(text: string, index: number, locations?: PolicyLocations): void {
  const answer = cedar.checkParsePolicySet({ staticPolicies: text });
  if (answer.type === 'success') return;
  const fileLine = locations?.lines[index];
  const where = `${locations?.source ?? 'authz config'}: cedar.policies[${index}]${fileLine ? ` (line ${fileLine})` : ''}`;
  const first = answer.errors[0];
  const offset = first?.sourceLocations?.[0]?.start;
  const inPolicy = offset === undefined ? '' : ` at ${positionIn(text, offset)} of the policy`;
  throw usageError(`${where} does not parse${inPolicy}: ${formatErrors(answer.errors)}`);
}

function positionIn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

function formatErrors(errors: DetailedError[]): string {
  return errors.map((e) => (e.help ? `${e.message} (${e.help})` : e.message)).join('; ');
}

function parseStaticEntities(json: string | undefined, source: string): Map<string, EntityJson> {
  const entities = new Map<string, EntityJson>();
  if (json === undefined || json.trim() === '') return entities;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    throw usageError(`${source}: cedar.entities_json is not valid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed))
    throw usageError(`${source}: cedar.entities_json must be a JSON array of entities`);
  const check = cedar.checkParseEntities({ entities: parsed as EntityJson[] });
  if (check.type === 'failure') {
    throw usageError(`${source}: cedar.entities_json: ${formatErrors(check.errors)}`);
  }
  for (const entity of parsed as Array<Partial<EntityJson> & Pick<EntityJson, 'uid'>>) {
    entities.set(entityKey(entity.uid), {
      ...entity,
      attrs: entity.attrs ?? {},
      parents: entity.parents ?? [],
    });
  }
  return entities;
}

/**
 * Token claims and tool annotations as Cedar attributes under a prefix: what Cedar cannot hold (see
 * `toCedarValue`) is left out. They come from the identity provider and the server, not the caller.
 */
function cedarRecord(values: Record<string, unknown>, prefix: string): Record<string, CedarValueJson> {
  const out: Record<string, CedarValueJson> = {};
  for (const [key, value] of Object.entries(values)) {
    const converted = toCedarValue(value, 0, true);
    if (!(converted instanceof Unrepresentable)) out[`${prefix}${key}`] = converted;
  }
  return out;
}

/** Keys Cedar's JSON format reads as an entity reference or an extension value, not as a record. */
const RESERVED_KEYS = ['__entity', '__extn', '__expr'];

/** Nesting Moat gives Cedar: deeper values are not represented. */
const MAX_DEPTH = 8;

/** Cedar's decimal: at most 4 decimal places, within ±922337203685477.5807 (an i64 of 1/10000s). */
const DECIMAL_TEXT = /^-?\d+\.\d{1,4}$/;
const DECIMAL_MAX = 922_337_203_685_477;

/** A JSON value Cedar cannot hold as it is: what it is, and where inside the value. */
class Unrepresentable {
  constructor(
    readonly what: string,
    readonly path: readonly string[] = [],
  ) {}

  under(step: string): Unrepresentable {
    return new Unrepresentable(this.what, [step, ...this.path]);
  }
}

/**
 * A JSON value as Cedar's JSON form:
 *   string, boolean             → String, Bool
 *   integer within ±(2^53 − 1)  → Long
 *   number with a fraction      → decimal (`{"__extn":{"fn":"decimal","arg":"5000.5"}}`) when it
 *                                 has at most 4 decimal places and is within decimal's range
 *   array                       → Set (order and repeated elements are not kept)
 *   object                      → Record
 * and Unrepresentable for: null, any other number (1e21, 2^53, 0.00001), an object with a key
 * Cedar reserves (`__entity`, `__extn`, `__expr`: a caller could smuggle an entity or an extension
 * value into a policy), nesting deeper than MAX_DEPTH. With `dropInside`, such a value inside an
 * array or object is left out and the rest kept (the lossy mapping); without, it makes the whole
 * value unrepresentable.
 */
function toCedarValue(value: unknown, depth: number, dropInside: boolean): CedarValueJson | Unrepresentable {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return cedarNumber(value);
  if (depth >= MAX_DEPTH) return new Unrepresentable(`nesting deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    const set: CedarValueJson[] = [];
    for (let i = 0; i < value.length; i++) {
      const item = toCedarValue(value[i], depth + 1, dropInside);
      if (!(item instanceof Unrepresentable)) set.push(item);
      else if (!dropInside) return item.under(String(i));
    }
    return set;
  }
  if (typeof value === 'object' && value !== null) {
    const reserved = RESERVED_KEYS.find((k) => Object.hasOwn(value, k));
    if (reserved !== undefined)
      return new Unrepresentable(`an object with the key ${reserved}, which Cedar reserves`);
    const record: Record<string, CedarValueJson> = {};
    for (const [k, v] of Object.entries(value)) {
      const converted = toCedarValue(v, depth + 1, dropInside);
      if (!(converted instanceof Unrepresentable)) record[k] = converted;
      else if (!dropInside) return converted.under(k);
    }
    return record;
  }
  return new Unrepresentable(value === null ? 'null (Cedar has no null)' : `a ${typeof value}`);
}

function cedarNumber(value: number): CedarValueJson | Unrepresentable {
  if (Number.isSafeInteger(value)) return value;
  const text = String(value);
  if (DECIMAL_TEXT.test(text) && Math.abs(value) <= DECIMAL_MAX) {
    return { __extn: { fn: 'decimal', arg: text } };
  }
  return new Unrepresentable(
    'a number Cedar cannot hold exactly (an integer beyond ±(2^53 − 1), or a fraction with more than 4 decimal places or out of decimal range)',
  );
}
