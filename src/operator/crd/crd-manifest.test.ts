import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { CRD_DIRECTORY, buildCrd, crdFileName, renderCrdYaml, structuralSchema } from './crd-manifest.js';
import {
  REFERENCE_BEGIN,
  REFERENCE_END,
  renderFieldReference,
  replaceFieldReference,
} from './field-reference.js';
import { ALL_KINDS } from './index.js';

const crdDir = fileURLToPath(new URL('../../../deploy/helm/moat-operator/crds/', import.meta.url));

describe('committed CRDs', () => {
  it.each(ALL_KINDS.map((k) => [k.kind, k] as const))(
    '%s matches what its schema generates',
    (_kind, kind) => {
      const committed = readFileSync(`${crdDir}${crdFileName(kind)}`, 'utf8');
      expect(
        committed === renderCrdYaml(kind),
        `${CRD_DIRECTORY}/${crdFileName(kind)} is stale: run \`npm run gen:crds\``,
      ).toBe(true);
    },
  );

  it('has no file for a kind that no longer exists', () => {
    const files = readdirSync(crdDir).filter((f) => f.endsWith('.yaml'));
    expect(files.sort(), `${CRD_DIRECTORY} has extra files: run \`npm run gen:crds\``).toEqual(
      ALL_KINDS.map(crdFileName).sort(),
    );
  });
});

describe('field reference', () => {
  it('docs/operator-resources.md holds the reference the schemas generate', () => {
    const document = readFileSync(
      fileURLToPath(new URL('../../../docs/operator-resources.md', import.meta.url)),
      'utf8',
    );
    const fresh = replaceFieldReference(document, renderFieldReference(ALL_KINDS));
    expect(document === fresh, 'docs/operator-resources.md is stale: run `npm run gen:crds`').toBe(true);
  });

  it('lists every field with its default, range and CEL rule messages', () => {
    const reference = renderFieldReference(ALL_KINDS);
    expect(reference).toContain('| `spec.proxyPort` | integer (int32) | no | default `8080`; 1 to 65535;');
    expect(reference).toContain('| `spec.remoteUrl` | string | yes |');
    expect(reference).toContain("rule: address is required when provider is 'redis'");
    expect(reference).toContain('each: rule: operator must be Exists when key is empty');
    expect(reference).toContain('| `status.conditions[].reason` | string | yes | 1 to 1024 characters;');
    for (const kind of ALL_KINDS) expect(reference).toContain(`### ${kind.kind}`);
  });

  it('needs both markers in the document', () => {
    expect(() => replaceFieldReference('# no markers', 'x')).toThrow(REFERENCE_BEGIN);
    expect(replaceFieldReference(`a${REFERENCE_BEGIN}old${REFERENCE_END}b`, 'new')).toBe('anewb');
  });
});

describe('buildCrd', () => {
  it('emits one namespaced v1beta1 version with the status subresource and no unsafe-integer bounds', () => {
    for (const kind of ALL_KINDS) {
      const crd = buildCrd(kind);
      const text = JSON.stringify(crd);
      expect(text).not.toContain(String(Number.MAX_SAFE_INTEGER));
      expect(text).not.toContain('"additionalProperties":false');
      expect(text).not.toContain('$schema');
      expect(crd).toMatchObject({
        metadata: { name: `${kind.plural}.moat.dev` },
        spec: {
          scope: 'Namespaced',
          versions: [{ name: 'v1beta1', storage: true, subresources: { status: {} } }],
        },
      });
    }
  });

  it('keeps podTemplateSpec open and its defaults, int32 formats and list types', () => {
    const spec = structuralSchema(ALL_KINDS[0].spec, 'spec') as { properties: Record<string, unknown> };
    expect(spec.properties.podTemplateSpec).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      description: expect.any(String) as unknown,
    });
    const text = JSON.stringify(spec);
    expect(text).toContain('"default":8080');
    expect(text).toContain('"format":"int32"');
    expect(text).toContain('"x-kubernetes-list-map-keys":["headerName"]');
  });
});

describe('structuralSchema', () => {
  it.each([
    ['a union', z.object({ a: z.union([z.string(), z.number()]) }), 'spec.a: "anyOf" is not allowed'],
    ['a nullable', z.object({ a: z.string().nullable() }), 'spec.a: "nullable" is not allowed'],
    ['an untyped value', z.object({ a: z.unknown() }), 'spec.a: every schema node needs a type'],
    [
      'a map of anything',
      z.object({ a: z.record(z.string(), z.unknown()) }),
      'spec.a: a map needs a typed value',
    ],
    [
      'a strict object',
      z.strictObject({ a: z.string() }).meta({ additionalProperties: {} }),
      'mutually exclusive',
    ],
  ])('refuses %s', (_what, schema, message) => {
    expect(() => structuralSchema(schema, 'spec')).toThrow(message);
  });
});
