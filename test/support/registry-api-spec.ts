/**
 * The MCP Registry API's OpenAPI document (the parts Moat uses, test/fixtures/registry-api/
 * openapi.yaml, version 2025-12-01) as checks: an answer's body against the operation's response
 * schema (JSON Schema 2020-12, with the real Ajv), and a request's query parameters against the
 * operation's declared ones.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';

const SPEC_FILE = fileURLToPath(new URL('../fixtures/registry-api/openapi.yaml', import.meta.url));

interface Operation {
  parameters: Array<{ name: string; in: string }>;
  responses: Record<string, { content: { 'application/json': { schema: unknown } } }>;
}
interface Spec {
  info: { version: string };
  paths: Record<string, { get: Operation }>;
  components: unknown;
}

export const spec = parse(readFileSync(SPEC_FILE, 'utf8')) as Spec;
export const SPEC_VERSION = spec.info.version;

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema({ $id: 'openapi', components: spec.components });

/** The spec's path template a request path matches (`/v0.1/servers/{serverName}/versions`). */
export function operationPath(pathname: string): string | undefined {
  if (/^\/v0\.1\/servers$/.test(pathname)) return '/v0.1/servers';
  if (/^\/v0\.1\/servers\/[^/]+\/versions$/.test(pathname)) return '/v0.1/servers/{serverName}/versions';
  if (/^\/v0\.1\/servers\/[^/]+\/versions\/[^/]+$/.test(pathname))
    return '/v0.1/servers/{serverName}/versions/{version}';
  return undefined;
}

const validators = new Map<string, ValidateFunction>();

function validator(path: string, status: number): ValidateFunction {
  const key = `${path} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    const schema = spec.paths[path]?.get.responses[String(status)]?.content['application/json'].schema;
    if (schema === undefined) throw new Error(`the spec has no ${status} answer for GET ${path}`);
    // Local $refs point into the components registered under the id "openapi".
    const resolved = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'));
    validate = ajv.compile(resolved as object);
    validators.set(key, validate);
  }
  return validate;
}

/** Problems of an answer against the spec (empty when it conforms). */
export function answerProblems(pathname: string, status: number, body: unknown): string[] {
  const path = operationPath(pathname);
  if (!path) return [`GET ${pathname} is not an operation of the spec`];
  const validate = validator(path, status);
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}`);
}

/** Query parameters a request sends that the spec does not declare for its operation. */
export function undeclaredParameters(url: URL): string[] {
  const path = operationPath(url.pathname);
  if (!path) return [`(path ${url.pathname})`];
  const declared = new Set(
    spec.paths[path]?.get.parameters.filter((p) => p.in === 'query').map((p) => p.name) ?? [],
  );
  return [...url.searchParams.keys()].filter((key) => !declared.has(key));
}
