import { describe, expect, it } from 'vitest';
import { endpointsByGroup, type OfferedEndpoint } from './endpoints.js';

const at = (name: string, group: string, aggregates?: string): OfferedEndpoint => ({
  group,
  endpoint: { name, url: `http://127.0.0.1:1/${name}`, transport: 'streamable-http', requiresAuth: false },
  ...(aggregates ? { aggregates } : {}),
});
const names = (map: Map<string, { name: string }[]>, group: string) => map.get(group)?.map((e) => e.name);

describe('what a group offers its clients', () => {
  it('every live workload when no aggregate serves the group', () => {
    const map = endpointsByGroup([at('time', 'tools'), at('fetch', 'tools'), at('git', 'dev')]);
    expect(names(map, 'tools')).toEqual(['time', 'fetch']);
    expect(names(map, 'dev')).toEqual(['git']);
  });

  it('only the aggregate when the group is served as one endpoint, so no tool is listed twice', () => {
    const map = endpointsByGroup([
      at('time', 'tools'),
      at('tools-aggregate', 'tools', 'tools'),
      at('fetch', 'tools'),
      at('git', 'dev'),
    ]);
    expect(names(map, 'tools')).toEqual(['tools-aggregate']);
    expect(names(map, 'dev')).toEqual(['git']);
  });

  it('an aggregate placed in another group adds to that group and leaves its members to theirs', () => {
    const map = endpointsByGroup([
      at('time', 'tools'),
      at('all-tools', 'front', 'tools'),
      at('docs', 'front'),
    ]);
    expect(names(map, 'tools')).toEqual(['time']);
    expect(names(map, 'front')).toEqual(['all-tools', 'docs']);
  });
});
