import { describe, expect, it } from 'vitest';
import { CedarAuthorizer } from './cedar.js';
import { parseAuthzConfig, validateAuthzConfig } from './config.js';
import type { Identity } from '../mcp/identity.js';

function identity(subject: string, groups: string[] = [], claims: Record<string, unknown> = {}): Identity {
  return { subject, groups, claims: { sub: subject, ...claims }, local: false };
}

function authorizer(policies: string[], extra: Record<string, unknown> = {}): CedarAuthorizer {
  return new CedarAuthorizer(
    validateAuthzConfig({ version: '1.0', type: 'cedarv1', cedar: { policies, ...extra } }, 'test'),
  );
}

function lossyAuthorizer(policies: string[]): CedarAuthorizer {
  const config = validateAuthzConfig({ version: '1.0', type: 'cedarv1', cedar: { policies } }, 'test');
  return new CedarAuthorizer(config, undefined, 'lossy');
}

const tool = (who: Identity, name: string, args: Record<string, unknown> = {}) =>
  ({ identity: who, feature: 'tool', id: name, arguments: args, serverName: 'wx' }) as const;

describe('CedarAuthorizer', () => {
  it('permits what a policy permits and denies the rest (default deny)', () => {
    const az = authorizer(['permit(principal, action == Action::"call_tool", resource == Tool::"weather");']);
    expect(az.authorize(tool(identity('alice'), 'weather'))).toEqual({ allowed: true, reasons: ['policy0'] });
    expect(az.authorize(tool(identity('alice'), 'delete_all')).allowed).toBe(false);
    expect(az.authorize({ ...tool(identity('alice'), 'weather'), feature: 'prompt' }).allowed).toBe(false);
  });

  it('lets forbid win over permit', () => {
    const az = authorizer([
      'permit(principal, action == Action::"call_tool", resource);',
      'forbid(principal == Client::"mallory", action, resource);',
    ]);
    expect(az.authorize(tool(identity('alice'), 'x')).allowed).toBe(true);
    expect(az.authorize(tool(identity('mallory'), 'x'))).toEqual({ allowed: false, reasons: ['policy1'] });
  });

  it('makes group claims parents of MoatGroup, or the configured entity type', () => {
    const policies = ['permit(principal in MoatGroup::"admins", action == Action::"call_tool", resource);'];
    const az = authorizer(policies);
    expect(az.authorize(tool(identity('alice', ['admins']), 'x')).allowed).toBe(true);
    expect(az.authorize(tool(identity('bob', ['eng']), 'x')).allowed).toBe(false);
    const thv = authorizer(['permit(principal in THVGroup::"admins", action, resource);'], {
      group_entity_type: 'THVGroup',
    });
    expect(thv.authorize(tool(identity('alice', ['admins']), 'x')).allowed).toBe(true);
  });

  it('follows static entities for transitive membership, for principals and resources', () => {
    const entities = [
      { uid: { type: 'MoatGroup', id: 'eng' }, attrs: {}, parents: [{ type: 'MoatGroup', id: 'staff' }] },
      {
        uid: { type: 'Tool', id: 'weather' },
        attrs: { risk: 'low' },
        parents: [{ type: 'ToolSet', id: 'safe' }],
      },
    ];
    const az = authorizer(
      [
        'permit(principal in MoatGroup::"staff", action == Action::"call_tool", resource in ToolSet::"safe");',
        'permit(principal, action == Action::"get_prompt", resource) when { resource.name == "p" && principal in MoatGroup::"staff" };',
      ],
      { entities_json: JSON.stringify(entities) },
    );
    expect(az.authorize(tool(identity('alice', ['eng']), 'weather')).allowed).toBe(true);
    expect(az.authorize(tool(identity('alice', ['eng']), 'rm')).allowed).toBe(false);
    expect(az.authorize(tool(identity('bob', ['sales']), 'weather')).allowed).toBe(false);
    expect(
      az.authorize({ identity: identity('alice', ['eng']), feature: 'prompt', id: 'p', serverName: 'wx' })
        .allowed,
    ).toBe(true);
  });

  it('exposes claims and arguments to conditions, with a parent MCP server', () => {
    const az = authorizer([
      'permit(principal, action == Action::"call_tool", resource) when { principal.claim_dept == "ops" && context.arg_location == "NYC" && resource in MCP::"wx" };',
    ]);
    const ops = identity('alice', [], { dept: 'ops' });
    expect(az.authorize(tool(ops, 'weather', { location: 'NYC' })).allowed).toBe(true);
    expect(az.authorize(tool(ops, 'weather', { location: 'LA' })).allowed).toBe(false);
    expect(az.authorize({ ...tool(ops, 'weather', { location: 'NYC' }), serverName: 'other' }).allowed).toBe(
      false,
    );
    expect(
      az.authorize(tool(identity('bob', [], { dept: 'hr' }), 'weather', { location: 'NYC' })).allowed,
    ).toBe(false);
  });

  it('does not let a tool argument pose as an entity reference, and refuses values Cedar cannot hold', () => {
    const az = authorizer([
      'permit(principal, action, resource) when { context.arg_role == MoatGroup::"admins" };',
      'permit(principal, action, resource) when { context has arg_nothing };',
    ]);
    const smuggled = { role: { __entity: { type: 'MoatGroup', id: 'admins' } } };
    expect(az.authorize(tool(identity('mallory'), 'x', smuggled))).toMatchObject({
      allowed: false,
      refusal: { argument: 'role', reason: expect.stringContaining('__entity') },
    });
    expect(az.authorize(tool(identity('mallory'), 'x', { nothing: null }))).toMatchObject({
      allowed: false,
      refusal: { argument: 'nothing', reason: expect.stringContaining('null') },
    });
    // Lossy: left out, so the policies see neither (the call is not permitted either).
    const lossy = lossyAuthorizer([
      'permit(principal, action, resource) when { context.arg_role == MoatGroup::"admins" };',
      'permit(principal, action, resource) when { context has arg_nothing };',
    ]);
    expect(lossy.authorize(tool(identity('mallory'), 'x', { ...smuggled, nothing: null }))).toEqual({
      allowed: false,
      reasons: [],
    });
  });

  // Issue 31, finding 2: before the fix 5000.5, 1e21 and a reserved key were allowed (dropped).
  describe('a forbid on an argument cannot be stepped around', () => {
    const policies = [
      'permit(principal, action, resource);',
      'forbid(principal, action == Action::"call_tool", resource) when { context.arg_amount > 1000 };',
      'forbid(principal, action == Action::"call_tool", resource) when { context has arg_to && context.arg_to.to == "evil" };',
    ];
    const az = authorizer(policies);
    const call = (args: Record<string, unknown>) => az.authorize(tool(identity('alice'), 'pay', args));

    it.each([
      ['an integer over the bound', { amount: 5000 }, undefined],
      ['a fraction over the bound (a decimal Cedar cannot compare with >)', { amount: 5000.5 }, 'amount'],
      ['an integer beyond ±(2^53 − 1)', { amount: 1e21 }, 'amount'],
      ['a fraction with 5 decimal places', { amount: 0.00001 }, 'amount'],
      ['a string where a number is compared', { amount: '5000' }, 'amount'],
      ['an array', { amount: [5000] }, 'amount'],
      ['an object with a reserved key', { amount: 1, to: { to: 'evil', __extn: 1 } }, 'to'],
      ['null', { amount: null }, 'amount'],
      ['a missing argument the forbid reads without has', {}, undefined],
    ])('refuses %s', (_name, args, argument) => {
      const decision = call(args);
      expect(decision.allowed).toBe(false);
      expect(decision.refusal?.argument).toBe(argument);
    });

    it('allows what no forbid matches, and lists the tool (no arguments to judge)', () => {
      expect(call({ amount: 500, to: { to: 'bob' } })).toEqual({ allowed: true, reasons: ['policy0'] });
      expect(call({ amount: 500, note: null, other: 1e21 }).allowed).toBe(true);
      expect(az.authorize({ ...tool(identity('alice'), 'pay'), arguments: undefined }).allowed).toBe(true);
    });

    it('gives fractions to Cedar as decimals that policies compare with decimal methods', () => {
      const decimal = authorizer([
        'permit(principal, action, resource) when { context.arg_ratio.lessThan(decimal("0.5")) };',
      ]);
      const ratio = (value: unknown) =>
        decimal.authorize(tool(identity('alice'), 'x', { ratio: value })).allowed;
      expect([ratio(0.25), ratio(0.5), ratio(0.75), ratio(-1.1234)]).toEqual([true, false, false, true]);
    });

    it('with the lossy mapping, leaves out what Cedar cannot hold (a has-guarded forbid then passes it)', () => {
      const lossy = lossyAuthorizer([
        'permit(principal, action, resource);',
        'forbid(principal, action, resource) when { context has arg_amount && context.arg_amount > 1000 };',
      ]);
      expect(lossy.authorize(tool(identity('alice'), 'pay', { amount: 1e21 })).allowed).toBe(true);
      expect(lossy.authorize(tool(identity('alice'), 'pay', { amount: 5000 })).allowed).toBe(false);
    });
  });

  it('names the policy, its line in the file and the position of a parse error', () => {
    const yaml = [
      'version: "1.0"',
      'type: cedarv1',
      'cedar:',
      '  policies:',
      '    - permit(principal, action, resource);',
      '    - |',
      '      permit(principal, action, resource)',
      '      when { resource.name == };',
    ].join('\n');
    const loaded = parseAuthzConfig(yaml, 'authz.yaml');
    expect(() => new CedarAuthorizer(loaded.config, loaded.locations)).toThrow(
      /^authz\.yaml: cedar\.policies\[1\] \(line 6\) does not parse at line 2, column \d+ of the policy: /,
    );
  });

  it('refuses broken static entities', () => {
    expect(() => authorizer(['permit(principal, action, resource);'], { entities_json: '{oops' })).toThrow(
      /cedar\.entities_json is not valid JSON/,
    );
    expect(() =>
      authorizer(['permit(principal, action, resource);'], { entities_json: '[{"uid": 5}]' }),
    ).toThrow(/cedar\.entities_json: /);
  });
});

describe('CedarAuthorizer decision cache', () => {
  /** Frozen, as authentication hands identities out (the cache keys them by object). */
  const frozen = (subject: string, groups: string[] = [], claims: Record<string, unknown> = {}) =>
    Object.freeze(identity(subject, groups, claims));

  it('never answers one principal with a decision made for another', () => {
    const az = authorizer([
      'permit(principal in MoatGroup::"admins", action, resource);',
      'permit(principal, action, resource) when { principal has claim_level && principal.claim_level == "high" };',
    ]);
    const admin = frozen('alice', ['admins']);
    const plain = frozen('bob');
    const sameNameOtherGroups = frozen('alice');
    const high = frozen('carol', [], { level: 'high' });
    const low = frozen('carol', [], { level: 'low' });
    for (let round = 0; round < 3; round++) {
      expect(az.authorize(tool(admin, 'x')).allowed).toBe(true);
      expect(az.authorize(tool(plain, 'x')).allowed).toBe(false);
      expect(az.authorize(tool(sameNameOtherGroups, 'x')).allowed).toBe(false);
      expect(az.authorize(tool(high, 'x')).allowed).toBe(true);
      expect(az.authorize(tool(low, 'x')).allowed).toBe(false);
    }
  });

  it('keeps principals apart after it forgets their numbers (more principals than it holds)', () => {
    const az = authorizer(['permit(principal in MoatGroup::"admins", action, resource);']);
    const admin = frozen('alice', ['admins']);
    expect(az.authorize(tool(admin, 'x')).allowed).toBe(true);
    for (let i = 0; i <= 10_000; i++) az.authorize(tool(identity(`user-${i}`), 'x'));
    // alice's old number still stands for alice only; a new identity with her name but no group is not her.
    expect(az.authorize(tool(admin, 'x')).allowed).toBe(true);
    expect(az.authorize(tool(frozen('alice'), 'x')).allowed).toBe(false);
    expect(az.authorize(tool(frozen('alice', ['admins']), 'x')).allowed).toBe(true);
  });

  it('follows a change to an identity that is not frozen', () => {
    const az = authorizer(['permit(principal in MoatGroup::"admins", action, resource);']);
    const who = identity('dave');
    expect(az.authorize(tool(who, 'x')).allowed).toBe(false);
    who.groups.push('admins');
    expect(az.authorize(tool(who, 'x')).allowed).toBe(true);
  });

  it('keys on every argument a policy reads, however it reads it', () => {
    const az = authorizer([
      'permit(principal, action, resource);',
      'forbid(principal, action, resource) when { context has arg_path && context.arg_path like "/etc/*" };',
      'forbid(principal, action, resource) when { resource has arg_mode && resource.arg_mode == "rw" };',
      'forbid(principal, action, resource) when { context has arg_user && context["arg_user"] == "root" };',
    ]);
    const who = frozen('alice');
    for (let round = 0; round < 2; round++) {
      expect(az.authorize(tool(who, 'fs', { path: '/tmp/a', n: round })).allowed).toBe(true);
      expect(az.authorize(tool(who, 'fs', { path: '/etc/passwd', n: round })).allowed).toBe(false);
      expect(az.authorize(tool(who, 'fs', { mode: 'ro' })).allowed).toBe(true);
      expect(az.authorize(tool(who, 'fs', { mode: 'rw' })).allowed).toBe(false);
      expect(az.authorize(tool(who, 'fs', { user: 'me' })).allowed).toBe(true);
      expect(az.authorize(tool(who, 'fs', { user: 'root' })).allowed).toBe(false);
    }
  });

  it('keys on all arguments when a policy uses the context as a whole', () => {
    const az = authorizer([
      'permit(principal, action, resource) when { context == { "claim_sub": "alice" } };',
    ]);
    const who = frozen('alice');
    expect(az.authorize(tool(who, 'x')).allowed).toBe(true);
    expect(az.authorize(tool(who, 'x', { extra: 1 })).allowed).toBe(false);
    expect(az.authorize(tool(who, 'x')).allowed).toBe(true);
  });

  it('keys on the tool, the server and the tool annotations', () => {
    const az = authorizer([
      'permit(principal, action, resource in MCP::"wx") unless { resource has destructiveHint && resource.destructiveHint };',
    ]);
    const who = frozen('alice');
    const call = tool(who, 'x');
    expect(az.authorize(call).allowed).toBe(true);
    expect(az.authorize({ ...call, annotations: { destructiveHint: true } }).allowed).toBe(false);
    expect(az.authorize({ ...call, annotations: { destructiveHint: false } }).allowed).toBe(true);
    expect(az.authorize({ ...call, serverName: 'other' }).allowed).toBe(false);
    expect(az.authorize({ ...call, feature: 'prompt' }).allowed).toBe(true);
  });

  it('never lets JSON punctuation in a name move a value into another input', () => {
    const az = authorizer([
      'permit(principal, action, resource == Tool::"x") when { resource in MCP::"wx" };',
    ]);
    const who = frozen('alice');
    expect(az.authorize(tool(who, 'x')).allowed).toBe(true);
    // The same characters as the key of the call above, split differently between name and server.
    expect(az.authorize({ ...tool(who, 'x","wx'), serverName: '' }).allowed).toBe(false);
    expect(az.authorize({ ...tool(who, 'x'), serverName: 'wx",null,["path' }).allowed).toBe(false);
  });

  it('keeps decisions per policy set: a new authorizer decides afresh', () => {
    const who = frozen('alice');
    const before = authorizer(['permit(principal, action, resource);']);
    expect(before.authorize(tool(who, 'x')).allowed).toBe(true);
    const after = authorizer(['forbid(principal == Client::"alice", action, resource);']);
    expect(after.authorize(tool(who, 'x')).allowed).toBe(false);
    expect(before.authorize(tool(who, 'x')).allowed).toBe(true);
  });

  it('gives the member behind an aggregate endpoint as context.backend, in the decision key too', () => {
    const az = authorizer([
      'permit(principal, action, resource) when { context.backend == "time" };',
      'forbid(principal, action, resource) when { context has backend && context.backend == "fetch" };',
    ]);
    const who = identity('alice');
    // The same name, decided per member: the remembered decision of one is not the other's.
    expect(az.authorize({ ...tool(who, 'now'), backend: 'time' })).toEqual({
      allowed: true,
      reasons: ['policy0'],
    });
    expect(az.authorize({ ...tool(who, 'now'), backend: 'fetch' })).toEqual({
      allowed: false,
      reasons: ['policy1'],
    });
    expect(az.authorize({ ...tool(who, 'now'), backend: 'time' }).allowed).toBe(true);
    // Unknown member: the permit cannot be evaluated (no backend), so it grants nothing.
    expect(az.authorize(tool(who, 'now')).allowed).toBe(false);
    // A list item (no arguments) too.
    expect(
      az.authorize({ identity: who, feature: 'prompt', id: 'p', serverName: 'g', backend: 'time' }).allowed,
    ).toBe(true);
  });

  it('refuses a call whose forbid reads context.backend of an unknown member without has (strict)', () => {
    const az = authorizer([
      'permit(principal, action, resource);',
      'forbid(principal, action, resource) when { context.backend == "fetch" };',
    ]);
    const who = identity('alice');
    expect(az.authorize({ ...tool(who, 'now', { backend: 'fetch' }), backend: 'time' }).allowed).toBe(true);
    expect(az.authorize({ ...tool(who, 'get'), backend: 'fetch' }).allowed).toBe(false);
    const unknown = az.authorize(tool(who, 'get'));
    expect(unknown.allowed).toBe(false);
    expect(unknown.refusal?.reason).toMatch(/forbid policy policy1 cannot be evaluated/);
  });

  it('keeps context.backend apart from an argument named backend, in both mappings', () => {
    for (const az of [
      authorizer([
        'permit(principal, action, resource) when { context.backend == "time" && context.arg_backend == "x" };',
      ]),
      lossyAuthorizer([
        'permit(principal, action, resource) when { context.backend == "time" && context.arg_backend == "x" };',
      ]),
    ]) {
      const who = identity('alice');
      expect(az.authorize({ ...tool(who, 'now', { backend: 'x' }), backend: 'time' }).allowed).toBe(true);
      expect(az.authorize({ ...tool(who, 'now', { backend: 'time' }), backend: 'x' }).allowed).toBe(false);
    }
  });
});
