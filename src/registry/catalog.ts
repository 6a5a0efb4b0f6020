/**
 * The catalog shipped with Moat: well-known MCP servers in server.json format, pinned to
 * versions that exist on npm and PyPI. A user registry (`moat config set-registry`) overrides an
 * entry of the same name. Reference servers need nothing outside their container, so they get
 * the `none` profile; fetch reads the web, so it gets `network`.
 */
import { MOAT_META, PUBLISHER_META, type RegistryServer } from './schema.js';

const REFERENCE_REPO = { url: 'https://github.com/modelcontextprotocol/servers', source: 'github' };

function moat(tags: string[], permissions?: 'none' | 'network'): RegistryServer['_meta'] {
  return { [PUBLISHER_META]: { [MOAT_META]: { tags, ...(permissions ? { permissions } : {}) } } };
}

function npm(
  identifier: string,
  version: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { registryType: 'npm', identifier, version, transport: { type: 'stdio' }, ...extra };
}

function pypi(
  identifier: string,
  version: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { registryType: 'pypi', identifier, version, transport: { type: 'stdio' }, ...extra };
}

export const CATALOG_SOURCE = 'the built-in catalog';

export const CATALOG = {
  servers: [
    {
      name: 'io.github.modelcontextprotocol/everything',
      title: 'Everything',
      description: 'Reference test server exercising every MCP feature: tools, resources, prompts, sampling',
      version: '2026.8.31',
      repository: REFERENCE_REPO,
      packages: [npm('@modelcontextprotocol/server-everything', '2026.8.31')],
      _meta: moat(['reference', 'testing', 'demo'], 'none'),
    },
    {
      name: 'io.github.modelcontextprotocol/fetch',
      title: 'Fetch',
      description: 'Fetches a URL from the web and returns its content as markdown',
      version: '2026.10.24',
      repository: REFERENCE_REPO,
      packages: [pypi('mcp-server-fetch', '2026.10.24')],
      _meta: moat(['reference', 'web', 'http', 'markdown'], 'network'),
    },
    {
      name: 'io.github.modelcontextprotocol/time',
      title: 'Time',
      description: 'Current time and conversions between IANA time zones',
      version: '2026.10.19',
      repository: REFERENCE_REPO,
      packages: [pypi('mcp-server-time', '2026.10.19')],
      _meta: moat(['reference', 'time', 'timezone'], 'none'),
    },
    {
      name: 'io.github.modelcontextprotocol/filesystem',
      title: 'Filesystem',
      description: 'Reads, writes and searches files under the directories it is given (mount them with -v)',
      version: '2026.8.31',
      repository: REFERENCE_REPO,
      packages: [
        npm('@modelcontextprotocol/server-filesystem', '2026.8.31', {
          packageArguments: [
            {
              type: 'positional',
              valueHint: 'allowed_directory',
              value: '/projects',
              description: 'Directory the server may use; mount a host directory there with -v',
            },
          ],
        }),
      ],
      _meta: moat(['reference', 'files', 'filesystem'], 'none'),
    },
    {
      name: 'io.github.modelcontextprotocol/memory',
      title: 'Memory',
      description: 'Knowledge-graph memory: entities, relations and observations kept in a JSON file',
      version: '2026.8.31',
      repository: REFERENCE_REPO,
      packages: [
        npm('@modelcontextprotocol/server-memory', '2026.8.31', {
          environmentVariables: [
            {
              name: 'MEMORY_FILE_PATH',
              description: 'Where the knowledge graph is stored',
              default: '/tmp/memory.jsonl',
            },
          ],
        }),
      ],
      _meta: moat(['reference', 'memory', 'knowledge-graph'], 'none'),
    },
    {
      name: 'io.github.modelcontextprotocol/sequential-thinking',
      title: 'Sequential Thinking',
      description: 'Structured step-by-step problem solving through revisable thought sequences',
      version: '2026.8.31',
      repository: REFERENCE_REPO,
      packages: [npm('@modelcontextprotocol/server-sequential-thinking', '2026.8.31')],
      _meta: moat(['reference', 'reasoning', 'thinking'], 'none'),
    },
    {
      name: 'io.github.modelcontextprotocol/git',
      title: 'Git',
      description: 'Reads and changes a Git repository: status, diff, log, commit, branches',
      version: '2026.10.19',
      repository: REFERENCE_REPO,
      packages: [
        pypi('mcp-server-git', '2026.10.19', {
          packageArguments: [
            {
              type: 'named',
              name: '--repository',
              value: '/repo',
              description: 'Repository path in the container; mount it with -v',
            },
          ],
        }),
      ],
      _meta: moat(['reference', 'git', 'vcs'], 'none'),
    },
    {
      name: 'io.github.github/github',
      title: 'GitHub (remote)',
      description: "GitHub's hosted MCP server: repositories, issues, pull requests, Actions",
      repository: { url: 'https://github.com/github/github-mcp-server', source: 'github' },
      remotes: [
        {
          type: 'streamable-http',
          url: 'https://api.githubcopilot.com/mcp/',
          headers: [
            {
              name: 'Authorization',
              description: 'Bearer followed by a GitHub personal access token',
              isRequired: true,
              isSecret: true,
            },
          ],
        },
      ],
      _meta: moat(['remote', 'github', 'git', 'issues']),
    },
    {
      name: 'com.cloudflare/docs',
      title: 'Cloudflare Docs (remote)',
      description: "Searches Cloudflare's developer documentation",
      remotes: [{ type: 'streamable-http', url: 'https://docs.mcp.cloudflare.com/mcp' }],
      _meta: moat(['remote', 'docs', 'cloudflare']),
    },
    {
      name: 'com.deepwiki/deepwiki',
      title: 'DeepWiki (remote)',
      description: 'Answers questions about public GitHub repositories from their generated wikis',
      remotes: [{ type: 'streamable-http', url: 'https://mcp.deepwiki.com/mcp' }],
      _meta: moat(['remote', 'docs', 'github']),
    },
  ],
};
