/**
 * docs/cli.md, generated from the flag table (and `moat group serve`'s, group-serve.ts) so the documentation cannot drift from the
 * command (run-docs.test.ts fails when the file is stale; `npx tsx src/cli/run-docs.ts` rewrites
 * it).
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { SECTIONS, type RunFlagSpec, type SectionId } from './run-flag-spec.js';
import { RUN_FLAGS } from './run-flags.js';
import { SERVE_FLAGS } from './group-serve.js';
import { AGGREGATE_REFUSED } from './run-flag-applicability.js';

const ROWS: readonly RunFlagSpec[] = RUN_FLAGS;

function defaultText(row: RunFlagSpec): string {
  if (row.defaultText !== undefined) return row.defaultText;
  if (row.default === undefined) return '';
  return String(row.default);
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function renderRunFlagsMarkdown(): string {
  const lines = [
    '# moat run',
    '',
    '<!-- Generated from src/cli/run-flags.ts by `npx tsx src/cli/run-docs.ts`; do not edit by hand. -->',
    '',
    '```',
    'moat run [flags] SERVER_OR_IMAGE_OR_PACKAGE_OR_URL [-- ARGS...]',
    'moat run --from-config <path> [--name N] [--proxy-port P] [--host H] [--group G] [--foreground] [--debug]',
    '```',
    '',
    'The target is one of:',
    '',
    '| form | example | see |',
    '|---|---|---|',
    '| registry name | `moat run fetch`, `moat run io.github.modelcontextprotocol/time` | [registry.md](registry.md) |',
    '| container image | `moat run --transport stdio ghcr.io/example/fetch-mcp:1.2.0` | |',
    '| protocol scheme | `moat run --transport stdio npx://@modelcontextprotocol/server-everything@2026.8.31`, `uvx://mcp-server-time`, `go://module@v1`, `go://./cmd/server` | [builds.md](builds.md) |',
    '| remote URL | `moat run https://mcp.example.com/mcp --name example` | [remote-auth.md](remote-auth.md) |',
    '| exported configuration | `moat run --from-config fetch.json` | |',
    '',
    'A name that is not a URL or protocol scheme is looked up in the registry first (the built-in catalog',
    "and your registry); the entry's transport, permission profile, arguments, environment and headers are",
    'defaults the flags override. A name in no registry runs as an image reference; one that is not a',
    'valid image reference either fails with the closest registry names ("did you mean …"). Everything',
    "after the first `--` is passed to the server verbatim (and replaces a registry entry's arguments).",
    '',
    'Types: `string`; `stringArray` (repeatable); `strings` (comma-separated and repeatable); `int`; `float`;',
    '`duration` (`30s`, `1m`, `2m30s`); `bool` (`--flag`, `--flag=true`, `--flag=false`).',
    '',
    'Environment precedence in the container (lowest first): `--env-file-dir`, `--env-file`, `-e/--env`, then',
    '`--secret`. Env files are read when the container starts; their values are never stored.',
    '',
    'Usage errors (a bad value, a flag that does not apply to the target) exit with code 2 and name the',
    'flag and what is allowed.',
    '',
    'A `--from-config` file is checked whole before anything is saved or started (exit code 2, naming the',
    'field): durations such as `session_ttl` and `proxy_read_timeout` are Go durations greater than zero',
    '(`30s`, `2h0m0s`), a secret and a file holding it (`client_secret` and `client_secret_file`,',
    '`bearer_token` and `bearer_token_file`) cannot both be set, and a `remote_url` needs an HTTP transport.',
  ];
  for (const [id, title] of Object.entries(SECTIONS) as [SectionId, string][]) {
    lines.push(
      '',
      `## ${title}`,
      '',
      '| Flag | Type | Default | Description | RunConfig |',
      '|---|---|---|---|---|',
    );
    for (const row of ROWS.filter((r) => r.section === id)) {
      const flag = `${row.short ? `\`-${row.short}\`, ` : ''}\`--${row.long}${row.value ? ` ${row.value}` : ''}\``;
      const choices = row.choices ? ` One of ${row.choices.map((c) => `\`${c}\``).join(', ')}.` : '';
      const range = row.max !== undefined ? ` Range ${row.min ?? 0} to ${row.max}.` : '';
      const fields = row.runConfig.map((f) => `\`${f}\``).join(', ');
      const type = row.commaSeparated ? `${row.type} (comma-separated)` : row.type;
      lines.push(
        `| ${cell(flag)} | ${type} | ${cell(defaultText(row))} | ${cell(row.help)}.${choices}${range} | ${fields} |`,
      );
    }
  }
  lines.push(...groupServeMarkdown());
  return `${lines.join('\n')}\n`;
}

/** The `moat group serve` section: its own flags, and which run flags it refuses. */
function groupServeMarkdown(): string[] {
  const lines = [
    '',
    '# moat group serve',
    '',
    '```',
    'moat group serve [flags] <group>',
    '```',
    '',
    "Serves the group's workloads (of every kind: containers, remote URLs; aggregates excluded) as one",
    'MCP endpoint. The aggregate is itself a workload, named `<group>-aggregate` unless `--name` says',
    'otherwise and in the group it serves unless `--group` says otherwise: `moat list` shows it with its',
    'URL, and `stop`, `start`, `restart`, `export` (then `moat run --from-config`) and `rm` work on it. Its',
    "proxy reaches an in-process aggregator, which reaches each member through the member's own proxy",
    "and re-reads the group's members as they start, stop, join or leave. The group must exist (exit",
    'code 2 otherwise).',
    '',
    '| Flag | Default | Description |',
    '|---|---|---|',
  ];
  for (const row of SERVE_FLAGS) {
    const value = 'default' in row ? row.default : 'defaultText' in row ? row.defaultText : '';
    const choices = 'choices' in row ? ` One of ${row.choices.map((c) => `\`${c}\``).join(', ')}.` : '';
    lines.push(`| \`${row.flags}\` | ${cell(value)} | ${cell(row.help)}.${choices} |`);
  }
  lines.push(
    '',
    "Every flag of `moat run` that configures the proxy applies to the aggregate's front, with the same",
    'meaning and RunConfig field (OIDC, `--authz-config`, `--audit-config`, `--webhook-config`,',
    '`--guardrail-config`, telemetry, rate limits, `--tools`, `--tools-override`, `--tool-pinning`, timeouts,',
    '`--proxy-port`, `--host`, `--foreground`...). These are refused with a usage error naming them (the',
    'aggregate runs no container, builds nothing, reaches no remote URL and speaks streamable HTTP to its',
    `stateful aggregator): ${AGGREGATE_REFUSED.map((f) => `\`--${f}\``).join(', ')}.`,
  );
  return lines;
}

// Run directly: rewrite docs/cli.md.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(new URL('../../docs/cli.md', import.meta.url), renderRunFlagsMarkdown());
}
